"""The plotting and widget helpers draw on tiny inputs, and widgets fall back to a figure."""

import math

import matplotlib.pyplot as plt  # no display here: matplotlib falls back to the off-screen Agg backend
import numpy as np
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


def _mesh(ax):
    """The values a seaborn heatmap drew on ``ax`` (its one QuadMesh), as rows x cols."""
    (mesh,) = ax.collections
    rows, cols = (n - 1 for n in mesh.get_coordinates().shape[:2])  # the cells' corners: one more each way
    return mesh, np.asarray(mesh.get_array()).reshape(rows, cols)


def test_heatmaps_draw():
    M = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    fig = plots.matrix_heatmap(M, xlabels=list("abcd"), title="m")
    mesh, drawn = _mesh(fig.axes[0])
    assert np.allclose(drawn, M.numpy()) and fig.axes[0].get_title() == "m"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == list("abcd")
    top = float(M.abs().max())
    assert mesh.get_clim() == pytest.approx((-top, top))  # centred at 0: zero is white
    S = 4
    s, b = torch.randn(S), torch.randn(S)
    P0, P1 = torch.zeros(S, S), torch.randn(S, S)
    fig = plots.outer_product_step(s, b, P0, P1, gam_t=0.5, t=3)
    panels = [ax for ax in fig.axes if ax.get_title()]  # the five matrices (the colour bar has no title)
    assert [ax.get_title() for ax in panels][:4] == ["s_{t-1}", "b_t", "outer(s_{t-1}, b_t)", "P_{t-1}"]
    assert panels[4].get_title() == "P_t = 0.50 P_(t-1) + 0.50 outer"
    assert "one pair-memory step at t = 3" in [text.get_text() for text in fig.findobj(plt.Text)]  # the suptitle
    for ax, matrix in zip(panels, (s[:, None], b[None, :], torch.outer(s, b), P0, P1), strict=True):
        assert np.allclose(_mesh(ax)[1], matrix.numpy())
    assert len({_mesh(ax)[0].get_clim() for ax in panels}) == 1  # one colour scale for all five
    fig = plots.pair_memory_grid({2: torch.randn(2, S, S), 5: torch.randn(2, S, S)}, labels=list("abcdef"))
    assert len([ax for ax in fig.axes if ax.get_title()]) == 4
    fig = plots.gate_heatmaps(torch.rand(2, 5, 3), labels=list("abcde"))
    assert len([ax for ax in fig.axes if ax.get_ylabel().startswith("layer")]) == 2


def test_loss_curves_draw_each_run_in_bits_with_its_moving_average():
    runs = {"a": {"loss": [3.0, 2.5, 2.0, 1.9]}, "b": [3.1, 2.0, 1.5, 1.4]}
    ax = plots.loss_curves(runs, smooth=2, bits=True).axes[0]
    assert ax.get_ylabel() == "training loss (bits per byte)" and ax.get_xlabel() == "optimizer step"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    lines = ax.get_lines()
    assert len(lines) == 4  # per run: the raw losses (faint) and their moving average over 2 steps
    for (raw, avg), loss in zip(zip(lines[::2], lines[1::2], strict=True), ([3.0, 2.5, 2.0, 1.9], runs["b"]),
                                strict=True):
        bits = np.array(loss) / math.log(2)
        assert np.allclose(raw.get_xdata(), [1, 2, 3, 4]) and np.allclose(raw.get_ydata(), bits)
        assert np.allclose(avg.get_xdata(), [2, 3, 4]) and np.allclose(avg.get_ydata(), (bits[1:] + bits[:-1]) / 2)
        assert raw.get_alpha() < 1 and avg.get_color() == raw.get_color()
    nats = plots.loss_curves({"c": [2.0, 1.0]}).axes[0]  # no smoothing: one line, in nats
    assert [list(line.get_ydata()) for line in nats.get_lines()] == [[2.0, 1.0]]
    assert nats.get_ylabel() == "training loss (nats)"


def test_metric_bars_put_ours_beside_the_papers_value_where_it_reports_one():
    ax = plots.metric_bars({"transformer": 5.0, "triple_latent": 4.9}, {"transformer": 5.124}).axes[0]
    ours, paper = (list(c) for c in ax.containers)
    assert [bar.get_height() for bar in ours] == [5.0, 4.9]
    assert paper[0].get_height() == 5.124 and math.isnan(paper[1].get_height())  # no number: no bar
    assert all(bar.get_hatch() == "//" for bar in paper)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["transformer", "triple_latent"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["this run", "paper"]
    assert len(plots.metric_bars({"transformer": 5.0}).axes[0].containers) == 1  # no paper: our bars alone


def test_model_internals_as_pictures(tiny_model):
    tokens = widgets.byte_prompt("hello there", tiny_model.max_seq_len)
    gates = plots.model_gates(tiny_model, tokens, "lam")
    assert gates.shape == (2, len(tokens), 2) and bool(((gates > 0) & (gates < 1)).all())
    every = plots.model_pair_memories(tiny_model, tokens, [0, 5])  # one dict {t: P_t} per layer
    assert len(every) == 2 and sorted(every[1]) == [0, 5] and every[1][5].shape == (2, 4, 4)
    transformer = build_model("transformer", data_text.VOCAB_SIZE, d_model=8, n_layers=1, n_heads=2,
                              max_seq_len=32)
    with pytest.raises(ValueError, match="gates exist in"):
        plots.model_gates(transformer, tokens)


def test_widgets_fall_back_to_a_static_figure(tiny_model):
    assert not widgets.has_frontend()  # pytest is not a Jupyter kernel
    assert isinstance(widgets.pulse_memory_widget(0.7), plt.Figure)
    tokens = widgets.byte_prompt("abc", 32)
    snaps = plots.model_pair_memories(tiny_model, tokens, range(len(tokens)))[0]
    assert isinstance(widgets.pair_memory_widget(snaps, plots.token_labels(tokens)), plt.Figure)
    assert isinstance(widgets.gate_widget(tiny_model, "a sentence", key="lam"), plt.Figure)


def test_widgets_build_controls_when_asked():
    pytest.importorskip("ipywidgets")
    box = widgets.pulse_memory_widget(0.7, static=False)
    assert box.controls["lam"].value == pytest.approx(0.7)
