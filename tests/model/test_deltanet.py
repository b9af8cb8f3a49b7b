"""deltanet.py: the delta rule, its chunked WY / UT form and its one-token step, held equal in
float64 (outputs, final memory, gradients; odd lengths; beta near 0 and near 1; with and without
a carried memory), and the steps of the derivation checked one by one."""

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_forms_agree, outputs_and_grads, randn, random_gates, relative_error
from tl_minimal.deltanet import delta_rule, delta_step

# relative errors: float64 (the contract) and float32 (what training uses), against the float64 loop
TOL = {torch.float64: 1e-11, torch.float32: 3e-5}
GRAD_TOL = {torch.float64: 1e-10, torch.float32: 3e-4}


def make_inputs(T, regime, with_init, B=2, H=3, Dk=4, Dv=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = randn(B, T, H, Dk, generator=gen)
    k = F.normalize(randn(B, T, H, Dk, generator=gen), dim=-1)      # |k_t| = 1, as the layer makes them
    v = randn(B, T, H, Dv, generator=gen)
    beta = random_gates((B, T, H), regime, torch.float64, gen)
    M0 = randn(B, H, Dk, Dv, generator=gen) if with_init else None
    return q, k, v, beta, M0


def by_steps(q, k, v, beta, M0):
    M, os = M0, []
    for t in range(q.shape[1]):
        o_t, M = delta_step(M, q[:, t], k[:, t], v[:, t], beta[:, t])
        os.append(o_t)
    return torch.stack(os, dim=1), M


def written_out(q, k, v, beta, M0):
    """An independent float64 recurrence in the papers' layout S_t = M_t^T:
    S_t = S_{t-1}(I - beta_t k_t k_t^T) + beta_t v_t k_t^T, o_t = S_t q_t."""
    B, T, H, Dk = k.shape
    S = torch.zeros(B, H, v.shape[-1], Dk, dtype=k.dtype) if M0 is None else M0.transpose(-1, -2).clone()
    eye, os = torch.eye(Dk, dtype=k.dtype), []
    for t in range(T):
        kt, b = k[:, t], beta[:, t, :, None, None]
        S = S @ (eye - b * kt.unsqueeze(-1) * kt.unsqueeze(-2)) + b * v[:, t].unsqueeze(-1) * kt.unsqueeze(-2)
        os.append((S @ q[:, t].unsqueeze(-1)).squeeze(-1))
    return torch.stack(os, dim=1), S.transpose(-1, -2)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 33])
def test_delta_rule_loop_chunked_step_agree(T, regime, with_init, dtype):
    reference = make_inputs(T, regime, with_init)
    inputs = [None if x is None else x.to(dtype) for x in reference]  # float32-exact values
    loop = outputs_and_grads(lambda *x: delta_rule(*x, mode="loop"), reference)
    (ref_o, ref_M), _ = loop
    exact_o, exact_M = written_out(*reference)
    assert relative_error(ref_o, exact_o) < 1e-12 and relative_error(ref_M, exact_M) < 1e-12
    forms = {"loop": lambda *x: delta_rule(*x, mode="loop"),
             "chunked-8": lambda *x: delta_rule(*x, chunk_size=8),     # T = 33: 5 chunks, the last of 1
             "fast": lambda *x: delta_rule(*x), "step": by_steps}
    assert_forms_agree(forms, loop, inputs, TOL[dtype], GRAD_TOL[dtype])


def test_the_derivation_step_by_step():
    # one chunk of C = 6 tokens entering with a memory M_0 (deltanet.py's docstring, steps 1-6)
    q, k, v, beta, M0 = make_inputs(6, "mid", True, B=1, H=1)
    q, k, v, beta, M0 = q[0, :, 0], k[0, :, 0], v[0, :, 0], beta[0, :, 0], M0[0, 0]  # [C, D], [C], [Dk, Dv]
    # step 1: u_t = beta_t (v_t - M_{t-1}^T k_t) by the rule itself
    M, us = M0, []
    for t in range(6):
        us.append(beta[t] * (v[t] - M.T @ k[t]))
        M = M + torch.outer(k[t], us[-1])
    U_rule = torch.stack(us)                                        # [C, Dv]
    # steps 3-4: A U_c = diag(beta) (V - K M_0), A = I + tril(diag(beta) K K^T, -1); U_c = U - W M_0
    A = torch.eye(6, dtype=k.dtype) + torch.tril(beta[:, None] * (k @ k.T), diagonal=-1)
    T_ut = torch.linalg.inv(A) @ torch.diag(beta)                   # the UT transform
    W, U = T_ut @ k, T_ut @ v
    assert relative_error(U - W @ M0, U_rule) < 1e-12
    # step 5: O = Q M_0 + tril(Q K^T) U_c equals o_t = M_t^T q_t
    o = q @ M0 + torch.tril(q @ k.T) @ (U - W @ M0)
    o_rule, M_rule = delta_rule(q[None, :, None], k[None, :, None], v[None, :, None], beta[None, :, None],
                                M0[None, None], mode="loop")
    assert relative_error(o, o_rule[0, :, 0]) < 1e-12
    # step 6: M_end = M_0 + K^T U_c, and the product of the C factors (I - beta k k^T) is I - K^T W
    assert relative_error(M0 + k.T @ (U - W @ M0), M_rule[0, 0]) < 1e-12
    product = torch.eye(4, dtype=k.dtype)
    for t in range(6):
        product = (torch.eye(4, dtype=k.dtype) - beta[t] * torch.outer(k[t], k[t])) @ product
    assert relative_error(torch.eye(4, dtype=k.dtype) - k.T @ W, product) < 1e-12


def test_beta_one_replaces_the_value_under_a_key():
    # |k| = 1, beta = 1: after writing v under k, reading with q = k gives back exactly v
    _, k, v, beta, M0 = make_inputs(5, "mid", True, B=1, H=1)
    k[0, 4], beta[0, 4] = k[0, 1], 1.0
    o, _ = delta_rule(k, k, v, beta, M0)
    assert relative_error(o[0, 4], v[0, 4]) < 1e-12
