"""gla.py: the short convolution and the simple-GLA memory, every form equal to the loop in float64
(outputs, final memory, gradients; odd lengths; decays near 0 and near 1; with and without a
carried state)."""

import pytest
import torch

from conftest import assert_forms_agree, outputs_and_grads, randn, random_gates, relative_error
from tl_minimal.gla import gla, gla_step, next_past, short_conv, short_conv_step

# relative errors: float64 (the contract) and float32 (what training uses), against the float64 loop
TOL = {torch.float64: 1e-11, torch.float32: 3e-5}
GRAD_TOL = {torch.float64: 1e-10, torch.float32: 3e-4}


def make_inputs(T, regime, with_init, B=2, H=3, Dk=4, Dv=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, k = randn(B, T, H, Dk, generator=gen), randn(B, T, H, Dk, generator=gen)
    v = randn(B, T, H, Dv, generator=gen)
    alpha = random_gates((B, T, H), regime, torch.float64, gen)
    M0 = randn(B, H, Dk, Dv, generator=gen) if with_init else None
    return q, k, v, alpha, M0


def by_steps(q, k, v, alpha, M0):
    M, os = M0, []
    for t in range(q.shape[1]):
        o_t, M = gla_step(M, q[:, t], k[:, t], v[:, t], alpha[:, t])
        os.append(o_t)
    return torch.stack(os, dim=1), M


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 33])
def test_gla_loop_chunked_step_agree(T, regime, with_init, dtype):
    reference = make_inputs(T, regime, with_init)
    inputs = [None if x is None else x.to(dtype) for x in reference]  # float32-exact values
    loop = outputs_and_grads(lambda *x: gla(*x, mode="loop"), reference)
    forms = {"loop": lambda *x: gla(*x, mode="loop"),
             "chunked-8": lambda *x: gla(*x, chunk_size=8),            # T = 33: 5 chunks, the last of 1
             "fast": lambda *x: gla(*x), "step": by_steps}
    assert_forms_agree(forms, loop, inputs, TOL[dtype], GRAD_TOL[dtype], missing_grad_is_zero=True)


def test_gla_is_the_decayed_memory_written_out():
    # M_t = zeta_t M_{t-1} + outer(k_t, v_t), o_t = M_t^T q_t, as einsums over the whole sequence
    q, k, v, alpha, M0 = make_inputs(13, "mid", True)
    logs = torch.log(alpha).cumsum(dim=1)                           # [B, T, H]
    decay = torch.exp(logs.unsqueeze(2) - logs.unsqueeze(1))        # [B, t, tau, H]
    decay = decay * torch.ones(13, 13, dtype=torch.float64).tril().view(1, 13, 13, 1)
    expected = torch.einsum("btuh,bthi,buhi,buhj->bthj", decay, q, k, v)
    expected += torch.exp(logs).unsqueeze(-1) * torch.einsum("bthi,bhij->bthj", q, M0)
    assert relative_error(gla(q, k, v, alpha, M0, chunk_size=4)[0], expected) < 1e-12


@pytest.mark.parametrize("activation", [True, False])
@pytest.mark.parametrize("T", [1, 2, 9])
def test_short_conv_loop_fast_step_agree(T, activation):
    gen = torch.Generator().manual_seed(1)
    x, w, past = randn(2, T, 6, generator=gen), randn(6, 4, generator=gen), randn(2, 3, 6, generator=gen)
    ref = short_conv(x, w, past, activation, mode="loop")
    assert relative_error(short_conv(x, w, past, activation), ref) < 1e-13
    carried, ys = past, []
    for t in range(T):
        y_t, carried = short_conv_step(x[:, t], carried, w, activation)
        ys.append(y_t)
    assert relative_error(torch.stack(ys, dim=1), ref) < 1e-13
    assert torch.equal(carried, next_past(x, past, 4))              # the state a whole pass hands on
    # tap i reads x_{t-3+i}: position 0 of a zero past sees only w[:, 3] x_0
    y0 = short_conv(x, w, None, activation=False, mode="loop")[:, 0]
    assert relative_error(y0, w[:, 3] * x[:, 0]) < 1e-15
