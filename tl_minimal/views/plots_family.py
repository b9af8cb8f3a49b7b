"""The family beside its two yardsticks: mean BPB, and paired differences with their 95% intervals
(notebook 06b, section 4).

    family_figure(rows)     three panels: mean BPB per variant (every seed a dot); the paired
                            difference against the first yardstick; against the second
    family_markdown(rows)   the same numbers as a Markdown table

Input: ``rows``, one per variant, each with the attributes ``variant``, ``seeds``, ``values`` (one
per seed), ``mean``, ``sd``, ``params`` and ``vs`` = {yardstick: difference or None}, a difference having ``mean``,
``low``, ``high`` and ``differences`` (one per seed). The research code makes them
(``tl_minimal.results.family_table.family_rows``); this view only draws.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .palette import BLUE, INK, ORANGE, VERMILLION
from .plots import MAX_WIDTH


def _check(rows) -> list:
    rows = list(rows)
    if not rows:
        raise ValueError("rows is empty: give one row per variant (family_table.family_rows())")
    return rows


def _difference_panel(ax, rows, yardstick: str, colour: str) -> None:
    for i, row in enumerate(rows):
        d = row.vs.get(yardstick)
        if d is None:  # the yardstick itself
            ax.text(0, i, "yardstick", ha="center", va="center", fontsize=8, color=INK,
                    bbox={"facecolor": "white", "edgecolor": "none"})
            continue
        ax.plot([d.low, d.high], [i, i], color=colour, lw=2)  # the paired 95% interval
        ax.plot(d.differences, [i] * len(d.differences), "o", ms=3, color=colour, alpha=0.45)
        ax.plot([d.mean], [i], "D", ms=6, color=colour)
    ax.axvline(0, color=INK, lw=0.8, ls="--")
    ax.tick_params(labelleft=False)  # the rows' names are on the first panel (the y axis is shared)
    ax.set_xlabel(f"BPB minus {yardstick}'s\n(< 0: better than {yardstick})", fontsize=9)
    ax.set_title(f"paired against {yardstick}", fontsize=10)


def family_figure(rows, title: str | None = None):
    """Mean BPB per variant, and the paired differences (diamond: mean; line: 95% interval; dots: seeds)."""
    rows = _check(rows)
    yardsticks = list(rows[0].vs)
    if len(yardsticks) != 2:
        raise ValueError(f"expected two yardsticks per row, got {yardsticks}")
    fig, axes = plt.subplots(1, 3, figsize=(min(MAX_WIDTH, 10), 0.42 * len(rows) + 1.6), sharey=True)
    y = np.arange(len(rows))
    for i, row in enumerate(rows):
        axes[0].plot(row.values, [i] * len(row.values), "o", ms=3, color=BLUE, alpha=0.45)
        axes[0].plot([row.mean], [i], "D", ms=6, color=BLUE)
    axes[0].set_yticks(y, [f"{r.variant} ({r.params / 1000:.0f}k)" for r in rows], fontsize=9)
    axes[0].invert_yaxis()  # the first row on top (once: the three panels share this axis)
    axes[0].set_xlabel("validation BPB (lower is better)", fontsize=9)
    axes[0].set_title("mean over seeds (dots: seeds)", fontsize=10)
    for ax, yardstick, colour in zip(axes[1:], yardsticks, (ORANGE, VERMILLION), strict=True):
        _difference_panel(ax, rows, yardstick, colour)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def family_markdown(rows) -> str:
    """Variant, parameters, mean BPB +- sd, and each paired difference with its 95% interval."""
    rows = _check(rows)
    yardsticks = list(rows[0].vs)
    head = ["variant", "params", f"BPB (mean ± sd, {len(rows[0].seeds)} seeds)"]
    head += [f"minus {y} [95% interval]" for y in yardsticks]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"`{r.variant}`", f"{r.params:,}", f"{r.mean:.3f} ± {r.sd:.3f}"]
        for y in yardsticks:
            d = r.vs[y]
            cells.append("-" if d is None else f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
