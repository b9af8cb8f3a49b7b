"""Every library picture fits JupyterLab's output area and its text stays readable.

JupyterLab draws a notebook's PNG at its own size (the inline backend renders at 100 dpi) unless
it is wider than the output area, about 950-1000 px with the file browser open; then the whole
picture is scaled down, text included. So every figure here must render at most
``MAX_PX`` wide, and every piece of text must be at least ``MIN_PT`` points, which is
MIN_PT * 100 / 72 = 9 px on screen. Inputs are the long ones the notebooks use (a 75-byte
sentence, 8 heads, 128-token recall sequences), since those are the ones that overflow.
"""

from __future__ import annotations

import matplotlib.pyplot as plt  # the root conftest.py selects the off-screen Agg backend
import pytest
import torch
from matplotlib.text import Text

from tl_minimal import build_model
from tl_minimal.data import recall as data_recall
from tl_minimal.views import diagrams, plots, plots_capacity, plots_conv, plots_retrieval, plots_slots, widgets

MAX_PX = 1000  # about the width of JupyterLab's output area
MIN_PT = 6.5   # 9 px at the inline backend's 100 dpi
DPI = 100

SENTENCE = "The running state keeps a fading sum of the past; the pair memory keeps pairs."


def rendered_width(fig) -> int:
    """Width in pixels of the PNG the inline backend saves: the tight bounding box plus 0.1 in of
    padding on each side, at 100 dpi (measured without rasterizing: the same number, 3x faster)."""
    fig.draw_without_rendering()
    return round((fig.get_tightbbox().width + 2 * 0.1) * DPI)


def smallest_text(fig) -> tuple[float, str]:
    """(font size in points, the text) of the smallest visible, non-empty text of the figure."""
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    smallest = min(texts, key=lambda t: t.get_fontsize())
    return smallest.get_fontsize(), smallest.get_text()


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _recall_example(T=128):
    x, y = data_recall.recall_batch(1, seq_len=T, generator=_gen())
    return x[0], y[0]


def _tiny_gated():
    torch.manual_seed(0)
    return build_model("gated_hybrid_repaired", 64, d_model=16, n_layers=1, n_heads=2, max_seq_len=128,
                       dropout=0.0).eval()


def _figures():
    """(name, function making the figure) for every picture the library draws."""
    tokens = widgets.byte_prompt(SENTENCE, 128)
    labels = plots.token_labels(tokens)
    T = len(tokens)
    x, y = _recall_example()
    names = [data_recall.PAPER_LAYOUT.name(t) for t in x.tolist()]
    S = 8
    panel = {"values": torch.rand(128), "names": names, "marks": plots_retrieval.recall_marks(x, y),
             "title": "answers v13 (target v13); weight on the entry 0.40", "verdict": True}
    return {
        "token_strip": lambda: plots.token_strip(labels, tokens.tolist(), {3: ("#ffcc80", "key")}),
        "recall_strip": lambda: plots.recall_strip(x, y),
        "pulse_memory": lambda: plots.pulse_memory([0.5, 0.995]),
        "matrix_heatmap": lambda: plots.matrix_heatmap(torch.randn(S, S), annot=True),
        "matrix_heatmap_wide": lambda: plots.matrix_heatmap(torch.randn(16, 80)),
        "outer_product_step": lambda: plots.outer_product_step(torch.randn(S), torch.randn(S), torch.zeros(S, S),
                                                               torch.randn(S, S), 0.7, t=5),
        "pair_memory_grid": lambda: plots.pair_memory_grid({5: torch.randn(8, S, S)}, labels),
        "gate_heatmaps": lambda: plots.gate_heatmaps(torch.rand(2, T, 8), labels),
        "gate_heatmaps_long": lambda: plots.gate_heatmaps(torch.rand(1, 127, 2), labels=None),
        "loss_curves": lambda: plots.loss_curves({"a": [3.0, 2.5, 2.0], "b": [3.1, 2.2, 1.9]}, bits=True),
        "metric_bars": lambda: plots.metric_bars({"transformer": 2.4, "triple_latent": 2.5}, {"transformer": 2.3}),
        "recall_vs_pairs": lambda: plots_capacity.recall_vs_pairs({8: torch.linspace(1, 0.4, 20), 16: torch.ones(20)}),
        "recall_vs_state_bytes": lambda: plots_capacity.recall_vs_state_bytes(_state_rows()),
        "slot_usage": lambda: plots_slots.slot_usage(torch.rand(T, 4, 8).softmax(-1), labels),
        "spectra": lambda: plots_slots.spectra({"P": torch.randn(S, S), "M": torch.randn(S, S)}),
        "influence_maps": lambda: plots_conv.influence_maps({"causal": torch.rand(12, 12).tril(),
                                                               "symmetric": torch.rand(12, 12)}),
        "tap_norms": lambda: plots_conv.tap_norms({"causal": (torch.randn(4, 4, 5), True),
                                                     "leaky": (torch.randn(4, 4, 5), False)}),
        "prediction_strips": lambda: plots_retrieval.prediction_strips(tokens, {"causal": tokens.roll(-1),
                                                                             "leaky": tokens}),
        "retrieval_grid": lambda: plots_retrieval.retrieval_grid({"gated_hybrid_repaired": [panel, panel],
                                                               "gated_hybrid_paper": [panel, panel]}),
        "layer_diagram": lambda: diagrams.layer_diagram("P"),
        "model_diagram": lambda: diagrams.model_diagram(),
        "chunk_diagram": lambda: diagrams.chunk_diagram(),
        "recall_widget": lambda: widgets.recall_widget({"gated_hybrid_repaired": _tiny_gated()}, static=True),
    }


def _state_rows():
    """Rows of recall_state_size.json: the Transformer's cache and triple_latent at four S, 2 pair counts."""
    rows = [{"variant": "transformer", "n_pairs": n, "state_dim": None, "accuracy": 1.0, "state_bytes": 196_608}
            for n in (4, 8)]
    rows += [{"variant": "triple_latent", "n_pairs": n, "state_dim": S, "accuracy": S / 64,
              "state_bytes": 48 * (S + S * S)} for n in (4, 8) for S in (8, 16, 32, 64)]
    return rows


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("name", list(_figures()))
def test_figure_fits_and_reads(name):
    fig = _figures()[name]()
    width = rendered_width(fig)
    assert width <= MAX_PX, f"{name}: {width} px wide; JupyterLab would scale it (and its text) down"
    size, text = smallest_text(fig)
    assert size >= MIN_PT, f"{name}: text {text!r} at {size} pt is under {MIN_PT} pt ({MIN_PT * DPI / 72:.0f} px)"
