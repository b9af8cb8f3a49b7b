"""Pair readout and the triple-latent mixer: every form equal to the loop (the specification).

Error bounds (relative, ||x - y|| / ||y||): values 1e-10 (float64) / 3e-5 (float32), gradients
1e-9 / 2e-4; mixers compared in float64 to 1e-10.
"""

import functools

import pytest
import torch

from conftest import accelerators, outputs_and_grads, randn, random_gates, recorded, relative_error
from tl_minimal.pair_memory import pair_memory, unrolled_weights
from tl_minimal.readout import (
    TripleLatentMixer,
    decayed_attention,
    pair_readout,
    pair_readout_step,
    triple_latent,
)

TOL = {torch.float64: 1e-10, torch.float32: 3e-5}
GRAD_TOL = {torch.float64: 1e-9, torch.float32: 2e-4}


def make_inputs(T, regime, with_init, dtype, B=2, H=2, S=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    s_prev, b, ql, qr = (randn(B, T, H, S, dtype=dtype, generator=gen) for _ in range(4))
    gam = random_gates((B, T, H), regime, dtype, gen)
    P0 = randn(B, H, S, S, dtype=dtype, generator=gen) if with_init else None
    return s_prev, b, gam, ql, qr, P0


def step_form(s_prev, b, gam, ql, qr, P0=None):
    P, rs = P0, []
    for t in range(s_prev.shape[1]):
        r_t, P = pair_readout_step(P, s_prev[:, t], b[:, t], gam[:, t], ql[:, t], qr[:, t])
        rs.append(r_t)
    return torch.stack(rs, dim=1), P


@functools.cache
def reference(T, regime, with_init):
    """The loop (the specification) in float64, once per case (inputs are float32-exact)."""
    return outputs_and_grads(lambda *x: pair_readout(*x, mode="loop", return_state=True),
                             make_inputs(T, regime, with_init, torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 63, 129])
def test_loop_chunked_step_agree(T, regime, with_init, dtype):
    inputs = make_inputs(T, regime, with_init, dtype)
    (ref_r, ref_P), ref_grads = reference(T, regime, with_init)
    forms = {"loop": lambda *x: pair_readout(*x, mode="loop", return_state=True),
             "chunked-8": lambda *x: pair_readout(*x, return_state=True, chunk_size=8),  # T=129: 17 chunks
             "fast": lambda *x: pair_readout(*x, return_state=True)}
    for name, form in forms.items():
        (r, P), grads = outputs_and_grads(form, inputs)
        assert relative_error(r, ref_r) < TOL[dtype], name
        assert relative_error(P, ref_P) < TOL[dtype], name
        for g, g_ref in zip(grads, ref_grads, strict=True):
            assert relative_error(g, g_ref) < GRAD_TOL[dtype], name
    r, P = step_form(*inputs)
    assert relative_error(r, ref_r) < TOL[dtype] and relative_error(P, ref_P) < TOL[dtype]


@pytest.mark.parametrize("with_init", [False, True])
def test_readout_of_the_materialized_memory(with_init):
    # r_t[j] = (sum_i P_t[i, j] q^l_t[i]) q^r_t[j], P_t from pair_memory.py
    s_prev, b, gam, ql, qr, P0 = make_inputs(40, "mid", with_init, torch.float64)
    P = pair_memory(s_prev, b, gam, P0)                             # [B, T, H, S, S]
    expected = torch.einsum("bthij,bthi->bthj", P, ql) * qr
    assert relative_error(pair_readout(s_prev, b, gam, ql, qr, P0, chunk_size=16), expected) < 1e-12


def test_gated_linear_attention_identity():
    # r_t = q^r_t * (sum_{tau<=t} w_{t,tau} (q^l_t . s_{tau-1}) b_tau + Gamma_t P0^T q^l_t)
    s_prev, b, gam, ql, qr, P0 = make_inputs(33, "mid", True, torch.float64)
    w, Gamma = unrolled_weights(gam)                                # [B, t, tau, H], [B, t, H]
    scores = torch.einsum("bthi,buhi->btuh", ql, s_prev)           # q^l_t . s_{tau-1}
    attended = torch.einsum("btuh,btuh,buhj->bthj", w, scores, b)
    from_P0 = Gamma.unsqueeze(-1) * torch.einsum("bthi,bhij->bthj", ql, P0)
    expected = qr * (attended + from_P0)
    assert relative_error(pair_readout(s_prev, b, gam, ql, qr, P0, chunk_size=8), expected) < 1e-12


def test_decayed_attention_with_different_key_and_value_sizes():
    gen = torch.Generator().manual_seed(4)
    q, k = randn(2, 3, 21, 5, generator=gen), randn(2, 3, 21, 5, generator=gen)
    v, M0 = randn(2, 3, 21, 2, generator=gen), randn(2, 3, 5, 2, generator=gen)
    ld = -torch.rand(2, 3, 21, generator=gen, dtype=torch.float64)
    M, ref = M0, []
    for t in range(21):  # M_t = exp(ld_t) M_{t-1} + outer(k_t, v_t);  o_t = M_t^T q_t
        M = torch.exp(ld[:, :, t, None, None]) * M + k[:, :, t, :, None] * v[:, :, t, None, :]
        ref.append((q[:, :, t, None, :] @ M).squeeze(-2))
    o, M_last = decayed_attention(q, k, v, ld, M0, chunk_size=4)
    assert relative_error(o, torch.stack(ref, dim=2)) < 1e-12 and relative_error(M_last, M) < 1e-12


def test_long_sequence_stable():
    # T = 8192, every gate extreme (near 0 or near 1, at random): chunked equals the loop in
    # float64; in float32 values and gradients stay finite and close
    s_prev, b, gam, ql, qr, P0 = make_inputs(8192, "near1", True, torch.float64, B=1, H=2, S=2, seed=6)
    flip = torch.rand(gam.shape, generator=torch.Generator().manual_seed(7)) < 0.5
    inputs = (s_prev, b, torch.where(flip, 1 - gam, gam), ql, qr, P0)
    ref = pair_readout(*inputs, mode="loop")
    assert relative_error(pair_readout(*inputs), ref) < 1e-10
    leaves = [x.float().requires_grad_(True) for x in inputs]
    r32 = pair_readout(*leaves)
    r32.sum().backward()
    assert torch.isfinite(r32).all() and all(torch.isfinite(x.grad).all() for x in leaves)
    assert relative_error(r32, ref) < 1e-5


@pytest.mark.parametrize("device", accelerators())
def test_on_accelerator(device):
    inputs = make_inputs(70, "mid", True, torch.float32)
    ref = pair_readout(*inputs, mode="loop")
    out = pair_readout(*(x.to(device) for x in inputs), chunk_size=16)
    assert out.device.type == device and relative_error(out, ref) < 1e-5
    mixer = TripleLatentMixer(16, 2, 4).to(device)
    o, _ = mixer(torch.randn(2, 70, 16, device=device))
    assert o.device.type == device and torch.isfinite(o).all()


# --- the mixer -------------------------------------------------------------------------------

def make_mixer(mode="fast", **kwargs):
    torch.manual_seed(0)
    return TripleLatentMixer(16, 2, 4, mode=mode, chunk_size=8, **kwargs).double()


def test_mixer_whole_sequence_equals_token_by_token():
    mixer = make_mixer()
    n = randn(3, 29, 16, generator=torch.Generator().manual_seed(1))
    o, state = mixer(n)
    carried, outs = None, []
    for t in range(29):
        o_t, carried = mixer(n[:, t:t + 1], carried)
        outs.append(o_t)
    assert relative_error(torch.cat(outs, dim=1), o) < 1e-10
    assert relative_error(carried["s"], state["s"]) < 1e-10 and relative_error(carried["P"], state["P"]) < 1e-10
    o1, s1 = mixer(n[:, :11])                                       # and in two pieces
    o2, _ = mixer(n[:, 11:], s1)
    assert relative_error(torch.cat([o1, o2], dim=1), o) < 1e-10


def test_mixer_loop_and_chunked_agree_with_gradients():
    n = randn(2, 21, 16, generator=torch.Generator().manual_seed(2))
    grads = {}
    for mode in ("loop", "fast"):
        mixer = make_mixer(mode, lam_bias=2.0)
        o, state = mixer(n)
        (o.square().sum() + state["P"].sum()).backward()
        grads[mode] = (o.detach(), {k: p.grad for k, p in mixer.named_parameters()})
    assert relative_error(grads["fast"][0], grads["loop"][0]) < 1e-10
    for k, g in grads["loop"][1].items():
        assert relative_error(grads["fast"][1][k], g) < 1e-9, k
    mixer = make_mixer("loop")
    mixer.mode = "fast"                                          # the attribute selects the form
    assert relative_error(mixer(n)[0], grads["loop"][0]) > 0       # (different init bias above)


def test_mixer_is_the_function_form():
    mixer = make_mixer()
    n = randn(2, 13, 16, generator=torch.Generator().manual_seed(3))
    a, b, ql, qr, lam, gam = mixer.project(n)
    r, s, P_last = triple_latent(a, b, ql, qr, lam, gam, mode="loop")
    o, state = mixer(n)
    assert relative_error(mixer.out(r.reshape(2, 13, 8)), o) < 1e-10
    assert relative_error(P_last, state["P"]) < 1e-10 and relative_error(s[:, -1], state["s"]) < 1e-10


def test_mixer_record_and_snapshots():
    mixer = make_mixer()
    n = randn(2, 20, 16, generator=torch.Generator().manual_seed(4))
    (_, state), record = recorded(mixer, n, snapshot_at=[0, 9, 19])
    assert record["lam"].shape == record["gam"].shape == (2, 20, 2)
    assert not record["lam"].requires_grad and record["s"].shape == (2, 20, 2, 4)
    assert sorted(record["P"]) == [0, 9, 19] and record["P"][9].shape == (2, 2, 4, 4)
    assert relative_error(record["P"][19], state["P"]) < 1e-10
    # the snapshot at 9 is the memory the readout used at t = 9
    a, b, ql, qr, lam, gam = mixer.project(n)
    _, _, P9 = triple_latent(a[:, :10], b[:, :10], ql[:, :10], qr[:, :10], lam[:, :10], gam[:, :10])
    assert relative_error(record["P"][9], P9) < 1e-10


def test_mixer_init_follows_the_reference():
    mixer = TripleLatentMixer(64, 4, 16)
    assert mixer.proj.weight.shape == (4 * 64, 64) and mixer.proj.bias is None
    assert mixer.out.weight.shape == (64, 64) and mixer.out.bias is None
    assert abs(mixer.proj.weight.std().item() - 0.02) < 0.002
    assert torch.equal(mixer.to_gates.bias, torch.zeros(8))         # lambda's 4, then gamma's 4
    _, _, _, _, lam, gam = mixer.project(torch.nn.functional.layer_norm(torch.randn(2, 8, 64), (64,)))
    assert (lam - 0.5).abs().max() < 0.1 and (gam - 0.5).abs().max() < 0.1  # gates start near 0.5
    biased = TripleLatentMixer(64, 4, 16, lam_bias=3.0, gam_bias=-1.0)
    _, _, _, _, lam, gam = biased.project(torch.zeros(1, 1, 64))
    assert torch.allclose(lam, torch.sigmoid(torch.tensor(3.0)))
    assert torch.allclose(gam, torch.sigmoid(torch.tensor(-1.0)))


def test_bad_inputs_give_clear_errors():
    s_prev, b, gam, ql, qr, P0 = make_inputs(5, "mid", True, torch.float32)
    with pytest.raises(ValueError, match="unknown mode"):
        pair_readout(s_prev, b, gam, ql, qr, mode="parallel")
    with pytest.raises(ValueError, match="q_left must have shape"):
        pair_readout(s_prev, b, gam, ql[:, :3], qr)
    with pytest.raises(ValueError, match="gam must have 3 dimensions"):
        pair_readout(s_prev, b, gam.unsqueeze(-1), ql, qr)
    with pytest.raises(TypeError, match="dtype"):
        pair_readout(s_prev, b, gam, ql, qr.double())
    with pytest.raises(ValueError, match="P0 must have shape"):
        pair_readout(s_prev, b, gam, ql, qr, P0[:, :1])
    mixer = TripleLatentMixer(16, 2, 4)
    with pytest.raises(ValueError, match="d_model=16"):
        mixer(torch.randn(2, 5, 15))
    with pytest.raises(ValueError, match="state must be None or a dict"):
        mixer(torch.randn(2, 5, 16), state={"s": torch.zeros(2, 2, 4)})
    with pytest.raises(ValueError, match=r"state\['P'\] must have 4 dimensions"):
        mixer(torch.randn(2, 5, 16), state={"s": torch.zeros(2, 2, 4), "P": torch.zeros(2, 2, 4)})
    mixer.mode = "chunked"
    with pytest.raises(ValueError, match="unknown mode 'chunked'"):
        mixer(torch.randn(2, 5, 16))
    with pytest.raises(ValueError, match="n_heads must be a positive int"):
        TripleLatentMixer(16, 0, 4)
    with pytest.raises(ValueError, match="unknown mode"):
        TripleLatentMixer(16, 2, 4, mode="scan")
    with pytest.raises(ValueError, match="positions must be ints"):
        recorded(TripleLatentMixer(16, 2, 4), torch.randn(1, 5, 16), snapshot_at=[7])
