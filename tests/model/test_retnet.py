"""retnet.py: retention with RetNet's fixed decays. loop = fast (chunked) = step in float64 and float32
(outputs, final memory, gradients; odd lengths; with and without a carried state), the parallel form
written out, flash-linear-attention's naive retention, and the layer (whole pass = token by token =
in pieces, loop = fast with the parameters' gradients, clear errors, what it records)."""

import pytest
import torch

from conftest import (
    accelerators,
    assert_forms_agree,
    assert_modes_agree,
    assert_steps_agree,
    fla_naive,
    outputs_and_grads,
    randn,
    random_gates,
    relative_error,
)
from tl_minimal import build_model
from tl_minimal.gla import gla_step
from tl_minimal.retnet import RetNetMixer, decays, retention

TOL = {torch.float64: 1e-11, torch.float32: 3e-5}
GRAD_TOL = {torch.float64: 1e-10, torch.float32: 3e-4}


def make_inputs(T, gammas, with_init, B=2, H=4, Dk=4, Dv=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, k = randn(B, T, H, Dk, generator=gen), randn(B, T, H, Dk, generator=gen)
    v = randn(B, T, H, Dv, generator=gen)
    gamma = decays(H).double() if gammas == "retnet" else random_gates((H,), gammas, torch.float64, gen)
    M0 = randn(B, H, Dk, Dv, generator=gen) if with_init else None
    return q, k, v, gamma, M0


def by_steps(q, k, v, gamma, M0):
    M, os = M0, []
    for t in range(q.shape[1]):
        o_t, M = gla_step(M, q[:, t], k[:, t], v[:, t], gamma)
        os.append(o_t)
    return torch.stack(os, dim=1), M


def test_the_decays_are_retnets():
    assert decays(4).tolist() == [1 - 2 ** -5, 1 - 2 ** -6, 1 - 2 ** -7, 1 - 2 ** -8]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("gammas", ["retnet", "mid"])
@pytest.mark.parametrize("T", [1, 7, 33])
def test_retention_loop_chunked_step_agree(T, gammas, with_init, dtype):
    reference = make_inputs(T, gammas, with_init)
    inputs = [None if x is None else x.to(dtype) for x in reference]  # float32-exact values
    loop = outputs_and_grads(lambda *x: retention(*x, mode="loop"), reference)
    forms = {"loop": lambda *x: retention(*x, mode="loop"),
             "chunked-8": lambda *x: retention(*x, chunk_size=8),      # T = 33: 5 chunks, the last of 1
             "fast": lambda *x: retention(*x), "step": by_steps}
    assert_forms_agree(forms, loop, inputs, TOL[dtype], GRAD_TOL[dtype], missing_grad_is_zero=True)


def test_retention_is_the_parallel_form():
    # o = (Q K^T * D) V + gamma^(t+1) M0^T q_t, D[t, tau] = gamma^(t - tau) for tau <= t
    q, k, v, gamma, M0 = make_inputs(13, "retnet", True)
    t = torch.arange(13, dtype=torch.float64)
    D = gamma.view(-1, 1, 1) ** (t.view(-1, 1) - t).clamp_min(0) * (t.view(-1, 1) >= t)  # [H, t, tau]
    expected = torch.einsum("htu,bthi,buhi,buhj->bthj", D, q, k, v)
    expected += (gamma.view(-1, 1) ** (t + 1)).T.unsqueeze(-1) * torch.einsum("bthi,bhij->bthj", q, M0)
    assert relative_error(retention(q, k, v, gamma, M0, chunk_size=4)[0], expected) < 1e-12


@pytest.mark.parametrize("T", [1, 7, 33, 64])
def test_retention_equals_fla_naive_retention(T):
    # fla (heads before time, float32): the parallel form with gamma_h = 1 - 2^(-5-h), q scaled by D^-1/2
    naive = fla_naive("retention")
    q, k, v, gamma, _ = make_inputs(T, "retnet", False, H=3, Dk=8, Dv=8, seed=1)
    ours, _ = retention(q * 8 ** -0.5, k, v, gamma)
    theirs = naive.naive_retention(*(x.transpose(1, 2) for x in (q, k, v))).transpose(1, 2)
    assert relative_error(ours, theirs) < 1e-5


def make_mixer(mode="fast"):
    torch.manual_seed(0)
    return RetNetMixer(16, 2, mode=mode, chunk_size=8).double()


def test_whole_pass_equals_token_by_token_and_pieces():
    mixer = make_mixer()
    assert_steps_agree(mixer, randn(3, 29, 16, generator=torch.Generator().manual_seed(1)), split=11)


def test_loop_and_fast_mixers_agree_with_gradients():
    n = randn(2, 21, 16, generator=torch.Generator().manual_seed(2))
    assert_modes_agree(make_mixer(), make_mixer(mode="loop"), n, weight_seed=3)


def test_errors_and_records():
    mixer = make_mixer()
    with pytest.raises(ValueError, match=r"\[B, T, d_model=16\]"):
        mixer(torch.zeros(2, 5, 8, dtype=torch.float64))
    _, state = mixer(torch.zeros(2, 5, 16, dtype=torch.float64))
    with pytest.raises(ValueError, match="state"):
        mixer(torch.zeros(3, 5, 16, dtype=torch.float64), state)   # a state for another batch size
    with pytest.raises(ValueError, match="divisible"):
        RetNetMixer(16, 3)
    q = torch.zeros(2, 5, 3, 4)
    with pytest.raises(ValueError, match=r"gamma must have shape \(3,\)"):
        retention(q, q, q, torch.full((2,), 0.5))
    with pytest.raises(ValueError, match="mode must be one of"):
        retention(q, q, q, decays(3), mode="chunked")
    model = build_model("retnet", 50, d_model=16, n_layers=1, n_heads=2, max_seq_len=16).double()
    assert model.config.settings()["mode"] == "fast" and "conv_kernel" not in model.config.settings()
    _, info = model.internals(torch.zeros(2, 7, dtype=torch.long))
    assert torch.equal(info["layers"][0]["gamma"], decays(2).double())
    assert "blocks.0.mixer.gamma" not in model.state_dict()          # fixed, not saved


@pytest.mark.parametrize("device", accelerators())
def test_on_accelerator(device):
    mixer = make_mixer().float()
    n = randn(2, 70, 16, dtype=torch.float32, generator=torch.Generator().manual_seed(4))
    ref, _ = make_mixer(mode="loop")(n.double())
    out, _ = mixer.to(device)(n.to(device))
    assert out.device.type == device and relative_error(out, ref) < 1e-4
