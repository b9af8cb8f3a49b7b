"""Pair memory: loop == chunked == step; snapshots at chosen positions == the full memory.

Error bounds (relative, ||x - y|| / ||y||): values 1e-10 (float64) / 2e-5 (float32),
gradients 1e-9 / 1e-4.
"""

import functools

import pytest
import torch

from conftest import outputs_and_grads, randn, random_gates, relative_error
from tl_minimal.pair_memory import pair_memory, pair_memory_at, pair_memory_step, unrolled_weights

TOL = {torch.float64: 1e-10, torch.float32: 2e-5}
GRAD_TOL = {torch.float64: 1e-9, torch.float32: 1e-4}


def make_inputs(T, regime, with_init, dtype, B=2, H=2, S=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    s_prev, b = randn(B, T, H, S, dtype=dtype, generator=gen), randn(B, T, H, S, dtype=dtype, generator=gen)
    gam = random_gates((B, T, H), regime, dtype, gen)
    P0 = randn(B, H, S, S, dtype=dtype, generator=gen) if with_init else None
    return s_prev, b, gam, P0


def step_form(s_prev, b, gam, P0=None):
    P, out = P0, []
    for t in range(s_prev.shape[1]):
        P = pair_memory_step(P, s_prev[:, t], b[:, t], gam[:, t])
        out.append(P)
    return torch.stack(out, dim=1)


@functools.cache
def reference(T, regime, with_init):
    """The loop (the specification) in float64, once per case (inputs are float32-exact)."""
    return outputs_and_grads(lambda *x: pair_memory(*x, mode="loop"),
                             make_inputs(T, regime, with_init, torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 63, 129])
def test_loop_chunked_step_agree(T, regime, with_init, dtype):
    inputs = make_inputs(T, regime, with_init, dtype)
    (ref,), ref_grads = reference(T, regime, with_init)
    forms = {"loop": lambda *x: pair_memory(*x, mode="loop"),
             "chunked-8": lambda *x: pair_memory(*x, chunk_size=8),
             "fast": lambda *x: pair_memory(*x)}
    for name, form in forms.items():
        (out,), grads = outputs_and_grads(form, inputs)
        assert relative_error(out, ref) < TOL[dtype], name
        for g, g_ref in zip(grads, ref_grads, strict=True):
            assert relative_error(g, g_ref) < GRAD_TOL[dtype], name
    assert relative_error(step_form(*inputs), ref) < TOL[dtype]


def test_one_write_by_hand():
    # P_0 = (1 - 0.25) outer(s, b) with s = (1, 2), b = (3, 0): [[2.25, 0], [4.5, 0]]
    s = torch.tensor([1.0, 2.0]).view(1, 1, 1, 2)
    b = torch.tensor([3.0, 0.0]).view(1, 1, 1, 2)
    gam = torch.tensor([0.25]).view(1, 1, 1)
    expected = torch.tensor([[2.25, 0.0], [4.5, 0.0]])
    for mode in ("loop", "fast"):
        assert torch.allclose(pair_memory(s, b, gam, mode=mode)[0, 0, 0], expected)


@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
def test_snapshots_equal_full_memory(regime, with_init):
    s_prev, b, gam, P0 = make_inputs(50, regime, with_init, torch.float64)
    full = pair_memory(s_prev, b, gam, P0, mode="loop")
    positions = [0, 17, 49, 3]
    snaps = pair_memory_at(s_prev, b, gam, positions, P0)
    assert snaps.shape == (2, 4, 2, 3, 3)
    assert relative_error(snaps, full[:, positions]) < 1e-12
    assert relative_error(pair_memory_at(s_prev, b, gam, 17, P0)[:, 0], full[:, 17]) < 1e-12


def test_unrolled_weights_are_a_convex_combination():
    # sum_{tau <= t} w_{t,tau} + Gamma_t = 1: P_t is a weighted average of P0 and the writes
    gam = random_gates((2, 30, 3), "mid", torch.float64, torch.Generator().manual_seed(2))
    w, Gamma = unrolled_weights(gam)
    assert w.shape == (2, 30, 30, 3) and Gamma.shape == (2, 30, 3)
    assert torch.allclose(w.sum(dim=2) + Gamma, torch.ones_like(Gamma))
    w_th = w.permute(0, 3, 1, 2)                                    # [B, H, t, tau]
    assert torch.equal(w_th.triu(1), torch.zeros_like(w_th))       # nothing from the future
    # the newest write has weight 1 - gamma_t
    assert torch.allclose(w_th.diagonal(dim1=-2, dim2=-1), (1 - gam).transpose(1, 2))


def test_snapshots_long_sequence_float32():
    # summed backwards from t in log space: accurate far from the start even in float32
    s_prev, b, gam, P0 = make_inputs(3000, "near1", True, torch.float64, B=1, H=1, S=2)
    ref = pair_memory(s_prev, b, gam, P0)[:, [0, 1500, 2999]]
    out = pair_memory_at(*(x.float() for x in (s_prev, b, gam)), [0, 1500, 2999], P0.float())
    assert relative_error(out, ref) < 1e-5


def test_bad_inputs_give_clear_errors():
    s_prev, b, gam, P0 = make_inputs(5, "mid", True, torch.float32)
    with pytest.raises(ValueError, match="unknown mode"):
        pair_memory(s_prev, b, gam, mode="scan")
    with pytest.raises(ValueError, match="b must have shape"):
        pair_memory(s_prev, b[..., :2], gam)
    with pytest.raises(ValueError, match="gam must have shape"):
        pair_memory(s_prev, b, gam[..., :1])
    with pytest.raises(ValueError, match="P0 must have shape"):
        pair_memory(s_prev, b, gam, P0[..., :2])
    with pytest.raises(TypeError, match="dtype"):
        pair_memory(s_prev, b.double(), gam)
    with pytest.raises(ValueError, match=r"positions must be ints in \[0, 5\)"):
        pair_memory_at(s_prev, b, gam, [5])
    with pytest.raises(ValueError, match="positions is empty"):
        pair_memory_at(s_prev, b, gam, [])
