"""Figures for slides: ``python docs/site/figures.py [OUT_DIR]`` (default ``build/figures``).

Writes each figure as SVG (it scales on a slide) and PNG (150 dpi), and ``figures.json`` with each
figure's title and text alternative. The site build runs it into the site's ``figures/`` folder
and shows them on its "Figures for slides" page. Nothing is trained: the architecture figures are
drawn by ``tl_minimal.views.diagrams``, the result plots read the committed results in
``data/results`` (``tl_minimal.results``). The module lives beside the site rather
than in ``tl_minimal.views`` because pictures never import the study code, and this one reads both.

    layer        one triple-latent layer (views/diagrams.py layer_diagram)
    model        the whole language model (views/diagrams.py model_diagram)
    lm_bpb       table 1: bits per byte of every variant, ours beside the paper's
    mqar         where recall breaks: MQAR accuracy by number of pairs and sequence length
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from tl_minimal.views import diagrams, plots
from tl_research import results

MARKERS = "osD^vP*X"  # one marker per model: a series never differs from another by colour alone


@dataclass
class Exported:
    name: str
    title: str
    alt: str


def lm_bpb():
    """Table 1 (``lm.json``): mean bits per byte over seeds, beside the paper's where it has one."""
    rows = results.summarize(results.load_runs(results.results_dir() / "lm.json"))
    ours = {r.label: r.mean for r in rows if r.mean is not None}
    fig, ax = plt.subplots(figsize=(8.0, 3.6))
    plots.metric_bars(ours, results.PAPER["lm_matched_width"], ax=ax, ylabel="bits per byte (lower is better)",
                      title="WikiText-2 bytes: every variant, ours (mean over seeds) beside the paper's (hatched)")
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.tight_layout()
    return fig


def mqar():
    """MQAR (``mqar*.json``): accuracy at the last evaluated step, mean and std over seeds."""
    rows = results.mqar_rows()
    settings = sorted({(r.pairs, r.seq_len) for r in rows})
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    variants = [v for v in results.ORDER if any(r.variant == v for r in rows)]
    for i, variant in enumerate(variants):
        pts = [(settings.index((r.pairs, r.seq_len)), *r.stats(max(r.by_step))[:2]) for r in rows
               if r.variant == variant]
        xs, means, stds = (np.array(v) for v in zip(*pts, strict=True))
        ax.errorbar(xs + 0.06 * (i - len(variants) / 2), means, yerr=stds, marker=MARKERS[i % len(MARKERS)],
                    ls="", capsize=3, label=variant)
    chance = {(r.pairs, r.seq_len): r.chance for r in rows}
    ax.scatter(range(len(settings)), [chance[s] for s in settings], marker="_", s=400, c="k",
               label="chance (constant guess)")
    ax.set_xticks(range(len(settings)), [f"{p} pairs\nT={t}" for p, t in settings])
    ax.set_ylabel("accuracy (last evaluated step)")
    ax.set_xlabel("number of key-value pairs and sequence length")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("MQAR: where recall breaks, by number of pairs and sequence length", fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


FIGURES = [
    ("layer", "One triple-latent layer", diagrams.layer_diagram,
     ("Diagram of one triple-latent layer at token t: the input x_t is normalised to n_t, four tanh "
     "projections make a_t, b_t, q^l_t and q^r_t and two gates make lambda_t and gamma_t; the running "
     "state s_t, the pair memory P_t and the readout r_t follow in three steps, then W_o and a residual "
     "add give o_t. Dashed arrows carry s_{t-1} and P_{t-1} from the previous token.")),
    ("model", "The whole language model", diagrams.model_diagram,
     ("Diagram of the language model: token embedding plus positions, an optional causal convolution, "
     "a stack of blocks (one drawn open: LayerNorm, the mixer, LayerNorm, the feed-forward, each with a "
     "residual add), a final LayerNorm, optional late logit fusion and the tied output head.")),
    ("lm_bpb", "Table 1: bits per byte, ours beside the paper's", lm_bpb,
     ("Bar chart of bits per byte on byte-level WikiText-2 for each model variant (lower is better): "
     "solid bars are this repository's runs (mean over seeds), hatched bars the paper's numbers where "
     "it reports one; transformer_plus_triple and the two gated hybrids score lowest.")),
    ("mqar", "MQAR: where recall breaks", mqar,
     ("Dot plot of multi-query associative recall accuracy (0 to 1) for each variant, one marker shape "
     "per variant, at each setting of number of key-value pairs and sequence length, with error bars "
     "over seeds and a black dash for the chance level of a constant guess: gated_hybrid_repaired answers almost "
     "every question at every setting, the other variants stay near chance.")),
]


def export_all(out: Path) -> list[Exported]:
    """Draw every figure of FIGURES into ``out`` as NAME.svg and NAME.png; list what was written."""
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for name, title, draw, alt in FIGURES:
        fig = draw()
        for suffix, extra in ((".svg", {}), (".png", {"dpi": 150})):
            fig.savefig(out / f"{name}{suffix}", bbox_inches="tight", metadata={"Title": title}, **extra)
        plt.close(fig)
        done.append(Exported(name, title, alt))
    (out / "figures.json").write_text(json.dumps([asdict(d) for d in done], indent=1) + "\n", encoding="utf-8")
    return done


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python docs/site/figures.py [OUT_DIR]  (default build/figures)", file=sys.stderr)
        return 2
    out = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "build" / "figures"
    for figure in export_all(out):
        print(f"{out / figure.name}.svg and .png: {figure.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
