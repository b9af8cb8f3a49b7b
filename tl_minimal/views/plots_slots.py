"""Pictures for notebook 04: how the slot layer uses its slots, and what its memory spans.

Like ``plots.py``, every function draws one kind of picture with labelled axes and a title and
returns the matplotlib ``Figure``; nothing re-implements the model's math (slot weights come
from ``model.internals``).

    slot_usage      slot weights g [T, H, K] of one layer: who writes to which slot
    spectra         singular values of a few S x S memories (dense P against the slots')
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from .plots import MAX_WIDTH, as_numpy


def slot_usage(g, labels=None, title: str | None = None):
    """Slot weights g [T, H, K] of one layer: a heatmap (slots x tokens) per head, then the mean use.

    Each column of a heatmap sums to 1 (softmax over the K slots); the bar chart shows how much
    of all writes each slot received, so an unused or dominant slot is visible at a glance.
    """
    G = as_numpy(g)
    if G.ndim != 3:
        raise ValueError(f"g must be slot weights [T, H, K] of one sequence and layer, got shape {G.shape}")
    T, H, K = G.shape
    if labels is not None and len(labels) != T:
        raise ValueError(f"{len(labels)} labels for {T} tokens")
    figsize = (min(MAX_WIDTH, max(6.0, 0.18 * T + 2)), (0.22 * K + 0.5) * (H + 1) + 1.0)
    fig, axes = plt.subplots(H + 1, 1, figsize=figsize, squeeze=False)
    top = max(float(G.max()), 1 / K)                                # colour scale up to the largest weight
    for h in range(H):
        ax = axes[h, 0]
        sns.heatmap(G[:, h].T, ax=ax, vmin=0, vmax=top, cmap="rocket_r", cbar_kws={"label": "g"},
                    xticklabels=labels if labels is not None and h == H - 1 else False,
                    yticklabels=[f"k{k}" for k in range(K)])
        ax.set_ylabel(f"head {h}\nslot")
        ax.tick_params(axis="x", labelrotation=0, labelsize=7)
    axes[H - 1, 0].set_xlabel("token written")
    ax = axes[H, 0]
    mean = G.mean(0)                                                # [H, K]
    width = 0.8 / H
    for h in range(H):
        ax.bar(np.arange(K) + (h - (H - 1) / 2) * width, mean[h], width=width, label=f"head {h}")
    ax.axhline(1 / K, color="black", ls=":", lw=1, label=f"even use 1/K = {1 / K:.3f}")
    ax.set_xticks(np.arange(K), [f"k{k}" for k in range(K)])
    ax.set_xlabel("slot")
    ax.set_ylabel("mean weight")
    ax.legend(fontsize=8, ncol=H + 1)
    fig.suptitle(title or "slot weights g_t: which slot each token writes to", fontsize=11)
    fig.tight_layout()
    return fig


def spectra(mats: dict, ax=None, title: str = "singular values of the memory"):
    """Sorted singular values of each named matrix [S, S], each divided by its largest."""
    if not mats:
        raise ValueError("mats is empty: give {name: matrix [S, S]}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    for name, M in mats.items():
        M = as_numpy(M)
        if M.ndim != 2:
            raise ValueError(f"{name}: expected a matrix [S, S], got shape {M.shape}")
        sv = np.linalg.svd(M, compute_uv=False)
        ax.semilogy(np.arange(1, len(sv) + 1), sv / max(sv[0], 1e-30), marker="o", ms=3, label=name)
    ax.set_xlabel("index of the singular value")
    ax.set_ylabel("singular value / largest")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax.figure
