"""Pictures for notebook 04: how the slot layer uses its slots, and what its memory spans. Slot
weights come from ``model.internals``; nothing re-implements the model's math."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from . import widgets
from .plots import MAX_WIDTH, as_numpy, finish, labelled, matrix_heatmap, token_labels


def slot_usage(g, labels=None, title: str | None = None):
    """Slot weights g [T, H, K] of one layer: a heatmap (slots x tokens, each column sums to 1) per head,
    then the share of all writes each slot received."""
    G = as_numpy(g)
    T, H, K = G.shape
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
    ax.set(xlabel="slot", ylabel="mean weight")
    ax.legend(fontsize=8, ncol=H + 1)
    return finish(fig, title or "slot weights g_t: which slot each token writes to")


def spectra(mats: dict, ax=None, title: str = "singular values of the memory"):
    """Sorted singular values of each named matrix [S, S], each divided by its largest."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    for name, M in mats.items():
        sv = np.linalg.svd(as_numpy(M), compute_uv=False)
        ax.semilogy(np.arange(1, len(sv) + 1), sv / max(sv[0], 1e-30), marker="o", ms=3, label=name)
    labelled(ax, xlabel="index of the singular value", ylabel="singular value / largest", title=title)
    return ax.figure


def toy_memories(P, memories: dict,
                 title: str = "two tokens, two slots: M = Σ_k L_k R_k^T against P (one colour scale)"):
    """The dense P [S, S] and three slot memories {choice: M [S, S]} as annotated heatmaps on one colour scale."""
    top = max(float(P.max()), *(float(M.max()) for M in memories.values()))  # one colour scale for all four
    fig, axes = plt.subplots(2, 2, figsize=(8, 6.2))
    panels = {"dense P (true pairs)": P, **{f"slots: {name}": M for name, M in memories.items()}}
    for ax, (name, M) in zip(axes.flat, panels.items(), strict=True):
        matrix_heatmap(M, ax=ax, title=name, xlabel="j (write b)", ylabel="i (state s)", annot=True,
                       vmin=0, vmax=top, center=None, cmap="Blues")
    for ax in axes.flat:
        for number in ax.texts:  # the cell values, large enough to read
            number.set_fontsize(9)
    return finish(fig, title)


def entropy_bars(entropy: dict, ln_k: float,
                 title: str = "how evenly the tokens spread their writes over the slots"):
    """entropy {training steps: [L, H] mean entropy of g_t in nats}: one panel per run, bars at layer x 5 + head."""
    fig, axes = plt.subplots(1, len(entropy), figsize=(9.5, 3), sharey=True, squeeze=False)
    for ax, (steps, ent) in zip(axes[0], entropy.items(), strict=True):
        for i, per_head in enumerate(as_numpy(ent)):
            ax.bar([i * 5 + h for h in range(len(per_head))], per_head, label=f"layer {i}")
        ax.axhline(ln_k, color="black", ls=":", label="ln K (even spread)")
        ax.set_xlabel("layer x 5 + head")
        ax.set_title(f"{steps} steps", fontsize=10)
    labelled(axes[0, 0], ylabel="entropy of g_t (nats)")
    return finish(fig, title)


def dense_against_slots(mem: dict, t: int, head: int):
    """mem {steps: {"dense", "slot": [T, H, S, S]}} of two runs (short, long): the long run's two memories at
    position t, and the singular values of all four."""
    long = list(mem)[1]
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.2))
    matrix_heatmap(mem[long]["dense"][t, head], ax=axes[0], title=f"{long} steps: dense P_t, t = {t}",
                   xlabel="j (write b)", ylabel="i (state s)")
    matrix_heatmap(mem[long]["slot"][t, head], ax=axes[1], title="slots: P̃_t = Σ_k L_k R_k^T", xlabel="j (write b)")
    for ax in axes[:2]:
        ax.tick_params(labelsize=7)
        ax.title.set_fontsize(9)
    spectra({f"{steps} steps, {kind}": mem[steps][key][t, head] for steps in mem
             for kind, key in (("dense P_t", "dense"), ("slot P̃_t", "slot"))}, ax=axes[2],
            title=f"singular values, head {head}")
    axes[2].title.set_fontsize(9)
    axes[2].legend(fontsize=7)
    return finish(fig)


def memories_alike(mem: dict, head: int):
    """mem {steps: {"cos": [T, H], "reads": (dense [T, H], slot [T, H])}} of two runs (short, long): the cosine
    of the two memories along the chunk for both runs, and the long run's two reads, each scaled to max 1."""
    short, long = list(mem)
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.2))
    for steps, ls in ((short, ":"), (long, "-")):
        axes[0].plot(as_numpy(mem[steps]["cos"][:, head]), ls=ls, label=f"{steps} steps")
    axes[0].set(xlabel="position t", ylabel="cosine(P_t, P̃_t)")
    axes[0].set_title(f"how alike the two memories are, head {head}", fontsize=10)
    axes[0].legend(fontsize=8)
    read_dense, read_slot = (as_numpy(r[:, head]) for r in mem[long]["reads"])
    axes[1].plot(read_dense / np.abs(read_dense).max(), label="dense: Σ_j r_t[j] = q^l P q^r")  # shapes, not sizes
    axes[1].plot(read_slot / np.abs(read_slot).max(), label="slots: Σ_k f_t[k]")
    axes[1].set(xlabel="position t", ylabel="read (scaled to max 1)")
    axes[1].set_title(f"{long} steps: the same queries, both memories", fontsize=10)
    axes[1].legend(fontsize=8)
    return finish(fig)


def slot_widget(model, sentence: str, seq_len: int, steps: int):
    """Type a sentence and pick a layer: ``slot_usage`` of that layer on it (the static view without a live kernel)."""
    device = next(model.parameters()).device

    def draw_slots(text, layer):
        toks = widgets.byte_prompt(text if text else " ", seq_len)
        _, rec = model.internals(toks[None].to(device))
        return slot_usage(rec["layers"][layer]["slot_weights"][0].cpu(), token_labels(toks),
                          title=f"slot weights of layer {layer} (triple_slot, {steps} steps)")

    return widgets.interactive(draw_slots, text=widgets.Text(sentence, "sentence"),
                               layer=widgets.Choice(0, tuple(range(len(model.blocks))), "layer"))
