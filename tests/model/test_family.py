"""The family's layers as mixers and models (gla.py, h3.py, deltanet.py): whole pass = token by
token = in pieces, loop = fast with gradients, clear errors, parameter counts; and the memories
held equal to flash-linear-attention's pure-PyTorch references where fla has the same recurrence
(simple GLA, the delta rule; fla has no H3 op)."""

import pytest
import torch

from conftest import accelerators, assert_modes_agree, assert_steps_agree, fla_naive, randn, relative_error
from tl_minimal import build_model
from tl_minimal.deltanet import DeltaNetMixer, delta_rule
from tl_minimal.gla import GLAMixer, gla, short_conv
from tl_minimal.h3 import H3Mixer, h3_memory

MIXERS = {"gla": GLAMixer, "h3": H3Mixer, "deltanet": DeltaNetMixer}
RECORDS = {"gla": "alpha", "h3": "decay", "deltanet": "beta"}


def make_mixer(name, mode="fast"):
    torch.manual_seed(0)
    return MIXERS[name](16, 2, mode=mode, chunk_size=8).double()


@pytest.mark.parametrize("name", MIXERS)
def test_whole_pass_equals_token_by_token_and_pieces(name):
    n = randn(3, 29, 16, generator=torch.Generator().manual_seed(1))
    assert_steps_agree(make_mixer(name), n, split=2)                  # a piece shorter than the conv's past


@pytest.mark.parametrize("name", MIXERS)
def test_loop_and_fast_mixers_agree_with_gradients(name):
    n = randn(2, 21, 16, generator=torch.Generator().manual_seed(2))
    assert_modes_agree(make_mixer(name), make_mixer(name, mode="loop"), n, weight_seed=3)


@pytest.mark.parametrize("name", MIXERS)
def test_errors_and_records(name):
    mixer = make_mixer(name)
    with pytest.raises(ValueError, match=r"\[B, T, d_model=16\]"):
        mixer(torch.zeros(2, 5, 8, dtype=torch.float64))
    _, state = mixer(torch.zeros(2, 5, 16, dtype=torch.float64))
    with pytest.raises(ValueError, match="state"):
        mixer(torch.zeros(3, 5, 16, dtype=torch.float64), state)   # a state for another batch size
    with pytest.raises(ValueError, match="divisible"):
        MIXERS[name](16, 3)
    model = build_model(name, 50, d_model=16, n_layers=1, n_heads=2, max_seq_len=16).double()
    _, info = model.internals(torch.zeros(2, 7, dtype=torch.long))
    assert set(info["layers"][0]) == {RECORDS[name]}


@pytest.mark.parametrize("device", accelerators())
@pytest.mark.parametrize("name", MIXERS)
def test_on_accelerator(name, device):
    mixer = make_mixer(name).float()
    n = randn(2, 70, 16, dtype=torch.float32, generator=torch.Generator().manual_seed(4))
    ref, _ = make_mixer(name, mode="loop")(n.double())
    out, _ = mixer.to(device)(n.to(device))
    assert out.device.type == device and relative_error(out, ref) < 1e-4


def test_the_memories_name_a_wrong_input():
    q, gate = torch.zeros(2, 5, 3, 4), torch.full((2, 5, 3), 0.5)
    with pytest.raises(ValueError, match=r"alpha must have shape \(2, 5, 3\)"):
        gla(q, q, q, gate[..., :2])
    with pytest.raises(ValueError, match="beta must have 3 dimensions"):
        delta_rule(q, q, q, gate[..., 0])
    with pytest.raises(TypeError, match=r"v has dtype torch\.float64"):
        gla(q, q, q.double(), gate)
    with pytest.raises(ValueError, match=r"the initial state must have shape \(2, 3, 4, 4\)"):
        delta_rule(q, q, q, gate, torch.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"coef must have shape \(3, 2\)"):
        h3_memory(q, q, q, torch.full((3, 2), 0.5), torch.ones(3, 3))
    with pytest.raises(ValueError, match="mode must be one of"):
        gla(q, q, q, gate, mode="chunked")
    with pytest.raises(ValueError, match="x has C=6 channels but the kernel weight"):
        short_conv(torch.zeros(2, 5, 6), torch.zeros(4, 4))
    with pytest.raises(ValueError, match=r"past must have shape \(2, 3, 6\)"):
        short_conv(torch.zeros(2, 5, 6), torch.zeros(6, 4), torch.zeros(2, 4, 6))


@pytest.mark.parametrize("name", MIXERS)
def test_model_loop_mode_equals_fast(name):
    torch.manual_seed(0)
    sizes = {"d_model": 32, "n_layers": 2, "n_heads": 4, "max_seq_len": 64}
    fast = build_model(name, 50, **sizes).double().eval()
    loop = build_model(name, 50, **sizes, mode="loop").double().eval()
    loop.load_state_dict(fast.state_dict())
    x = torch.randint(0, 50, (2, 37), generator=torch.Generator().manual_seed(0))
    assert relative_error(loop(x), fast(x)) < 1e-10


def test_parameter_counts_at_the_default_config():
    # comparable to triple_latent's 187,928 at the paper's byte-level defaults (V = 259):
    # gla / deltanet per layer: W_qkv 3 d^2 + conv 3 d k + head gate d H + H + output gate d^2
    # + norm d/H + W_o d^2 = 12,288 + 768 + 260 + 4,096 + 16 + 4,096 = 21,524 (triple_latent: 21,000);
    # h3: W_qkv, W_o, its filter d m and 2 H N decays and coefficients = 16,672
    def count(variant):
        return sum(p.numel() for p in build_model(variant, 259).parameters())

    assert count("triple_latent") == 187_928
    assert count("gla") == count("deltanet") == 187_928 + 3 * (21_524 - 21_000) == 189_500
    assert count("h3") == 187_928 + 3 * (16_672 - 21_000) == 174_944


# --- flash-linear-attention's naive references ---------------------------------------------------

def fla_inputs(T, seed=0, B=2, H=3, D=8):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (randn(B, T, H, D, generator=gen) for _ in range(3))
    gate = torch.rand(B, T, H, generator=gen, dtype=torch.float64).float().double()
    M0 = randn(B, H, D, D, generator=gen)
    return q, k, v, gate, M0


@pytest.mark.parametrize("T", [1, 7, 33, 64])
def test_gla_equals_fla_simple_gla(T):
    # fla: S_t = exp(g_t) S_{t-1} + k_t v_t^T, o_t = S_t^T (q_t * scale), computed in float32
    naive = fla_naive("simple_gla")
    q, k, v, alpha, M0 = fla_inputs(T)
    g = torch.log(alpha)                                            # fla takes the log-decay
    ours, M = gla(q * 8 ** -0.5, k, v, alpha, M0)
    theirs, S = naive.naive_recurrent_simple_gla(q, k, v, g, initial_state=M0, output_final_state=True)
    assert relative_error(ours, theirs) < 1e-5 and relative_error(M, S) < 1e-5
    theirs, S = naive.naive_chunk_simple_gla(q, k, v, g, initial_state=M0.float(), output_final_state=True,
                                             chunk_size=16)
    assert relative_error(ours, theirs) < 1e-5 and relative_error(M, S) < 1e-5


@pytest.mark.parametrize("T", [1, 7, 33, 64])
def test_delta_rule_equals_fla_delta_rule(T):
    # fla (heads before time): S_t = S_{t-1} + k_t (beta_t (v_t - S_{t-1}^T k_t))^T,
    # o_t = S_t^T (q_t / sqrt(D))
    naive = fla_naive("delta_rule")
    q, k, v, beta, M0 = fla_inputs(T, seed=1)
    k = torch.nn.functional.normalize(k, dim=-1)
    ours, M = delta_rule(q * 8 ** -0.5, k, v, beta, M0)
    theirs, S = naive.delta_rule_recurrence(*(x.transpose(1, 2) for x in (q, k, v, beta)), initial_state=M0)
    assert relative_error(ours, theirs.transpose(1, 2)) < 1e-5 and relative_error(M, S) < 1e-5
    if T % 32 == 0:  # fla's chunked reference: whole chunks of 32, no initial state
        ours, M = delta_rule(q * 8 ** -0.5, k, v, beta)
        theirs, S = naive.delta_rule_chunkwise(*(x.transpose(1, 2) for x in (q, k, v, beta)), chunk_size=32)
        assert relative_error(ours, theirs.transpose(1, 2)) < 1e-5 and relative_error(M, S) < 1e-5
