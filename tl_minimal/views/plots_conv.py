"""Pictures for notebook 05: what a convolution reads, and what its trained taps weigh. The influence
maps differentiate the library's own convolution (conv.py); they do not re-implement it."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from .palette import BLUE, VERMILLION, tint
from .plots import MAX_WIDTH, as_numpy, finish

_DIAGONAL = BLUE  # the line t = tau: reads above it come from the future


def conv_influence(fn, T: int = 12, d: int = 4, seed: int = 0) -> torch.Tensor:
    """|d y_t / d x_tau| [T, T] of ``fn(x [1, T, d]) -> y [1, T, d]`` at a random x (autograd): the size of
    the Jacobian block of output t with respect to input tau (zero: output t cannot see input tau)."""
    x = torch.randn(1, T, d, generator=torch.Generator().manual_seed(seed))
    J = torch.autograd.functional.jacobian(lambda v: fn(v)[0], x)[..., 0, :, :]  # [T', d', T, d]
    if J.shape != (T, d, T, d):
        raise ValueError(f"fn must map [1, T, d] to [1, T, d]; got {(1, *J.shape[:2])} from {tuple(x.shape)}")
    return J.pow(2).sum((1, 3)).sqrt()  # [T, T]: Frobenius norm per (output, input)


def influence_maps(maps: dict, title: str = "which inputs each output reads"):
    """Influence maps {name: [T, T]} side by side; cells above the diagonal (the future) outlined."""
    fig, axes = plt.subplots(1, len(maps), figsize=(min(MAX_WIDTH, 4.6 * len(maps)), 3.8), squeeze=False)
    for ax, (name, M) in zip(axes[0], maps.items(), strict=True):
        M = as_numpy(M)
        T = M.shape[0]
        sns.heatmap(M, ax=ax, cmap="Greys", square=True, linewidths=0.3, linecolor="#dddddd",
                    cbar_kws={"label": "|∂y_t / ∂x_τ|", "shrink": 0.8})
        for t in range(T):
            for tau in range(t + 1, T):
                if M[t, tau] > 1e-12:                               # output t reads a future input
                    ax.add_patch(plt.Rectangle((tau, t), 1, 1, fill=False, edgecolor=VERMILLION, lw=1.5, hatch="////"))
        ax.plot([0, T], [0, T], color=_DIAGONAL, lw=1)
        ax.set(xlabel="input position τ", ylabel="output position t")
        ax.set_title(name, fontsize=9)
    return finish(fig, title + " (red, hatched: τ > t, the future)")


def tap_norms(kernels: dict, title: str = "size of each kernel tap after training"):
    """Bars of ||W[:, :, i]|| per tap at the input offset it reads: kernels {name: (weight [d, d, k], causal)};
    a causal tap i reads x_{t-(k-1)+i}, a symmetric one x_{t-(k-1)/2+i}."""
    _, ax = plt.subplots(figsize=(6.5, 3.2))
    width = 0.8 / len(kernels)
    offsets_seen = set()
    for n, (name, (W, causal)) in enumerate(kernels.items()):
        W = as_numpy(W)
        k = W.shape[-1]
        offsets = np.arange(k) - ((k - 1) if causal else (k - 1) // 2)
        offsets_seen.update(offsets.tolist())
        norms = np.sqrt((W ** 2).sum((0, 1)))
        ax.bar(offsets + (n - (len(kernels) - 1) / 2) * width, norms, width=width, label=name)
    ticks = sorted(offsets_seen)
    ax.set_xticks(ticks, [f"x[t{o:+d}]" if o else "x[t]" for o in ticks])
    ax.axvspan(0.5, max(ticks) + 0.5, facecolor=tint(VERMILLION, 0.9), edgecolor=tint(VERMILLION, 0.5), hatch="//",
               lw=0, label="future inputs (hatched)")
    ax.set_ylim(0, 1.3 * ax.get_ylim()[1])                          # room for the legend above the bars
    ax.set(xlabel="input the tap reads (relative to the output position t)", ylabel="||W[:, :, tap]||", title=title)
    ax.legend(fontsize=8, loc="upper left", ncol=len(kernels) + 1)
    return ax.figure
