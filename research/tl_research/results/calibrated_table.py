"""The calibrated recall table (notebook 06b): recall at a budget where attention succeeds (Zoology's
multi-query recall, each model at the better lr of two; RECALL_STUDY.md section 0). The family's file
has a second yardstick, ``triple_latent``.

Glossary (statistics -> code name)
    a_i            accuracy of a variant's seed i (2,048 fresh examples, every question counted)
    win            a_i >= 0.95 (WIN); k wins of n seeds with the Clopper-Pearson 95% interval
    d_i            a_i - (the Transformer's a_i), paired over the seeds both have (same batches)
    row            CalibratedRow: variant, lr, seeds, accuracies, mean, wins, and the paired differences
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .files import load, results_dir
from .intervals import PairedDifference, clopper_pearson, paired_difference
from .stats import finished, markdown

WIN = 0.95
YARDSTICK = "transformer"
FAMILY_FILE = "recall_calibrated_family.json"
# table 4's rows in the paper's order, then issue 33's family (as notebook 06b orders it)
ORDER = ("transformer", "triple_latent", "triple_slot", "triple_hybrid", "gated_hybrid_paper",
         "gated_hybrid_printed", "gated_hybrid_repaired", "transformer_plus_triple", "transformer_rope",
         "triple_key_shift", "triple_key_current", "gla", "deltanet", "h3", "conv_only")
# the second yardstick of a file: the family is read against the layer it is related to as well
SECOND = {FAMILY_FILE: "triple_latent"}


@dataclass(frozen=True)
class CalibratedRow:
    """One variant of a gathered calibrated file, at the lr its seed 0 chose."""

    variant: str
    lr: float
    seeds: tuple
    accuracies: tuple  # in seed order
    mean: float
    wins: int
    win_interval: tuple  # Clopper-Pearson 95%
    vs_transformer: PairedDifference | None  # None for the Transformer itself or with < 2 shared seeds
    vs_second: PairedDifference | None = None  # minus SECOND[file], where the file has a second yardstick


def calibrated_rows(name: str, root=None) -> list[CalibratedRow]:
    """The rows of one gathered file, table 4's order first."""
    data = load(Path(root or results_dir()) / name)
    by_variant = finished(data["runs"])
    lrs = data["protocol"]["lr_by_variant"]
    second = SECOND.get(Path(name).name)

    def minus(v: str, yardstick: str | None) -> PairedDifference | None:
        """v minus the yardstick, paired over their shared seeds; None for the yardstick itself or < 2 shared."""
        other = by_variant.get(yardstick, {}) if yardstick else {}
        shared = set(by_variant[v]) & set(other)
        return paired_difference(by_variant[v], other) if v != yardstick and len(shared) >= 2 else None

    rows = []
    for v in sorted(by_variant, key=lambda v: (ORDER.index(v) if v in ORDER else len(ORDER), v)):
        acc = by_variant[v]
        seeds = tuple(sorted(acc))
        values = tuple(acc[s] for s in seeds)
        k = sum(a >= WIN for a in values)
        rows.append(CalibratedRow(v, lrs[v], seeds, values, statistics.fmean(values), k,
                                  clopper_pearson(k, len(values)), minus(v, YARDSTICK), minus(v, second)))
    return rows


def budget(name: str, root=None) -> str:
    """The budget a verdict from ``name`` names: steps x batch, length, pairs and questions."""
    p = load(Path(root or results_dir()) / name)["protocol"]
    among = f" among {p['key_ids']} key ids" if p.get("key_ids") else ""
    pool = ""
    if p.get("pairs_mix"):  # the training batches' pool of pair counts (data/recall.py RecallSampler)
        counts = ", ".join(str(n) for n in p["pairs_mix"])
        shorter = ", fewer pairs in shorter sequences" if p.get("mix_lengths") == "scaled" else ""
        pool = f"; trained on batches of {counts} pairs in turn{shorter}"
    return (f"{p['steps']:,} steps x {p['batch_size']} sequences of {p['seq_len']} tokens, {p['n_pairs']} pairs"
            f"{among}, {p['n_queries']} questions each{pool}")


def calibrated_markdown(name: str, root=None) -> str:
    """One gathered file as a Markdown table (accuracies in %; a difference in points, against the Transformer
    and, in a file with a second yardstick, against it too)."""
    second = SECOND.get(Path(name).name)
    head = ["variant", "lr", "seeds", "mean", "per seed", "wins (>= 95%)", "minus transformer (95% interval)"]
    head += [f"minus {second} (95% interval)"] if second else []
    rows = []
    for r in calibrated_rows(name, root):
        row = [f"`{r.variant}`", f"{r.lr:g}", str(len(r.seeds)), f"{100 * r.mean:.1f}%",
               " / ".join(f"{100 * a:.1f}" for a in r.accuracies),
               f"{r.wins} of {len(r.seeds)} [{r.win_interval[0]:.2f}, {r.win_interval[1]:.2f}]"]
        for d in (r.vs_transformer, r.vs_second)[: 2 if second else 1]:
            row.append("-" if d is None else f"{100 * d.mean:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]")
        rows.append(row)
    return markdown(head, rows)
