"""Pictures of the triple-latent family and the helpers the other ``plots_*`` modules share: each function
takes plain tensors (or a model and some tokens) and returns a matplotlib ``Figure``. ``pulse_memory``
calls ``running_state``; the gate and pair-memory pictures read ``model.internals``. Shapes follow the
library: gates [T, H] per layer, P [H, S, S] per position.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from ..data import recall as data_recall
from ..data.text import BOS, EOS, PAD
from ..running_state import running_state
from .palette import GREEN, ORANGE, SKY, tint

# widest figure: about 950 px in a notebook (the inline backend draws at 100 dpi)
MAX_WIDTH = 9.5

_SPECIAL_BYTES = {PAD: "PAD", BOS: "BOS", EOS: "EOS", 10: "⏎", 32: "␣", 9: "⇥"}


def as_numpy(x) -> np.ndarray:
    """Tensor (any device, any float dtype) or array -> float64 numpy array on the CPU."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().double().numpy()  # to the CPU first, then cast: MPS has no float64
    return np.asarray(x, dtype=np.float64)


def labelled(ax, legend: float | None = 8, **names) -> None:
    """``ax.set(**names)`` (xlabel=, ylabel=, title=, ylim= ...), then a legend of font size ``legend``."""
    ax.set(**names)
    if legend:
        ax.legend(fontsize=legend)


def finish(fig, title: str | None = None, fontsize: float = 11):
    """The figure's own title (when given) and a tight layout; returns the figure."""
    if title:
        fig.suptitle(title, fontsize=fontsize)
    fig.tight_layout()
    return fig


# --- tokens as boxes -----------------------------------------------------------------------

def byte_label(token: int) -> str:
    """A readable label for one byte-level id: the character, ␣ for space, ⏎ for newline, BOS..."""
    token = int(token)
    if token in _SPECIAL_BYTES:
        return _SPECIAL_BYTES[token]
    if 33 <= token < 127:
        return chr(token)
    return f"x{token:02x}"  # control bytes and the pieces of multi-byte UTF-8 characters


def token_labels(tokens) -> list[str]:
    """Byte labels (:func:`byte_label`) for a 1-D sequence of ids."""
    ids = tokens.tolist() if isinstance(tokens, torch.Tensor) else list(tokens)
    if ids and isinstance(ids[0], list):
        raise ValueError("token_labels takes one sequence [T], not a batch [B, T]; pass tokens[0]")
    return [byte_label(i) for i in ids]


def token_strip(labels, ids=None, highlight=None, per_row: int = 32, title: str | None = None,
                ax=None):
    """Draw tokens as rows of boxes (as wide as their label; about ``per_row`` one-character boxes a row):
    the label inside, the id (or position) below. highlight: {position: (colour, note)} or (colour,
    note, hatch) fills those boxes (hatched: a meaning never rests on colour alone), ``note`` above."""
    labels = [str(label) for label in labels]
    highlight = highlight or {}
    widths = [max(1.0, 0.55 * len(label) + 0.4) for label in labels]
    places, row, col = [], 0, 0.0                                   # (row, left edge) of each box
    for w in widths:
        if col > 0 and col + w > per_row:
            row, col = row + 1, 0.0
        places.append((row, col))
        col += w + 0.08
    n_rows = row + 1
    span = max(c + w for (_, c), w in zip(places, widths, strict=True))
    if ax is None:
        _, ax = plt.subplots(figsize=(min(MAX_WIDTH, max(4.0, 0.4 * span + 0.5)), 1.3 * n_rows + 0.5))
    for k, (label, w, (r, c)) in enumerate(zip(labels, widths, places, strict=True)):
        y = -1.7 * r
        colour, note, *hatch = highlight.get(k, ("#f2f2f2", None))
        ax.add_patch(plt.Rectangle((c, y), w, 0.92, facecolor=colour, edgecolor="#666666", lw=0.6,
                                   hatch=hatch[0] if hatch else None))
        ax.text(c + w / 2, y + 0.46, label, ha="center", va="center", fontsize=8, family="monospace")
        under = f"{ids[k]}" if ids is not None else f"{k}"
        ax.text(c + w / 2, y - 0.2, under, ha="center", va="center", fontsize=7, color="#555555")
        if note:
            ax.text(c + w / 2, y + 1.05, note, ha="center", va="bottom", fontsize=8)
    ax.set(xlim=(-0.2, span + 0.2), ylim=(-1.7 * (n_rows - 1) - 0.6, 1.7))
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure


def recall_strip(x, y, layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT, per_row: int = 32,
                 title: str | None = None):
    """One associative-recall example x, y [T]: the asked key and its value in context, the
    question's key and the answer position highlighted (positions from ``data_recall.locate``)."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    if x.dim() != 1 or y.shape != x.shape:
        raise ValueError(f"recall_strip takes one example x, y [T]; got {tuple(x.shape)} and {tuple(y.shape)}")
    questions = data_recall.locate(x, y, layout)
    highlight = {}
    for q in questions:
        highlight[q["key_pos"]] = (tint(ORANGE, 0.5), "key")
        highlight[q["value_pos"]] = (tint(GREEN, 0.6), "value")
        highlight[q["query_pos"] + 1] = (tint(ORANGE, 0.5), "asked")
        highlight[q["answer_pos"]] = (tint(SKY, 0.4), f"-> {layout.name(q['value'])}")
    labels = [layout.name(t) for t in x.tolist()]
    if title is None and questions:
        q = questions[-1]
        title = (f"asks {layout.name(q['key'])}: written at {q['key_pos']}, its value "
                 f"{layout.name(q['value'])} at {q['value_pos']}, answer due at {q['answer_pos']}")
    return token_strip(labels, x.tolist(), highlight, per_row, title)


# --- the running state ---------------------------------------------------------------------

def half_life(lam: float) -> float:
    """Tokens until a pulse's trace halves: lambda^h = 1/2, so h = ln 0.5 / ln lambda."""
    if not 0 < lam < 1:
        raise ValueError(f"lambda must lie in (0, 1), got {lam}")
    return math.log(0.5) / math.log(lam)


def pulse_response(lam: float, T: int = 40) -> torch.Tensor:
    """s_t for a = [1, 0, 0, ...] and a constant gate lambda, through ``running_state.running_state``: [T]."""
    a = torch.zeros(1, T, 1, 1)
    a[0, 0] = 1.0                                                   # one pulse at t = 0
    lam_seq = torch.full((1, T, 1), float(lam))                     # [1, T, 1]
    return running_state(a, lam_seq)[0, :, 0, 0]                   # s_t = (1 - lam) lam^t


def pulse_memory(lams=(0.5, 0.8, 0.95), T: int | None = None):
    """The state's memory of one pulse for each lambda, half-lives marked: s_t (left) and the share left,
    s_t / s_0 = lambda^t (right). T defaults to three times the longest half-life (at least 20)."""
    longest = max(half_life(lam) for lam in lams)
    T = max(20, math.ceil(3 * longest) + 1) if T is None else int(T)
    fig, (ax_s, ax_left) = plt.subplots(1, 2, figsize=(MAX_WIDTH, 3.4))
    marker = {"marker": "o", "ms": 3} if T <= 60 else {}
    for lam in lams:
        s = pulse_response(lam, T).numpy()
        h = half_life(lam)
        line, = ax_s.plot(range(T), s, label=f"λ = {lam:.3g}  (half-life {h:.1f} tokens)", **marker)
        ax_left.plot(range(T), s / s[0], color=line.get_color(), **marker)
        if h < T:
            for ax in (ax_s, ax_left):
                ax.axvline(h, color=line.get_color(), ls=":", lw=1)
    ax_left.axhline(0.5, color="#777777", ls="--", lw=0.8)
    ax_s.set_title("s_t = (1 - λ) λ^t", fontsize=10)
    ax_left.set_title("what is left: 1/2 at the half-life (dotted)", fontsize=10)
    for ax, ylabel in ((ax_s, "state s_t"), (ax_left, "share left  s_t / s_0 = λ^t")):
        ax.set(xlabel="tokens since the pulse t", ylabel=ylabel, xlim=(0, T - 1))
    ax_s.legend(fontsize=8)
    return finish(fig, "memory of one pulse a_0 = 1")


# --- heatmaps ------------------------------------------------------------------------------

def matrix_heatmap(M, xlabels=None, ylabels=None, ax=None, title: str | None = None, xlabel: str = "",
                   ylabel: str = "", center: float | None = 0.0, vmin=None, vmax=None, cmap=None,
                   cbar: bool = True, annot: bool = False, figsize=None):
    """One matrix [rows, cols] as a seaborn heatmap; diverging colours around ``center`` (with no vmin /
    vmax, a symmetric scale: zero is white). After M, only optional seaborn / matplotlib styling options."""
    M = as_numpy(M)
    if ax is None:
        scale = 0.6 if annot else 0.25                              # room for the numbers
        size = figsize or (min(MAX_WIDTH, max(3.0, scale * M.shape[1] + 1.5)), max(2.0, scale * M.shape[0] + 1))
        _, ax = plt.subplots(figsize=size)
    if center is not None and vmin is None and vmax is None:
        top = float(np.abs(M).max()) or 1.0
        vmin, vmax = -top, top
    sns.heatmap(M, ax=ax, center=center, vmin=vmin, vmax=vmax,
                cmap=cmap or ("vlag" if center is not None else "viridis"),
                cbar=cbar, annot=annot, fmt=".2f", annot_kws={"fontsize": 7.5},
                xticklabels=xlabels if xlabels is not None else "auto",
                yticklabels=ylabels if ylabels is not None else "auto")
    ax.tick_params(axis="x", labelrotation=0)
    ax.tick_params(axis="y", labelrotation=0)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    return ax.figure


def outer_product_step(s_prev_t, b_t, P_prev, P_t, gam_t: float, t: int | None = None):
    """One pair-memory update for one head: s_{t-1} [S], b_t [S], P_{t-1}, P_t [S, S]."""
    s_prev_t, b_t = as_numpy(s_prev_t), as_numpy(b_t)
    outer = np.outer(s_prev_t, b_t)                                 # [S, S], display only
    top = max(float(np.abs(x).max()) for x in (outer, as_numpy(P_prev), as_numpy(P_t))) or 1.0
    fig, axes = plt.subplots(1, 5, figsize=(MAX_WIDTH, 2.6), gridspec_kw={"width_ratios": [0.6, 3, 3, 3, 3.6]})
    kw = {"vmin": -top, "vmax": top, "cbar": False}
    matrix_heatmap(s_prev_t[:, None], ax=axes[0], xlabels=[], title="s_{t-1}", ylabel="i (state)", **kw)
    matrix_heatmap(b_t[None, :], ax=axes[1], ylabels=[], title="b_t", xlabel="j (write)", **kw)
    matrix_heatmap(outer, ax=axes[2], title="outer(s_{t-1}, b_t)", xlabel="j", ylabel="i", **kw)
    matrix_heatmap(P_prev, ax=axes[3], title="P_{t-1}", xlabel="j", **kw)
    matrix_heatmap(P_t, ax=axes[4], title=f"P_t = {gam_t:.2f} P_(t-1) + {1 - gam_t:.2f} outer", xlabel="j",
                   cbar=True, vmin=-top, vmax=top)
    return finish(fig, "one pair-memory step" + (f" at t = {t}" if t is not None else ""))


def pair_memory_grid(snapshots: dict, labels=None, heads=None, title: str | None = None):
    """P_t per head (columns) at the snapshot positions (rows): {t: [H, S, S]}, on one colour scale;
    labels (of the whole sequence) name the token each row has just read."""
    items = sorted((int(t), as_numpy(P)) for t, P in snapshots.items())
    H = items[0][1].shape[0]
    heads = list(range(H)) if heads is None else list(heads)
    top = max(float(np.abs(P[heads]).max()) for _, P in items) or 1.0
    panel = min(2.6, (MAX_WIDTH - 0.6) / len(heads))                # every panel fits the width
    fig, axes = plt.subplots(len(items), len(heads), figsize=(panel * len(heads) + 0.6, 0.92 * panel * len(items)),
                             squeeze=False)
    for r, (t, P) in enumerate(items):
        token = f" '{labels[t]}'" if labels is not None else ""
        for c, h in enumerate(heads):
            ax = axes[r, c]
            sns.heatmap(P[h], ax=ax, center=0, vmin=-top, vmax=top, cmap="vlag", cbar=c == len(heads) - 1,
                        xticklabels=False, yticklabels=False, square=True)
            ax.set_title(f"t = {t}{token}, head {h}", fontsize=8)
            if r == len(items) - 1:
                ax.set_xlabel("j (write b)")
            if c == 0:
                ax.set_ylabel("i (state s)")
    return finish(fig, title or "pair memory P_t")


def gate_heatmaps(gates, labels=None, title: str | None = None, name: str = "gate"):
    """Gates [L, T, H] (``model_gates``): one heatmap per layer, heads x tokens."""
    G = as_numpy(gates)
    L, T, H = G.shape
    fig, axes = plt.subplots(L, 1, figsize=(min(MAX_WIDTH, max(6.0, 0.2 * T + 2)), 1.0 + 0.45 * H * L + 0.5 * L),
                             squeeze=False)
    for layer in range(L):
        ax = axes[layer, 0]
        sns.heatmap(G[layer].T, ax=ax, vmin=0.0, vmax=1.0, cmap="mako", cbar_kws={"label": name},
                    xticklabels=labels if labels is not None and layer == L - 1 else False,
                    yticklabels=[f"h{h}" for h in range(H)])
        ax.set_ylabel(f"layer {layer}\nhead")
        ax.tick_params(axis="x", labelrotation=0, labelsize=7)
    axes[-1, 0].set_xlabel("token (the gate applied when reading it)")
    return finish(fig, title or f"{name} per layer, head and token")


# --- reading a model -----------------------------------------------------------------------

def _one_sequence(tokens, model) -> torch.Tensor:
    """tokens [T] or [1, T] -> [1, T] int64 on the model's device."""
    tokens = torch.as_tensor(tokens)
    if tokens.dim() == 1:
        tokens = tokens[None]
    if tokens.dim() != 2 or tokens.shape[0] != 1:
        raise ValueError(f"give one sequence: tokens [T] or [1, T], got shape {tuple(tokens.shape)}")
    return tokens.long().to(next(model.parameters()).device)


def model_gates(model, tokens, key: str = "gam") -> torch.Tensor:
    """The model's gate ``key`` ("gam" or "lam") on one sequence, from ``model.internals``: [L, T, H] on the CPU."""
    tokens = _one_sequence(tokens, model)
    _, record = model.internals(tokens)                             # eval mode: the gates as used at test time
    found = [layer.get(key) for layer in record["layers"]]
    if any(g is None for g in found):
        have = [i for i, g in enumerate(found) if g is not None]
        raise ValueError(f"{key!r} is recorded by layers {have} of {len(found)} of this {model.variant} "
                         "model; gates exist in triple-latent and slot layers only")
    return torch.stack([g[0] for g in found]).float().cpu()        # [L, T, H]


def model_pair_memories(model, tokens, positions) -> list[dict]:
    """P_t of every layer at ``positions`` of one sequence, in one forward pass: [{t: [H, S, S]}] per layer."""
    tokens = _one_sequence(tokens, model)
    positions = [int(p) for p in positions]
    _, record = model.internals(tokens, snapshot_at=positions)
    layers = record["layers"]
    missing = [i for i, layer in enumerate(layers) if "P" not in layer]
    if missing:
        raise ValueError(f"layers {missing} of this {model.variant} model record no pair memory P; "
                         "pair memories exist in triple-latent layers only")
    return [{t: P[0].float().cpu() for t, P in layer["P"].items()} for layer in layers]


# --- training runs ---------------------------------------------------------------------------

def loss_curves(histories: dict, ax=None, title: str = "training loss", bits: bool = False,
                smooth: int = 1):
    """Loss per step of runs {name: history dict (with "loss") or list of floats}; bits=True divides by
    ln 2 (bits per token = BPB on bytes); smooth > 1 adds a moving average."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    scale = 1 / math.log(2) if bits else 1.0
    for name, h in histories.items():
        loss = np.asarray(h["loss"] if isinstance(h, dict) else h, dtype=np.float64) * scale
        averaged = 1 < smooth <= len(loss)
        line, = ax.plot(np.arange(1, len(loss) + 1), loss, lw=1, alpha=0.45 if averaged else 1.0,
                        label=None if averaged else name)
        if averaged:
            avg = np.convolve(loss, np.ones(smooth) / smooth, mode="valid")
            ax.plot(np.arange(smooth, len(loss) + 1), avg, lw=2, color=line.get_color(), label=name)
    labelled(ax, xlabel="optimizer step", ylabel="training loss (bits per byte)" if bits else "training loss (nats)",
             title=title)
    return ax.figure


def metric_bars(ours: dict, paper: dict | None = None, ax=None, ylabel: str = "BPB",
                title: str = "ours beside the paper"):
    """Bars of one metric per model, ours and (hatched) the paper's where it reports one."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    names = list(ours)
    x = np.arange(len(names))
    ax.bar(x - 0.2, [ours[n] for n in names], width=0.4, label="this run")
    if paper:
        vals = [paper.get(n, np.nan) for n in names]
        ax.bar(x + 0.2, vals, width=0.4, hatch="//", alpha=0.6, label="paper")
    ax.set_xticks(x, names)
    labelled(ax, ylabel=ylabel, title=title)
    return ax.figure
