"""Pictures for notebooks 05-06: what models predict, and where a recall model reads.

Like ``plots.py``, every function draws one kind of picture with labelled axes and a title and
returns the matplotlib ``Figure``; nothing re-implements the models' math. Retrieval weights,
the read gate and attention are read through ``model.internals``.

    prediction_strips     a text and each model's top next-byte guess, right guesses coloured
    recall_sequence       one recall example built by hand (for widgets): x, y [T]
    read_at               retrieval weights over memory positions, read gate and prediction
    attention_at          a Transformer's attention weights at one position (one layer)
    position_bars         one row of weights over positions with marked positions (building block)
    recall_marks          the key, value and question positions of a recall example, as marks
    retrieval_grid        models (rows) x examples (columns) of ``position_bars``

Shapes: one sequence x [T]; weights over memory positions [T] or [B, T].
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from ..data import recall as data_recall
from .palette import BLUE, GREEN, ORANGE, RIGHT, WRONG
from .plots import MAX_WIDTH, as_numpy, byte_label, token_strip

_KEY, _VALUE, _ASK = ORANGE, GREEN, BLUE
_RIGHT, _WRONG = RIGHT.colour, WRONG.colour  # the verdict is written as a word as well


def prediction_strips(tokens, predictions: dict, per_row: int = 20, title: str | None = None):
    """A byte sequence [T] and, per model, its top guess for the NEXT byte at each position.

    predictions: {name: ids [T]} (argmax of the logits at each position). A guess is right when
    it equals the byte that really comes next: its box is filled green AND hatched (so a reader
    who cannot tell green from grey still sees it), and each row's title says so.
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
        right = {t: (RIGHT.fill, None, RIGHT.hatch) for t in range(T - 1) if pred[t] == ids[t + 1]}
        score = len(right) / max(T - 1, 1)
        token_strip([byte_label(p) for p in pred], None, right, per_row,
                    f"{name}: guess for the next byte ({score:.0%} right: hatched)", ax=axes[row])
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


# --- recall retrieval (notebook 06a) -------------------------------------------------------

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
                  title: str | None = None, ylim=None,
                  xlabel: str = "memory position j (entry j: key x_j, value x_j+1)",
                  verdict: bool | None = None):
    """Bars of values [T] over positions; marks {position: (colour, note)} shade positions, named in a legend.

    names (token names [T], optional) label the non-filler positions when the sequence is short
    (T <= 48); longer sequences get plain position numbers, which stay readable. verdict (True /
    False) writes RIGHT or WRONG above the panel, larger than any other text in it.
    Nine parameters: after ax and values, optional labels and marks of one panel.
    """
    v = as_numpy(values)
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
