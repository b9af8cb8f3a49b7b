"""What one trained layer reads (notebook 03c, section 1): triple-latent scores beside softmax attention.

Like ``plots.py``, the function draws one picture with labelled axes and titles and returns the
matplotlib ``Figure``; the scores ``A[t, tau] = w[t, tau] (q^l_t . s_(tau-1))`` are formed in the
notebook from the library's pieces, and the attention weights come from ``model.internals``.

    scores_beside_softmax   one heatmap per triple-latent run, then the Transformer's softmax weights
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from .plots import matrix_heatmap


def scores_beside_softmax(scores: dict, attn, labels: list, transformer_steps: int):
    """scores {training steps: A [T, T]} of triple_latent (two runs), attn [T, T] of the Transformer."""
    if len(scores) != 2:
        raise ValueError(f"expected the scores of two triple_latent runs, got {len(scores)}")
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.6))
    for ax, (steps, A) in zip(axes[:2], scores.items(), strict=True):  # the third panel: the Transformer
        matrix_heatmap(A, xlabels=labels, ylabels=labels, ax=ax, title=f"triple_latent, {steps} steps: A[t, τ]",
                       xlabel="τ", ylabel="t")
    matrix_heatmap(attn, xlabels=labels, ylabels=labels, ax=axes[2], center=None, vmin=0, cmap="Blues",
                   title=f"Transformer, {transformer_steps} steps: softmax", xlabel="τ", ylabel="t")
    for ax in axes:
        ax.tick_params(labelsize=6)
    fig.tight_layout()
    return fig
