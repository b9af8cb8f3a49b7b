"""What every results table shares: the row order, numbers over seeds, the parameter check, markdown."""

from __future__ import annotations

import statistics

# row order in every table: the paper's variant order, then the frozen paper configuration
ORDER = ("transformer", "triple_latent", "triple_slot", "triple_hybrid", "transformer_plus_triple",
         "gated_hybrid_repaired", "gated_hybrid_paper")


def variant_rank(variant: str) -> int:
    """Position of a variant in :data:`ORDER` (unknown variants last): the sort key of every table."""
    return ORDER.index(variant) if variant in ORDER else len(ORDER)


def spread(values: list[float]) -> tuple[float, float, float, int]:
    """(mean, sample std (0 for one value), min, count) of one number over seeds."""
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return statistics.fmean(values), std, min(values), len(values)


def same_params(label: str, kept: int | None, new: int | None) -> int | None:
    """The row's parameter count after adding a run with ``new``: rows never mix model sizes.

    ``None`` (a run that never built, e.g. diverged before counting) agrees with anything.
    """
    if kept is not None and new is not None and kept != new:
        raise ValueError(f"{label}: runs with different parameter counts ({kept}, {new})")
    return kept if kept is not None else new


def finished(runs: list[dict]) -> dict[str, dict]:
    """{variant: {seed: value}} of the runs that finished (a value, not None), variants in first-seen order."""
    found: dict[str, dict] = {}
    for r in runs:
        if r.get("value") is not None:
            found.setdefault(r["variant"], {})[r["seed"]] = r["value"]
    return found


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


def markdown(head: list[str], rows: list[list[str]]) -> str:
    """A markdown table from its column titles and its rows of cells (already formatted)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)
