"""Training curves against a baseline (notebooks 01-04): the loss of a run beside the unigram line.

Like ``plots.py``, every function draws one kind of picture with labelled axes and a title and
returns the matplotlib ``Figure``; the baseline is computed in the notebook
(``training.evaluate.unigram_bits``), where the student reads what it is.

    loss_with_baseline   loss per step in bits per byte, with a dashed horizontal baseline
    loss_and_bpb         two panels: the runs' training losses, and their validation BPB beside the paper's,
                         the baseline drawn in both
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from .plots import loss_curves, metric_bars


def loss_with_baseline(histories: dict, baseline: float, title: str, name: str = "unigram baseline", ax=None):
    """``plots.loss_curves(histories, bits=True)`` with a dashed line at ``baseline`` (bits per byte)."""
    if not histories:
        raise ValueError("histories is empty: give {name: history}")
    fig = loss_curves(histories, ax=ax, bits=True, title=title)
    axis = ax if ax is not None else fig.axes[0]
    axis.axhline(baseline, color="gray", ls="--", label=f"{name} {baseline:.2f}")
    axis.legend(fontsize=9)
    return fig


def loss_and_bpb(histories: dict, bpb: dict, baseline: float, paper: dict | None = None, *, loss_title: str,
                 bar_title: str, bar_ylabel: str = "validation BPB", smooth: int = 1, ylim=(4, None),
                 name: str = "unigram"):
    """Left: ``loss_curves`` of {run: history} in bits per byte; right: ``metric_bars`` of {run: BPB} beside
    ``paper``'s; the baseline (bits per byte) dashed in both. ylim: the bars' (bottom, top)."""
    if set(bpb) != set(histories):
        raise ValueError(f"one BPB per run: histories {sorted(histories)}, bpb {sorted(bpb)}")
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    loss_curves(histories, ax=axes[0], bits=True, smooth=smooth, title=loss_title)
    metric_bars(bpb, paper, ax=axes[1], ylabel=bar_ylabel, title=bar_title)
    for ax in axes:
        ax.axhline(baseline, color="gray", ls="--", label=f"{name} {baseline:.2f}")
        ax.legend(fontsize=9)
    axes[1].set_ylim(*ylim)
    fig.tight_layout()
    return fig
