"""Pictures of training runs and of what a trained layer does (notebooks 00-04). The numbers (the
unigram baseline, half-lives, ranks, scores, cache sizes) are computed in the notebook, where the
student reads their formula; these functions only draw them."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .plots import as_numpy, finish, loss_curves, matrix_heatmap, metric_bars


def numbers_kept(lengths: list, kv_cache: list, state: int):
    """kv_cache[i]: numbers a Transformer layer keeps at context lengths[i]; state: the recurrent layer's, fixed."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.loglog(lengths, kv_cache, marker="o", ms=3, label="Transformer: KV cache 2 t d")
    ax.loglog(lengths, [state] * len(lengths), marker="o", ms=3, label="triple-latent: state H(S + S²)")
    ax.set(xlabel="context length t (tokens)", ylabel="numbers kept per layer")
    ax.set_title("the KV cache grows with the context; the recurrent state does not", fontsize=10)
    ax.legend(fontsize=9)
    return fig


def _baseline(ax, baseline: float, name: str) -> None:
    ax.axhline(baseline, color="gray", ls="--", label=f"{name} {baseline:.2f}")
    ax.legend(fontsize=9)


def loss_with_baseline(histories: dict, baseline: float, title: str, name: str = "unigram baseline"):
    """``plots.loss_curves(histories, bits=True)`` with a dashed line at ``baseline`` (bits per byte)."""
    fig = loss_curves(histories, bits=True, title=title)
    _baseline(fig.axes[0], baseline, name)
    return fig


def loss_and_bpb(histories: dict, bpb: dict, baseline: float, paper: dict | None = None, *, loss_title: str,
                 bar_title: str, bar_ylabel: str = "validation BPB", smooth: int = 1, ylim=(4, None),
                 name: str = "unigram"):
    """Left: ``loss_curves`` of {run: history} in bits per byte; right: ``metric_bars`` of {run: BPB} beside
    ``paper``'s; the baseline (bits per byte) dashed in both. ylim: the bars' (bottom, top)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    loss_curves(histories, ax=axes[0], bits=True, smooth=smooth, title=loss_title)
    metric_bars(bpb, paper, ax=axes[1], ylabel=bar_ylabel, title=bar_title)
    for ax in axes:
        _baseline(ax, baseline, name)
    axes[1].set_ylim(*ylim)
    return finish(fig)


def per_head_bars(values: dict, ylabel: str, title: str, figsize=(7, 3), rotation: int = 45):
    """One bar per run for every layer and head: values {run label: [L, H]}, all of one shape."""
    arrays = {label: as_numpy(v) for label, v in values.items()}
    L, H = next(iter(arrays.values())).shape
    width = 0.8 / len(arrays)  # the runs of one head fill 0.8 of its slot
    fig, ax = plt.subplots(figsize=figsize)
    for i, (label, a) in enumerate(arrays.items()):
        ax.bar([k + width * i for k in range(L * H)], a.reshape(-1), width=width, label=label)
    ax.set_xticks([k + width * (len(arrays) - 1) / 2 for k in range(L * H)],
                  [f"L{layer}h{h}" for layer in range(L) for h in range(H)], rotation=rotation)
    ax.set(xlabel="layer and head", ylabel=ylabel, title=title)
    ax.legend(fontsize=9)
    return fig


def per_head_lines(values, xlabels, ylabel: str, title: str):
    """values [L, T, H] along a sequence: one panel per layer, one line per head, the tokens on the x axis."""
    v = as_numpy(values)
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


def scores_beside_softmax(scores: dict, attn, labels: list, transformer_steps: int):
    """scores {training steps: A [T, T]} of triple_latent (two runs), attn [T, T] of the Transformer; the
    scores ``A[t, tau] = w[t, tau] (q^l_t . s_(tau-1))`` are formed in notebook 03c from the library's pieces."""
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.6))
    for ax, (steps, A) in zip(axes[:2], scores.items(), strict=True):  # the third panel: the Transformer
        matrix_heatmap(A, xlabels=labels, ylabels=labels, ax=ax, title=f"triple_latent, {steps} steps: A[t, τ]",
                       xlabel="τ", ylabel="t")
    matrix_heatmap(attn, xlabels=labels, ylabels=labels, ax=axes[2], center=None, vmin=0, cmap="Blues",
                   title=f"Transformer, {transformer_steps} steps: softmax", xlabel="τ", ylabel="t")
    for ax in axes:
        ax.tick_params(labelsize=6)
    return finish(fig)
