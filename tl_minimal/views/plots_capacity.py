"""How many pairs a pair memory recalls: notebook 02's toy (numbers from
``tl_minimal.course.pair_toy.recall_curve``) and the trained study of notebook 07 (issue 32)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator, NullFormatter

from .plots import as_numpy, finish, labelled


def recall_vs_pairs(curves: dict, title: str = "pair memory: recall against pairs stored"):
    """curves {S: recall [n_max]} (recall after storing 1..n_max pairs) -> one line per S, a dashed
    line at n = S (the most pairs that can have orthogonal contexts)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for S, recall in curves.items():
        r = as_numpy(recall)
        line, = ax.plot(range(1, len(r) + 1), 100 * r, marker="o", ms=3, label=f"S = {S}")
        ax.axvline(S, color=line.get_color(), ls="--", lw=1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    labelled(ax, 9, xlabel="pairs stored (dashed: n = S)", ylabel="pairs recalled (%)", ylim=(0, 105), title=title)
    return finish(fig)


def _points(rows, variant: str, task: str, n_pairs: int) -> dict:
    """{state bytes: [accuracy of each seed]} of one variant in one panel (a row without ``task`` is MQAR)."""
    points: dict[int, list[float]] = {}
    for r in rows:
        if r["variant"] == variant and (r.get("task", "mqar"), r["n_pairs"]) == (task, n_pairs):
            points.setdefault(r["state_bytes"], []).append(r["accuracy"])
    return points


def _same(a: dict, b: dict) -> bool:
    """Whether two variants' means ({bytes: %}) share a point: the same bytes, within a point of accuracy."""
    return any(x in b and abs(b[x] - y) < 1.0 for x, y in a.items())


def recall_vs_state_bytes(rows: list[dict], title: str = "recall against the state a model keeps"):
    """Based/Zoology's picture of the rows of ``recall_state_size.json``: mean accuracy over seeds (each seed a
    faint dot) against state bytes, log scale, one panel per task and pair count, one line per variant."""
    panels = sorted({(r.get("task", "mqar"), r["n_pairs"]) for r in rows}, key=lambda k: (k[0] != "recall", k))
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.5, 3.4 * len(panels)), 3.2), sharey=True, squeeze=False)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    colors = {v: f"C{i % 10}" for i, v in enumerate(variants)}  # one colour per variant in every panel
    for ax, (task, n) in zip(axes[0], panels, strict=True):
        panel = {v: _points(rows, v, task, n) for v in variants}  # variant -> {bytes: [accuracy per seed]}
        panel = {v: points for v, points in panel.items() if points}
        means = {v: {b: 100 * sum(a) / len(a) for b, a in points.items()} for v, points in panel.items()}
        order = list(panel)
        for k, (variant, points) in enumerate(panel.items()):
            x = sorted(points)
            y = [means[variant][b] for b in x]
            below = sum(_same(means[variant], means[v]) for v in order[:k])  # drawn under this one
            line, = ax.plot(x, y, marker="o", ms=4, label=variant, color=colors[variant], zorder=2 + below)
            # two variants on one point (DeltaNet and GLA on MQAR: the same bytes, both at 100%) would hide one:
            # under a point that later variants also take, a larger disc, so it shows as rings of both colours
            for b, a in zip(x, y, strict=True):
                above = sum(_same({b: a}, means[v]) for v in order[k + 1:])
                if above:
                    ax.plot([b], [a], marker="o", ms=4 + 3 * above, ls="none", color=colors[variant],
                            zorder=2 + below)
            seeds = [(b, 100 * a) for b in x for a in points[b]]
            ax.scatter(*zip(*seeds, strict=True), s=8, color=line.get_color(), alpha=0.35, zorder=1)
            sizes = {r["state_bytes"]: r.get("state_dim") for r in rows if r["variant"] == variant}
            for b in x if len(x) > 1 else []:  # name S along a line that has several
                if sizes[b] is not None:
                    ax.annotate(f"S={sizes[b]}", (b, line.get_ydata()[x.index(b)]), textcoords="offset points",
                                xytext=(0, 6), ha="center", fontsize=8, color=line.get_color())
        ax.set(xscale="log", xlabel="state bytes after T tokens (log)")
        ax.xaxis.set_minor_formatter(NullFormatter())  # decades only: the minor labels overlap
        ax.set_title(f"{n}-pair recall" if task == "recall" else f"MQAR, {n} pairs", fontsize=10)
    axes[0][0].set(ylabel="accuracy (%, mean over seeds)", ylim=(0, 105))
    handles = [Line2D([], [], color=colors[v], marker="o", ms=4) for v in variants]  # every variant, one size
    axes[0][-1].legend(handles, variants, fontsize=8, loc="center left")
    fig.suptitle(title)  # the default size, larger than finish's
    return finish(fig)
