"""The pictures of where recall breaks and of induction on text (notebook 07c).

    overwrite_answers     which value each model answers when a key was written 2-3 times
    alias_accuracy        asked with another alias against asked with the written token (the control)
    alias_training_curves gated_hybrid_repaired's training loss on aliases, one line per seed and setting
    distance_accuracy     accuracy against the distance from the pairs to the question
    induction_ratios      loss ratio second copy / first copy, 80 and 2,000 steps, with the control
    induction_curves      the loss at every position of both copies (2,000 steps)

Inputs are the rows of :mod:`tl_research.results` (``break_rows``, ``break_chance``,
``break_curves``, ``induction_rows``); every function returns its figure, or None when it has no rows.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from tl_minimal.views.palette import BLUE, GREEN, PURPLE, SKY, VERMILLION


def overwrite_answers(rows, chance: dict):
    """Per model: the share of questions answered with the latest value, an earlier one, anything else."""
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    xs = np.arange(len(rows))
    for k, (name, title, color) in enumerate((("value", "latest value (right)", GREEN),
                                              ("earlier_rate", "an earlier value", VERMILLION),
                                              ("other_rate", "anything else", "#bdbdbd"))):
        ax.bar(xs + (k - 1) * 0.27, [r.stats(name)[0] for r in rows], width=0.27, color=color, label=title)
        for i, r in enumerate(rows):
            ax.plot([xs[i] + (k - 1) * 0.27] * len(r.rates[name]), r.rates[name], ".", color="k", ms=3)
    ax.axhline(chance.get("pick_among_writes", np.nan), color="k", ls="--", lw=1, label="random pick among the writes")
    ax.axhline(chance.get("constant", np.nan), color="k", ls=":", lw=1, label="constant guess")
    ax.set_xticks(xs, [r.label.replace(" (", "\n(") for r in rows], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("fraction of questions")
    ax.set_ylim(0, 1.05)
    ax.set_title("overwrite: which value does each model answer? (dots: seeds)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def alias_pairs(rows) -> dict:
    """{model: {"alias": row, "control": row}} at the command's default steps; a control run only at
    200 steps stands in for a missing one (drawn hatched). Models without an alias row are left out."""
    pairs: dict = {}
    for r in sorted(rows, key=lambda r: r.label.endswith("steps)")):  # the default steps first
        name = r.label.replace(" (identical tokens)", "").replace(" (200 steps)", "")
        kind = "control" if "identical tokens" in r.label else "alias"
        if r.label.endswith("steps)") and not (kind == "control" and r.label.endswith("(200 steps)")):
            continue
        pairs.setdefault(name, {}).setdefault(kind, r)
    return {name: pair for name, pair in pairs.items() if "alias" in pair}


def alias_accuracy(rows, chance: dict):
    """Each model asked with another alias (red) and with the written token (blue, the control)."""
    pairs = alias_pairs(rows)
    if not pairs:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    names = list(pairs)
    xs = np.arange(len(names))
    for k, (kind, title, color) in enumerate((("alias", "asked with another alias", VERMILLION),
                                              ("control", "asked with the written token (control)", BLUE))):
        for i, v in enumerate(names):
            row = pairs[v].get(kind)
            if row is None:
                continue
            x0 = xs[i] + (k - 0.5) * 0.38
            short = row.label.endswith("steps)")  # the control run only at 200 steps
            ax.bar(x0, row.stats("value")[0], width=0.38, color=color, hatch="///" if short else None,
                   edgecolor="white" if short else None, label=title if i == 0 else None)
            ax.plot([x0] * len(row.rates["value"]), row.rates["value"], ".", color="k", ms=3)
    ax.axhline(chance.get("in_context_pick", np.nan), color="k", ls="--", lw=1, label="random pick in context")
    ax.axhline(chance.get("constant", np.nan), color="k", ls=":", lw=1, label="constant guess")
    ticks = [n.replace(" (trained with 25% identical)", " + curriculum").replace(" (top_k=all)", ", all entries")
             for n in names]  # short tick labels; the table has the row names
    ax.set_xticks(xs, ticks, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("alias, 1,000 steps: another alias vs the written token (dots: seeds; hatched: 200 steps)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


ALIAS_STYLE = {  # the 1,000-step rows: row label -> (legend, line style, colour)
    "gated_hybrid_repaired": ("top-8 read", "-", VERMILLION),
    "gated_hybrid_repaired (top_k=all)": ("every entry read", "--", PURPLE),
    "gated_hybrid_repaired (trained with 25% identical)": ("top-8, curriculum", "-", GREEN),
    "gated_hybrid_repaired (top_k=all) (trained with 25% identical)": ("every entry, curriculum", "--", BLUE),
}


def alias_training_curves(curves: dict, every: int = 10):
    """``curves``: {row label: {seed: losses in nats, one per ``every`` steps}}; drawn in bits."""
    if not any(label in curves for label in ALIAS_STYLE):
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    for label, (legend, ls, color) in ALIAS_STYLE.items():
        for seed, curve in sorted(curves.get(label, {}).items()):
            steps_axis = every * np.arange(1, len(curve) + 1)
            ax.plot(steps_axis, np.array(curve) / math.log(2), ls, color=color, lw=1.0, alpha=0.85,
                    label=legend if seed == min(curves[label]) else None)  # nats -> bits
    ax.axhline(3.0, color="k", ls=":", lw=1, label="3 bits: uniform guess")
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (bits)")
    ax.set_title("alias: gated_hybrid_repaired's training loss, one line per seed", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def distance_accuracy(rows, chance: dict, lengths: list[int]):
    """Each model's accuracy at every sequence length (= distance to the question), dots per seed."""
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    for r in rows:
        have = [T for T in lengths if f"length {T}" in r.rates]
        line, = ax.plot(have, [r.stats(f"length {T}")[0] for T in have], "o-", lw=1.5, ms=4, label=r.label)
        for T in have:
            ax.plot([T] * len(r.rates[f"length {T}"]), r.rates[f"length {T}"], ".", color=line.get_color(), ms=3)
    ax.axhline(chance.get("in_context_pick", np.nan), color="k", ls="--", lw=1, label="random pick in context")
    ax.axhline(chance.get("constant", np.nan), color="k", ls=":", lw=1, label="constant guess")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{T:,}" for T in lengths])
    ax.set_xlabel("sequence length = distance from the pairs to the question (tokens)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("distance: accuracy against how far back the pairs were written (dots: seeds)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def induction_ratios(rows):
    """Bars: the loss ratio (2nd copy / 1st copy) at 80 and 2,000 steps; dots: seeds; red: the control."""
    if not rows:
        return None
    labels = list(dict.fromkeys(r.label for r in rows))
    by = {(r.label, r.steps): r for r in rows}
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.9))
    for ax, kind in zip(axes, ("text", "random"), strict=True):
        for k, (steps, color) in enumerate(((80, SKY), (2000, BLUE))):
            for i, label in enumerate(labels):
                row = by.get((label, steps))
                if row is None:
                    continue
                xpos = i + (k - 0.5) * 0.38
                ax.bar(xpos, row.stats(kind)[0], width=0.38, color=color, label=f"{steps} steps" if i == 0 else None)
                ax.plot([xpos] * len(row.seeds), row.numbers[(kind, "ratio")], ".", color="k", ms=3)
                ax.plot(xpos, row.stats(f"{kind}_control")[0], "_", color=VERMILLION, ms=12, mew=2,
                        label="control (another span)" if i == 0 and k == 0 else None)
        ax.axhline(1.0, color="k", ls=":", lw=1, label="no copying (1)")
        ax.set_xticks(np.arange(len(labels)), [lb.replace(" (", "\n(") for lb in labels], rotation=40,
                      ha="right", fontsize=7)
        ax.set_ylabel("loss ratio, 2nd copy / 1st copy")
        ax.set_title({"text": "held-out text read twice", "random": "random bytes read twice"}[kind], fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("induction: how much cheaper is the second copy? (dots: seeds)", fontsize=9)
    fig.tight_layout()
    return fig


def induction_curves(rows, span_len: int, steps: int = 2000):
    """The loss at every position of the span, first copy dashed, second solid (mean over seeds)."""
    rows = [r for r in rows if r.steps == steps]
    if not rows:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.9))
    positions = np.arange(1, span_len + 1)
    for ax, kind in zip(axes, ("text", "random"), strict=True):
        for c, row in enumerate(rows):
            first, second = row.curve(kind)
            color = plt.cm.tab10(c)
            ax.plot(positions, first, ls="--", lw=0.9, color=color)
            ax.plot(positions, second, lw=1.4, color=color, label=row.label)
        ax.set_xlabel("position in the span")
        ax.set_ylabel("bits per byte")
        ax.set_title(f"{'held-out text' if kind == 'text' else 'random bytes'}: 1st copy dashed, 2nd solid", fontsize=9)
    axes[1].axhline(8.0, color="k", ls=":", lw=1)
    axes[1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig
