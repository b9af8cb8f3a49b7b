"""Committed results of the 'where recall breaks' tasks: overwrite, alias, distance.

One table row per (variant, --set overrides) over seeds, with several rates per run (the
accuracy and what the task adds: the earlier-value rate of overwrite, the accuracy per length
of distance). The alias control (identical tokens) and runs at other than the command's default
step count get rows of their own. :mod:`tl_research.results` re-exports every public
name here, so ``results.break_rows("alias")`` is the way notebooks call it.

    rows = break_rows("distance")            # every distance*.json of the results folder
    print(break_markdown(rows))              # model, params, seeds, steps, one column per rate
    break_chance("distance")                 # {"constant": 0.125, "in_context_pick": 0.25}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocols import PROTOCOLS
from .files import expand, load, override_label, results_dir
from .stats import fmt, markdown, same_params, spread, variant_rank

BREAK_RATES = {  # task -> (run field, column title) shown in its table; "value" is the accuracy
    "overwrite": (("value", "latest value (accuracy)"), ("earlier_rate", "an earlier value"),
                  ("other_rate", "anything else")),
    "alias": (("value", "accuracy"),),
    # distance: one column per length first (see break_columns), then the mean over the lengths
    "distance": (("value", "mean over lengths"),),
}


@dataclass
class BreakRow:
    """One variant (with its --set overrides) on one of the 'where recall breaks' tasks, over seeds."""
    task: str
    label: str
    variant: str
    params: int | None
    steps: set = field(default_factory=set)
    seeds: list = field(default_factory=list)
    rates: dict = field(default_factory=dict)  # rate name -> [one value per seed]

    def stats(self, name: str = "value") -> tuple[float, float, float, int]:
        """(mean, sample std (0 for one seed), min, seeds) of one rate."""
        return spread(self.rates[name])


def _rates(task: str, run: dict) -> dict:
    """The rates of one run: its BREAK_RATES fields, and for distance "length T" = accuracy at length T."""
    out = {name: run[name] for name, _ in BREAK_RATES[task]}
    for T, at in (run.get("by_length") or {}).items():
        out[f"length {T}"] = at["accuracy"]
    return out


def _label(task: str, overrides: dict, run: dict) -> str:
    """A run's row: variant + overrides; the alias control " (identical tokens)", its curriculum
    " (trained with N% identical)"; other steps " (N steps)"."""
    label = run["variant"] + (f" ({override_label(overrides)})" if overrides else "")
    if run.get("same_alias"):
        label += " (identical tokens)"
    if run.get("same_alias_share"):  # a training curriculum: that share of questions with the written token
        label += f" (trained with {run['same_alias_share']:.0%} identical)"
    if run["steps"] != PROTOCOLS[task].steps:  # a longer (or shorter) run than the command's default
        label += f" ({run['steps']} steps)"
    return label


def _labelled_runs(task: str, paths=None):
    """(row label, run) for every run of ``<task>*.json`` that has a value (diagnoses are skipped)."""
    for path in expand(paths if paths is not None else results_dir() / f"{task}*.json"):
        data = load(path)
        if data["protocol"].get("task") != task:
            continue
        overrides = data["protocol"].get("overrides") or {}
        for run in data["runs"]:
            if run.get("value") is not None:
                yield _label(task, overrides, run), run


def break_rows(task: str, paths=None) -> list[BreakRow]:
    """Every run of ``<task>*.json`` (runs without a value, e.g. diagnoses, are skipped), grouped by
    label (:func:`_label`: variant + overrides, the alias control, the curriculum, other than the
    command's default steps), in the variant order of the other tables."""
    rows: dict[str, BreakRow] = {}
    for label, run in _labelled_runs(task, paths):
        row = rows.setdefault(label, BreakRow(task, label, run["variant"], run["params"]))
        row.params = same_params(label, row.params, run["params"])
        row.steps.add(run["steps"])
        row.seeds.append(run["seed"])
        for name, value in _rates(task, run).items():
            row.rates.setdefault(name, []).append(value)
    for row in rows.values():
        if len({len(v) for v in row.rates.values()}) > 1:
            raise ValueError(f"{row.label}: its runs were evaluated at different lengths ({sorted(row.rates)})")
    return sorted(rows.values(), key=lambda r: (variant_rank(r.variant), r.label))


def break_curves(task: str, paths=None) -> dict[str, dict[int, list[float]]]:
    """Training-loss curves in nats, one point every 10 steps: {row label: {seed: curve}} (labels as
    :func:`break_rows`); runs recorded without a curve are left out."""
    curves: dict[str, dict[int, list[float]]] = {}
    for label, run in _labelled_runs(task, paths):
        if run.get("loss_curve_every_10"):
            curves.setdefault(label, {})[run["seed"]] = list(run["loss_curve_every_10"])
    return curves


def break_columns(rows: list[BreakRow]) -> list[tuple[str, str]]:
    """(rate name, column title) of a table of ``rows``: per-length columns (shortest first), then the task's."""
    lengths = sorted({int(n.split()[1]) for r in rows for n in r.rates if n.startswith("length ")})
    per_length = [(f"length {T}", f"{T:,} tokens") for T in lengths]
    return per_length + list(BREAK_RATES[rows[0].task]) if rows else []


def break_chance(task: str, paths=None) -> dict:
    """The task's chance lines as recorded in its runs (``run["chance"]``), e.g. {"constant": 0.0625, ...}."""
    for path in expand(paths if paths is not None else results_dir() / f"{task}*.json"):
        for run in load(path)["runs"]:
            if "chance" in run:
                return dict(run["chance"])
    return {}


def break_markdown(rows: list[BreakRow]) -> str:
    """Markdown: model, params, seeds, steps, then mean ± std (min) of each of the task's rates
    (one seed: the value)."""
    if not rows:
        return "(no results yet: run the commands in data/results/run_all.sh)"
    columns = break_columns(rows)
    head = ["model", "params", "seeds", "steps"] + [title for _, title in columns]
    lines = []
    for r in rows:
        cells = [f"`{r.label}`", f"{r.params:,}", str(len(r.seeds)), ", ".join(map(str, sorted(r.steps)))]
        for name, _ in columns:
            if name not in r.rates:
                cells.append("-")
                continue
            mean, std, low, n = r.stats(name)
            cells.append(f"{fmt(mean, std, percent=True)} ({fmt(low, percent=True)})" if n > 1
                         else fmt(mean, percent=True))  # one seed: no spread to show
        lines.append(cells)
    return markdown(head, lines)
