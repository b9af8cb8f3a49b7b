"""The views notebooks 01-04 call for their training curves, per-head bars and printed tables.

Each draws or prints what the notebook computed, with the labels the notebook's prose reads, and
refuses a wrong shape with a clear message.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pytest
import torch

from tl_minimal.views import plots_training, tables


def test_loss_with_baseline_draws_the_curve_in_bits_and_a_labelled_line():
    history = {"loss": [math.log(2) * v for v in (8.0, 6.0, 5.0)]}  # nats
    fig = plots_training.loss_with_baseline({"run": history}, 4.5, "t")
    ax = fig.axes[0]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([8.0, 6.0, 5.0])  # bits per byte
    assert list(ax.lines[1].get_ydata()) == [4.5, 4.5]
    assert "unigram baseline 4.50" in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(fig)


def test_per_head_bars_one_bar_per_run_and_head_with_layer_head_ticks():
    values = {"a": torch.ones(2, 3), "b": 2 * torch.ones(2, 3), "c": torch.zeros(2, 3)}
    fig = plots_training.per_head_bars(values, "y", "t")
    ax = fig.axes[0]
    assert len(ax.patches) == 3 * 6
    assert [t.get_text() for t in ax.get_xticklabels()] == ["L0h0", "L0h1", "L0h2", "L1h0", "L1h1", "L1h2"]
    assert sorted({p.get_height() for p in ax.patches}) == [0.0, 1.0, 2.0]
    plt.close(fig)


def test_print_half_lives_one_line_per_layer_and_a_summary(capsys):
    lam = torch.tensor([[[0.5, 0.25], [0.5, 0.25]], [[0.1, 0.9], [0.3, 0.7]]])  # [L=2, T=2, H=2]
    half = math.log(0.5) / torch.log(lam).mean(dim=1)  # [L, H]
    tables.print_half_lives({80: (half, lam)})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "80 steps, layer 0: half-life of the mean decay per head [1.0, 0.5]"
    assert out[2].startswith("80 steps: λ from 0.10 to 0.90;")


def test_print_loop_against_fit_in_bits(capsys):
    tables.print_loop_against_fit([math.log(2)], [2 * math.log(2)])
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["0", "1.0000", "2.0000"]


def test_per_head_lines_a_panel_per_layer_and_a_line_per_head():
    fig = plots_training.per_head_lines(torch.rand(2, 4, 3), list("abcd"), "‖P_t‖", "t")
    assert len(fig.axes) == 2 and all(len(ax.lines) == 3 for ax in fig.axes)
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == list("abcd")
    plt.close(fig)


def test_print_gate_means(capsys):
    tables.print_gate_means({80: torch.full((2, 3, 4), 0.5)})
    assert capsys.readouterr().out.startswith("   80 steps: mean γ per layer [0.5, 0.5] ; spread over tokens")


def test_pair_tables_count_the_own_writes(capsys):
    table = torch.tensor([[0.9, 0.1], [0.8, 0.2]], dtype=torch.float64)  # question 1 answered with write 0
    tables.print_cosine_table("pair memory", table)
    assert "1 of 2 answered with their own write" in capsys.readouterr().out
    tables.print_many_pairs(table, S=1)
    assert capsys.readouterr().out.startswith("2 pairs in S = 1: 1 of 2 answered with their own write; cosine "
                                              "with it from 0.20 to 0.90")
