"""The Transformer baseline: parameter count, attention forms, and the key-value cache."""

import pytest
import torch

from conftest import recorded
from tl_minimal import build_model
from tl_minimal.transformer import CausalSelfAttention, attention_explicit, attention_fast


def _rel(a, b):
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def test_paper_parameter_count():
    model = build_model("transformer", 259, d_model=64, n_layers=3, n_heads=4, max_seq_len=128)
    assert sum(p.numel() for p in model.parameters()) == 174_848
    assert model.head.weight is model.embed.weight and model.head.bias is None


@pytest.mark.parametrize("past", [0, 3])
@pytest.mark.parametrize("T", [1, 6])
def test_fast_attention_equals_explicit(past, T):
    torch.manual_seed(0)
    q = torch.randn(2, 3, T, 4, dtype=torch.float64)
    k = torch.randn(2, 3, past + T, 4, dtype=torch.float64)
    v = torch.randn(2, 3, past + T, 4, dtype=torch.float64)
    y, attn = attention_explicit(q, k, v, past)
    assert _rel(attention_fast(q, k, v, past), y) < 1e-12
    assert torch.allclose(attn.sum(-1), torch.ones((), dtype=torch.float64))
    # causal: query t (absolute past+t) gives zero weight to keys after it
    assert torch.all(attn.tril(diagonal=past) == attn)


def test_cache_continuation_equals_whole_sequence():
    torch.manual_seed(1)
    mixer = CausalSelfAttention(16, 4).double()
    n = torch.randn(2, 9, 16, dtype=torch.float64)
    whole, cache = mixer(n)
    assert cache["k"].shape == (2, 4, 9, 4)
    a, st = mixer(n[:, :4])
    b, st = mixer(n[:, 4:7], st)  # several tokens against a cache: the explicit mask path
    outs = [a, b]
    for t in range(7, 9):
        o, st = mixer(n[:, t : t + 1], st)
        outs.append(o)
    assert _rel(torch.cat(outs, 1), whole) < 1e-12


def test_attention_record_only_when_asked():
    torch.manual_seed(2)
    mixer = CausalSelfAttention(16, 4)
    n = torch.randn(1, 5, 16)
    (plain, _), rec = recorded(mixer, n)
    assert rec is None  # nothing asked, nothing kept
    (explicit, _), rec = recorded(mixer, n, attention=True)
    assert rec["attn"].shape == (1, 4, 5, 5)
    assert _rel(explicit, plain) < 1e-5


def test_heads_must_divide_width():
    with pytest.raises(ValueError, match="divisible"):
        CausalSelfAttention(10, 4)


def test_rotary_scores_depend_on_offset_only():
    # q_t . k_u after R_t, R_u depends on t - u: the same vectors at positions shifted by 7 score alike
    from tl_minimal.transformer import rotary

    torch.manual_seed(2)
    q, k = torch.randn(2, 2, 5, 8, dtype=torch.float64), torch.randn(2, 2, 5, 8, dtype=torch.float64)
    scores = rotary(q, 0) @ rotary(k, 0).transpose(-2, -1)  # [2, 2, 5, 5]
    shifted = rotary(q, 7) @ rotary(k, 7).transpose(-2, -1)
    assert _rel(shifted, scores) < 1e-12
    # a rotation: norms kept, and position 0 is the identity
    assert _rel(rotary(q, 3).norm(dim=-1), q.norm(dim=-1)) < 1e-12
    assert torch.equal(rotary(q[:, :, :1], 0), q[:, :, :1])


def test_rotary_transformer_parameters_and_cache():
    # transformer_rope: the paper's baseline less its learned table of 128 x 64 positions
    model = build_model("transformer_rope", 259, d_model=64, n_layers=3, n_heads=4, max_seq_len=128)
    assert sum(p.numel() for p in model.parameters()) == 174_848 - 128 * 64
    torch.manual_seed(3)
    mixer = CausalSelfAttention(16, 4, rotary=True).double()
    n = torch.randn(2, 9, 16, dtype=torch.float64)
    whole, _ = mixer(n)
    first, cache = mixer(n[:, :4])
    rest, _ = mixer(n[:, 4:], cache)
    assert _rel(torch.cat([first, rest], 1), whole) < 1e-12
    with pytest.raises(ValueError, match="even size"):
        CausalSelfAttention(12, 4, rotary=True)
