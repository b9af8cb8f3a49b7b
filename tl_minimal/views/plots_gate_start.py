"""The ladder from triple_latent to gla, trained on recall: one picture (notebook 06b, issue 50).

    ladder_figure(rows)   accuracy per seed (dots) and mean (bar) of every rung, with a constant guess's 1/8

The rows come from ``tl_minimal.course.recall_start.ladder_rows`` (recall_ladder.json).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .palette import INK, VERMILLION, tint
from .plots import MAX_WIDTH


def ladder_figure(rows: list[dict], chance: float = 1 / 8, title: str | None = None):
    """One column per rung: its seeds' accuracies (dots), their mean (a bar); a rung not run yet says so."""
    fig, ax = plt.subplots(figsize=(MAX_WIDTH, 4.4))
    x = np.arange(len(rows))
    for i, row in enumerate(rows):
        values = np.asarray(row["values"], dtype=float) * 100
        if len(values) == 0:
            ax.text(i, 50, "not run yet", rotation=90, ha="center", va="center", fontsize=8, color=INK)
            continue
        ax.bar(i, values.mean(), width=0.6, color=tint(INK, 0.7))
        ax.scatter(np.full(len(values), i), values, s=18, color=VERMILLION, zorder=3)
    ax.axhline(100 * chance, color=INK, ls=":", lw=1, label=f"a constant guess ({100 * chance:.1f}%)")
    labels = [f"{r['rung']}: {r['change']}" if r["rung"] != "reverse" else f"reverse: {r['change']}" for r in rows]
    ax.set_xticks(x, [label if len(label) < 42 else label[:40] + "..." for label in labels], rotation=35,
                  ha="right", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("recall accuracy (%)")
    ax.legend(fontsize=8, loc="center right")
    ax.set_title(title or "from triple_latent (0) to gla (7), one change a rung: 4-pair recall, every seed",
                 fontsize=10)
    fig.tight_layout()
    return fig
