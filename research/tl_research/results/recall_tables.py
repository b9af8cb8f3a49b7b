"""The recall tables of notebook 07: table 4 per committed file and table 5 (MQAR), over seeds.

    recall_file_reports()      per file: the constant guess's line, or a table per evaluated step
    mqar_markdown(mqar_rows()) one row per (variant, pairs, length): mean ± std (min) per evaluated step

Accuracies are fractions in the files and percent in the tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tl_minimal.results.paper_numbers import PAPER

from .files import expand, is_gathered, load, load_runs, results_dir
from .stats import fmt, markdown, same_params, spread, variant_rank
from .tables import markdown_table, summarize

# the constant guess; gated_hybrid_repaired, 5 seeds; gated_hybrid_paper, 5 seeds; table 4
RECALL_FILES = ("recall_constant_guess.json", "recall_eval100-200-500.json", "recall_gated_hybrid_paper.json",
                "recall.json")


def recall_file_reports(names=RECALL_FILES, root=None) -> list[tuple[str, str]]:
    """One ``(kind, text)`` per file: ``("text", line)`` for the constant-guess file (its best score
    over the evaluation sets), ``("markdown", tables)`` for a file of runs (one table per evaluated step,
    the paper's table 4 beside the 500-step one)."""
    root = Path(root) if root is not None else results_dir()
    out = []
    for path in (root / name for name in names):
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = [r for r in data.get("runs") or [] if "value" in r and "variant" in r]
        if not runs:
            guess = data.get("constant_guess") or {}
            best = [g["best_on_set"] for g in guess.values() if isinstance(g, dict) and "best_on_set" in g]
            if best:
                out.append(("text", f"{path.name}: best constant guess {100 * min(best):.1f}-{100 * max(best):.1f}% "
                                    f"over {len(best)} evaluation sets (expected 12.5%; a pick among the 4 values in "
                                    "context: 25%)"))
            continue
        proto = data["protocol"]
        by_step: dict[int, list[dict]] = {}
        for r in load_runs(path):
            for step, acc in (r.get("by_step") or {str(r["steps"]): {"accuracy": r["value"]}}).items():
                by_step.setdefault(int(step), []).append({**r, "value": acc["accuracy"], "steps": int(step)})
        head = (f"**`{path.name}`**: {proto.get('task')}, {proto.get('n_pairs')} pairs, "
                f"{proto.get('n_queries')} question(s), seeds {sorted({r['seed'] for r in runs})}")
        paper = PAPER["recall"] if proto.get("task") == "recall" else None  # table 4 quotes 500 steps
        tables = [f"after {s} steps\n\n"
                  + markdown_table(summarize(rs), paper if s == 500 else None, percent=True, metric="accuracy")
                  for s, rs in sorted(by_step.items())]
        out.append(("markdown", head + "\n\n" + "\n\n".join(tables)))
    return out


@dataclass
class RecallRow:
    """One MQAR setting of one variant: accuracy per evaluated step, over seeds, and its chance line."""
    variant: str
    params: int | None
    pairs: int
    seq_len: int
    chance: float  # the constant guess's expected accuracy (1 / number of values)
    by_step: dict = field(default_factory=dict)  # step -> [accuracy per seed]

    def stats(self, step: int) -> tuple[float, float, float, int]:
        """(mean, sample std, min, seeds) of the accuracies after ``step`` steps."""
        return spread(self.by_step[step])


def mqar_rows(paths=None) -> list[RecallRow]:
    """Every ``mqar*.json`` run, grouped by (variant, pairs, seq_len), in pairs / length / ORDER order.

    The calibrated protocol's gathered files (``mqar_calibrated_pairs*.json``, with ``sweep_runs``) are
    another budget and another form of the task: their table is ``calibrated_table``'s, not table 5."""
    rows: dict[tuple, RecallRow] = {}
    for path in expand(paths if paths is not None else results_dir() / "mqar*.json"):
        data = load(path)
        if is_gathered(data):
            continue
        p = data["protocol"]
        for run in data["runs"]:
            key = (run["variant"], p["n_pairs"], p["seq_len"])
            row = rows.setdefault(key, RecallRow(run["variant"], run["params"], p["n_pairs"], p["seq_len"],
                                                 data["constant_guess"]["expected"]))
            row.params = same_params(str(key), row.params, run["params"])
            for step, acc in run["by_step"].items():
                row.by_step.setdefault(int(step), []).append(acc["accuracy"])
    return sorted(rows.values(), key=lambda r: (r.pairs, r.seq_len, variant_rank(r.variant)))


def mqar_markdown(rows: list[RecallRow]) -> str:
    """Markdown: one line per (variant, pairs, length); mean ± std (min) per evaluated step."""
    steps = sorted({s for r in rows for s in r.by_step})
    head = ["model", "params", "pairs", "seq", "chance", "seeds"] + [f"{s} steps" for s in steps]
    lines = []
    for r in rows:
        seeds = max(len(a) for a in r.by_step.values())
        cells = [f"`{r.variant}`", f"{r.params:,}", str(r.pairs), str(r.seq_len), fmt(r.chance, percent=True),
                 str(seeds)]
        for s in steps:
            if s not in r.by_step:
                cells.append("-")
                continue
            mean, std, low, _ = r.stats(s)
            cells.append(f"{fmt(mean, std, percent=True)} ({fmt(low, percent=True)})")
        lines.append(cells)
    return markdown(head, lines)
