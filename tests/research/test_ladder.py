"""tl_research/ladder.py (the rungs' settings: tl_minimal/ladder.py): the ladder from the triple-latent layer
to GLA. Each rung changes one choice of the one before;
rung 0 is readout.TripleLatentMixer, rung 2 key_source.KeySourceMixer("current") with the long gate start,
rung 7 gla.GLAMixer (each given the same weights); every rung's loop = fast = token by token = in pieces,
gradients too, at odd lengths and extreme gate starts, in float64."""

import pytest
import torch

from conftest import assert_modes_agree, assert_steps_agree, randn, relative_error
from tl_minimal import build_model
from tl_minimal.gla import GLAMixer
from tl_minimal.key_source import KeySourceMixer
from tl_minimal.ladder import CHANGES, GLA_SHORT_START, RUNGS, START
from tl_minimal.readout import TripleLatentMixer
from tl_minimal.recording import recording
from tl_research.ladder import LadderMixer  # and tl_research registers ladder, ladder_1 .. 7, gla_short_start

D, H, S = 16, 2, 8


def make(rung: dict, mode="fast", **extra):
    torch.manual_seed(0)
    return LadderMixer(D, H, S, mode=mode, chunk_size=8, **{**rung, **extra}).double()


def inputs(T=23, seed=1):
    return randn(2, T, D, generator=torch.Generator().manual_seed(seed))


def test_each_rung_changes_one_choice():
    assert RUNGS[0] == START and len(RUNGS) == 8
    for i in range(1, 8):
        changed = {k for k in RUNGS[i] if RUNGS[i][k] != RUNGS[i - 1][k]}
        assert changed == set(CHANGES[i - 1][1])
    # rung 7's one choice is GLA's gate: its form (normaliser 16) with GLA's bias (0)
    assert set(CHANGES[6][1]) == {"gate_norm", "gam_bias"}
    assert {k for k in GLA_SHORT_START if GLA_SHORT_START[k] != RUNGS[7][k]} == {"gate_norm"}


def _piece_rows(weight, pieces, order):
    """Rows of a Linear(d -> P*H*S) laid out [P, H, S], with its pieces in ``order``."""
    return weight.view(pieces, -1, weight.shape[-1])[list(order)].reshape(-1, weight.shape[-1])


def test_rung_0_is_the_triple_latent_layer():
    torch.manual_seed(3)
    paper = TripleLatentMixer(D, H, S, chunk_size=8).double()
    with torch.no_grad():
        paper.to_gates.bias.uniform_(-2, 2)
    mixer = make(RUNGS[0])
    with torch.no_grad():  # the paper's pieces are (a, b, q^l, q^r), the ladder's (q, a, b, q^r)
        mixer.proj.weight.copy_(_piece_rows(paper.proj.weight, 4, (2, 0, 1, 3)))
        for name in ("to_gates", "out"):
            getattr(mixer, name).load_state_dict(getattr(paper, name).state_dict())
    n = inputs()
    o, state = mixer(n)
    o_paper, state_paper = paper(n)
    assert relative_error(o, o_paper) < 1e-12
    assert relative_error(state["M"], state_paper["P"]) < 1e-12 and relative_error(state["s"], state_paper["s"]) < 1e-12


def test_rung_2_is_the_current_key_ablation():
    torch.manual_seed(3)
    ablation = KeySourceMixer(D, H, S, key_source="current", gam_bias=4.0, chunk_size=8).double()
    mixer = make(RUNGS[2])
    with torch.no_grad():
        mixer.proj.weight.copy_(_piece_rows(ablation.proj.weight, 4, (2, 0, 1, 3)))
        for name in ("to_gates", "out"):
            getattr(mixer, name).load_state_dict(getattr(ablation, name).state_dict())
    n = inputs()
    assert relative_error(mixer(n)[0], ablation(n)[0]) < 1e-12


def test_rung_7_is_gla():
    torch.manual_seed(3)
    gla = GLAMixer(D, H, chunk_size=8).double()
    mixer = make(RUNGS[7])
    with torch.no_grad():
        mixer.proj.weight.copy_(gla.proj.weight)
        mixer.conv_weight.copy_(gla.conv_weight)
        mixer.to_gates.load_state_dict(gla.to_head_gate.state_dict())
        for name in ("to_out_gate", "norm", "out"):
            getattr(mixer, name).load_state_dict(getattr(gla, name).state_dict())
    n = inputs()
    o, state = mixer(n)
    o_gla, state_gla = gla(n)
    assert relative_error(o, o_gla) < 1e-12
    assert relative_error(state["M"], state_gla["M"]) < 1e-12 and torch.equal(state["conv"], state_gla["conv"])


def test_the_gate_starts():
    n = inputs()
    for rung, start in ((RUNGS[0], 0.5), (RUNGS[1], torch.sigmoid(torch.tensor(4.0)).item()),
                        (RUNGS[7], 2 ** (-1 / 16)), (GLA_SHORT_START, 0.5)):
        mixer = make(rung)
        with torch.no_grad():
            mixer.to_gates.weight.zero_()
        with recording(mixer):
            mixer(n)
        assert torch.allclose(mixer.record["gam"], torch.full_like(mixer.record["gam"], start))


@pytest.mark.parametrize("rung", [*range(8), "reverse"])
@pytest.mark.parametrize("gam_bias", [None, -12.0, 12.0])
def test_loop_fast_step_and_pieces_agree(rung, gam_bias):
    settings = GLA_SHORT_START if rung == "reverse" else RUNGS[rung]
    extra = {} if gam_bias is None else {"gam_bias": gam_bias}
    mixer, n = make(settings, **extra), inputs(T=19)
    assert_steps_agree(mixer, n, split=6)
    assert_modes_agree(mixer, make(settings, mode="loop", **extra), n, weight_seed=5)


def test_registered_rungs_build_and_bad_settings_say_what_is_expected():
    x = torch.randint(0, 32, (2, 11))
    for name in [*(f"ladder_{i}" for i in range(1, 8)), "ladder", "gla_short_start"]:
        assert build_model(name, 32)(x).shape == (2, 11, 32)
    with pytest.raises(ValueError, match="key_source must be one of 'state', 'current'"):
        build_model("ladder", 32, key_source="shift")
    with pytest.raises(ValueError, match="write must be one of"):
        build_model("ladder", 32, write="delta")
    with pytest.raises(ValueError, match="gate_norm must be > 0"):
        build_model("ladder", 32, gate_norm=0.0)
    with pytest.raises(ValueError, match="has no setting"):
        build_model("triple_latent", 32, write="additive")
