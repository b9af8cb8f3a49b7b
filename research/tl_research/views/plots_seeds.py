"""Every seed beside the paper's number: the picture for claims that rest on one or three seeds.

A recall accuracy of 100% from one seed and 12% from five others is not a mean with an error
bar; it is two outcomes. So this view draws every seed as a dot, our mean as a short line, and
the paper's own runs as black stars, with the two yardsticks of the recall task as dashed lines
(the constant guess and a random pick among the values in context). Notebook 07b uses it for the
paper's width sweep, its retrain recipe and table 4's rows (``paper_recall_experiments``).

    seeds_beside_paper    panels of groups; each group: our per-seed values and the paper's
    per_seed_recall       one dot per seed of recall at 500 steps, the mean as a bar, the two chance lines
    logit_scale           training curves and BPB against a factor on the trained logits (07b, section 1)

Input: ``panels`` = {panel title: [Group, ...]}; a ``Group`` holds a label, our values (one per
seed, fractions in [0, 1]) and the paper's values (possibly none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np

from tl_minimal.views.palette import CATEGORICAL, INK
from tl_minimal.views.plots import MAX_WIDTH, finish, labelled, loss_curves


@dataclass
class Group:
    """One column of a panel: our seeds and the paper's numbers for one model and setting."""

    label: str
    ours: list[float]
    paper: list[float] = field(default_factory=list)
    colour_index: int = 0  # which colour of the palette: the same model keeps its colour across panels

    def __post_init__(self):
        for name, values in (("ours", self.ours), ("paper", self.paper)):
            if any(not (0.0 <= v <= 1.0) for v in values):
                raise ValueError(f"{self.label}: {name} must be fractions in [0, 1], got {values}")


def _draw_panel(ax, groups: list[Group], yardsticks: dict):
    rng = np.random.default_rng(0)  # the jitter only separates equal dots; it is not data
    for x, g in enumerate(groups):
        colour = CATEGORICAL[g.colour_index % len(CATEGORICAL)]
        if g.ours:
            xs = x - 0.12 + rng.uniform(-0.06, 0.06, len(g.ours))
            ax.scatter(xs, 100 * np.array(g.ours), s=22, color=colour, edgecolor="white", linewidth=0.5, zorder=3,
                       label="ours, one dot per seed" if x == 0 else None)
            ax.hlines(100 * np.mean(g.ours), x - 0.26, x + 0.02, color=colour, linewidth=2, zorder=2,
                      label="our mean" if x == 0 else None)
        if g.paper:
            ax.scatter([x + 0.16] * len(g.paper), 100 * np.array(g.paper), marker="*", s=70, color="black", zorder=4,
                       label="the paper, one star per seed" if x == 0 else None)
        if not g.ours:
            ax.text(x - 0.12, 2, "not run", ha="center", fontsize=7, color=INK, rotation=90)
    # at most two yardsticks (seeds_beside_paper checks it), each with its own line style
    for (name, value), style in zip(yardsticks.items(), ("--", ":"), strict=False):
        ax.axhline(100 * value, color=INK, linestyle=style, linewidth=0.8, label=name)
    ax.set_xticks(range(len(groups)), [g.label for g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, 105)


def seeds_beside_paper(panels: dict, yardsticks: dict | None = None, title: str | None = None,
                       ylabel: str = "recall accuracy (%)"):
    """One panel per experiment; in each, a column per group with our seeds and the paper's runs.

    ``yardsticks``: {name: fraction} drawn as horizontal lines in every panel (at most two).
    """
    if not panels or any(not groups for groups in panels.values()):
        raise ValueError("panels must map each title to a non-empty list of Group")
    yardsticks = yardsticks or {}
    if len(yardsticks) > 2:
        raise ValueError(f"at most two yardsticks, got {list(yardsticks)}")
    widths = [max(2, len(groups)) for groups in panels.values()]
    fig, axes = plt.subplots(1, len(panels), figsize=(min(MAX_WIDTH, 1.1 * sum(widths) + 1.5), 3.8),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, (name, groups) in zip(axes[0], panels.items(), strict=True):
        _draw_panel(ax, groups, yardsticks)
        ax.set_title(name, fontsize=9)
    axes[0][0].set_ylabel(ylabel)
    handles = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(5, len(handles)), fontsize=8,
               frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def paper_recall_experiments(panels: dict):
    """The paper's width sweep, its retrain recipe and table 4's other rows: our seeds after 500 steps
    beside the paper's runs. ``panels``: {title: [(label, ours, paper, colour index), ...]}, as
    :func:`tl_research.results.recall_experiment_panels` reads them from the recall files."""
    return seeds_beside_paper({title: [Group(*g) for g in groups] for title, groups in panels.items()},
                              {"constant guess 1/8": 1 / 8, "random value in context 1/4": 1 / 4},
                              title="recall after 500 steps: every seed of ours beside the paper's runs")


def per_seed_recall(per_seed: dict):
    """``per_seed``: {label: [accuracy per seed]} (:func:`results.per_seed_recall`)."""
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    for i, accs in enumerate(per_seed.values()):
        ax.plot([i] * len(accs), accs, "o", ms=7, alpha=0.7)
        ax.plot([i - 0.25, i + 0.25], [np.mean(accs)] * 2, color="black", lw=2)
        ax.annotate(f"mean {np.mean(accs):.1%}", (i + 0.28, np.mean(accs)), fontsize=9, va="center")
    ax.axhline(1 / 8, color="black", ls=":", lw=1, label="constant guess 1/8")
    ax.axhline(1 / 4, color="grey", ls="--", lw=1, label="random value in context 1/4")
    ax.set_xticks(range(len(per_seed)), list(per_seed), fontsize=8)
    ax.set_xlim(-0.5, len(per_seed) - 0.1)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("recall accuracy, 500 steps")
    ax.set_title("one dot per seed: the paper's mean rests on one run that did not reproduce", fontsize=10)
    ax.legend(fontsize=8, loc="center right")
    return finish(fig)


def logit_scale(histories: dict, scaled: dict, factors, unigram: float, steps: int):
    """Left: the training losses in bits (``histories``: {name: losses}); right: validation BPB against
    a factor mu multiplying each trained model's logits (``scaled``: {name: BPB per factor})."""
    if any(len(v) != len(factors) for v in scaled.values()):
        raise ValueError(f"every scaled curve needs one BPB per factor ({len(factors)})")
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.5))
    loss_curves(histories, bits=True, ax=axes[0], smooth=5, title=f"training loss, {steps} steps")
    axes[0].axhline(unigram, color="black", ls=":", lw=1, label="unigram baseline")
    axes[0].legend(fontsize=8)
    for variant, values in scaled.items():
        axes[1].plot(factors, values, marker="o", label=variant)
    axes[1].axhline(unigram, color="black", ls=":", lw=1, label="unigram baseline")
    axes[1].axvline(1.0, color="grey", lw=0.5)
    labelled(axes[1], xlabel="factor μ multiplying the trained logits", ylabel="validation BPB",
             title="how much is only the logits' scale?")
    return finish(fig)
