"""What the optional notebook 07b prints beside the course's tables, from the committed result files.

    lead_lines            how far two models are ahead of the Transformer in tables 1, 3a and 3b (BPB)
    seeds_at              {seed: accuracy} of one variant in one file at one evaluated step
    seeds_cell            "mean ± std (per seed)" in percent
    experiments_markdown  the paper's other recall experiments (width, the retrain recipe, table 4's
                          other rows): ours at 200 and 500 steps beside the paper's number
    recall_experiment_panels  the same experiments per seed, for tl_research.views.plots_seeds
    per_seed_recall       every seed of the paper's gated hybrid, its own code, and ours (500 steps)
    init_diagnosis_markdown   the read at initialization, one row per configuration

Accuracies are fractions in the files and percent in the tables.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from tl_minimal.results.paper_numbers import PAPER

from .files import load_runs, results_dir
from .lm_reports import STEP_TABLES
from .tables import TABLES

RECIPE_FILE = "recall_warmup50_lengths32-128-150_gatebias-2.json"
WIDTH_FILES = {  # (width, model) -> file; d = 64 is the paper's width, the main recall table's files
    (64, "gated_hybrid_paper"): "recall_gated_hybrid_paper.json", (64, "gated_hybrid_printed"): "recall.json",
    (64, "gated_hybrid_repaired"): "recall_eval100-200-500.json",
    **{(d, m): f"recall_d{d}.json" for d in (80, 96) for m in ("gated_hybrid_paper", "gated_hybrid_printed",
                                                              "gated_hybrid_repaired")},
}
COLOUR = {"gated_hybrid_paper": 0, "gated_hybrid_printed": 1, "gated_hybrid_repaired": 2, "triple_slot": 3,
          "transformer_plus_triple": 4}  # one colour per model, the same in every panel
SHORT = {"gated_hybrid_paper": "coded", "gated_hybrid_printed": "printed", "gated_hybrid_repaired": "ours"}


def _read(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def lead_lines(table_keys=STEP_TABLES) -> list[str]:
    """How far ``transformer_plus_triple`` and ``triple_latent`` are ahead of the Transformer (BPB,
    positive = ahead) in each of tables 1, 3a and 3b, with the mean number of steps behind each."""
    lines = []
    for key in table_keys:
        row = {r.variant: (sum(r.steps) / len(r.steps), r.mean) for r in TABLES[key].rows() if "(" not in r.label}
        (s_tf, tf), (s_tpt, tpt), (s_tl, tl) = (row[v] for v in ("transformer", "transformer_plus_triple",
                                                                  "triple_latent"))
        lines.append(f"{key:17s} transformer_plus_triple {tf - tpt:+.2f} BPB ({s_tpt:.0f} vs {s_tf:.0f} steps)   "
                     f"triple_latent {tf - tl:+.2f} BPB ({s_tl:.0f} vs {s_tf:.0f} steps)")
    return lines


def seeds_at(file: str, variant: str, step: int, root=None) -> dict[int, float]:
    """{seed: accuracy} of one variant in one results file at one evaluated step (absent seeds left out)."""
    root = Path(root) if root is not None else results_dir()
    runs = [r for r in load_runs(root / file) if r["variant"] == variant]
    return {r["seed"]: r["by_step"][str(step)]["accuracy"] for r in sorted(runs, key=lambda r: r["seed"])
            if str(step) in r.get("by_step", {})}


def seeds_cell(accs: dict[int, float]) -> str:
    """'mean ± std (per seed)' in percent, or 'not run'."""
    if not accs:
        return "not run"
    a = [100 * v for v in accs.values()]
    spread = statistics.stdev(a) if len(a) > 1 else 0.0
    return f"{statistics.fmean(a):.1f} ± {spread:.1f} (" + ", ".join(f"{v:.1f}" for v in a) + ")"


def paper_experiments() -> list[tuple[str, str, str, float | None]]:
    """(experiment, model, file, the paper's accuracy or None): the width sweep, the retrain recipe
    and table 4's rows that the paper trains but quotes no number for."""
    out = [(f"width d = {d}", model, file, PAPER["recall_width"].get(f"{model} (d={d})"))
           for (d, model), file in WIDTH_FILES.items()]
    out += [("retrain recipe", m, RECIPE_FILE, PAPER["recall_retrain"].get(m))
            for m in ("gated_hybrid_paper", "gated_hybrid_printed")]
    out += [("table 4", m, "recall.json", None) for m in ("triple_slot", "transformer_plus_triple")]
    return out


def experiments_markdown(root=None) -> str:
    """One row per (experiment, model): mean ± std (per seed) at 200 and 500 steps, the paper's number."""
    lines = ["| experiment | model | 200 steps: mean ± std (per seed), % | 500 steps | the paper (500) |",
             "|---|---|---|---|---|"]
    for name, model, file, paper in paper_experiments():
        lines.append(f"| {name} | `{model}` | {seeds_cell(seeds_at(file, model, 200, root))} | "
                     f"{seeds_cell(seeds_at(file, model, 500, root))} | "
                     + ("-" if paper is None else f"{round(100 * paper, 2):g}") + " |")
    return "\n".join(lines)


def recall_experiment_panels(root=None) -> dict[str, list[tuple[str, list[float], list[float], int]]]:
    """{panel title: [(label, our seeds, the paper's runs, colour index), ...]} for the width sweep, the
    retrain recipe and table 4's other rows, at 500 steps (200 where a run stopped there, said in the label)."""

    def last_step(file, model):
        at500 = seeds_at(file, model, 500, root)
        return (list(at500.values()), "") if at500 else (list(seeds_at(file, model, 200, root).values()),
                                                         "\n(200 steps)")

    width = []
    for (d, model), file in WIDTH_FILES.items():
        accs, note = last_step(file, model)
        paper = PAPER["recall_width"].get(f"{model} (d={d})")
        width.append((f"{SHORT[model]}\nd={d}{note}", accs, [] if paper is None else [paper], COLOUR[model]))
    recipe = [(SHORT[m], list(seeds_at(RECIPE_FILE, m, 500, root).values()),
               list(PAPER["recall_retrain_seeds"].get(m, ())), COLOUR[m])
              for m in ("gated_hybrid_paper", "gated_hybrid_printed")]
    table4 = [(m.replace("_", "_\n", 1), list(seeds_at("recall.json", m, 500, root).values()), [], COLOUR[m])
              for m in ("triple_slot", "transformer_plus_triple")]
    return {"width sweep (paper: one seed per width)": width, "retrain recipe": recipe, "table 4's other rows": table4}


def per_seed_recall(root=None) -> tuple[dict[str, list[float]], list[str]]:
    """Every seed at 500 steps: the paper's gated hybrid (its 3 runs), the paper's own code on our CPU,
    our ``gated_hybrid_paper`` (seeds 0-4 and the reference seeds) and ``gated_hybrid_repaired``; and the
    printed lines that list them."""
    root = Path(root) if root is not None else results_dir()
    per_seed = {"paper's gated hybrid\n(the paper, MPS, 3 seeds)": list(PAPER["recall_seeds"]["gated_hybrid_paper"])}
    reference = _read(root / "recall_reference_code.json")["runs"]
    per_seed[f"the paper's own code\n(our CPU, {len(reference)} seeds)"] = [r["eval_accuracy"] for r in reference]
    lines = ["paper's own code     steps 500: " + ", ".join(f"seed {r['seed']} {r['eval_accuracy']:.1%}"
                                                          for r in reference)]
    for label, files in (("gated_hybrid_paper", ("recall_gated_hybrid_paper.json",
                                                 "issue32/recall_reference_seeds_ours.json")),
                         ("gated_hybrid_repaired, tied W_qk", ("recall_eval100-200-500.json",))):
        runs = [r for file in files for r in load_runs(root / file)]
        per_seed[f"{label}\n(ours, {len(runs)} seeds)"] = [r["value"] for r in runs]
        lines.append(f"{label:20s} steps {sorted({r['steps'] for r in runs})}: "
                     + ", ".join(f"seed {r['seed']} {r['value']:.1%}" for r in runs))
    return per_seed, lines


def init_diagnosis_markdown(root=None) -> str:
    """``recall_init_diagnosis.json``: where the right entry sits at initialization, per configuration."""
    root = Path(root) if root is not None else results_dir()
    diagnosis = _read(root / "recall_init_diagnosis.json")["mean_over_seeds"]
    lines = [("| configuration | right entry in the top-8 | median rank of the right entry (of 126) | weight on it | "
              "filler share of the top-8 |"), "|---|---|---|---|---|"]
    for name, m in diagnosis.items():
        lines.append(f"| {name.replace('gated_hybrid_paper ', '')} | {m['in_kept']:.1%} "
                     f"| {m['answer_rank_median']:.0f} | {m['answer_weight']:.3f} | {m['filler_share']:.0%} |")
    return "\n".join(lines)
