"""Slot-compressed pair memory: loop == chunked == step, materialized slots, and the SlotMixer.

Error bounds (relative, ||x - y|| / ||y||): values 1e-10 (float64) / 3e-5 (float32), gradients
1e-9 / 2e-4; mixers compared in float64 to 1e-10.
"""

import functools

import pytest
import torch

from conftest import accelerators, outputs_and_grads, randn, random_gates, recorded, relative_error
from tl_minimal.slots import SlotMixer, slot_memory, slot_readout, slot_readout_step

TOL = {torch.float64: 1e-10, torch.float32: 3e-5}
GRAD_TOL = {torch.float64: 1e-9, torch.float32: 2e-4}


def make_inputs(T, regime, with_init, dtype, B=2, H=2, S=3, K=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    s_prev, b, ql, qr = (randn(B, T, H, S, dtype=dtype, generator=gen) for _ in range(4))
    g = torch.softmax(randn(B, T, H, K, generator=gen), dim=-1).float().to(dtype)
    gam = random_gates((B, T, H), regime, dtype, gen)
    L0, R0 = ((randn(B, H, K, S, dtype=dtype, generator=gen) for _ in range(2)) if with_init else (None, None))
    return s_prev, b, g, gam, ql, qr, L0, R0


def step_form(s_prev, b, g, gam, ql, qr, L0=None, R0=None):
    L, R, fs = L0, R0, []
    for t in range(s_prev.shape[1]):
        f_t, L, R = slot_readout_step(L, R, s_prev[:, t], b[:, t], g[:, t], gam[:, t], ql[:, t], qr[:, t])
        fs.append(f_t)
    return torch.stack(fs, dim=1), L, R


@functools.cache
def reference(T, regime, with_init):
    """The loop (the specification) in float64, once per case (inputs are float32-exact)."""
    return outputs_and_grads(lambda *x: slot_readout(*x, mode="loop", return_state=True),
                             make_inputs(T, regime, with_init, torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("regime", ["mid", "near0", "near1"])
@pytest.mark.parametrize("T", [1, 7, 63, 129])
def test_loop_chunked_step_agree(T, regime, with_init, dtype):
    inputs = make_inputs(T, regime, with_init, dtype)
    ref, ref_grads = reference(T, regime, with_init)
    forms = {"loop": lambda *x: slot_readout(*x, mode="loop", return_state=True),
             "chunked-8": lambda *x: slot_readout(*x, return_state=True, chunk_size=8),
             "fast": lambda *x: slot_readout(*x, return_state=True)}
    for name, form in forms.items():
        outs, grads = outputs_and_grads(form, inputs)
        for y, y_ref in zip(outs, ref, strict=True):                             # features, final L, final R
            assert relative_error(y, y_ref) < TOL[dtype], name
        for g, g_ref in zip(grads, ref_grads, strict=True):
            assert relative_error(g, g_ref) < GRAD_TOL[dtype], name
    for y, y_ref in zip(step_form(*inputs), ref, strict=True):
        assert relative_error(y, y_ref) < TOL[dtype]


@pytest.mark.parametrize("mode", ["loop", "fast"])
def test_features_from_the_materialized_slots(mode):
    # f_t[k] = (q^l_t . L_k,t)(q^r_t . R_k,t) with L, R from slot_memory (running states)
    s_prev, b, g, gam, ql, qr, L0, R0 = make_inputs(30, "mid", True, torch.float64)
    L, R = slot_memory(s_prev, b, g, gam, L0, R0, mode=mode)       # [B, T, H, K, S]
    expected = torch.einsum("bthks,bths->bthk", L, ql) * torch.einsum("bthks,bths->bthk", R, qr)
    assert relative_error(slot_readout(s_prev, b, g, gam, ql, qr, L0, R0, chunk_size=8), expected) < 1e-12


def test_slots_are_not_an_exact_low_rank_pair_memory():
    # one slot, two tokens: the dense memory pairs s_{t-1} with b_t of the same token; the slot
    # memory's product L R^T also pairs s_{-1} with b_1, a cross term the dense P never has
    s_prev = torch.tensor([[1.0, 0.0], [0.0, 1.0]]).view(1, 2, 1, 2)
    b = torch.tensor([[1.0, 0.0], [0.0, 1.0]]).view(1, 2, 1, 2)
    g, gam = torch.ones(1, 2, 1, 1), torch.full((1, 2, 1), 0.5)
    L, R = slot_memory(s_prev, b, g, gam)
    LR = L[0, -1, 0, 0, :, None] * R[0, -1, 0, 0, None, :]
    assert LR[0, 1] != 0                                            # state of token 0 x write of token 1


def test_mixer_whole_sequence_equals_token_by_token_and_loop():
    torch.manual_seed(0)
    mixer = SlotMixer(16, 2, 4, num_slots=3, chunk_size=8).double()
    n = randn(2, 23, 16, generator=torch.Generator().manual_seed(1))
    (o, state), record = recorded(mixer, n)
    carried, outs = None, []
    for t in range(23):
        o_t, carried = mixer(n[:, t:t + 1], carried)
        outs.append(o_t)
    assert relative_error(torch.cat(outs, dim=1), o) < 1e-10
    for key in ("s", "L", "R"):
        assert relative_error(carried[key], state[key]) < 1e-10
    assert state["L"].shape == (2, 2, 3, 4)
    assert record["slot_weights"].shape == (2, 23, 2, 3) and record["gam"].shape == (2, 23, 2)
    assert torch.allclose(record["slot_weights"].sum(-1), torch.ones(2, 23, 2, dtype=torch.float64))
    o.square().sum().backward()
    chunked_grads = {k: p.grad.clone() for k, p in mixer.named_parameters()}
    mixer.zero_grad()
    mixer.mode = "loop"
    o_loop, _ = mixer(n)
    assert relative_error(o_loop, o) < 1e-10
    o_loop.square().sum().backward()
    for k, p in mixer.named_parameters():
        assert relative_error(chunked_grads[k], p.grad) < 1e-9, k


def test_mixer_shapes_and_init():
    mixer = SlotMixer(64, 4, 16)
    assert mixer.num_slots == 8 and mixer.to_slots.weight.shape == (32, 64)
    assert mixer.out.weight.shape == (64, 32) and mixer.out.bias is None
    o, state = mixer(torch.randn(2, 10, 64))
    assert o.shape == (2, 10, 64) and state["R"].shape == (2, 4, 8, 16)


@pytest.mark.parametrize("device", accelerators())
def test_on_accelerator(device):
    inputs = make_inputs(70, "mid", True, torch.float32)
    ref = slot_readout(*inputs, mode="loop")
    out = slot_readout(*(x.to(device) for x in inputs), chunk_size=16)
    assert out.device.type == device and relative_error(out, ref) < 1e-5


def test_bad_inputs_give_clear_errors():
    s_prev, b, g, gam, ql, qr, L0, R0 = make_inputs(5, "mid", True, torch.float32)
    with pytest.raises(ValueError, match="unknown mode"):
        slot_readout(s_prev, b, g, gam, ql, qr, mode="chunked")
    with pytest.raises(ValueError, match=r"g \(slot weights\) must have shape"):
        slot_readout(s_prev, b, g[:, :, :1], gam, ql, qr)
    with pytest.raises(ValueError, match="L0 must have shape"):
        slot_readout(s_prev, b, g, gam, ql, qr, L0[:, :, :2], R0)
    with pytest.raises(TypeError, match="dtype"):
        slot_readout(s_prev, b, g.double(), gam, ql, qr)
    with pytest.raises(ValueError, match="num_slots must be a positive int"):
        SlotMixer(16, 2, 4, num_slots=0)
    with pytest.raises(ValueError, match="state must be None or a dict with keys 's'"):
        SlotMixer(16, 2, 4)(torch.randn(1, 3, 16), state={"s": torch.zeros(1, 2, 4), "P": None})
