"""Committed results: load the experiments command's JSON, summarize over seeds, set beside the paper.

The experiments command (``python -m tl_minimal.experiments``) writes one JSON file per run of
the command (see ``tl_minimal/experiments/runner.py`` for the layout). A *table* of the
reproduction is one or more such files: a parameter-matched table, for instance, needs one
command per variant because each variant gets its own ``--set`` sizes. This module

- loads the files (:func:`load_runs`), tagging every run with the file's overrides;
- groups runs into rows, one per (variant, overrides), with mean and sample standard deviation
  over seeds and the parameter count (:func:`summarize`);
- holds the paper's numbers (:data:`PAPER`, from ``docs/paper.md`` section 5) and formats a
  markdown table with ours beside them (:func:`markdown_table`).

    rows = summarize(load_runs(["data/results/lm_matched_width.json"]))
    print(markdown_table(rows, paper=PAPER["lm_matched_width"]))
"""

from __future__ import annotations

import glob
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parents[2] / "data" / "results"

# The paper's numbers (docs/paper.md section 5). A string is a claim given in words, not a number.
PAPER_SOURCE = "docs/paper.md section 5 (the paper's numbers)"
PAPER: dict[str, dict] = {
    # Where each number is printed: docs/paper.md section 5 names the paper's table and line for each.
    "lm_matched_width": {  # byte WT2 BPB, matched width S=16, 80 steps, one run (the paper's main table)
        "transformer": 5.124,
        "triple_latent": 5.022,
        "triple_slot": 5.041,
        "triple_hybrid": 4.766,
        # the gated hybrid's 80-step BPB (recall table; one run, symmetric convolution)
        "gated_hybrid_paper": 3.595,
        "gated_hybrid (causal=False)": 3.595,
    },
    "lm_param_matched": {  # byte WT2 BPB, parameter-matched, one run (main table)
        "transformer": 5.124,
        "triple_latent": 5.114,  # d=60, S=16
        "triple_slot": 5.126,  # d=60, S=16
        "triple_hybrid": 5.067,  # d=56, S=16
        "triple_hybrid (S=8)": "4.806 (budget winner; its Transformer 5.143)",
    },
    # d=64 S=8: 3 seeds (abstract, results text, main table); "pilot": the sweep's single run
    "lm_budget_winner": {"transformer": 5.143, "triple_hybrid": 4.806, "triple_hybrid (pilot)": 4.827},
    "tokenized": {  # MiniMind mean token loss, 3 seeds (the arXiv text; not in the repository's TeX)
        "transformer": 7.317,
        "triple_hybrid": 7.035,
        "transformer_plus_triple": 7.239,
        "gated_hybrid": 6.766,
        "gated_hybrid_paper": 6.766,
    },
    # 3 seeds (7, 19, 29), 500 steps (recall table); the paper's gated row is gated_hybrid_paper
    "recall": {"transformer": 0.250, "triple_hybrid": 0.116, "gated_hybrid_paper": 0.419},
    # the same runs per seed 7 / 19 / 29 (the paper's result file; its text: "one seed exact")
    "recall_seeds": {"transformer": (0.256, 0.239, 0.253), "triple_hybrid": (0.114, 0.120, 0.116),
                     "gated_hybrid_paper": (0.142, 1.000, 0.116)},
    # 200 steps, one run, matched width S=16 (main table); 13.4% = 274 / 2,048, a constant guess
    "recall_200": {"transformer": 0.254, "triple_latent": 0.134, "triple_slot": 0.134, "triple_hybrid": 0.134},
    # the gated hybrid's width sweep: one seed, 500 steps ("non-monotonic in width")
    "recall_width": {"gated_hybrid_paper (d=64)": 1.000, "gated_hybrid_paper (d=80)": 0.672,
                     "gated_hybrid_paper (d=96)": 0.1196},
    # retrained with a 50-step lr warm-up, a length curriculum 32 -> 128 over 150 steps and read-gate
    # bias -2; 3 seeds, 500 steps (best seed 13.4%)
    "recall_retrain": {"gated_hybrid_paper": 0.127},
    "recall_retrain_seeds": {"gated_hybrid_paper": (0.130, 0.134, 0.116)},  # seeds 7 / 19 / 29 (result file)
    # an ungated previous-token query trained as long ("same-budget long-run check")
    "recall_ungated": {"gated_hybrid_paper (no gate)": 0.1196},
    # the recall table's byte-level BPB column (80 steps, one run, symmetric convolution)
    "lm_recall_table": {"transformer": 5.144, "triple_hybrid (S=8)": 4.843, "gated_hybrid_paper": 3.595},
    # dominant forward MFLOPs (d=64, 3 layers, S=8, vocab 259) and the ratio to the Transformer
    "flops_t64": {"transformer": 24.1, "triple_hybrid": 21.8, "gated_hybrid_paper": 25.8},
    "flops_t128": {"transformer": 54.6, "triple_hybrid": 43.5, "gated_hybrid_paper": 52.1},
    "flops_t512": {"transformer": 369.3, "triple_hybrid": 174.0, "gated_hybrid_paper": 220.9},
    "flops_ratio_t64": {"triple_hybrid": 0.90, "gated_hybrid_paper": 1.07},
    "flops_ratio_t128": {"triple_hybrid": 0.80, "gated_hybrid_paper": 0.95},
    "flops_ratio_t512": {"triple_hybrid": 0.47, "gated_hybrid_paper": 0.60},
    # forward-only throughput on Apple MPS: times slower than the Transformer
    "slowdown_t64": {"triple_hybrid": 32.7, "gated_hybrid_paper": 106.5},
    "slowdown_t512": {"triple_hybrid": 18.2, "gated_hybrid_paper": 70.1},
    "tokens_per_s_t64": {"transformer": 602_684, "triple_hybrid": 18_433, "gated_hybrid_paper": 5_659},
    "tokens_per_s_t512": {"transformer": 344_185, "triple_hybrid": 18_870, "gated_hybrid_paper": 4_910},
    # parameter counts the paper prints, keyed by our label for the same configuration (vocab 259)
    "params": {"transformer": 174_848, "triple_latent": 187_928, "triple_slot": 188_024,
               "triple_hybrid": 208_472, "triple_latent (d=60, S=16)": 170_424,
               "triple_slot (d=60, S=16)": 170_520, "triple_hybrid (d=56, S=16)": 169_424,
               "triple_hybrid (S=8)": 177_752},
}
PAPER_PARAMS = {"transformer": 174_848, "triple_hybrid (d=56, S=16)": 169_424,
                "triple_hybrid (d=64, S=8)": 177_752}

# row order in every table: the paper's variant order, then the frozen paper configuration
ORDER = ("transformer", "triple_latent", "triple_slot", "triple_hybrid", "transformer_plus_triple",
         "gated_hybrid", "gated_hybrid_paper")
_SHORT = {"d_model": "d", "state_dim": "S", "num_slots": "K", "conv_causal": "causal"}


def _order(variant: str) -> int:
    """Position of a variant in :data:`ORDER` (unknown variants last)."""
    return ORDER.index(variant) if variant in ORDER else len(ORDER)


def load(path) -> dict:
    """One results file as a dict; a clear error when it is missing or not a results file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no results file {path}: run the command in data/results/run_all.sh")
    data = json.loads(path.read_text())
    if "runs" not in data or "protocol" not in data:
        raise ValueError(f"{path} is not an experiments results file (needs 'protocol' and 'runs')")
    return data


def _paths(paths) -> list[Path]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    for p in paths:
        hits = sorted(glob.glob(str(p)))
        out += [Path(h) for h in hits] if hits else [Path(p)]  # a missing plain path errors in load
    return out


def override_label(overrides: dict) -> str:
    """{"d_model": 56, "state_dim": 16} -> "d=56, S=16" ("" for no overrides)."""
    return ", ".join(f"{_SHORT.get(k, k)}={v}" for k, v in sorted(overrides.items()))


def load_runs(paths) -> list[dict]:
    """Every run of every file (globs allowed), each with ``overrides``, ``label`` and ``file``."""
    runs = []
    for path in _paths(paths):
        data = load(path)
        overrides = data["protocol"].get("overrides") or {}
        for run in data["runs"]:
            label = run["variant"] + (f" ({override_label(overrides)})" if overrides else "")
            runs.append({**run, "overrides": overrides, "label": label, "file": path.name,
                         "protocol": data["protocol"]})
    return runs


@dataclass
class Row:
    """One table row: a variant (with its overrides) summarized over seeds."""

    label: str
    variant: str
    params: int | None
    values: list = field(default_factory=list)  # one metric value per seed (None: diverged)
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
        if r["params"] is not None and row.params not in (None, r["params"]):
            raise ValueError(f"{r['label']}: runs with different parameter counts ({row.params}, {r['params']})")
        row.params = row.params or r["params"]
        row.values.append(r["value"])
        row.steps.append(r["steps"])
        row.seconds.append(r["seconds"])
    return list(rows.values())


def fmt(value, std=None, percent=False, digits=3) -> str:
    """3.1416, 0.01 -> "3.142 ± 0.010"; percent=True shows fractions as percentages."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    scale, unit = (100.0, "%") if percent else (1.0, "")
    d = 1 if percent else digits
    text = f"{value * scale:.{d}f}{unit}"
    return text if std is None else f"{text} ± {std * scale:.{d}f}"


def markdown_table(rows: list[Row], paper: dict | None = None, percent=False, metric="BPB",
                   show_steps=False) -> str:
    """A markdown table: model, parameters, seeds, ours (mean ± std), the paper's number."""
    head = ["model", "params", "seeds", f"ours {metric}"] + (["steps"] if show_steps else [])
    head += ["paper"] if paper is not None else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"`{r.label}`", f"{r.params:,}" if r.params else "-", str(r.n),
                 fmt(r.mean, r.std, percent)]
        if show_steps:
            ok = [s for s in r.steps if s is not None]
            cells.append(f"{min(ok)}-{max(ok)}" if ok and min(ok) != max(ok) else str(ok[0] if ok else "-"))
        if paper is not None:
            cells.append(fmt(paper.get(r.label, paper.get(r.variant)), percent=percent))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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

    def runs(self, root=None) -> list[dict]:
        root = Path(root or RESULTS_DIR)
        out = []
        for pattern, variants in self.sources:
            if not glob.glob(str(root / pattern)):
                continue  # a table whose runs have not landed yet shows what it has
            out += [r for r in load_runs(root / pattern) if variants is None or r["variant"] in variants]
        return out

    def files(self, root=None) -> list[Path]:
        root = Path(root or RESULTS_DIR)
        return [Path(h) for pattern, _ in self.sources for h in sorted(glob.glob(str(root / pattern)))]

    def rows(self, root=None) -> list[Row]:
        """Summarized rows in :data:`ORDER` (a variant with several configurations: file order)."""
        return sorted(summarize(self.runs(root)), key=lambda r: _order(r.variant))

    def markdown(self, root=None) -> str:
        runs = self.runs(root)
        if not runs:
            return f"(no results yet for {self.key}: run `bash data/results/run_all.sh`)"
        paper = PAPER.get(self.paper) if self.paper else None
        return markdown_table(self.rows(root), paper, self.percent, self.metric, self.show_steps)


TABLES = {t.key: t for t in (
    Table("lm_matched_width", "1. Byte-level WikiText-2, matched width (S=16), 80 steps",
          (("lm_matched_width.json", None), ("lm_matched_width_gated_paper.json", None)), "lm_matched_width"),
    Table("lm_leak", "1b. The hybrids with the paper's non-causal (symmetric) convolution, 80 steps",
          (("lm_matched_width.json", ("triple_hybrid", "gated_hybrid")), ("lm_leak.json", None)),
          "lm_matched_width"),
    Table("lm_param_matched", "2. Byte-level, parameter-matched (within 5% of 174,848), 80 steps",
          (("lm_matched_width.json", ("transformer",)), ("lm_param_matched_*.json", None)),
          "lm_param_matched"),
    Table("lm_time_matched", "3a. Time-matched: the same wall-clock training budget per run on this CPU",
          (("lm_time_matched.json", None),), None, show_steps=True),
    Table("lm_2000_steps", "3b. 2,000 steps instead of 80",
          (("lm_2000_steps_*.json", None),), None, show_steps=True),
    Table("tokenized", "6. Tokenized LM, MiniMind tokenizer, 120 steps (mean token loss, nats)",
          (("tokenized.json", None), ("tokenized_gated_hybrid.json", None), ("tokenized_leak.json", None)),
          "tokenized", metric="loss"),
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
    lines = ["| model | " + " | ".join(f"{field}={v:g}" for v in values) + " |", "|---|" + "---|" * len(values)]
    for variant in sorted(cells, key=_order):
        row = []
        for v in values:
            cell = cells[variant].get(v)
            if cell is None or not cell.ok:
                row.append("diverged" if cell else "-")
            elif len(cell.ok) == 1:
                row.append(fmt(cell.mean))
            else:
                row.append(f"{fmt(cell.mean, cell.std)} ({len(cell.ok)})")
        lines.append(f"| `{variant}` | " + " | ".join(row) + " |")
    return "\n".join(lines)


# ---- table 5: MQAR, one row per (variant, pairs, sequence length), accuracy at each evaluated step ----

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
        accs = self.by_step[step]
        return statistics.fmean(accs), statistics.stdev(accs) if len(accs) > 1 else 0.0, min(accs), len(accs)


def mqar_rows(paths=None) -> list[RecallRow]:
    """Every ``mqar_*.json`` run, grouped by (variant, pairs, seq_len), in pairs / length / ORDER order."""
    rows: dict[tuple, RecallRow] = {}
    for path in _paths(paths if paths is not None else RESULTS_DIR / "mqar_*.json"):
        data = load(path)
        p = data["protocol"]
        for run in data["runs"]:
            key = (run["variant"], p["n_pairs"], p["seq_len"])
            row = rows.setdefault(key, RecallRow(run["variant"], run["params"], p["n_pairs"], p["seq_len"],
                                                 data["constant_guess"]["expected"]))
            if row.params != run["params"]:
                raise ValueError(f"{key}: runs with different parameter counts ({row.params}, {run['params']})")
            for step, acc in run["by_step"].items():
                row.by_step.setdefault(int(step), []).append(acc["accuracy"])
    return sorted(rows.values(), key=lambda r: (r.pairs, r.seq_len, _order(r.variant)))


def mqar_markdown(rows: list[RecallRow]) -> str:
    """Markdown: one line per (variant, pairs, length); mean ± std (min) per evaluated step."""
    steps = sorted({s for r in rows for s in r.by_step})
    head = ["model", "params", "pairs", "seq", "chance", "seeds"] + [f"{s} steps" for s in steps]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
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
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def provenance(paths) -> list[dict]:
    """Per file: protocol summary, data source, device, commit, date and the exact command."""
    out = []
    for path in _paths(paths):
        p = load(path)["protocol"]
        env = p.get("environment", {})
        out.append({"file": path.name, "task": p.get("task"), "steps": p.get("steps"),
                    "seeds": p.get("seeds"), "max_seconds": p.get("max_seconds"),
                    "overrides": p.get("overrides"), "data_source": p.get("data_source"),
                    "data_note": p.get("data_note"), "device": env.get("device"),
                    "threads": env.get("threads"), "git_commit": env.get("git_commit"),
                    "date": env.get("date"), "command": env.get("command")})
    return out


__all__ = [
    "BREAK_RATES",
    "PAPER",
    "PAPER_PARAMS",
    "PAPER_SOURCE",
    "RESULTS_DIR",
    "TABLES",
    "BreakRow",
    "RecallRow",
    "Row",
    "Table",
    "break_chance",
    "break_columns",
    "break_curves",
    "break_markdown",
    "break_rows",
    "fmt",
    "load",
    "load_runs",
    "markdown_table",
    "mqar_markdown",
    "mqar_rows",
    "override_label",
    "provenance",
    "summarize",
    "sweep_markdown",
]


# the 'where recall breaks' tables live in their own module (it imports the helpers above)
from .results_breaks import (
    BREAK_RATES,
    BreakRow,
    break_chance,
    break_columns,
    break_curves,
    break_markdown,
    break_rows,
)
