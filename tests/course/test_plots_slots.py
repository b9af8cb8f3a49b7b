"""Notebook 04's views (tl_minimal/views/plots_slots.py): each draws the panels its section reads, from
small tensors, and refuses a wrong input with a clear message."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pytest
import torch

from tl_minimal.views import plots_slots, plots_training, tables


def _mem(T=5, H=2, S=3):
    gen = torch.Generator().manual_seed(0)
    out = {}
    for steps in (80, 2000):
        dense, slot = torch.randn(T, H, S, S, generator=gen), torch.randn(T, H, S, S, generator=gen)
        out[steps] = {"dense": dense, "slot": slot, "cos": torch.rand(T, H, generator=gen),
                      "reads": (torch.randn(T, H, generator=gen), torch.randn(T, H, generator=gen))}
    return out


def test_toy_memories_four_panels_on_one_scale():
    P = torch.eye(4)
    fig = plots_slots.toy_memories(P, {"a": 2 * P, "b": P, "c": P / 2})
    heat = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in heat] == ["dense P (true pairs)", "slots: a", "slots: b", "slots: c"]
    assert {ax.collections[0].get_clim() for ax in heat} == {(0.0, 2.0)}
    plt.close(fig)


def test_entropy_bars_a_panel_per_run_and_the_even_spread_line():
    ent = {80: torch.full((2, 3), 2.0), 2000: torch.full((2, 3), 1.5)}
    fig = plots_slots.entropy_bars(ent, math.log(8))
    assert [ax.get_title() for ax in fig.axes] == ["80 steps", "2000 steps"]
    assert all(len(ax.patches) == 6 for ax in fig.axes)
    assert fig.axes[0].lines[0].get_ydata()[0] == pytest.approx(math.log(8))
    plt.close(fig)


def test_section_5_figures_read_the_long_run_and_both_runs():
    mem = _mem()
    fig = plots_slots.dense_against_slots(mem, 4, 1)
    titles = [ax.get_title() for ax in fig.axes]
    assert "2000 steps: dense P_t, t = 4" in titles and "singular values, head 1" in titles
    plt.close(fig)
    fig = plots_slots.memories_alike(mem, 0)
    left, right = fig.axes[:2]
    assert [ln.get_label() for ln in left.lines] == ["80 steps", "2000 steps"]
    assert max(abs(ln.get_ydata()).max() for ln in right.lines) == pytest.approx(1.0)  # scaled to max 1
    plt.close(fig)


def test_loss_and_bpb_two_panels_with_the_baseline():
    hist = {"a": {"loss": [math.log(2) * 6.0, math.log(2) * 5.0]}}
    fig = plots_training.loss_and_bpb(hist, {"a": 5.2}, 4.6, {"a": 5.1}, loss_title="l", bar_title="b", ylim=(4, 5.6))
    assert [ax.get_title() for ax in fig.axes] == ["l", "b"]
    assert fig.axes[1].get_ylim() == (4, 5.6)
    assert all("unigram 4.60" in [t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes)
    plt.close(fig)


def test_print_slot_choices(capsys):
    tables.print_slot_choices({80: torch.tensor([[2.0, 1.0]])}, {80: torch.tensor([0.25])})
    out = capsys.readouterr().out
    assert out == "   80 steps, layer 0: mean entropy per head [2.0, 1.0], largest weight on average 0.250\n"
