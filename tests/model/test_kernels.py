"""The speed kernels in kernels.py compute the same numbers, and the same gradients, as the plain
torch expressions they replace (the concept files' docstrings name those expressions)."""

import pytest
import torch

from conftest import outputs_and_grads, relative_error
from tl_minimal.kernels import softmax, times_to_tokens

gen = torch.Generator().manual_seed(0)


def test_decays_mask_the_future_exactly_and_clamp_far_below_the_smallest_normal_float():
    from tl_minimal.kernels import decays

    seg = -torch.rand(3, 5, 5, generator=gen, dtype=torch.float64) * 50  # exp down to ~1e-22
    mask = torch.ones(5, 5, dtype=torch.float64).tril()
    assert torch.all(decays(seg, mask, seg[..., 0])[0][:, mask == 0] == 0)  # the future is exactly 0
    # far below the smallest normal float the result is clamped there, not a slow denormal
    tiny = decays(seg.float(), mask.float(), torch.tensor([-1e4], dtype=torch.float32))[1]
    assert 0 < tiny.item() < 1e-37


def test_softmax_equals_torch_softmax_with_gradients():
    x = torch.randn(4, 7, 3, 8, generator=gen, dtype=torch.float64) * 10
    (y,), (gx,) = outputs_and_grads(softmax, [x])
    (want,), (gwant,) = outputs_and_grads(lambda x: torch.softmax(x, dim=-1), [x])
    assert relative_error(y, want) < 1e-14 and relative_error(gx, gwant) < 1e-13


def test_times_to_tokens_is_the_transposed_product_stored_token_major():
    o = torch.randn(2, 3, 5, 4, generator=gen, dtype=torch.float64)  # [B, H, T, S]
    q = torch.randn(2, 5, 3, 4, generator=gen, dtype=torch.float64)  # [B, T, H, S]
    (r,), grads = outputs_and_grads(times_to_tokens, [o, q])
    (want,), gwant = outputs_and_grads(lambda o, q: o.transpose(1, 2) * q, [o, q])
    assert r.is_contiguous() and relative_error(r, want) < 1e-15
    assert all(relative_error(g, w) < 1e-15 for g, w in zip(grads, gwant, strict=True))


def test_the_cached_segment_matrices_are_the_plain_ones_and_give_the_plain_decays():
    from tl_minimal.running_state import causal_decay, chunk_decays, segment_matrices

    C = 7
    Z, lower = segment_matrices(C, torch.float64, torch.device("cpu"))
    assert segment_matrices(C, torch.float64, torch.device("cpu"))[0] is Z  # built once
    plain_Z = torch.tensor([[float(tau < u <= t) for t in range(C) for tau in range(C)] for u in range(C)],
                           dtype=torch.float64)
    assert torch.equal(Z, plain_Z) and torch.equal(lower, torch.ones(C, C, dtype=torch.float64).tril())
    ld = -torch.rand(3, C, dtype=torch.float64)
    zero = torch.zeros(3, dtype=ld.dtype)
    plain = torch.stack([torch.stack([ld[:, tau + 1:t + 1].sum(-1).exp() if tau <= t else zero for tau in range(C)], -1)
                         for t in range(C)], -2)  # [3, C(t), C(tau)]
    assert torch.allclose(causal_decay(ld), plain, rtol=1e-12, atol=0)
    _, W, expG = chunk_decays(ld)
    assert torch.equal(W, causal_decay(ld)) and torch.allclose(expG, ld.cumsum(-1).exp(), rtol=1e-12, atol=0)


def test_decays_are_torch_exp_with_their_gradients():
    # kernels.decays, the layer's one call into this module (tests/repo/layer_reach.py), against
    # the plain (torch.exp(seg) * lower, torch.exp(G)); a D no loss reaches passes no gradient back
    from tl_minimal.kernels import decays

    seg, G = (-torch.rand(3, 6, 6, generator=gen, dtype=torch.float64) * 50 for _ in range(2))
    lower = torch.ones(6, 6, dtype=torch.float64).tril()
    got, grads = outputs_and_grads(lambda seg, G: decays(seg, lower, G), [seg, G])
    want, gwant = outputs_and_grads(lambda seg, G: (torch.exp(seg) * lower, torch.exp(G)), [seg, G])
    assert all(relative_error(g, w) < 1e-15 for g, w in zip(got + tuple(grads), want + tuple(gwant), strict=True))
    assert torch.equal(decays(seg, lower, G)[0], torch.exp(seg) * lower)
    seg2, G2 = seg.clone().requires_grad_(True), G.clone().requires_grad_(True)
    decays(seg2, lower, G2)[0].sum().backward()
    assert G2.grad is None and torch.equal(seg2.grad, torch.exp(seg) * lower)


@pytest.mark.parametrize("dense_below", [0, 512])
def test_top_k_sum_equals_the_plain_blockwise_read(dense_below, monkeypatch):
    # kernels.top_k_sum (what kv_read uses) against blockwise_topk.top_k_read(plain=True): the same
    # m, alpha, index and gradients, along both ways of its backward (gathers; matmuls on [q, seen])
    from tl_minimal.blockwise_topk import top_k_read
    monkeypatch.setattr("tl_minimal.kernels.DENSE_BELOW", dense_below)
    B, T, A = 2, 24, 5
    q, keys, values = (torch.randn(B, n, A, generator=gen, dtype=torch.float64) for n in (T, T - 1, T - 1))
    logw = torch.randn(B, T - 1, generator=gen, dtype=torch.float64)
    n_visible = [max(t - 1, 0) for t in range(T)]
    dm = torch.randn(B, T, A, generator=gen, dtype=torch.float64)
    outs = []
    for plain in (False, True):
        leaves = [x.clone().requires_grad_(True) for x in (q, keys, values, logw)]
        scale = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
        m, alpha, index = top_k_read(*leaves[:3], n_visible, 4, scale, leaves[3], key_block=5, query_block=4,
                                     plain=plain)
        (m * dm).sum().backward()
        outs.append((m.detach(), alpha, index, [x.grad for x in leaves] + [scale.grad]))
    (m0, a0, i0, g0), (m1, a1, i1, g1) = outs
    assert torch.equal(i0, i1) and (i0 >= 0).any() and (i0 < 0).any()  # empty slots at the start
    assert relative_error(a0, a1) < 1e-13 and relative_error(m0, m1) < 1e-13
    assert all(relative_error(x, y) < 1e-12 for x, y in zip(g0, g1, strict=True))
