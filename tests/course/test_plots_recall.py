"""The pictures of notebooks 04-06 draw on tiny inputs, and their helpers compute the right numbers."""

from __future__ import annotations

import matplotlib
import matplotlib.collections

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from tl_minimal import build_model
from tl_minimal.conv import conv_fast
from tl_minimal.data import recall as data_recall
from tl_minimal.views import plots, plots_conv, plots_retrieval, plots_slots

TINY = {"d_model": 16, "n_layers": 1, "n_heads": 2, "max_seq_len": 32, "dropout": 0.0}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_slot_usage_draws_a_heatmap_per_head_and_the_mean_use():
    g = torch.rand(6, 2, 3).softmax(-1)  # [T, H, K]
    fig = plots_slots.slot_usage(g, labels=list("abcdef"))
    assert len(fig.axes) >= 3


def test_spectra_draws():
    fig = plots_slots.spectra({"P": torch.randn(4, 4), "M": torch.outer(torch.ones(4), torch.arange(4.0))})
    assert fig.axes[0].get_title()


def test_conv_influence_sees_the_future_only_when_symmetric():
    d, k = 3, 5
    W, c = torch.randn(d, d, k), torch.randn(d)
    causal = plots_conv.conv_influence(lambda x: conv_fast(x, W, c, causal=True), T=8, d=d)
    symmetric = plots_conv.conv_influence(lambda x: conv_fast(x, W, c, causal=False), T=8, d=d)
    assert causal.shape == (8, 8)
    assert torch.all(causal.triu(1) == 0)  # nothing above the diagonal
    assert torch.all(causal.tril(-(k)) == 0)  # and nothing older than k - 1 steps
    assert symmetric.triu(1).sum() > 0 and torch.all(symmetric.triu(3) == 0)  # t+1 and t+2 only
    fig = plots_conv.influence_maps({"causal": causal, "symmetric": symmetric})
    assert len(fig.axes) == 4  # two maps, each with its colourbar
    assert fig.get_size_inches()[0] <= plots.MAX_WIDTH


def test_tap_norms_and_prediction_strips_draw():
    fig = plots_conv.tap_norms({"causal": (torch.randn(2, 2, 5), True), "leaky": (torch.randn(2, 2, 5), False)})
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "x[t+2]" in labels and "x[t-4]" in labels
    tokens = torch.tensor([257, 72, 105, 33])
    fig = plots_retrieval.prediction_strips(tokens, {"model": torch.tensor([72, 105, 33, 10])})
    assert len(fig.axes) == 2


def test_recall_sequence_builds_a_valid_example():
    x, y = plots_retrieval.recall_sequence([(5, 13), (6, 20)], ask=6, n_filler=3, seed=1)
    L = data_recall.PAPER_LAYOUT
    assert len(x) == 1 + 6 + 3 + 3 and x[0] == L.BOS and x[-3] == L.QUERY and x[-1] == L.ANSWER
    assert int(y[-1]) == 20 and int((y != data_recall.IGNORE).sum()) == 1
    q = data_recall.locate(x, y)[-1]
    assert q["key_pos"] == 4 and q["value_pos"] == 5


def test_read_at_puts_the_kept_weights_on_memory_positions():
    torch.manual_seed(0)
    model = build_model("gated_hybrid_paper", 64, **TINY)
    x, y = data_recall.eval_set(3, seq_len=32)
    r = plots_retrieval.read_at(model, x, y)
    assert r["weights"].shape == (3, 32)
    assert torch.allclose(r["weights"].sum(1), torch.ones(3), atol=1e-5)  # a softmax over the kept entries
    assert torch.all(r["weights"][:, 30:] == 0)  # entries j <= t-2 only (t = 31)
    assert r["read_gate"].shape == (3,) and r["correct"].dtype == torch.bool
    marks = plots_retrieval.recall_marks(x[0], y[0])
    fig = plots_retrieval.retrieval_grid({"model": [{"values": r["weights"][0], "marks": marks, "title": "one"}]})
    assert fig.axes[0].get_legend() is not None


def test_read_at_refuses_a_model_without_memory():
    model = build_model("transformer", 64, **TINY)
    x, y = data_recall.eval_set(1, seq_len=32)
    with pytest.raises(ValueError, match="no key-value memory"):
        plots_retrieval.read_at(model, x, y)


def test_position_bars_labels_the_positions():
    _, ax = plt.subplots()
    plots_retrieval.position_bars(ax, torch.rand(5), names=list("abcde"), marks={1: ("red", "here")})
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcde")


def test_seeds_beside_paper_draws_every_seed_and_the_papers_stars():
    from tl_research.views import plots_seeds

    panels = {"width": [plots_seeds.Group("d=64", [0.12, 0.13, 1.0], [1.0]),
                        plots_seeds.Group("d=96", [], [0.1196], colour_index=1)],
              "recipe": [plots_seeds.Group("paper", [0.12] * 5, [0.13, 0.134, 0.116])]}
    fig = plots_seeds.seeds_beside_paper(panels, {"constant guess": 0.125, "random pick": 0.25}, title="t")
    assert [ax.get_title() for ax in fig.axes] == ["width", "recipe"]
    dots = [c for c in fig.axes[0].collections if isinstance(c, matplotlib.collections.PathCollection)]
    assert sorted(len(c.get_offsets()) for c in dots) == [1, 1, 3]  # 3 seeds of ours; a star at d=64 and at d=96
    with pytest.raises(ValueError, match=r"fractions in \[0, 1\]"):
        plots_seeds.Group("bad", [12.0])
    with pytest.raises(ValueError, match="non-empty"):
        plots_seeds.seeds_beside_paper({"empty": []})
