"""Pictures of recall (notebooks 05, 06 and 06a): what models predict, where a recall model reads, what
its key-value memory stores, and what a ``triple_latent`` keeps of a pair across the filler. Nothing
re-implements the models' math: retrieval weights and the read gate come from ``model.internals``,
kept fractions and gradient reach from ``tl_minimal.course.forgetting`` and ``gradient_reach``.
Shapes: one sequence x [T]; weights over memory positions [T] or [B, T].
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch

from ..data import recall as data_recall
from .palette import BLUE, GREEN, INK, ORANGE, RIGHT, SKY, VERMILLION, WRONG, tint
from .plots import MAX_WIDTH, as_numpy, byte_label, finish, labelled, loss_curves, token_strip

NAMES = {"lam": "λ (running state)", "gam": "γ (pair memory)"}


def prediction_strips(tokens, predictions: dict, per_row: int = 20, title: str | None = None):
    """A byte sequence [T] and, per model, its top guess for the NEXT byte at each position: predictions
    {name: ids [T]}. A right guess (the byte that comes next) is filled green AND hatched."""
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
        right = {t: (RIGHT.fill, None, RIGHT.hatch) for t in range(T - 1) if pred[t] == ids[t + 1]}
        score = len(right) / max(T - 1, 1)
        token_strip([byte_label(p) for p in pred], None, right, per_row,
                    f"{name}: guess for the next byte ({score:.0%} right: hatched)", ax=axes[row])
    return finish(fig, title)


# --- recall retrieval (notebook 06a) -------------------------------------------------------

def recall_sequence(pairs, ask, n_filler: int = 20, seed: int = 0,
                    layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT):
    """One recall example by hand: BOS, (key value SEP) per pair, filler, QUERY ask ANSWER. pairs: [(key id,
    value id), ...] as ``widgets.parse_pairs`` checks them; ask: one of the keys. -> x, y [T] int64, the
    asked key's value the only target, at the last position."""
    L = layout
    g = torch.Generator().manual_seed(seed)
    filler = torch.randint(L.first_filler, L.first_filler + L.n_filler, (n_filler,), generator=g).tolist()
    body = [t for k, v in pairs for t in (int(k), int(v), L.SEP)]
    x = torch.tensor([L.BOS, *body, *filler, L.QUERY, int(ask), L.ANSWER])
    y = torch.full_like(x, data_recall.IGNORE)
    y[-1] = {int(k): int(v) for k, v in pairs}[int(ask)]
    return x, y


@torch.no_grad()
def read_at(model, x, y) -> dict:
    """The gated hybrid's memory read at each row's last supervised position (the answer) of x, y [B, T] or [T]:
    CPU tensors "weights" [B, T] (at j: memory entry j, key x_j, value x_j+1), "read_gate", "pred", "target",
    "pos" and "correct" [B] (argmax over the vocabulary)."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    if x.dim() == 1:
        x, y = x[None], y[None]
    logits, rec = model.internals(x.long().to(next(model.parameters()).device))
    if "retrieval" not in rec:
        raise ValueError(f"this {model.variant} model has no key-value memory (no 'retrieval' internals)")
    pos = ((y.cpu() != data_recall.IGNORE).long() * torch.arange(y.shape[1])).argmax(1)  # last supervised: [B]
    rows = torch.arange(len(x))
    r = {k: v.cpu() for k, v in rec["retrieval"].items()}
    w, idx = r["weights"][rows, pos], r["index"][rows, pos]         # [B, K]
    dense = torch.zeros(x.shape, dtype=w.dtype).scatter_add_(1, idx.clamp_min(0), w * (idx >= 0))  # [B, T]
    pred = logits.cpu()[rows, pos].argmax(-1)
    target = y.cpu()[rows, pos]
    return {"weights": dense, "read_gate": r["read_gate"][rows, pos], "pred": pred, "target": target,
            "pos": pos, "correct": pred == target}


def position_bars(ax, values, names=None, marks: dict | None = None, ylabel: str = "weight",
                  title: str | None = None, verdict: bool | None = None):
    """Bars of values [T] in [0, 1] over positions; marks {position: (colour, note)} shade positions, named in a legend;
    names [T] label the non-filler positions when T <= 48; verdict (True / False) writes RIGHT or WRONG
    above the panel. After ax and values, only optional labels and marks of one panel."""
    v = as_numpy(values)
    for p, (colour, note) in (marks or {}).items():
        ax.axvspan(p - 0.5, p + 0.5, color=colour, alpha=0.35, lw=0, label=f"{note} (position {p})")
    ax.bar(np.arange(len(v)), v, width=0.9, color="#37474f")
    if names is not None and len(v) <= 48:
        ticks = [t for t, n in enumerate(names) if not n.startswith("f")]
        ax.set_xticks(ticks, [names[t] for t in ticks], rotation=90, fontsize=7)
    ax.set(xlim=(-0.8, len(v) - 0.2), ylim=(0, 1))
    ax.set(xlabel="memory position j (entry j: key x_j, value x_j+1)", ylabel=ylabel)
    if marks:
        ax.legend(fontsize=8, loc="upper center", framealpha=0.9)
    if title:  # beside a verdict, the title moves to the right so that the two never overlap
        ax.set_title(title, fontsize=9, loc="center" if verdict is None else "right")
    if verdict is not None:
        ax.set_title("RIGHT" if verdict else "WRONG", loc="left", fontsize=12, fontweight="bold",
                     color=RIGHT.colour if verdict else WRONG.colour)  # and the word
    return ax.figure


def recall_marks(x, y, layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT) -> dict:
    """Marks for :func:`position_bars` on one example x, y [T]: the asked key's entry and its value."""
    q = data_recall.locate(torch.as_tensor(x), torch.as_tensor(y), layout)[-1]
    return {q["key_pos"]: (ORANGE, f"entry of the asked key {layout.name(q['key'])}"),
            q["value_pos"]: (GREEN, f"its value {layout.name(q['value'])}"),
            q["query_pos"] + 1: (BLUE, "the key in the question")}


def retrieval_grid(panels: dict, title: str = "where the memory reads at the answer position",
                   ylabel: str = "retrieval weight"):
    """Rows of panels {row name: [panel, ...]}; a panel is {"values" [T], optional "names", "marks", "title" and
    "verdict": True / False for RIGHT / WRONG}, drawn by :func:`position_bars` on a scale of 0 to 1."""
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
            row_label = f"{name}\n{ylabel}" if c == 0 else ylabel      # the row's name once, at its left
            position_bars(ax, p["values"], p.get("names"), p.get("marks"), row_label, p.get("title"), p.get("verdict"))
    return finish(fig, title)


# --- the key-value memory (notebooks 06 and 06a) -------------------------------------------

def state_sizes(checkpoints, sizes: dict):
    """``sizes``: {what: [numbers stored after t tokens, one per checkpoint]}."""
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for what, counts in sizes.items():
        ax.plot(checkpoints, counts, marker="o", label=what)
    labelled(ax, xlabel="tokens seen t", ylabel="numbers in the carried state",
             title="what generation has to carry: the memory grows like a KV cache")
    return fig


def perfect_match(betas, weights, paper_beta: float, our_beta: float):
    """The weight of a perfect match (``weights``, one per beta) with the paper's and our starting beta."""
    fig, ax = plt.subplots(figsize=(6.5, 3))
    ax.plot(betas, weights)
    ax.axvline(paper_beta, color=VERMILLION, ls=":", label=f"β = {paper_beta:g} (the paper)")
    ax.axvline(our_beta, color=GREEN, ls="--", label=f"β = {our_beta:g} (gated_hybrid_repaired's start)")
    labelled(ax, xlabel="β (multiplies the cosine)", ylabel="weight of the perfect match",
             title="a perfect match among 8 kept entries (the others orthogonal)")
    return fig


def cosines_at_init(repeat_cos: dict, other_cos: dict):
    """One panel per configuration: {label: [tensors of cosines]} for the exact repeat and the others."""
    fig, axes = plt.subplots(1, len(repeat_cos), figsize=(9, 3.2), sharey=True, squeeze=False)
    for ax, label in zip(axes[0], repeat_cos, strict=True):
        others = as_numpy(torch.cat([c.cpu() for c in other_cos[label]]))
        repeats = as_numpy(torch.cat([c.cpu() for c in repeat_cos[label]]))
        ax.hist(others, bins=60, range=(-1, 1), density=True, color="grey", alpha=0.6, label="other entries")
        ax.hist(repeats, bins=60, range=(-1, 1), density=True, color=ORANGE, alpha=0.8,
                label="the exact repeat of the asked key")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("cos(q_t, k_j) at initialization")
        ax.legend(fontsize=8, loc="upper left")
    axes[0][0].set_ylabel("density")
    return finish(fig, "at the ANSWER position, before any training")


def recall_training(histories: dict, accuracy: dict, steps: int, n_values: int = data_recall.PAPER_LAYOUT.n_values):
    """Left: the training losses in bits per answer token; right: each model's recall accuracy."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    loss_curves(histories, bits=True, ax=axes[0], smooth=10, title="training loss (the answer token only)")
    axes[0].axhline(math.log2(n_values), color="black", ls=":", lw=1,
                    label=f"constant guess ({math.log2(n_values):g} bits)")
    labelled(axes[0], ylabel="bits per answer token")
    axes[1].bar(list(accuracy), list(accuracy.values()), color=[SKY, GREEN][: len(accuracy)])
    axes[1].axhline(1 / n_values, color="black", ls=":", lw=1, label=f"constant guess 1/{n_values}")
    axes[1].axhline(1 / 4, color="grey", ls="--", lw=1, label="random value in context 1/4")
    labelled(axes[1], ylim=(0, 1.05), ylabel="recall accuracy", title=f"after {steps} steps, seed 0")
    return finish(fig)


def _panel(read, x, y, i, name):
    on_key = read["weights"][i, data_recall.locate(x[i], y[i])[-1]["key_pos"]]
    return {"values": read["weights"][i], "names": [name(t) for t in x[i].tolist()],
            "marks": recall_marks(x[i], y[i]), "verdict": bool(read["correct"][i]),
            "title": f"answers {name(int(read['pred'][i]))} (target {name(int(read['target'][i]))}); "
                     f"weight on the key's entry {on_key:.2f}; read gate {read['read_gate'][i]:.2f}"}


def read_panels(trained: dict, fresh: dict, x, y, name=data_recall.PAPER_LAYOUT.name) -> dict:
    """The trained model on the first example it answers right and the first it answers wrong (when
    there is one), and the fresh model on example 0: panels for ``retrieval_grid``."""
    panels = {}
    for want in (True, False):
        hits = (trained["correct"] == want).nonzero().flatten()
        if len(hits):
            panels[f"trained, example {int(hits[0])}"] = [_panel(trained, x, y, int(hits[0]), name)]
    panels["initialized, example 0"] = [_panel(fresh, x, y, 0, name)]
    return panels


# --- what a triple_latent keeps across the filler (notebook 06a) ---------------------------

def gates_along_recall(gates: dict, gap: tuple[int, int], title: str | None = None):
    """Mean keep gate over the examples, per head, at every position: one row per layer, λ and γ side by side.
    gates: {"lam", "gam"} -> [N, L, T, H] (``forgetting.recall_gates``); gap: (a, b), the filler tokens, shaded."""
    mean = {key: as_numpy(g).mean(axis=0) for key, g in gates.items()}  # [L, T, H] each
    L, T, H = mean["gam"].shape
    fig, axes = plt.subplots(L, 2, figsize=(MAX_WIDTH, 1.0 + 1.7 * L), sharex=True, sharey=True, squeeze=False)
    for col, key in enumerate(("lam", "gam")):
        for layer in range(L):
            ax = axes[layer, col]
            ax.axvspan(gap[0] - 0.5, gap[1] - 0.5, color=tint(INK, 0.9), zorder=0)
            for h in range(H):
                ax.plot(np.arange(T), mean[key][layer, :, h], lw=1.2, label=f"head {h}")
            ax.set_ylim(0, 1)
            ax.set_title(f"layer {layer}: {NAMES[key]}", fontsize=9)
            if col == 0:
                ax.set_ylabel("keep gate")
        axes[-1, col].set_xlabel(f"position t (shaded: the {gap[1] - gap[0]} filler tokens)")
    axes[0, 1].legend(fontsize=7, ncol=2, loc="lower right")
    return finish(fig, title or "keep gates along a recall sequence (mean over examples)")


def kept_across_gap(kept: dict, gap_length: int, title: str | None = None):
    """log10 of the fraction kept after the gap, median over the examples, per layer and head. kept: {"lam",
    "gam"} -> [N, L, H] (``forgetting.kept_fraction``, log10). Dotted: a constant gate of 0.5 (the start's)."""
    med = {key: np.median(as_numpy(k), axis=0) for key, k in kept.items()}  # [L, H] each
    L, H = med["gam"].shape
    x = np.arange(L * H)
    fig, ax = plt.subplots(figsize=(MAX_WIDTH * 0.75, 3.8))
    for offset, key in ((-0.2, "lam"), (0.2, "gam")):
        ax.bar(x + offset, med[key].reshape(-1), width=0.38, label=NAMES[key])
    ax.axhline(gap_length * np.log10(0.5), color=VERMILLION, ls=":", label=f"a constant gate 0.5: 0.5^{gap_length}")
    ax.set_xticks(x, [f"L{layer}\nh{h}" for layer in range(L) for h in range(H)], fontsize=8)
    ax.set_ylabel("log10 of the fraction kept")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)  # below: the bars fill the axes
    ax.set_title(title or f"what is left of a stored pair after {gap_length} filler tokens", fontsize=10)
    return finish(fig)


def gradient_reach(rows: list[dict], floor: float = 1e-40, title: str | None = None):
    """The question loss's gradient reaching k tokens back (left, log scale; a float32 0 drawn at ``floor``) and
    each row's pair reach (right), at initialization: rows of ``course.gradient_reach.measure``."""
    fig, (ax, bars) = plt.subplots(1, 2, figsize=(MAX_WIDTH, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    for row in rows:
        reach = np.maximum(np.asarray(row["reach"], dtype=float), floor)
        ax.plot(np.arange(len(reach)), reach, lw=1.4, label=row.get("label", row["variant"]))
    ax.set(yscale="log", ylim=(floor / 3, 3))
    ax.axhline(floor, color=INK, lw=0.8, ls=":")
    ax.set(xlabel="distance k back from the question (tokens)", ylabel="gradient at t - k / gradient at t")
    ax.set_title(f"reach by distance (dotted: exactly 0 in float32, drawn at {floor:g})", fontsize=9)
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    order = sorted(rows, key=lambda r: r["pair_reach"])
    values = [max(r["pair_reach"], floor) for r in order]
    bars.barh(np.arange(len(order)), np.log10(values) - np.log10(floor / 3), left=np.log10(floor / 3),
              color=[VERMILLION if r["pair_reach"] == 0 else tint(INK, 0.4) for r in order])
    bars.set_yticks(np.arange(len(order)), [r.get("label", r["variant"]) for r in order], fontsize=8)
    bars.set_xlabel("log10 pair reach (red: exactly 0)")
    bars.set_title("the pairs' gradient / the questions'", fontsize=9)
    return finish(fig, title or "what reaches the pairs before any training (calibrated 4-pair recall, 128 tokens)")
