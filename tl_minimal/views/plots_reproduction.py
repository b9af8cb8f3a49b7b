"""The pictures of the study's results: our tables beside the paper's numbers (notebooks 07 and 07b),
the family beside its two yardsticks (06b, section 4) and the ladder from triple_latent to gla (06b).
Inputs are plain lists and dicts: the reports of :func:`tl_minimal.results.report` and the rows of
``tl_minimal.course.recall_start``; every function returns its figure and draws nothing it has not been given.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .palette import BLUE, INK, ORANGE, SKY, VERMILLION, tint
from .plots import MAX_WIDTH, finish, labelled


def bpb_against_steps(curves: dict, unigram: float, title: str, figsize=(6.5, 3.8), legend_size=7,
                      xlabel: str = "training steps (mean over seeds)", ylabel: str = "validation BPB"):
    """``curves``: {name: [(steps, mean BPB, std BPB), ...]} (``report("bpb_by_steps")``)."""
    fig, ax = plt.subplots(figsize=figsize)
    for name, pts in curves.items():
        xs, ys, es = zip(*sorted(pts), strict=True)
        ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=name)
    ax.axhline(unigram, color="black", ls=":", lw=1, label=f"unigram baseline ({unigram:.2f})")
    labelled(ax, legend_size, xscale="log", xlabel=xlabel, ylabel=ylabel, title=title)
    return finish(fig)


def mqar_accuracy(points: list[dict], order: list[str]):
    """``points``: per (variant, pairs, seq_len) its ``chance`` and its ``mean`` and ``std`` accuracy at the last
    evaluated step (``report("mqar")``); ``order``: the variants drawn, in that order."""
    settings = sorted({(r["pairs"], r["seq_len"]) for r in points})
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for i, variant in enumerate(order):
        pts = [(settings.index((r["pairs"], r["seq_len"])), r["mean"], r["std"]) for r in points
               if r["variant"] == variant]
        xs, means, stds = zip(*pts, strict=True)
        ax.errorbar(np.array(xs) + 0.06 * (i - 2), means, yerr=stds, marker="o", ls="", capsize=3, label=variant)
    chance = {(r["pairs"], r["seq_len"]): r["chance"] for r in points}
    ax.scatter(range(len(settings)), [chance[s] for s in settings], marker="_", s=400, c="k",
               label="chance (constant guess)")
    ax.set_xticks(range(len(settings)), [f"{p} pairs\nT={t}" for p, t in settings])
    ax.set(ylabel="accuracy (last evaluated step)", ylim=(-0.02, 1.05))
    ax.set_title("MQAR: accuracy by number of pairs and sequence length", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    return finish(fig)


def beside_paper(panels: list[dict], unigram: float):
    """One panel per table, stacked: a sideways bar per row (our seeds' mean), a dot per seed, the paper's
    number as a diamond. Each panel: ``title``, ``rows`` (``label``, ``mean``, ``ok`` per-seed values),
    ``paper`` (per row, or None), ``paper_all``, ``ylabel`` (the measure, on the x axis) and ``bytes`` (a
    panel in bytes draws the ``unigram`` baseline)."""
    sizes = [max(len(panel["rows"]), 1) for panel in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.0, 0.9 * len(panels) + 0.3 * sum(sizes)),
                             gridspec_kw={"height_ratios": sizes}, squeeze=False)
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        rows = panel["rows"]
        if not rows:
            ax.set_title(f"{panel['title']}: no results yet", fontsize=9)
            continue
        y = np.arange(len(rows))
        ax.barh(y, [r["mean"] or np.nan for r in rows], color=SKY, height=0.7)
        for i, (r, ref) in enumerate(zip(rows, panel["paper"], strict=True)):
            ax.plot(r["ok"], [i] * len(r["ok"]), "o", color=BLUE, ms=3)
            if isinstance(ref, float):
                ax.plot(ref, i, "D", color="black", ms=6,
                        label="paper" if "paper" not in ax.get_legend_handles_labels()[1] else None)
        shown = [v for r in rows for v in r["ok"]] + [v for v in panel["paper_all"] if isinstance(v, float)]
        if panel["bytes"]:
            ax.axvline(unigram, color="black", ls=":", lw=1, label="unigram baseline")
            shown.append(unigram)
        ax.set_xlim(min(shown) - 0.15, max(shown) + 0.1)
        ax.set_yticks(y, [r["label"] for r in rows], fontsize=8)
        ax.invert_yaxis()  # the table's first row on top
        ax.set_xlabel(panel["ylabel"], fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_title(panel["title"], fontsize=9)
        ax.legend(fontsize=8, loc="best")
    return finish(fig)


# --- the family beside its yardsticks (notebook 06b) -----------------------------------------

def _difference_panel(ax, rows, yardstick: str, colour: str) -> None:
    for i, row in enumerate(rows):
        d = row["vs"].get(yardstick)
        if d is None:  # the yardstick itself
            ax.text(0, i, "yardstick", ha="center", va="center", fontsize=8, color=INK,
                    bbox={"facecolor": "white", "edgecolor": "none"})
            continue
        ax.plot([d["low"], d["high"]], [i, i], color=colour, lw=2)  # the paired 95% interval
        ax.plot(d["differences"], [i] * len(d["differences"]), "o", ms=3, color=colour, alpha=0.45)
        ax.plot([d["mean"]], [i], "D", ms=6, color=colour)
    ax.axvline(0, color=INK, lw=0.8, ls="--")
    ax.tick_params(labelleft=False)  # the rows' names are on the first panel (the y axis is shared)
    ax.set_xlabel(f"BPB minus {yardstick}'s\n(< 0: better than {yardstick})", fontsize=9)
    ax.set_title(f"paired against {yardstick}", fontsize=10)


def family_figure(rows, title: str | None = None):
    """Mean BPB per variant, and the paired differences (diamond: mean; line: 95% interval; dots: seeds).

    ``rows`` (``report("family_80")["rows"]``): ``variant``, ``params``, ``values`` (one per seed), ``mean``
    and ``vs`` = {yardstick: None or its ``mean``, ``low``, ``high`` and ``differences`` (one per seed)}."""
    yardsticks = list(rows[0]["vs"])  # two
    fig, axes = plt.subplots(1, 3, figsize=(min(MAX_WIDTH, 10), 0.42 * len(rows) + 1.6), sharey=True)
    y = np.arange(len(rows))
    for i, row in enumerate(rows):
        axes[0].plot(row["values"], [i] * len(row["values"]), "o", ms=3, color=BLUE, alpha=0.45)
        axes[0].plot([row["mean"]], [i], "D", ms=6, color=BLUE)
    axes[0].set_yticks(y, [f"{r['variant']} ({r['params'] / 1000:.0f}k)" for r in rows], fontsize=9)
    axes[0].invert_yaxis()  # the first row on top (once: the three panels share this axis)
    axes[0].set_xlabel("validation BPB (lower is better)", fontsize=9)
    axes[0].set_title("mean over seeds (dots: seeds)", fontsize=10)
    for ax, yardstick, colour in zip(axes[1:], yardsticks, (ORANGE, VERMILLION), strict=True):
        _difference_panel(ax, rows, yardstick, colour)
    return finish(fig, title, fontsize=10)


# --- the ladder from triple_latent to gla (notebook 06b) ---------------------------------------

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
    ax.set(ylim=(0, 105), ylabel="recall accuracy (%)")
    ax.legend(fontsize=8, loc="center right")
    ax.set_title(title or "from triple_latent (0) to gla (7), one change a rung: 4-pair recall, every seed",
                 fontsize=10)
    return finish(fig)
