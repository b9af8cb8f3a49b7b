"""Table 5, MQAR: one row per (variant, pairs, sequence length), the accuracy at each evaluated step.

    rows = mqar_rows()                 # every mqar*.json of the results folder
    print(mqar_markdown(rows))         # mean ± std (min) over seeds per evaluated step, and chance
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .files import expand, is_gathered, load, results_dir
from .stats import fmt, markdown, same_params, spread, variant_rank


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
