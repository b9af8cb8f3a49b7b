"""Running state: loop (the spec) == chunked == step, on outputs, final state and gradients.

Error bounds (relative, ||x - y|| / ||y||): 1e-10 in float64 and 2e-5 in float32 for values;
gradients 1e-9 / 1e-4 (float32 gradients with respect to gates near 1 lose a few digits in
both forms alike, since 1 - lambda is only known to ~1e-7 / 1e-6).
"""

import functools

import pytest
import torch

from conftest import accelerators, outputs_and_grads, randn, random_gates, relative_error
from tl_minimal.checks import MODES
from tl_minimal.running_state import (
    causal_decay,
    decayed_cumsum,
    previous_states,
    running_state,
    running_state_step,
)

TOL = {torch.float64: 1e-10, torch.float32: 2e-5}
GRAD_TOL = {torch.float64: 1e-9, torch.float32: 1e-4}


def make_inputs(T, regime, with_init, dtype, B=2, H=3, S=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    a = randn(B, T, H, S, dtype=dtype, generator=gen)
    lam = random_gates((B, T, H), regime, dtype, gen)
    s0 = randn(B, H, S, dtype=dtype, generator=gen) if with_init else None
    return a, lam, s0


def step_form(a, lam, s0):
    s_t = torch.zeros_like(a[:, 0]) if s0 is None else s0
    out = []
    for t in range(a.shape[1]):
        s_t = running_state_step(a[:, t], lam[:, t], s_t)
        out.append(s_t)
    return torch.stack(out, dim=1)


@functools.cache
def reference(T, regime, with_init):
    """The loop (the specification) in float64: values and gradients, computed once per case."""
    return outputs_and_grads(lambda *x: running_state(*x, mode="loop"),
                             make_inputs(T, regime, with_init, torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 63, 129])
def test_loop_chunked_step_agree(T, regime, with_init, dtype):
    a, lam, s0 = make_inputs(T, regime, with_init, dtype)
    (ref,), ref_grads = reference(T, regime, with_init)
    forms = {"loop": lambda *x: running_state(*x, mode="loop"),
             # chunk 8: T = 129 has 17 chunks, so the chunk-level recursion runs twice
             "fast-chunk-8": lambda *x: running_state(*x, mode="fast", chunk_size=8),
             "fast": lambda *x: running_state(*x, mode="fast")}
    for name, form in forms.items():
        (out,), grads = outputs_and_grads(form, (a, lam, s0))
        assert relative_error(out, ref) < TOL[dtype], name
        assert relative_error(out[:, -1], ref[:, -1]) < TOL[dtype], name  # the final state
        for g, g_ref in zip(grads, ref_grads, strict=True):
            assert relative_error(g, g_ref) < GRAD_TOL[dtype], name
    # step = a Python loop over running_state_step, carrying the state by hand
    assert relative_error(step_form(a, lam, s0), ref) < TOL[dtype]


def test_default_mode_is_chunked_and_equals_loop():
    a, lam, s0 = make_inputs(100, "mid", True, torch.float64)
    assert relative_error(running_state(a, lam, s0), running_state(a, lam, s0, mode="loop")) < 1e-12


def test_recurrence_by_hand():
    # one head, one channel: s_0 = 0.5 * 0 + 0.5 * 2 = 1; s_1 = 0.9 * 1 + 0.1 * 4 = 1.3
    a = torch.tensor([2.0, 4.0], dtype=torch.float64).view(1, 2, 1, 1)
    lam = torch.tensor([0.5, 0.9], dtype=torch.float64).view(1, 2, 1)
    for mode in MODES:
        s = running_state(a, lam, mode=mode).flatten()
        assert torch.allclose(s, torch.tensor([1.0, 1.3], dtype=torch.float64))


def test_previous_states_shifts_by_one():
    a, lam, s0 = make_inputs(5, "mid", True, torch.float64)
    s = running_state(a, lam, s0)
    prev = previous_states(s, s0)
    assert torch.equal(prev[:, 0], s0) and torch.equal(prev[:, 1:], s[:, :-1])
    assert torch.equal(previous_states(s)[:, 0], torch.zeros_like(s0))


def test_decayed_cumsum_matches_its_recurrence():
    gen = torch.Generator().manual_seed(3)
    ld = -torch.rand(2, 3, 50, generator=gen, dtype=torch.float64) * 3
    x = torch.randn(2, 3, 50, 5, generator=gen, dtype=torch.float64)
    h0 = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64)
    h, ref = h0, []
    for t in range(50):
        h = torch.exp(ld[:, :, t, None]) * h + x[:, :, t]
        ref.append(h)
    assert relative_error(decayed_cumsum(ld, x, h0, chunk_size=4), torch.stack(ref, dim=2)) < 1e-12


def test_causal_decay_is_lower_triangular_and_finite():
    G = torch.cumsum(torch.full((5,), -400.0), 0)                  # huge decays: exp(+400) would overflow
    W = causal_decay(G)
    assert torch.isfinite(W).all() and torch.equal(W.triu(1), torch.zeros(5, 5))
    assert torch.equal(W.diagonal(), torch.ones(5))


def test_long_sequence_stable():
    # T = 8192, every gate extreme (near 0 or near 1, at random): chunked stays finite and equals
    # the loop in float64; in float32 values and gradients stay finite and close
    a, lam, s0 = make_inputs(8192, "near1", True, torch.float64, B=1, H=2, S=2, seed=5)
    flip = torch.rand(lam.shape, generator=torch.Generator().manual_seed(6)) < 0.5
    lam = torch.where(flip, 1 - lam, lam)
    ref = running_state(a, lam, s0, mode="loop")
    assert relative_error(running_state(a, lam, s0), ref) < 1e-10
    a32, lam32, s032 = (x.float().requires_grad_(True) for x in (a, lam, s0))
    s32 = running_state(a32, lam32, s032)
    s32.sum().backward()
    assert torch.isfinite(s32).all() and all(torch.isfinite(x.grad).all() for x in (a32, lam32, s032))
    assert relative_error(s32, ref) < 1e-5


def test_gates_exactly_zero_and_one():
    # float32 sigmoid rounds to exactly 0 or 1 for large logits: log(0) must not poison the sum
    a, _, s0 = make_inputs(40, "mid", True, torch.float32)
    lam = torch.sigmoid(torch.tensor([-200.0, 200.0, 0.0]).repeat(2, 40, 1)[:, :40])
    assert (lam == 0).any() and (lam == 1).any()
    out = running_state(a, lam, s0, chunk_size=8)
    assert torch.isfinite(out).all()
    assert relative_error(out, running_state(a, lam, s0, mode="loop")) < 1e-5


@pytest.mark.parametrize("device", accelerators())
def test_on_accelerator(device):
    a, lam, s0 = make_inputs(70, "mid", True, torch.float32)
    ref = running_state(a, lam, s0, mode="loop")
    out = running_state(a.to(device), lam.to(device), s0.to(device), chunk_size=16)
    assert out.device.type == device and relative_error(out, ref) < 1e-5


def test_bad_inputs_give_clear_errors():
    a, lam, s0 = make_inputs(5, "mid", True, torch.float32)
    with pytest.raises(ValueError, match=r"unknown mode 'chunked'.*loop, fast"):
        running_state(a, lam, mode="chunked")
    with pytest.raises(ValueError, match="lam must have shape"):
        running_state(a, lam[:, :4])
    with pytest.raises(ValueError, match="a must have 4 dimensions"):
        running_state(a[0], lam)
    with pytest.raises(TypeError, match="dtype"):
        running_state(a, lam.double())
    with pytest.raises(TypeError, match="floating-point"):
        running_state(a.long(), lam)
    with pytest.raises(ValueError, match="s0 must have shape"):
        running_state(a, lam, s0[:, :2])
    with pytest.raises(ValueError, match="T >= 1"):
        running_state(a[:, :0], lam[:, :0])
    with pytest.raises(ValueError, match="chunk_size"):
        running_state(a, lam, chunk_size=1)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        running_state(a.numpy(), lam)
