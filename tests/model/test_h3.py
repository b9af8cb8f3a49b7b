"""h3.py: the diagonal SSM over outer products, every form equal to the loop in float64 (outputs,
final state, gradients, decays and coefficients included; odd lengths; decays near 0 and near 1;
with and without a carried state), and the whole mixing equal to H3's formula written out."""

import pytest
import torch

from conftest import assert_forms_agree, outputs_and_grads, randn, random_gates, relative_error
from tl_minimal.gla import short_conv
from tl_minimal.h3 import H3Mixer, h3_memory, h3_step

# relative errors: float64 (the contract) and float32 (what training uses), against the float64 loop
TOL = {torch.float64: 1e-11, torch.float32: 3e-5}
GRAD_TOL = {torch.float64: 1e-10, torch.float32: 3e-4}


def make_inputs(T, regime, with_init, B=2, H=3, N=2, Dk=4, Dv=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, kbar = randn(B, T, H, Dk, generator=gen), randn(B, T, H, Dk, generator=gen)
    v = randn(B, T, H, Dv, generator=gen)
    decay = random_gates((H, N), regime, torch.float64, gen)
    coef = randn(H, N, generator=gen)
    X0 = randn(B, H, N, Dk, Dv, generator=gen) if with_init else None
    return q, kbar, v, decay, coef, X0


def by_steps(q, kbar, v, decay, coef, X0):
    X, os = X0, []
    for t in range(q.shape[1]):
        o_t, X = h3_step(X, q[:, t], kbar[:, t], v[:, t], decay, coef)
        os.append(o_t)
    return torch.stack(os, dim=1), X


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 33])
def test_h3_loop_chunked_step_agree(T, regime, with_init, dtype):
    reference = make_inputs(T, regime, with_init)
    inputs = [None if x is None else x.to(dtype) for x in reference]  # float32-exact values
    loop = outputs_and_grads(lambda *x: h3_memory(*x, mode="loop"), reference)
    forms = {"loop": lambda *x: h3_memory(*x, mode="loop"),
             "chunked-8": lambda *x: h3_memory(*x, chunk_size=8),      # T = 33: 5 chunks, the last of 1
             "fast": lambda *x: h3_memory(*x), "step": by_steps}
    assert_forms_agree(forms, loop, inputs, TOL[dtype], GRAD_TOL[dtype], missing_grad_is_zero=True)


def test_mixer_is_q_times_ssm_diag_of_shifted_k_times_v():
    # o_t[j] = sum_n c_n sum_{tau<=t} a_n^(t - tau) (q_t . kbar_tau) v_tau[j], kbar = filter of k
    torch.manual_seed(0)
    mixer = H3Mixer(12, 3, n_modes=2).double()
    n = randn(2, 10, 12, generator=torch.Generator().manual_seed(2))
    q, k, v = mixer.proj(n).chunk(3, dim=-1)
    kbar = short_conv(k, mixer.shift_weight, activation=False, mode="loop")
    a, c = torch.exp(-torch.exp(mixer.log_rate)), mixer.coef            # [H, N]
    lag = torch.arange(10).view(10, 1) - torch.arange(10).view(1, 10)  # t - tau
    kernel = torch.where(lag >= 0, a[..., None, None] ** lag.clamp_min(0), 0.0)  # [H, N, t, tau]
    q, kbar, v = (x.reshape(2, 10, 3, 4) for x in (q, kbar, v))     # heads
    scores = torch.einsum("bthi,buhi->bhtu", q, kbar)
    o = torch.einsum("hn,hntu,bhtu,buhj->bthj", c, kernel, scores, v)
    expected = mixer.out(o.reshape(2, 10, 12))
    assert relative_error(mixer(n)[0], expected) < 1e-12
