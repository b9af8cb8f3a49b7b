"""tl_minimal.course.forgetting: what a stored pair keeps across the recall task's filler (notebook 06a).

The fraction kept is the product of the keep gates over the gap; it must equal the pair memory's
own unrolled weights (pair_memory.unrolled_weights), stay exact far below float32's range (log10),
and find the filler of a real recall sequence.
"""

from __future__ import annotations

import math

import pytest
import torch

from tl_minimal import build_model
from tl_minimal.course import forgetting
from tl_minimal.data import recall as data_recall
from tl_minimal.pair_memory import unrolled_weights


def test_a_constant_gate_keeps_its_power_even_far_below_float32():
    gate = torch.full((1, 256, 2), 0.5)  # [B, T, H], float32
    assert torch.prod(gate[0, :200, 0]) == 0  # the product itself underflows float32
    kept = forgetting.kept_fraction(gate, 13, 213)  # [B, H]
    assert kept.shape == (1, 2)
    assert torch.allclose(kept.double(), torch.full((1, 2), 200 * math.log10(0.5), dtype=torch.float64), rtol=1e-6)
    assert forgetting.kept_fraction(gate, 13, 125)[0, 0].item() == pytest.approx(112 * math.log10(0.5), rel=1e-6)


def test_the_fraction_kept_is_the_pair_memorys_unrolled_weight():
    gen = torch.Generator().manual_seed(0)
    gam = torch.rand(2, 17, 3, generator=gen, dtype=torch.float64) * 0.98 + 0.01  # [B, T, H]
    t, tau = 15, 4
    w, _ = unrolled_weights(gam, [t])  # [B, 1, T, H]: w_{t,tau} = (1 - gamma_tau) prod_{u=tau+1..t} gamma_u
    expected = w[:, 0, tau] / (1 - gam[:, tau])  # [B, H]
    kept = 10 ** forgetting.kept_fraction(gam, tau + 1, t + 1)
    assert torch.allclose(kept, expected, rtol=1e-12)


def test_the_half_life_of_a_constant_gate_is_ln_half_over_ln_gate():
    gate = torch.full((3, 40, 1), 0.9, dtype=torch.float64)
    assert torch.allclose(forgetting.half_life(gate, 5, 30), torch.full((3, 1), math.log(0.5) / math.log(0.9),
                                                                         dtype=torch.float64))


def test_the_filler_gap_of_the_papers_recall_sequence():
    x, _ = data_recall.eval_set(4, seed=0)
    for row in x:
        assert forgetting.filler_gap(row) == (13, 125)  # BOS + 4 x (key value SEP), then 112 filler, QUERY key ANSWER
    with pytest.raises(ValueError, match="one run of filler"):
        forgetting.filler_gap(torch.tensor([1, 5, 13, 2, 3, 5, 4]))


def test_bad_gaps_and_models_without_gates_are_clear_errors():
    with pytest.raises(ValueError, match="gap"):
        forgetting.kept_fraction(torch.full((1, 8, 1), 0.5), 5, 5)
    x, _ = data_recall.eval_set(2, seed=0, seq_len=32)
    torch.manual_seed(0)
    tf = build_model("transformer", 64, d_model=16, n_layers=1, n_heads=2, max_seq_len=32)
    with pytest.raises(ValueError, match="no gates"):
        forgetting.recall_gates(tf, x)


def test_recall_gates_reads_every_layer_and_head():
    x, _ = data_recall.eval_set(3, seed=0, seq_len=32)
    torch.manual_seed(0)
    model = build_model("triple_latent", 64, d_model=16, n_layers=2, n_heads=2, state_dim=4, max_seq_len=32)
    gates = forgetting.recall_gates(model, x)
    _, record = model.internals(x)
    for key in ("lam", "gam"):
        assert gates[key].shape == (3, 2, 32, 2)  # [N, L, T, H]
        assert torch.equal(gates[key][:, 1], record["layers"][1][key])
        assert ((gates[key] > 0) & (gates[key] < 1)).all()
