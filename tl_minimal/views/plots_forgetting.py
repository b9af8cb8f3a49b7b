"""Pictures for notebook 06a's question "why does recall need the key-value path?".

Like ``plots.py``, every function draws one kind of picture with labelled axes and a title and
returns the matplotlib ``Figure``; the numbers come from ``tl_minimal.course.forgetting`` (gates
read from ``model.internals``, products over the gap in log space).

    gates_along_recall   lambda_t and gamma_t of every layer and head along a recall sequence
    kept_across_gap      log10 of the fraction of a stored pair kept after the gap, per layer and head
    gradient_reach       the gradient of the question loss that reaches k tokens back, per variant (issue 50)
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .palette import INK, VERMILLION, tint
from .plots import MAX_WIDTH, as_numpy

NAMES = {"lam": "λ (running state)", "gam": "γ (pair memory)"}


def gates_along_recall(gates: dict, gap: tuple[int, int], title: str | None = None):
    """Mean keep gate over the examples, per head, at every position: one row per layer, λ and γ side by side.

    gates: {"lam", "gam"} -> [N, L, T, H] (``forgetting.recall_gates``); gap: (a, b), the filler
    tokens a .. b-1, shaded.
    """
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
    fig.suptitle(title or "keep gates along a recall sequence (mean over examples)", fontsize=11)
    fig.tight_layout()
    return fig


def kept_across_gap(kept: dict, gap_length: int, title: str | None = None):
    """log10 of the fraction kept after the gap, median over the examples, per layer and head.

    kept: {"lam", "gam"} -> [N, L, H] (``forgetting.kept_fraction``, log10). The dotted line is a
    constant gate of 0.5 (the gates' value at initialization) over the same gap.
    """
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
    fig.tight_layout()
    return fig


def gradient_reach(rows: list[dict], floor: float = 1e-40, title: str | None = None):
    """How much of the question loss's gradient reaches a token k places back, at initialization.

    rows: ``tl_minimal.course.gradient_reach.measure`` results (``label`` or ``variant``, ``reach``: [K + 1],
    reach[0] = 1). Left: reach against distance, log scale; a float32 0 (the gradient rounded away) is drawn
    at ``floor``. Right: each row's pair reach (the pairs' tokens against the questions'), 0 drawn at the floor.
    """
    fig, (ax, bars) = plt.subplots(1, 2, figsize=(MAX_WIDTH, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    for row in rows:
        reach = np.maximum(np.asarray(row["reach"], dtype=float), floor)
        ax.plot(np.arange(len(reach)), reach, lw=1.4, label=row.get("label", row["variant"]))
    ax.set_yscale("log")
    ax.set_ylim(floor / 3, 3)
    ax.axhline(floor, color=INK, lw=0.8, ls=":")
    ax.set_xlabel("distance k back from the question (tokens)")
    ax.set_ylabel("gradient at t - k / gradient at t")
    ax.set_title(f"reach by distance (dotted: exactly 0 in float32, drawn at {floor:g})", fontsize=9)
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    order = sorted(rows, key=lambda r: r["pair_reach"])
    values = [max(r["pair_reach"], floor) for r in order]
    bars.barh(np.arange(len(order)), np.log10(values) - np.log10(floor / 3), left=np.log10(floor / 3),
              color=[VERMILLION if r["pair_reach"] == 0 else tint(INK, 0.4) for r in order])
    bars.set_yticks(np.arange(len(order)), [r.get("label", r["variant"]) for r in order], fontsize=8)
    bars.set_xlabel("log10 pair reach (red: exactly 0)")
    bars.set_title("the pairs' gradient / the questions'", fontsize=9)
    fig.suptitle(title or "what reaches the pairs before any training (calibrated 4-pair recall, 128 tokens)",
                 fontsize=11)
    fig.tight_layout()
    return fig
