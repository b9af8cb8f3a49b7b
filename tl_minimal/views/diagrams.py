"""Drawn diagrams of the architecture (not of data), in the notation of notebook 00's glossary: one
triple-latent layer, the language model around the layers, the chunked form. ``LAYER_SYMBOLS`` /
``MODEL_SYMBOLS`` list the symbols each diagram must name (the tests check that every one is drawn).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyBboxPatch, Rectangle

from .palette import BLUE, GREEN, ORANGE, SKY, VERMILLION, tint

LAYER_SYMBOLS = ("x_t", "n_t", "a_t", "b_t", "q^l_t", "q^r_t", r"\lambda_t", r"\gamma_t", "s_t", "s_{t-1}",
                 "P_t", "P_{t-1}", "r_t", "W_o", "o_t")
MODEL_SYMBOLS = (r"\mathrm{token}_t", "e_t", "E", "pos_t", "x_t", "n_t", "o_t", "h_t", "z_t", r"\mathrm{logits}_t")

# colours by role: projections, gates, the three steps, everything else
# (pale tints of the palette's blue, orange and bluish green; the text in each box names it too)
_PROJ, _GATE, _STEP, _PLAIN, _OPTIONAL = tint(BLUE, 0.85), tint(ORANGE, 0.75), tint(GREEN, 0.8), "#eeeeee", "#ffffff"
_STEPS = {"s": "running state", "P": "pair memory", "r": "readout"}


def _canvas(width: float, height: float, xlim, ylim):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set(xlim=xlim, ylim=ylim)
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, text, color=_PLAIN, fontsize=10, dashed=False, lw=1.0, alpha=1.0, weight="normal"):
    """A rounded box with lower-left corner (x, y), size (w, h), centred text; then optional matplotlib styles."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.3,rounding_size=0.8", fc=color,
                                ec="black", lw=lw, ls="--" if dashed else "-", alpha=alpha))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, alpha=max(alpha, 0.5),
            fontweight=weight, linespacing=1.4)


def _arrow(ax, start, end, text=None, text_at=0.5, offset=(0, 1.2), dashed=False, fontsize=10, color="black",
           ha="center", curve=0.0):
    """An arrow from start to end, optionally labelled at ``text_at`` (0 = start, 1 = end) + ``offset``."""
    ax.annotate("", xy=end, xytext=start,
                arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.1, "ls": "--" if dashed else "-",
                            "shrinkA": 0, "shrinkB": 0, "connectionstyle": f"arc3,rad={curve}"})
    if text:
        tx = start[0] + text_at * (end[0] - start[0]) + offset[0]
        ty = start[1] + text_at * (end[1] - start[1]) + offset[1]
        ax.text(tx, ty, text, ha=ha, va="center", fontsize=fontsize, color=color)


def _plus(ax, x, y, r=1.6):
    ax.add_patch(Circle((x, y), r, fc="white", ec="black", lw=1.1))
    ax.text(x, y, "+", ha="center", va="center", fontsize=12)


# --- the layer -----------------------------------------------------------------------------

def _layer_inputs(ax, fade: dict) -> None:
    """layer_diagram's left part: x_t, LN, and the six projections of n_t (faded by step)."""
    _box(ax, 0.5, 24, 9, 10, "$x_t$\nlayer\ninput")
    _box(ax, 12.5, 26, 7, 6, "LN")
    _arrow(ax, (10, 29), (12.2, 29))
    _arrow(ax, (20, 29), (24.5, 29), "$n_t$", offset=(0, 2.0))
    ax.plot([25, 25], [8.5, 51.5], color="black", lw=1.1)

    # four tanh projections and two sigmoid gates, placed beside the step that uses them
    rows = [  # (y centre, text, colour, step)
        (51.5, r"$a_t = \tanh(W_a n_t)$", _PROJ, "s"),
        (44.5, r"$\lambda_t = \sigma(W_\lambda n_t + c_\lambda)$", _GATE, "s"),
        (33.5, r"$b_t = \tanh(W_b n_t)$", _PROJ, "P"),
        (26.5, r"$\gamma_t = \sigma(W_\gamma n_t + c_\gamma)$", _GATE, "P"),
        (15.5, r"$q^l_t = \tanh(W_{ql} n_t)$", _PROJ, "r"),
        (8.5, r"$q^r_t = \tanh(W_{qr} n_t)$", _PROJ, "r"),
    ]
    for y, text, color, step in rows:
        _arrow(ax, (25, y), (27.2, y))
        _box(ax, 27.5, y - 2.6, 21, 5.2, text, color, fontsize=9.5, alpha=fade[step])
        target_y = {"s": 47, "P": 29, "r": 11}[step]
        _arrow(ax, (49.2, y), (53.7, target_y + (y - target_y) * 0.35))


def _layer_steps(ax, highlight, fade: dict, edge: dict) -> None:
    """layer_diagram's middle: the three steps (s, P, r), what flows between them and across tokens."""
    steps = {
        "s": (47, "① running state", r"$s_t = \lambda_t\, s_{t-1} + (1 - \lambda_t)\, a_t$",
              "S numbers per head, carried"),
        "P": (29, "② pair memory", r"$P_t = \gamma_t\, P_{t-1} + (1 - \gamma_t)\, s_{t-1} b_t^\top$",
              "S × S numbers per head, carried"),
        "r": (11, "③ readout", r"$r_t = (P_t^\top q^l_t) \odot q^r_t$", "S numbers per head, not carried"),
    }
    for key, (y, name, eq, size) in steps.items():
        _box(ax, 54, y - 6.5, 28, 13, f"{name}\n{eq}\n{size}", _STEP, fontsize=9.5, lw=edge[key],
             alpha=fade[key], weight="bold" if highlight == key else "normal")
    # s_{t-1} (the state *before* token t) goes into the pair memory; P_t into the readout
    _arrow(ax, (63, 40.2), (63, 35.8), r"$s_{t-1}$", offset=(-3.4, 0))
    _arrow(ax, (68, 22.2), (68, 17.8), "$P_t$", offset=(2.4, 0))
    # what is carried from token t-1 to token t+1
    for y, before, after in ((47, "$s_{t-1}$", "$s_t$"), (29, "$P_{t-1}$", "$P_t$")):
        _arrow(ax, (88, y + 6), (82.6, y + 3.5), dashed=True)
        ax.text(88.4, y + 6, before + " from t-1", ha="left", va="center", fontsize=9)
        _arrow(ax, (82.6, y - 3.5), (88, y - 6), dashed=True)
        ax.text(88.4, y - 6, after + " to t+1", ha="left", va="center", fontsize=9)


def _layer_output(ax) -> None:
    """layer_diagram's right part and captions: W_o, the residual add, the legend lines."""
    _box(ax, 84, 8, 12.5, 6, r"$o_t = W_o\, \mathrm{vec}(r_t)$", _PLAIN, fontsize=9)
    _arrow(ax, (82.4, 11), (83.7, 11))
    _plus(ax, 98, 57)
    ax.plot([96.8, 99.2, 99.2], [11, 11, 30], color="black", lw=1.1)
    _arrow(ax, (99.2, 30), (98.6, 55.5), "$o_t$", text_at=0, offset=(-1.2, 0), ha="right")
    ax.plot([5, 5, 96.2], [34.3, 57, 57], color="black", lw=1.1)  # the residual stream x_t
    ax.text(45, 58.3, "residual: $x_t$ skips the layer", ha="center", fontsize=9)
    _arrow(ax, (98, 58.6), (98, 63))
    ax.text(96.8, 61.8, "$x_t + o_t$, on to the FFN", ha="right", va="center", fontsize=10)

    ax.text(50, -2.2, "The triple: the context $s_{\\tau-1}$ and the write $b_\\tau$ are paired in P; "
            "the query $q^l_t$ reads the pairs.", ha="center", fontsize=9.5)
    ax.text(50, -5.6, "Blue: tanh projections · orange: keep gates in (0, 1) · green: the three steps · "
            "dashed: the state carried between tokens", ha="center", fontsize=9, color="#444444")


def layer_diagram(highlight: str | None = None):
    """One triple-latent layer at token t, every symbol named; ``highlight`` ("s", "P" or "r"): that step bold,
    the rest faded."""
    if highlight not in (None, *_STEPS):
        raise ValueError(f"highlight must be None or one of {list(_STEPS)} (running state, pair memory, "
                         f"readout), got {highlight!r}")
    fig, ax = _canvas(9.5, 6.0, (0, 101), (-7, 63))
    fade = {k: (1.0 if highlight in (None, k) else 0.35) for k in _STEPS}
    edge = {k: (2.4 if highlight == k else 1.0) for k in _STEPS}

    _layer_inputs(ax, fade)
    _layer_steps(ax, highlight, fade, edge)
    _layer_output(ax)
    title = "one triple-latent layer at token t (per head; H heads side by side)"
    if highlight:
        title += f": step {list(_STEPS).index(highlight) + 1}, the {_STEPS[highlight]}, in bold"
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig


# --- the model -----------------------------------------------------------------------------

def _model_column(ax, x0: float, w: float) -> None:
    """model_diagram's main column (x0 .. x0 + w): tokens to logits, with the optional parts dashed."""
    mid = x0 + w / 2
    rows = [  # (y, height, text, colour, dashed)
        (2, 5, r"$\mathrm{token}_t$  (ids, [B, T])", _PLAIN, False),
        (10, 5, r"embedding  $e_t = E[\mathrm{token}_t]$", _PROJ, False),
        (21.5, 6, "causal convolution\n(triple_hybrid, gated_hybrid_repaired)", _OPTIONAL, True),
        (31, 9, "block 1 … block n_layers\n(pre-LN residual blocks, drawn open →)", _STEP, False),
        (44, 5, r"final LayerNorm  $h_t = \mathrm{LN}(x_t)$", _PLAIN, False),
        (56, 5, r"tied head  $\mathrm{logits}_t = E\, h_t$", _PROJ, False),
    ]
    for y, h, text, color, dashed in rows:
        _box(ax, x0, y, w, h, text, color, fontsize=9.5, dashed=dashed)
    _arrow(ax, (mid, 7.3), (mid, 9.7))
    _plus(ax, mid, 18.5)
    _arrow(ax, (mid, 15.3), (mid, 16.9))
    _box(ax, x0 + w + 3, 16.5, 13, 4, "$pos_t = W_{pos}[t]$", _PROJ, fontsize=9)
    _arrow(ax, (x0 + w + 2.8, 18.5), (mid + 1.6, 18.5))
    _arrow(ax, (mid, 20.1), (mid, 21.2), "$x_t$", offset=(2.2, 0))
    _arrow(ax, (mid, 27.8), (mid, 30.7), "$x_t$", offset=(2.2, 0))
    _arrow(ax, (mid, 40.3), (mid, 43.7), "$x_t$", offset=(2.2, 0))
    _plus(ax, mid, 52.5)
    _arrow(ax, (mid, 49.3), (mid, 50.9), "$h_t$", offset=(2.2, 0))
    _arrow(ax, (mid, 54.1), (mid, 55.7))
    _arrow(ax, (mid, 61.3), (mid, 64.3))
    ax.text(mid, 66, r"$\mathrm{logits}_t$: scores for token t+1", ha="center", va="bottom", fontsize=10)
    # late fusion: a second memory reads the raw embeddings e_t and adds z_t after the final LN
    _box(ax, 0.3, 50.5, 12, 4, "late fusion", _OPTIONAL, fontsize=9, dashed=True)
    ax.plot([1.2, 1.2], [12.5, 50.2], color="black", lw=1, ls="--")
    ax.plot([1.2, x0 - 0.3], [12.5, 12.5], color="black", lw=1, ls="--")
    ax.text(2.1, 36, "$e_t$", fontsize=10)
    _arrow(ax, (12.6, 52.5), (mid - 1.6, 52.5), "$z_t$", offset=(0, 1.5), dashed=True)
    ax.text(mid + 3, 52.5, "transformer_plus_triple,\ngated_hybrid", fontsize=9, va="center")


def _open_block(ax, x0: float, w: float) -> None:
    """model_diagram's right part: one pre-LN residual block drawn open beside the column."""
    bx, bw = 62, 30
    bmid = bx + bw / 2
    ax.add_patch(Rectangle((bx - 3, 4), bw + 6, 60, fc=tint(GREEN, 0.95), ec=GREEN, lw=1.2, ls="--"))
    ax.plot([x0 + w + 0.3, bx - 3], [40, 64], color=GREEN, lw=0.8, ls=":")
    ax.plot([x0 + w + 0.3, bx - 3], [31, 4], color=GREEN, lw=0.8, ls=":")
    ax.text(bmid, 66.5, "one block, drawn open", ha="center", fontsize=10, color=GREEN)
    _arrow(ax, (bmid, 5.5), (bmid, 8.7), "$x_t$", text_at=0.1, offset=(2.4, 0))
    _box(ax, bx + 7, 9, bw - 14, 4, "LN", _PLAIN, fontsize=9.5)
    _arrow(ax, (bmid, 13.3), (bmid, 16.7), "$n_t$", offset=(2.4, 0))
    _box(ax, bx, 17, bw, 6, "mixer: the triple-latent layer\n(attention in the Transformer)", _STEP, fontsize=9)
    _arrow(ax, (bmid, 23.3), (bmid, 27.4), "$o_t$", offset=(2.4, 0))
    _plus(ax, bmid, 29)
    ax.plot([bx - 1.5, bx - 1.5, bmid - 1.6], [7, 29, 29], color="black", lw=1)
    ax.plot([bx - 1.5, bmid], [7, 7], color="black", lw=1)
    _arrow(ax, (bmid, 30.6), (bmid, 36.7))
    _box(ax, bx + 7, 37, bw - 14, 4, "LN", _PLAIN, fontsize=9.5)
    _arrow(ax, (bmid, 41.3), (bmid, 43.7))
    _box(ax, bx + 2, 44, bw - 4, 6, "FFN: Linear(d, 4d), GELU,\nLinear(4d, d)", _PLAIN, fontsize=9)
    _arrow(ax, (bmid, 50.3), (bmid, 54.4))
    _plus(ax, bmid, 56)
    ax.plot([bx - 1.5, bx - 1.5, bmid - 1.6], [33, 56, 56], color="black", lw=1)
    ax.plot([bx - 1.5, bmid], [33, 33], color="black", lw=1)
    _arrow(ax, (bmid, 57.6), (bmid, 62), "$x_t$ to the next block", text_at=1, offset=(0, 1.3))
    ax.text(bx + bw + 2.5, 18, "dropout on $o_t$\nand the FFN output\nwhile training", fontsize=9, va="center")


def model_diagram():
    """The language model around the layers, bottom to top, with one block drawn open."""
    fig, ax = _canvas(9.5, 6.4, (0, 100), (0, 70))
    x0, w = 4, 36                                                  # the main column
    _model_column(ax, x0, w)
    _open_block(ax, x0, w)

    ax.set_title("the language model (bottom to top); dashed boxes: only in some variants", fontsize=11)
    fig.tight_layout()
    return fig


# --- the chunked form ----------------------------------------------------------------------

def chunk_diagram(T: int = 64, C: int = 16):
    """The T x T weight matrix cut into C x C blocks (left) and the chunks in time (right)."""
    if not (isinstance(T, int) and isinstance(C, int)) or C < 1 or T < C or T % C:
        raise ValueError(f"need ints with T a multiple of C >= 1 (a whole number of chunks), got T={T!r}, C={C!r}")
    N = T // C
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 4.0), gridspec_kw={"width_ratios": [1, 1.3]})

    # left: which blocks of W[t, tau] are built
    left.set(xlim=(0, T), ylim=(T, 0), aspect="equal")
    for i in range(N):
        for j in range(N):
            x, y = j * C, i * C
            if i == j:      # inside a chunk: a dense lower-triangular C x C matrix
                left.add_patch(plt.Polygon([(x, y), (x, y + C), (x + C, y + C)], fc=SKY, ec="black", lw=0.8))
            elif i > j:     # between chunks: never built, reaches t through the carried state
                left.add_patch(Rectangle((x, y), C, C, fc=_GATE, ec="black", lw=0.8, hatch="///"))
            else:           # the future: zero
                left.add_patch(Rectangle((x, y), C, C, fc="white", ec="#bbbbbb", lw=0.5))
    left.set(xticks=[k * C for k in range(N + 1)], yticks=[k * C for k in range(N + 1)])
    left.tick_params(labelsize=9)
    left.set_xlabel("write τ", fontsize=10)
    left.set_ylabel("state at t", fontsize=10)
    left.set_title(f"W[t, τ] for T = {T}, C = {C}", fontsize=10)
    left.text(T * 0.97, T * 0.06, "future: 0", ha="right", va="top", fontsize=9)
    handles = [Rectangle((0, 0), 1, 1, fc=SKY, ec="black"),
               Rectangle((0, 0), 1, 1, fc=_GATE, ec="black", hatch="///")]
    left.legend(handles, ["inside a chunk: C × C, built", "between chunks: never built"], fontsize=9,
                loc="upper left", bbox_to_anchor=(-0.05, -0.16), frameon=False)

    # right: chunks along time, the state at each chunk's end carried to the next
    right.set(xlim=(0, 10 * N + 2), ylim=(0, 10))
    right.axis("off")
    for n in range(N):
        x = 1 + 10 * n
        right.add_patch(FancyBboxPatch((x, 5), 7, 3.4, boxstyle="round,pad=0.2", fc=_PROJ, ec="black"))
        right.text(x + 3.5, 6.7, f"chunk {n}\nt = {n * C}…{(n + 1) * C - 1}", ha="center", va="center", fontsize=9)
        if n + 1 < N:
            right.annotate("", xy=(x + 10, 6.7), xytext=(x + 7.2, 6.7),
                           arrowprops={"arrowstyle": "-|>", "lw": 1.4, "color": VERMILLION})
            right.text(x + 8.6, 9.1, f"$s_{{{(n + 1) * C - 1}}}$", ha="center", fontsize=10, color=VERMILLION)
    right.text(1, 3.4, "inside each chunk: one C × C matrix product,\nall chunks at once (parallel)", fontsize=9.5,
               va="center")
    right.text(1, 1.2, f"between chunks: a recurrence over the\nT/C = {N} chunk-end states (red)", fontsize=9.5,
               color=VERMILLION, va="center")
    right.set_title("the same computation in time: chunks and a carried state", fontsize=10)
    fig.tight_layout()
    return fig
