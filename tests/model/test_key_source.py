"""key_source.py: the triple-latent layer with the key s_{tau-1} (the paper's), a_{tau-1} (a token
shift) or a_tau (the written token's), and with gamma = 0 (no memory); each equal to its formula
written out, and whole pass = token by token = in pieces, loop = fast (gradients too), in float64."""

import pytest
import torch

from conftest import assert_modes_agree, assert_steps_agree, randn, relative_error
from tl_minimal.key_source import KeySourceMixer
from tl_minimal.pair_memory import unrolled_weights
from tl_minimal.readout import TripleLatentMixer, triple_latent

FORMS = [("state", True), ("shift", True), ("current", True), ("shift", False), ("current", False)]


def make_mixer(key_source, memory, mode="fast"):
    torch.manual_seed(0)
    return KeySourceMixer(16, 2, 4, key_source=key_source, memory=memory, mode=mode, chunk_size=8).double()


def inputs(T=23, seed=1):
    return randn(2, T, 16, generator=torch.Generator().manual_seed(seed))


def test_the_state_key_is_the_triple_latent_layer():
    torch.manual_seed(0)
    paper = TripleLatentMixer(16, 2, 4, chunk_size=8).double()
    mixer = make_mixer("state", True)
    mixer.load_state_dict(paper.state_dict())                      # the same weights, the same names
    n = inputs()
    assert relative_error(mixer(n)[0], paper(n)[0]) < 1e-14


def test_the_shift_key_is_the_layer_with_lambda_zero():
    mixer, n = make_mixer("shift", True), inputs()
    a, b, ql, qr, lam, gam = mixer.project(n)
    assert not lam.any()                                            # lambda = 0: s_t = a_t
    r, s, _ = triple_latent(a, b, ql, qr, torch.zeros_like(gam), gam, mode="loop")
    assert torch.equal(s, a)
    assert relative_error(mixer(n)[0], mixer.out(r.flatten(2))) < 1e-12


@pytest.mark.parametrize("memory", [True, False])
def test_the_current_key_written_out(memory):
    # r_t = q^r_t * sum_{tau<=t} w_{t,tau} (q^l_t . a_tau) b_tau, w from the pair gate
    # (gamma = 0: tau = t only)
    mixer, n = make_mixer("current", memory), inputs()
    a, b, ql, qr, _, gam = mixer.project(n)
    assert memory or not gam.any()
    w, _ = unrolled_weights(gam)                                    # [B, t, tau, H]
    r = qr * torch.einsum("btuh,bthi,buhi,buhj->bthj", w, ql, a, b)
    assert relative_error(mixer(n)[0], mixer.out(r.flatten(2))) < 1e-12


def test_no_memory_with_the_shift_key_reads_two_tokens():
    # lambda = gamma = 0: r_t = (q^l_t . a_{t-1}) b_t * q^r_t (a_{-1} = 0)
    mixer, n = make_mixer("shift", False), inputs()
    a, b, ql, qr, _, _ = mixer.project(n)
    a_prev = torch.cat([torch.zeros_like(a[:, :1]), a[:, :-1]], dim=1)
    r = (ql * a_prev).sum(-1, keepdim=True) * b * qr
    assert relative_error(mixer(n)[0], mixer.out(r.flatten(2))) < 1e-12


@pytest.mark.parametrize("key_source, memory", FORMS)
def test_whole_pass_equals_token_by_token_and_loop(key_source, memory):
    mixer, n = make_mixer(key_source, memory), inputs(T=19)
    assert_steps_agree(mixer, n, split=6)
    assert_modes_agree(mixer, make_mixer(key_source, memory, mode="loop"), n, weight_seed=5)


def test_errors():  # the models' parameter counts: tests/research/test_variants.py
    with pytest.raises(ValueError, match="key_source must be one of state, shift, current"):
        KeySourceMixer(16, 2, 4, key_source="previous")
