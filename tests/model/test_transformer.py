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
