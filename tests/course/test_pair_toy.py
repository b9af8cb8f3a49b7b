"""tl_minimal.course.pair_toy (notebook 02's toy) and its picture, views.plots_capacity."""

import matplotlib.pyplot as plt
import pytest
import torch

from tl_minimal.course import pair_toy
from tl_minimal.pair_memory import pair_memory_step
from tl_minimal.running_state import running_state_step
from tl_minimal.views import plots_capacity


def test_store_pairs_equals_the_one_token_steps():
    gen = torch.Generator().manual_seed(0)
    contexts, writes = torch.randn(2, 5, 4, generator=gen, dtype=torch.float64)
    s, P = pair_toy.store_pairs(contexts, writes, gam=0.7, lam=0.4)
    s_ref, P_ref = torch.zeros(1, 1, 4, dtype=torch.float64), None
    for t in range(5):
        g = torch.tensor([[0.7]], dtype=torch.float64)
        P_ref = pair_memory_step(P_ref, contexts[t].view(1, 1, 4), writes[t].view(1, 1, 4), g)
        s_ref = running_state_step(writes[t].view(1, 1, 4), torch.tensor([[0.4]], dtype=torch.float64), s_ref)
    assert torch.allclose(s, s_ref[0, 0]) and torch.allclose(P, P_ref[0, 0])


def test_orthogonal_contexts_are_recalled_by_the_pair_memory_and_not_by_the_running_state():
    contexts = torch.eye(3, dtype=torch.float64)
    writes = torch.tensor([[1.0, -1.0, 0.0], [0.0, 1.0, 1.0], [-1.0, 0.0, 1.0]], dtype=torch.float64)
    reads = pair_toy.read_both(contexts, writes, gam=0.5, lam=0.5)
    pair = pair_toy.cosine_table(reads["pair memory"], writes)
    state = pair_toy.cosine_table(reads["running state"], writes)
    assert torch.allclose(pair.diagonal(), torch.ones(3, dtype=torch.float64))
    assert torch.allclose(state, state[:1].expand(3, 3))  # the same answer to every question
    assert (state.argmax(dim=1) == torch.arange(3)).sum() == 1


@pytest.mark.parametrize("n, S", [(3, 8), (8, 8), (20, 8)])
def test_spread_contexts_are_unit_and_orthonormal_up_to_S(n, S):
    c = pair_toy.spread_contexts(n, S, torch.Generator().manual_seed(1))
    assert c.shape == (n, S) and torch.allclose(c.norm(dim=1), torch.ones(n, dtype=torch.float64))
    if n <= S:
        assert torch.allclose(c @ c.T, torch.eye(n, dtype=torch.float64), atol=1e-12)
    else:
        assert not torch.allclose(c @ c.T, torch.eye(n, dtype=torch.float64), atol=1e-3)


def test_recall_curve_is_perfect_up_to_S_and_falls_beyond():
    recall = pair_toy.recall_curve(4, 10, trials=30)
    assert recall.shape == (10,)
    assert torch.all(recall[:4] == 1)
    assert recall[-1] < 0.9 and recall[-1] < recall[4]



def test_recall_vs_pairs_draws_one_line_per_size():
    fig = plots_capacity.recall_vs_pairs({8: torch.linspace(1, 0.5, 12), 16: torch.ones(12)})
    ax = fig.axes[0]
    assert len(ax.get_legend().get_texts()) == 2 and ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    plt.close(fig)


def test_recall_vs_state_bytes_draws_a_panel_per_pair_count_and_a_line_per_model():
    rows = [{"variant": v, "n_pairs": n, "accuracy": a, "state_bytes": b, "state_dim": S}
            for n in (4, 8) for v, a, b, S in (("transformer", 1.0, 196_608, None),
                                               ("triple_latent", 0.125, 13_056, 16),
                                               ("triple_latent", 0.25, 199_680, 64))]
    fig = plots_capacity.recall_vs_state_bytes(rows)
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "log"
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert set(lines) == {"transformer", "triple_latent"}
    assert list(lines["triple_latent"].get_xdata()) == [13_056, 199_680]  # S grows along the line
    assert list(lines["triple_latent"].get_ydata()) == [12.5, 25.0]
    assert fig.axes[0].get_title() == "MQAR, 4 pairs"  # a row without a task is MQAR
    assert [t.get_text() for t in fig.axes[0].texts] == ["S=16", "S=64"]  # S named along a line of several
    plt.close(fig)
    # a task is a panel of its own: 4-pair recall beside MQAR with 4 pairs; each seed a dot, the line their mean
    transformer = {"variant": "transformer", "n_pairs": 4, "state_bytes": 196_608}
    recall = [{**r, "task": "recall"} for r in rows if r["n_pairs"] == 4]
    recall.append({**transformer, "task": "recall", "accuracy": 0.5})
    fig = plots_capacity.recall_vs_state_bytes([*recall, {**transformer, "accuracy": 1.0}])
    assert [ax.get_title() for ax in fig.axes] == ["4-pair recall", "MQAR, 4 pairs"]
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert list(lines["transformer"].get_ydata()) == [75.0]
    dots = fig.axes[0].collections[0].get_offsets()  # the Transformer's two seeds
    assert sorted(map(tuple, dots.tolist())) == [(196_608, 50.0), (196_608, 100.0)]
    # a variant keeps its colour in every panel; the legend names every variant (triple_latent: no MQAR here)
    mqar_lines = {line.get_label(): line for line in fig.axes[1].get_lines()}
    assert mqar_lines["transformer"].get_color() == lines["transformer"].get_color()
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["transformer", "triple_latent"]
    plt.close(fig)


def test_two_variants_on_one_point_both_show():
    """DeltaNet and GLA on MQAR: the same bytes, both at 100%. The first is drawn larger and below the second, so
    the point shows both colours; a variant alone keeps the usual size."""
    rows = [{"variant": v, "n_pairs": 8, "accuracy": a, "state_bytes": b, "state_dim": None}
            for v, a, b in (("deltanet", 1.0, 19_200), ("gla", 1.0, 19_200), ("transformer", 1.0, 98_304))]
    fig = plots_capacity.recall_vs_state_bytes(rows)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert {line.get_markersize() for line in lines.values()} == {4}  # every variant's own line: the usual size
    discs = [line for line in ax.get_lines() if line.get_label().startswith("_")]  # under the shared point only
    assert [(list(d.get_xdata()), d.get_color(), d.get_markersize() > 4) for d in discs] == [
        ([19_200], lines["deltanet"].get_color(), True)]
    assert lines["gla"].get_zorder() > discs[0].get_zorder()
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["deltanet", "gla", "transformer"]
    assert len({h.get_markersize() for h in legend.legend_handles}) == 1  # the legend's markers: one size
    plt.close(fig)
