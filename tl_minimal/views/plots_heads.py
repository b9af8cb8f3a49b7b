"""Pictures of one number per layer and head, several runs side by side (notebooks 01 and 02).

Like ``plots.py``, every function draws one kind of picture with labelled axes and a title and
returns the matplotlib ``Figure``; the numbers (half-lives, effective ranks) are computed in the
notebook, where the student reads their formula.

    per_head_bars   {run: [L, H]} -> grouped bars, one group per head "L{layer}h{head}"
    per_head_lines  [L, T, H] along a sentence -> one panel per layer, one line per head
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from .plots import as_numpy


def per_head_bars(values: dict, ylabel: str, title: str, figsize=(7, 3), rotation: int = 45):
    """One bar per run for every layer and head: values {run label: [L, H]}, all of one shape."""
    if not values:
        raise ValueError("values is empty: give {run label: [L, H] tensor}")
    arrays = {label: as_numpy(v) for label, v in values.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"every run needs the same [L, H] shape; got {sorted(shapes)}")
    L, H = next(iter(shapes))
    width = 0.8 / len(arrays)  # the runs of one head fill 0.8 of its slot
    fig, ax = plt.subplots(figsize=figsize)
    for i, (label, a) in enumerate(arrays.items()):
        ax.bar([k + width * i for k in range(L * H)], a.reshape(-1), width=width, label=label)
    ax.set_xticks([k + width * (len(arrays) - 1) / 2 for k in range(L * H)],
                  [f"L{layer}h{h}" for layer in range(L) for h in range(H)], rotation=rotation)
    ax.set_xlabel("layer and head")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=9)
    return fig


def per_head_lines(values, xlabels, ylabel: str, title: str):
    """values [L, T, H] along a sequence: one panel per layer, one line per head, the tokens on the x axis."""
    v = as_numpy(values)
    if v.ndim != 3 or v.shape[1] != len(xlabels):
        raise ValueError(f"values must be [L, T, H] with T = {len(xlabels)} labels; got shape {v.shape}")
    L, T, H = v.shape
    fig, axes = plt.subplots(L, 1, figsize=(9.5, 2.0 * L), sharex=True, squeeze=False)
    for layer, ax in enumerate(axes[:, 0]):
        for h in range(H):
            ax.plot(range(T), v[layer, :, h], label=f"head {h}")
        ax.set_ylabel(f"layer {layer}\n{ylabel}")
    axes[0, 0].set_title(title)
    axes[0, 0].legend(fontsize=9, ncol=4)
    axes[-1, 0].set_xticks(range(T), xlabels, fontsize=7)
    axes[-1, 0].set_xlabel("token just read")
    return fig
