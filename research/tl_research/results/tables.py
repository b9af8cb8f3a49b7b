"""The language-model tables (1-3, 6): a row is one (variant, overrides) over seeds (:func:`summarize`);
:func:`markdown_table` sets it beside the paper's number and a yardstick row's paired difference;
:data:`TABLES` says which files back which table.

    print(TABLES["lm_matched_width"].markdown())
"""

from __future__ import annotations

import glob
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from tl_minimal.results.paper_numbers import PAPER

from .files import load_runs, results_dir
from .intervals import paired_difference
from .stats import fmt, markdown, same_params, variant_rank


@dataclass
class Row:
    """One table row: a variant (with its overrides) summarized over seeds."""

    label: str
    variant: str
    params: int | None
    values: list = field(default_factory=list)  # one metric value per seed (None: diverged)
    seeds: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    seconds: list = field(default_factory=list)

    @property
    def ok(self) -> list[float]:
        return [v for v in self.values if v is not None]

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.ok) if self.ok else None

    @property
    def std(self) -> float | None:
        return statistics.stdev(self.ok) if len(self.ok) > 1 else None

    @property
    def n(self) -> int:
        return len(self.values)


def summarize(runs: list[dict]) -> list[Row]:
    """Rows in first-seen order, one per label; ValueError if a label mixes parameter counts."""
    rows: dict[str, Row] = {}
    for r in runs:
        row = rows.setdefault(r["label"], Row(r["label"], r["variant"], r["params"]))
        row.params = same_params(r["label"], row.params, r["params"])
        row.values.append(r["value"])
        row.seeds.append(r.get("seed"))
        row.steps.append(r["steps"])
        row.seconds.append(r["seconds"])
    return list(rows.values())


def _steps_cell(steps: list) -> str:
    ok = [s for s in steps if s is not None]
    return f"{min(ok)}-{max(ok)}" if ok and min(ok) != max(ok) else str(ok[0] if ok else "-")


def paper_number(paper: dict, row: Row, by_label: bool = False):
    """The paper's number for a row: keyed by its label, else (unless ``by_label``) by its variant."""
    return paper.get(row.label) if by_label else paper.get(row.label, paper.get(row.variant))


def paired_cell(row: Row, yardstick: Row | None) -> str:
    """"+0.054 [-0.073, +0.180] (3)": row minus yardstick, paired by seed, 95% interval (n seeds)."""
    if yardstick is None or row is yardstick:
        return "-"
    a = {s: v for s, v in zip(row.seeds, row.values, strict=True) if v is not None}
    b = {s: v for s, v in zip(yardstick.seeds, yardstick.values, strict=True) if v is not None}
    if len(set(a) & set(b)) < 2:
        return f"({len(set(a) & set(b))} shared seed)"
    d = paired_difference(a, b)
    return f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] ({len(d.seeds)})"


def markdown_table(rows: list[Row], paper: dict | None = None, percent=False, metric="BPB",
                   show_steps=False, by_label=False, paired_with: str | None = None) -> str:
    """A markdown table: model, parameters, seeds, ours (mean ± std), the paired difference from the
    ``paired_with`` row, the paper's number (keyed by the row's label, else by its variant;
    ``by_label``: only by its label)."""
    yardstick = next((r for r in rows if r.label == paired_with), None)
    head = ["model", "params", "seeds", f"ours {metric}"] + (["steps"] if show_steps else [])
    head += [f"minus `{paired_with}`, paired 95%"] if paired_with else []
    head += ["paper"] if paper is not None else []
    lines = []
    for r in rows:
        cells = [f"`{r.label}`", f"{r.params:,}" if r.params else "-", str(r.n), fmt(r.mean, r.std, percent)]
        cells += [_steps_cell(r.steps)] if show_steps else []
        cells += [paired_cell(r, yardstick)] if paired_with else []
        if paper is not None:
            cells.append(fmt(paper_number(paper, r, by_label), percent=percent))
        lines.append(cells)
    return markdown(head, lines)


@dataclass
class Table:
    """One reproduction table: where its runs are (file globs, optionally only some variants)."""

    key: str
    title: str
    sources: tuple  # ((glob, variants or None), ...), relative to the results folder
    paper: str | None = None  # key of PAPER
    metric: str = "BPB"
    percent: bool = False
    show_steps: bool = False
    # the paper's numbers belong to rows of the paper's configuration only: our own alternative
    # configurations of a variant (table 2's S=12 rows) get none
    paper_by_label: bool = False
    paired_with: str | None = None  # a row label: each row's paired difference from it, by seed

    def runs(self, root=None) -> list[dict]:
        """The runs of the files that are there (a table whose runs have not landed yet shows what it has)."""
        root = Path(root or results_dir())
        return [r for pattern, variants in self.sources for r in load_runs(sorted(glob.glob(str(root / pattern))))
                if variants is None or r["variant"] in variants]

    def files(self, root=None) -> list[Path]:
        root = Path(root or results_dir())
        return [Path(h) for pattern, _ in self.sources for h in sorted(glob.glob(str(root / pattern)))]

    def rows(self, root=None) -> list[Row]:
        """Summarized rows in ORDER (a variant with several configurations: source order)."""
        return sorted(summarize(self.runs(root)), key=lambda r: variant_rank(r.variant))

    def markdown(self, root=None) -> str:
        if not self.runs(root):
            return f"(no results yet for {self.key}: run `bash data/results/run_all.sh`)"
        paper = PAPER.get(self.paper) if self.paper else None
        return markdown_table(self.rows(root), paper, self.percent, self.metric, self.show_steps,
                              self.paper_by_label, self.paired_with)

    def paper_number(self, row: Row):
        """The paper's number beside ``row`` in this table (None: the paper has no such row)."""
        return paper_number(PAPER.get(self.paper) or {}, row, self.paper_by_label)


# The files behind each table (names: see data/results/README.md). The order of the sources is the
# order of rows that share a variant (the parameter-matched triple_hybrid at S=16, then at S=8).
TABLES = {t.key: t for t in (
    Table("lm_matched_width", "1. Byte-level WikiText-2, matched width (S=16), 80 steps",
          (("lm.json", None),), "lm_matched_width", paired_with="transformer"),
    Table("lm_leak", "1b. The hybrids with the paper's non-causal (symmetric) convolution, 80 steps",
          (("lm.json", ("triple_hybrid", "gated_hybrid_repaired")), ("lm_noncausal.json", None)),
          "lm_matched_width"),
    Table("lm_param_matched", "2. Byte-level, parameter-matched (within 5% of 174,848), 80 steps",
          (("lm.json", ("transformer",)), ("lm_d60_S16.json", None), ("lm_d60_S8.json", None),
           ("lm_d60.json", None), ("lm_d56_S16.json", None), ("lm_S8.json", None), ("lm_S12.json", None)),
          "lm_param_matched", paper_by_label=True),
    Table("lm_time_matched", "3a. Time-matched: the same wall-clock training budget per run on this CPU",
          (("lm_40s_budget.json", None),), None, show_steps=True),
    Table("lm_2000_steps", "3b. 2,000 steps instead of 80",
          (("lm_2000steps.json", None),), None, show_steps=True, paired_with="transformer"),
    Table("tokenized", "6. Tokenized LM, MiniMind tokenizer, 120 steps (mean token loss, nats)",
          (("tokenized.json", None), ("tokenized_noncausal.json", None)), "tokenized", metric="loss"),
)}


def sweep_markdown(runs: list[dict], field: str = "lr") -> str:
    """Pivot: one row per variant, one column per value of a protocol ``field`` (e.g. the learning
    rate). A cell is one run's value, or "mean ± std (n seeds)" over several; a cell whose runs
    all diverged shows "diverged"."""
    cells: dict[str, dict[float, Row]] = {}
    for r in runs:
        cell = cells.setdefault(r["variant"], {}).setdefault(r["protocol"][field],
                                                           Row(r["variant"], r["variant"], r["params"]))
        cell.values.append(r["value"])
    values = sorted({v for row in cells.values() for v in row})
    lines = []
    for variant in sorted(cells, key=variant_rank):
        row = [f"`{variant}`"]
        for v in values:
            cell = cells[variant].get(v)
            if cell is None or not cell.ok:
                row.append("diverged" if cell else "-")
            elif len(cell.ok) == 1:
                row.append(fmt(cell.mean))
            else:
                row.append(f"{fmt(cell.mean, cell.std)} ({len(cell.ok)})")
        lines.append(row)
    return markdown(["model"] + [f"{field}={v:g}" for v in values], lines)
