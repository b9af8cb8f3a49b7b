"""Pictures for notebook 02's toy: how many pairs an S x S pair memory recalls.

Like ``plots.py``, the function draws one picture with labelled axes and a title and returns the
matplotlib ``Figure``; the numbers come from ``tl_minimal.course.pair_toy.recall_curve``.

    recall_vs_pairs   recall against the number of pairs stored, one line per state size S
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from .plots import as_numpy


def recall_vs_pairs(curves: dict, title: str = "pair memory: recall against pairs stored"):
    """curves {S: recall [n_max]} (recall after storing 1..n_max pairs) -> one line per S, a dashed
    line at n = S (the most pairs that can have orthogonal contexts)."""
    if not curves:
        raise ValueError("curves is empty: expected {S: recall [n_max]}")
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for S, recall in curves.items():
        r = as_numpy(recall)
        line, = ax.plot(range(1, len(r) + 1), 100 * r, marker="o", ms=3, label=f"S = {S}")
        ax.axvline(S, color=line.get_color(), ls="--", lw=1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("pairs stored (dashed: n = S)")
    ax.set_ylabel("pairs recalled (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title)
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig
