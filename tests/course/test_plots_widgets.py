"""The plotting and widget helpers draw on tiny inputs, and widgets fall back to a figure."""

import math

import matplotlib.pyplot as plt  # no display here: matplotlib falls back to the off-screen Agg backend
import pytest
import torch

from tl_minimal import build_model
from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.views import plots, widgets

TINY = {"d_model": 8, "n_layers": 2, "n_heads": 2, "state_dim": 4, "max_seq_len": 32, "dropout": 0.0}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def tiny_model():
    torch.manual_seed(0)
    return build_model("triple_latent", data_text.VOCAB_SIZE, **TINY)


def test_byte_labels_are_readable():
    assert plots.token_labels(data_text.encode("a b\n")) == ["BOS", "a", "␣", "b", "⏎", "EOS"]
    with pytest.raises(ValueError, match="one sequence"):
        plots.token_labels(torch.zeros(2, 3, dtype=torch.long))


def test_token_and_recall_strips_draw():
    fig = plots.token_strip(["a", "b", "c"], ids=[97, 98, 99], highlight={1: ("orange", "key")}, per_row=2)
    assert isinstance(fig, plt.Figure)
    x, y = data_recall.recall_batch(1, seq_len=20, generator=torch.Generator().manual_seed(0))
    fig = plots.recall_strip(x[0], y[0])
    assert "asks" in fig.axes[0].get_title()


def test_pulse_response_is_the_closed_form():
    lam = 0.8
    s = plots.pulse_response(lam, T=10)
    expected = torch.tensor([(1 - lam) * lam**t for t in range(10)])
    assert torch.allclose(s, expected, rtol=1e-5)
    assert plots.half_life(0.5) == pytest.approx(1.0)
    assert plots.half_life(lam) == pytest.approx(math.log(0.5) / math.log(lam))
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        plots.half_life(1.0)
    fig = plots.pulse_memory([0.5, 0.9], T=12)
    assert len(fig.axes) == 2 and fig.axes[0].get_xlim()[1] == 11  # s_t, and the share left lambda^t


def test_pulse_time_axis_follows_the_longest_half_life():
    """A gate of 0.995 (half-life 138 tokens) decays visibly: the axis spans three half-lives."""
    for lams in ([0.5, 0.9], [0.5, 0.995]):
        fig = plots.pulse_memory(lams)
        longest = max(plots.half_life(lam) for lam in lams)
        assert fig.axes[1].get_xlim()[1] >= 3 * longest  # lambda^t has fallen to 1/8 by the axis' end


def test_heatmaps_draw():
    plots.matrix_heatmap(torch.randn(3, 4), xlabels=list("abcd"), title="m")
    S = 4
    P0, P1 = torch.zeros(S, S), torch.randn(S, S)
    plots.outer_product_step(torch.randn(S), torch.randn(S), P0, P1, gam_t=0.5, t=3)
    fig = plots.pair_memory_grid({2: torch.randn(2, S, S), 5: torch.randn(2, S, S)}, labels=list("abcdef"))
    assert len([ax for ax in fig.axes if ax.get_title()]) == 4
    fig = plots.gate_heatmaps(torch.rand(2, 5, 3), labels=list("abcde"))
    assert len([ax for ax in fig.axes if ax.get_ylabel().startswith("layer")]) == 2
    with pytest.raises(ValueError, match=r"\[layers, T, heads\]"):
        plots.gate_heatmaps(torch.rand(5, 3))
    with pytest.raises(ValueError, match="empty"):
        plots.pair_memory_grid({})


def test_curves_and_bars_draw():
    plots.loss_curves({"a": {"loss": [3.0, 2.5, 2.0, 1.9]}, "b": [3.1, 2.0, 1.5, 1.4]}, smooth=2, bits=True)
    plots.metric_bars({"transformer": 5.0, "triple_latent": 4.9}, {"transformer": 5.124})


def test_model_internals_as_pictures(tiny_model):
    tokens = widgets.byte_prompt("hello there", tiny_model.max_seq_len)
    gates = plots.model_gates(tiny_model, tokens, "lam")
    assert gates.shape == (2, len(tokens), 2) and bool(((gates > 0) & (gates < 1)).all())
    snaps = plots.model_pair_memory(tiny_model, tokens, [0, 5], layer=1)
    assert sorted(snaps) == [0, 5] and snaps[5].shape == (2, 4, 4)
    every = plots.model_pair_memories(tiny_model, tokens, [0, 5])
    assert len(every) == 2 and torch.equal(every[1][5], snaps[5])
    with pytest.raises(ValueError, match="layer must be"):
        plots.model_pair_memory(tiny_model, tokens, [0], layer=2)
    transformer = build_model("transformer", data_text.VOCAB_SIZE, d_model=8, n_layers=1, n_heads=2,
                              max_seq_len=32)
    with pytest.raises(ValueError, match="gates exist in"):
        plots.model_gates(transformer, tokens)


def test_widgets_fall_back_to_a_static_figure(tiny_model):
    assert not widgets.has_frontend()  # pytest is not a Jupyter kernel
    assert isinstance(widgets.pulse_memory_widget(0.7), plt.Figure)
    tokens = widgets.byte_prompt("abc", 32)
    snaps = plots.model_pair_memory(tiny_model, tokens, range(len(tokens)))
    assert isinstance(widgets.pair_memory_widget(snaps, plots.token_labels(tokens)), plt.Figure)
    assert isinstance(widgets.gate_widget(tiny_model, "a sentence", key="lam"), plt.Figure)
    with pytest.raises(TypeError, match="Slider, Text or Choice"):
        widgets.interactive(lambda v: None, v=3)


def test_widgets_build_controls_when_asked():
    pytest.importorskip("ipywidgets")
    box = widgets.pulse_memory_widget(0.7, static=False)
    assert box.controls["lam"].value == pytest.approx(0.7)
