"""The key-value memory's pictures (notebooks 06 and 06a) draw on tiny inputs and refuse wrong ones."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from tl_minimal.data import recall as data_recall
from tl_minimal.views import plots_retrieval


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_state_sizes_and_perfect_match_draw_one_line_per_input():
    fig = plots_retrieval.state_sizes([1, 2, 4], {"cache": [2, 4, 8], "state": [5, 5, 5]})
    assert len(fig.axes[0].get_lines()) == 2
    fig = plots_retrieval.perfect_match([1.0, 2.0, 3.0], [0.3, 0.5, 0.7], 1.0, 10.0)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["β = 1 (the paper)", "β = 10 (gated_hybrid_repaired's start)"]


def test_cosines_at_init_has_a_panel_per_configuration():
    rep = {"tied": [torch.ones(4)], "untied": [torch.rand(4)]}
    other = {"tied": [torch.rand(20) * 2 - 1], "untied": [torch.rand(20) * 2 - 1]}
    fig = plots_retrieval.cosines_at_init(rep, other)
    assert [ax.get_title() for ax in fig.axes] == ["tied", "untied"]


def test_recall_training_draws_the_chance_lines():
    fig = plots_retrieval.recall_training({"a": {"loss": [2.0, 1.5, 1.0]}}, {"a": 0.5}, steps=3)
    labels = fig.axes[1].get_legend_handles_labels()[1]
    assert "constant guess 1/8" in labels and "random value in context 1/4" in labels


def _read(n, T, correct):
    return {"weights": torch.rand(n, T), "correct": torch.tensor(correct), "pred": torch.zeros(n, dtype=torch.long),
            "target": torch.zeros(n, dtype=torch.long), "read_gate": torch.full((n,), 0.5)}


def test_read_panels_take_a_right_and_a_wrong_example_and_the_fresh_one():
    x, y = data_recall.eval_set(3, seed=0)
    T = x.shape[1]
    panels = plots_retrieval.read_panels(_read(3, T, [False, True, False]), _read(3, T, [False] * 3), x, y)
    assert list(panels) == ["trained, example 1", "trained, example 0", "initialized, example 0"]
    only_right = plots_retrieval.read_panels(_read(3, T, [True] * 3), _read(3, T, [False] * 3), x, y)
    assert list(only_right) == ["trained, example 0", "initialized, example 0"]
