"""Pictures for notebooks 04-06: slot usage, what a convolution sees, and recall retrieval.

Like ``plots.py``, every function draws one kind of picture with labelled axes and a title and
returns the matplotlib ``Figure``; nothing re-implements the models' math. Tensors that come
from a model are read through ``model.internals`` (slot weights, retrieval weights, read gate,
attention) or through the library's own ops (the convolution).

What is here (in the order the notebooks use them)
    slot_usage            slot weights g [T, H, K] of one layer: who writes to which slot
    spectra               singular values of a few S x S memories (dense P against the slots')
    conv_influence        |d y_t / d x_tau| of a convolution: which inputs each output reads
    influence_maps        those maps side by side, reads from the future (tau > t) outlined
    tap_norms             ||W[:, :, i]|| per kernel tap of trained convolutions, by offset
    prediction_strips     a text and each model's top next-byte guess, right guesses coloured
    recall_sequence       one recall example built by hand (for widgets): x, y [T]
    read_at               retrieval weights over memory positions, read gate and prediction
    attention_at          a Transformer's attention weights at one position (one layer)
    position_bars         one row of weights over positions with marked positions (building block)
    retrieval_grid        models (rows) x examples (columns) of ``position_bars``

Shapes: slot weights [T, H, K]; memories [S, S]; kernels [d, d, k]; one sequence x [T].
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from ..data import recall as data_recall
from .plots import byte_label, token_strip

_KEY, _VALUE, _ASK = "#ff9800", "#4caf50", "#2196f3"
_RIGHT, _WRONG = "#2e7d32", "#c62828"
MAX_WIDTH = 9.5  # inches: at the inline backend's 100 dpi a figure stays within about 950 px


def _numpy(x) -> np.ndarray:
    """Tensor (any device, any float dtype) or array -> float64 numpy array on the CPU."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().double().numpy()  # to the CPU first: MPS has no float64
    return np.asarray(x, dtype=np.float64)


# --- slots (notebook 04) -------------------------------------------------------------------

def slot_usage(g, labels=None, title: str | None = None):
    """Slot weights g [T, H, K] of one layer: a heatmap (slots x tokens) per head, then the mean use.

    Each column of a heatmap sums to 1 (softmax over the K slots); the bar chart shows how much
    of all writes each slot received, so an unused or dominant slot is visible at a glance.
    """
    G = _numpy(g)
    if G.ndim != 3:
        raise ValueError(f"g must be slot weights [T, H, K] of one sequence and layer, got shape {G.shape}")
    T, H, K = G.shape
    if labels is not None and len(labels) != T:
        raise ValueError(f"{len(labels)} labels for {T} tokens")
    fig, axes = plt.subplots(H + 1, 1, figsize=(min(MAX_WIDTH, max(6.0, 0.18 * T + 2)), (0.22 * K + 0.5) * (H + 1) + 1.0),
                             squeeze=False)
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
        M = _numpy(M)
        if M.ndim != 2:
            raise ValueError(f"{name}: expected a matrix [S, S], got shape {M.shape}")
        sv = np.linalg.svd(M, compute_uv=False)
        ax.semilogy(np.arange(1, len(sv) + 1), sv / max(sv[0], 1e-30), marker="o", ms=3, label=name)
    ax.set_xlabel("index of the singular value")
    ax.set_ylabel("singular value / largest")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax.figure


# --- the convolution (notebook 05) ---------------------------------------------------------

def conv_influence(fn, T: int = 12, d: int = 4, seed: int = 0) -> torch.Tensor:
    """|d y_t / d x_tau| [T, T] of ``fn(x [1, T, d]) -> y [1, T, d]`` at a random x (autograd).

    Entry (t, tau) is the size of the Jacobian block of output t with respect to input tau:
    zero means output t cannot see input tau at all.
    """
    x = torch.randn(1, T, d, generator=torch.Generator().manual_seed(seed), requires_grad=True)
    y = fn(x)
    if y.shape != x.shape:
        raise ValueError(f"fn must map [1, T, d] to [1, T, d]; got {tuple(y.shape)} from {tuple(x.shape)}")
    rows = []
    for t in range(T):
        grads = [torch.autograd.grad(y[0, t, c], x, retain_graph=True)[0][0] for c in range(d)]  # d x [T, d]
        rows.append(torch.stack(grads).pow(2).sum((0, 2)).sqrt())  # [T]: Frobenius norm per input
    return torch.stack(rows).detach()


def influence_maps(maps: dict, title: str = "which inputs each output reads"):
    """Influence maps {name: [T, T]} side by side; cells above the diagonal (the future) outlined."""
    if not maps:
        raise ValueError("maps is empty: give {name: influence [T, T]}")
    fig, axes = plt.subplots(1, len(maps), figsize=(min(MAX_WIDTH, 4.6 * len(maps)), 3.8), squeeze=False)
    for ax, (name, M) in zip(axes[0], maps.items()):
        M = _numpy(M)
        T = M.shape[0]
        sns.heatmap(M, ax=ax, cmap="Greys", square=True, linewidths=0.3, linecolor="#dddddd",
                    cbar_kws={"label": "|∂y_t / ∂x_τ|", "shrink": 0.8})
        for t in range(T):
            for tau in range(t + 1, T):
                if M[t, tau] > 1e-12:                               # output t reads a future input
                    ax.add_patch(plt.Rectangle((tau, t), 1, 1, fill=False, edgecolor="red", lw=1.5))
        ax.plot([0, T], [0, T], color=_ASK, lw=1)
        ax.set_xlabel("input position τ")
        ax.set_ylabel("output position t")
        ax.set_title(name, fontsize=9)
    fig.suptitle(title + " (red: τ > t, the future)", fontsize=11)
    fig.tight_layout()
    return fig


def tap_norms(kernels: dict, ax=None, title: str = "size of each kernel tap after training"):
    """Bars of ||W[:, :, i]|| per tap, placed at the input offset the tap reads.

    kernels: {name: (weight [d, d, k], causal)}; a causal tap i reads x_{t-(k-1)+i}, a
    symmetric one x_{t-(k-1)/2+i}.
    """
    if not kernels:
        raise ValueError("kernels is empty: give {name: (weight [d, d, k], causal)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.2))
    width = 0.8 / len(kernels)
    offsets_seen = set()
    for n, (name, (W, causal)) in enumerate(kernels.items()):
        W = _numpy(W)
        if W.ndim != 3:
            raise ValueError(f"{name}: expected a conv weight [d, d, k], got shape {W.shape}")
        k = W.shape[-1]
        offsets = np.arange(k) - ((k - 1) if causal else (k - 1) // 2)
        offsets_seen.update(offsets.tolist())
        norms = np.sqrt((W ** 2).sum((0, 1)))
        ax.bar(offsets + (n - (len(kernels) - 1) / 2) * width, norms, width=width, label=name)
    ticks = sorted(offsets_seen)
    ax.set_xticks(ticks, [f"x[t{o:+d}]" if o else "x[t]" for o in ticks])
    ax.axvspan(0.5, max(ticks) + 0.5, color="red", alpha=0.08, label="future inputs")
    ax.set_ylim(0, 1.3 * ax.get_ylim()[1])                          # room for the legend above the bars
    ax.set_xlabel("input the tap reads (relative to the output position t)")
    ax.set_ylabel("||W[:, :, tap]||")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", ncol=len(kernels) + 1)
    return ax.figure


def prediction_strips(tokens, predictions: dict, per_row: int = 20, title: str | None = None):
    """A byte sequence [T] and, per model, its top guess for the NEXT byte at each position.

    predictions: {name: ids [T]} (argmax of the logits at each position). A guess is green when
    it equals the byte that really comes next.
    """
    ids = [int(t) for t in (tokens.tolist() if isinstance(tokens, torch.Tensor) else tokens)]
    T = len(ids)
    rows = 1 + len(predictions)
    n_lines = -(-T // per_row)
    fig, axes = plt.subplots(rows, 1, figsize=(min(MAX_WIDTH, max(4.0, 0.42 * min(T, per_row) + 0.5)),
                                               1.4 * n_lines * rows + 0.6))
    axes = np.atleast_1d(axes)
    token_strip([byte_label(i) for i in ids], None, None, per_row, "text (position below each byte)", ax=axes[0])
    for row, (name, pred) in enumerate(predictions.items(), start=1):
        pred = [int(p) for p in (pred.tolist() if isinstance(pred, torch.Tensor) else pred)]
        if len(pred) != T:
            raise ValueError(f"{name}: {len(pred)} predictions for {T} tokens")
        right = {t: ("#a5d6a7", None) for t in range(T - 1) if pred[t] == ids[t + 1]}
        score = len(right) / max(T - 1, 1)
        token_strip([byte_label(p) for p in pred], None, right, per_row,
                    f"{name}: guess for the next byte ({score:.0%} right)", ax=axes[row])
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


# --- recall retrieval (notebook 06) --------------------------------------------------------

def recall_sequence(pairs, ask, n_filler: int = 20, seed: int = 0,
                    layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT):
    """One recall example by hand: BOS, (key value SEP) per pair, filler, QUERY ask ANSWER.

    pairs: [(key id, value id), ...]; ask: one of the keys. Returns x, y [T] int64 with the
    answer (the asked key's value) as the only target, at the last position.
    """
    L = layout
    keys = [int(k) for k, _ in pairs]
    if not pairs or len(set(keys)) != len(keys):
        raise ValueError(f"pairs must be a non-empty list of (key, value) with distinct keys, got {pairs!r}")
    for k, v in pairs:
        if not (L.first_key <= int(k) < L.first_value and L.first_value <= int(v) < L.first_filler):
            raise ValueError(f"pair ({k}, {v}): keys are ids {L.first_key}..{L.first_value - 1}, "
                             f"values {L.first_value}..{L.first_filler - 1}")
    if int(ask) not in keys:
        raise ValueError(f"asked key {ask} is not one of the keys in context {keys}")
    if n_filler < 0:
        raise ValueError(f"n_filler must be >= 0, got {n_filler}")
    g = torch.Generator().manual_seed(seed)
    filler = torch.randint(L.first_filler, L.first_filler + L.n_filler, (n_filler,), generator=g).tolist()
    body = [t for k, v in pairs for t in (int(k), int(v), L.SEP)]
    x = torch.tensor([L.BOS, *body, *filler, L.QUERY, int(ask), L.ANSWER])
    y = torch.full_like(x, data_recall.IGNORE)
    y[-1] = {int(k): int(v) for k, v in pairs}[int(ask)]
    return x, y


def _last_label(y: torch.Tensor) -> torch.Tensor:
    """Position of each row's last supervised token: [B]."""
    labelled = (y != data_recall.IGNORE).long()                     # [B, T]
    return (labelled * torch.arange(y.shape[1])).argmax(1)


@torch.no_grad()
def read_at(model, x, y) -> dict:
    """The gated hybrid's memory read at each row's last supervised position (the answer).

    x, y [B, T] (or one example [T]). Returns CPU tensors: "weights" [B, T] (the weight of memory
    entry j, whose key is the token at j and whose value is the token at j + 1, placed at j),
    "read_gate" [B], "pred", "target", "pos" [B] and "correct" [B] (argmax over the vocabulary).
    """
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    if x.dim() == 1:
        x, y = x[None], y[None]
    logits, rec = model.internals(x.long().to(next(model.parameters()).device))
    if "retrieval" not in rec:
        raise ValueError(f"this {model.variant} model has no key-value memory (no 'retrieval' internals)")
    pos = _last_label(y.cpu())
    rows = torch.arange(len(x))
    r = {k: v.cpu() for k, v in rec["retrieval"].items()}
    w, idx = r["weights"][rows, pos], r["index"][rows, pos]         # [B, K]
    dense = torch.zeros(x.shape, dtype=w.dtype).scatter_add_(1, idx.clamp_min(0), w * (idx >= 0))  # [B, T]
    pred = logits.cpu()[rows, pos].argmax(-1)
    target = y.cpu()[rows, pos]
    return {"weights": dense, "read_gate": r["read_gate"][rows, pos], "pred": pred, "target": target,
            "pos": pos, "correct": pred == target}


@torch.no_grad()
def attention_at(model, x, pos: int = -1, layer: int = -1) -> torch.Tensor:
    """A Transformer's attention weights from position ``pos`` of one sequence x [T]: [H, T] on the CPU."""
    x = torch.as_tensor(x).long()
    if x.dim() != 1:
        raise ValueError(f"give one sequence x [T], got shape {tuple(x.shape)}")
    _, rec = model.internals(x[None].to(next(model.parameters()).device), attention=True)
    attn = rec["layers"][layer].get("attn")
    if attn is None:
        raise ValueError(f"layer {layer} of this {model.variant} model records no attention weights")
    return attn[0, :, pos].float().cpu()                            # [H, T]


def position_bars(ax, values, names=None, marks: dict | None = None, ylabel: str = "weight",
                  title: str | None = None, ylim=None, xlabel: str = "memory position j (entry j: key x_j, value x_j+1)",
                  verdict: bool | None = None):
    """Bars of values [T] over positions; marks {position: (colour, note)} shade positions, named in a legend.

    names (token names [T], optional) label the non-filler positions when the sequence is short
    (T <= 48); longer sequences get plain position numbers, which stay readable. verdict (True /
    False) writes RIGHT or WRONG above the panel, larger than any other text in it.
    """
    v = _numpy(values)
    if v.ndim != 1 or (names is not None and len(names) != len(v)):
        got = "no names" if names is None else f"{len(names)} names"
        raise ValueError(f"values must be [T] (with T names when given); got shape {v.shape} and {got}")
    for p, (colour, note) in (marks or {}).items():
        ax.axvspan(p - 0.5, p + 0.5, color=colour, alpha=0.35, lw=0, label=f"{note} (position {p})")
    ax.bar(np.arange(len(v)), v, width=0.9, color="#37474f")
    if names is not None and len(v) <= 48:
        ticks = [t for t, n in enumerate(names) if not n.startswith("f")]
        ax.set_xticks(ticks, [names[t] for t in ticks], rotation=90, fontsize=7)
    ax.set_xlim(-0.8, len(v) - 0.2)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if marks:
        ax.legend(fontsize=8, loc="upper center", framealpha=0.9)
    if title:  # beside a verdict, the title moves to the right so that the two never overlap
        ax.set_title(title, fontsize=9, loc="center" if verdict is None else "right")
    if verdict is not None:
        ax.set_title("RIGHT" if verdict else "WRONG", loc="left", fontsize=12, fontweight="bold",
                     color=_RIGHT if verdict else _WRONG)
    return ax.figure


def recall_marks(x, y, layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT) -> dict:
    """Marks for :func:`position_bars` on one example x, y [T]: the asked key's entry and its value."""
    q = data_recall.locate(torch.as_tensor(x), torch.as_tensor(y), layout)[-1]
    return {q["key_pos"]: (_KEY, f"entry of the asked key {layout.name(q['key'])}"),
            q["value_pos"]: (_VALUE, f"its value {layout.name(q['value'])}"),
            q["query_pos"] + 1: (_ASK, "the key in the question")}


def retrieval_grid(panels: dict, title: str = "where the memory reads at the answer position",
                   ylabel: str = "retrieval weight"):
    """Rows of panels {row name: [panel, ...]}; a panel is {"values" [T], "names", "marks", "title"}
    (optional "ylim", default (0, 1), "xlabel", and "verdict": True / False for RIGHT / WRONG)."""
    if not panels or not all(panels.values()):
        raise ValueError("panels is empty: give {row name: [panel dict, ...]}")
    n_cols = max(len(row) for row in panels.values())
    fig, axes = plt.subplots(len(panels), n_cols, figsize=(min(MAX_WIDTH, max(9.0, 6.5 * n_cols)), 2.9 * len(panels)),
                             squeeze=False)
    for r, (name, row) in enumerate(panels.items()):
        for c in range(n_cols):
            ax = axes[r, c]
            if c >= len(row):
                ax.axis("off")
                continue
            p = row[c]
            extra = {key: p[key] for key in ("xlabel", "verdict") if key in p}
            row_label = f"{name}\n{ylabel}" if c == 0 else ylabel      # the row's name once, at its left
            position_bars(ax, p["values"], p.get("names"), p.get("marks"), row_label, p.get("title"),
                          p.get("ylim", (0, 1)), **extra)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
