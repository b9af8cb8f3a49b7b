"""Committed results of the ``induction`` task: rows over seeds, markdown tables, mean curves.

The experiments command writes one ``induction*.json`` per step count and settings (layout
in :mod:`tl_research.runner`; the run fields in :mod:`tl_research.induction`).
This module groups their runs into one row per (variant with its ``--set`` overrides, steps):

    rows = induction_rows()                      # every induction*.json of the results folder
    print(induction_markdown(rows, steps=2000))  # text and random bytes: 1st copy, 2nd copy, ratio, control
    print(read_off_markdown(rows))               # gated hybrids: the same with the key-value read off
    first, second = rows[0].curve("text")        # mean over seeds, bits per byte at each position

All losses are bits per byte; a ratio is mean loss on the second copy / mean loss on the first.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from .files import expand, load, override_label, results_dir
from .stats import fmt, markdown, same_params, spread, variant_rank

BASE = ("text", "random", "text_control", "random_control")  # the evaluation sets of every run
KINDS = BASE + tuple(f"{k}_read_off" for k in BASE)  # gated hybrids: each again with the read off
NUMBERS = ("first_bits", "second_bits", "ratio")  # per measurement, one number per seed


@dataclass
class InductionRow:
    """One variant (with its overrides) at one step count, over seeds."""

    label: str
    variant: str
    params: int | None
    steps: int
    seeds: list = field(default_factory=list)
    bpb: list = field(default_factory=list)  # one value per seed
    numbers: dict = field(default_factory=dict)  # (kind, number) -> [one value per seed]
    curves: dict = field(default_factory=dict)  # (kind, "first" | "second") -> [[L values] per seed]

    def stats(self, kind: str, number: str = "ratio") -> tuple[float, float, int]:
        """(mean, sample std (0 for one seed), seeds) of one number, e.g. ("text", "ratio")."""
        mean, std, _, n = spread(self.numbers[(kind, number)])
        return mean, std, n

    def has(self, kind: str) -> bool:
        return (kind, "ratio") in self.numbers

    def curve(self, kind: str = "text") -> tuple[list[float], list[float]]:
        """Mean over seeds of the per-position bits: (first copy [L], second copy [L])."""
        return tuple([statistics.fmean(col) for col in zip(*self.curves[(kind, copy)], strict=True)]
                     for copy in ("first", "second"))


def induction_rows(paths=None) -> list[InductionRow]:
    """Every run of ``induction*.json`` (or ``paths``: files or globs), one row per (label, steps), ordered
    by steps, then the paper's variant order, then label."""
    rows: dict[tuple, InductionRow] = {}
    for path in expand(paths if paths is not None else results_dir() / "induction*.json"):
        data = load(path)
        if data["protocol"].get("task") != "induction":
            raise ValueError(f"{path} holds {data['protocol'].get('task')!r} results, not induction")
        overrides = data["protocol"].get("overrides") or {}
        for run in (r for r in data["runs"] if r.get("value") is not None):  # diverged runs have no value
            label = run["variant"] + (f" ({override_label(overrides)})" if overrides else "")
            row = rows.setdefault((label, run["steps"]), InductionRow(label, run["variant"], run["params"],
                                                                      run["steps"]))
            row.params = same_params(label, row.params, run["params"])
            row.seeds.append(run["seed"])
            row.bpb.append(run["bpb"])
            for kind in (k for k in KINDS if k in run):
                for number in NUMBERS:
                    row.numbers.setdefault((kind, number), []).append(run[kind][number])
                for copy in ("first", "second"):
                    row.curves.setdefault((kind, copy), []).append(run[kind][f"curve_{copy}"])
    return sorted(rows.values(), key=lambda r: (r.steps, variant_rank(r.variant), r.label))


def _cell(row: InductionRow, kind: str, number: str, digits: int = 3) -> str:
    if not row.has(kind):
        return "-"
    mean, std, n = row.stats(kind, number)
    return fmt(mean, std if n > 1 else None, digits=digits)


def induction_markdown(rows: list[InductionRow], steps: int | None = None) -> str:
    """Markdown: model, params, seeds, steps, BPB, then first copy / second copy (bits), their ratio and the
    control's ratio (a different span in the second half), on text and on random bytes; mean ± std over
    seeds. ``steps`` keeps only the rows of that step count."""
    rows = [r for r in rows if steps is None or r.steps == steps]
    if not rows:
        return "(no induction results yet: run `bash data/results/run_all.sh induction`)"
    head = ["model", "params", "seeds", "steps", "BPB"] + [f"{kind}: {what}" for kind in ("text", "random")
                                                          for what in ("1st copy", "2nd copy", "ratio", "control")]
    lines = []
    for r in rows:
        bpb = fmt(statistics.fmean(r.bpb), statistics.stdev(r.bpb) if len(r.bpb) > 1 else None)
        cells = [f"`{r.label}`", f"{r.params:,}", str(len(r.seeds)), str(r.steps), bpb]
        for kind in ("text", "random"):
            cells += [_cell(r, kind, "first_bits", 2), _cell(r, kind, "second_bits", 2), _cell(r, kind, "ratio"),
                      _cell(r, f"{kind}_control", "ratio")]
        lines.append(cells)
    return markdown(head, lines)


def read_off_markdown(rows: list[InductionRow]) -> str:
    """Markdown for the rows that have a key-value read: the second copy's bits and the ratio with the read
    on and switched off, on text and on random bytes."""
    rows = [r for r in rows if r.has("text_read_off")]
    if not rows:
        return "(no gated hybrid in the induction results yet)"
    head = ["model", "seeds", "steps"] + [f"{kind}: {what}" for kind in ("text", "random")
                                         for what in ("2nd copy", "2nd copy, read off", "ratio", "ratio, read off")]
    lines = []
    for r in rows:
        cells = [f"`{r.label}`", str(len(r.seeds)), str(r.steps)]
        for kind in ("text", "random"):
            cells += [_cell(r, kind, "second_bits", 2), _cell(r, f"{kind}_read_off", "second_bits", 2),
                      _cell(r, kind, "ratio"), _cell(r, f"{kind}_read_off", "ratio")]
        lines.append(cells)
    return markdown(head, lines)


__all__ = ["InductionRow", "induction_markdown", "induction_rows", "read_off_markdown"]
