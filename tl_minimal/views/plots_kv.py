"""The pictures of the key-value memory (notebooks 06 and 06a): what it stores, how sharp its read
is, where it reads before and after training on recall.

    state_sizes          numbers carried by generation against tokens seen (the memory grows like a KV cache)
    perfect_match        the weight a perfect match gets among 8 kept entries, against the scale beta
    cosines_at_init      histograms of cos(q_t, k_j) at initialization: the exact repeat against the rest
    recall_training      training loss (bits per answer token) and recall accuracy, beside the two chance lines
    read_panels          the panels of retrieval_grid for a trained and a fresh model's read at the answer
    attention_heads      the Transformer's last-layer attention at the answer position, one panel per head

Inputs are what the notebooks measure (lists, tensors, the dicts of ``plots_retrieval.read_at``);
every function returns its figure (``read_panels`` its panels).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import torch

from ..data import recall as data_recall
from . import plots, plots_retrieval
from .palette import GREEN, ORANGE, RIGHT, SKY, VERMILLION, WRONG


def state_sizes(checkpoints, sizes: dict):
    """``sizes``: {what: [numbers stored after t tokens, one per checkpoint]}."""
    if any(len(v) != len(checkpoints) for v in sizes.values()):
        raise ValueError(f"every size list needs one count per checkpoint ({len(checkpoints)})")
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for what, counts in sizes.items():
        ax.plot(checkpoints, counts, marker="o", label=what)
    ax.set_xlabel("tokens seen t")
    ax.set_ylabel("numbers in the carried state")
    ax.set_title("what generation has to carry: the memory grows like a KV cache")
    ax.legend(fontsize=8)
    return fig


def perfect_match(betas, weights, paper_beta: float, our_beta: float):
    """The weight of a perfect match (``weights``, one per beta) with the paper's and our starting beta."""
    fig, ax = plt.subplots(figsize=(6.5, 3))
    ax.plot(betas, weights)
    ax.axvline(paper_beta, color=VERMILLION, ls=":", label=f"β = {paper_beta:g} (the paper)")
    ax.axvline(our_beta, color=GREEN, ls="--", label=f"β = {our_beta:g} (gated_hybrid_repaired's start)")
    ax.set_xlabel("β (multiplies the cosine)")
    ax.set_ylabel("weight of the perfect match")
    ax.set_title("a perfect match among 8 kept entries (the others orthogonal)")
    ax.legend(fontsize=8)
    return fig


def cosines_at_init(repeat_cos: dict, other_cos: dict):
    """One panel per configuration: {label: [tensors of cosines]} for the exact repeat and the others."""
    fig, axes = plt.subplots(1, len(repeat_cos), figsize=(9, 3.2), sharey=True, squeeze=False)
    for ax, label in zip(axes[0], repeat_cos, strict=True):
        others = plots.as_numpy(torch.cat([c.cpu() for c in other_cos[label]]))
        repeats = plots.as_numpy(torch.cat([c.cpu() for c in repeat_cos[label]]))
        ax.hist(others, bins=60, range=(-1, 1), density=True, color="grey", alpha=0.6, label="other entries")
        ax.hist(repeats, bins=60, range=(-1, 1), density=True, color=ORANGE, alpha=0.8,
                label="the exact repeat of the asked key")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("cos(q_t, k_j) at initialization")
        ax.legend(fontsize=8, loc="upper left")
    axes[0][0].set_ylabel("density")
    fig.suptitle("at the ANSWER position, before any training", fontsize=11)
    fig.tight_layout()
    return fig


def recall_training(histories: dict, accuracy: dict, steps: int, n_values: int = data_recall.PAPER_LAYOUT.n_values):
    """Left: the training losses in bits per answer token; right: each model's recall accuracy."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    plots.loss_curves(histories, bits=True, ax=axes[0], smooth=10, title="training loss (the answer token only)")
    axes[0].axhline(math.log2(n_values), color="black", ls=":", lw=1,
                    label=f"constant guess ({math.log2(n_values):g} bits)")
    axes[0].set_ylabel("bits per answer token")
    axes[0].legend(fontsize=8)
    axes[1].bar(list(accuracy), list(accuracy.values()), color=[SKY, GREEN][: len(accuracy)])
    axes[1].axhline(1 / n_values, color="black", ls=":", lw=1, label=f"constant guess 1/{n_values}")
    axes[1].axhline(1 / 4, color="grey", ls="--", lw=1, label="random value in context 1/4")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_ylabel("recall accuracy")
    axes[1].set_title(f"after {steps} steps, seed 0")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def _names(x, name):
    return [name(t) for t in x.tolist()]


def _panel(read, x, y, i, name):
    on_key = read["weights"][i, data_recall.locate(x[i], y[i])[-1]["key_pos"]]
    return {"values": read["weights"][i], "names": _names(x[i], name),
            "marks": plots_retrieval.recall_marks(x[i], y[i]), "verdict": bool(read["correct"][i]),
            "title": f"answers {name(int(read['pred'][i]))} (target {name(int(read['target'][i]))}); "
                     f"weight on the key's entry {on_key:.2f}; read gate {read['read_gate'][i]:.2f}"}


def read_panels(trained: dict, fresh: dict, x, y, name=data_recall.PAPER_LAYOUT.name) -> dict:
    """The trained model on the first example it answers right and the first it answers wrong (when
    there is one), and the fresh model on example 0: panels for ``plots_retrieval.retrieval_grid``."""
    panels = {}
    for want in (True, False):
        hits = (trained["correct"] == want).nonzero().flatten()
        if len(hits):
            panels[f"trained, example {int(hits[0])}"] = [_panel(trained, x, y, int(hits[0]), name)]
    panels["initialized, example 0"] = [_panel(fresh, x, y, 0, name)]
    return panels


def attention_heads(attn, x, y, right: bool, name=data_recall.PAPER_LAYOUT.name):
    """``attn``: [H, T] attention at the answer position (``plots_retrieval.attention_at``), two heads a row;
    the title says whether the model answered right."""
    marks = plots_retrieval.recall_marks(x, y)
    head_panels = [{"values": attn[h], "names": _names(x, name), "marks": marks if h == 0 else None,
                    "xlabel": "position attended", "title": f"head {h}", "ylim": None} for h in range(attn.shape[0])]
    rows = {f"heads {', '.join(str(h) for h in range(i, min(i + 2, len(head_panels))))}": head_panels[i:i + 2]
            for i in range(0, len(head_panels), 2)}
    fig = plots_retrieval.retrieval_grid(rows, title="Transformer, last layer, attention at the answer position",
                                         ylabel="attention weight")
    fig.suptitle(f"{'RIGHT' if right else 'WRONG'}: Transformer, last layer, attention at the answer position",
                 fontsize=12, fontweight="bold", color=RIGHT.colour if right else WRONG.colour)
    return fig
