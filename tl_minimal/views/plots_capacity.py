"""Pictures for notebook 02's toy: how many pairs an S x S pair memory recalls.

Like ``plots.py``, the function draws one picture with labelled axes and a title and returns the
matplotlib ``Figure``; the numbers come from ``tl_minimal.course.pair_toy.recall_curve``.

    recall_vs_pairs         recall against the number of pairs stored, one line per state size S
    recall_vs_state_bytes   trained recall against the bytes of state a model keeps (issue 32's study)
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator, NullFormatter

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


def recall_vs_state_bytes(rows: list[dict], title: str = "recall against the state a model keeps"):
    """Based/Zoology's picture: rows of ``data/results/recall_state_size.json`` (task, variant, n_pairs,
    state_dim, accuracy, state_bytes) -> mean accuracy over seeds against state bytes (log scale), each seed
    a faint dot, one panel per task and pair count, one line per variant (S grows along a recurrent
    model's line). A row without ``task`` is an MQAR run."""
    if not rows:
        raise ValueError("rows is empty: expected the runs of recall_state_size.json")
    panels = sorted({(r.get("task", "mqar"), r["n_pairs"]) for r in rows}, key=lambda k: (k[0] != "recall", k))
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.5, 3.4 * len(panels)), 3.2), sharey=True, squeeze=False)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    colors = {v: f"C{i % 10}" for i, v in enumerate(variants)}  # one colour per variant in every panel
    for ax, (task, n) in zip(axes[0], panels, strict=True):
        for variant in variants:
            points: dict[int, list[float]] = {}
            for r in rows:
                if r["variant"] == variant and (r.get("task", "mqar"), r["n_pairs"]) == (task, n):
                    points.setdefault(r["state_bytes"], []).append(r["accuracy"])
            if points:
                x = sorted(points)
                line, = ax.plot(x, [100 * sum(points[b]) / len(points[b]) for b in x], marker="o", ms=4,
                                label=variant, color=colors[variant])
                seeds = [(b, 100 * a) for b in x for a in points[b]]
                ax.scatter(*zip(*seeds, strict=True), s=8, color=line.get_color(), alpha=0.35, zorder=1)
                sizes = {r["state_bytes"]: r.get("state_dim") for r in rows if r["variant"] == variant}
                for b in x if len(x) > 1 else []:  # name S along a line that has several
                    if sizes[b] is not None:
                        ax.annotate(f"S={sizes[b]}", (b, line.get_ydata()[x.index(b)]), textcoords="offset points",
                                xytext=(0, 6), ha="center", fontsize=8, color=line.get_color())
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # decades only: the minor labels overlap
        ax.set_xlabel("state bytes after T tokens (log)")
        ax.set_title(f"{n}-pair recall" if task == "recall" else f"MQAR, {n} pairs", fontsize=10)
    axes[0][0].set_ylabel("accuracy (%, mean over seeds)")
    axes[0][0].set_ylim(0, 105)
    handles = {h.get_label(): h for ax in axes[0] for h in ax.get_lines()}  # every variant, from whichever panel
    axes[0][-1].legend([handles[v] for v in variants], variants, fontsize=8, loc="center left")
    fig.suptitle(title)
    fig.tight_layout()
    return fig
