"""The gated hybrid's key-value memory: loop == fast == step, alignment, no NaN, top-k vs all."""

import math
import re

import pytest
import torch

from conftest import recorded
from tl_minimal.kv_fusion import KVConfig, KVFusion, kv_read, kv_read_loop, kv_read_step


def _rel(a, b):
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def _random_memory(B=2, T=9, A=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, A, generator=g, dtype=torch.float64)
    keys = torch.randn(B, T - 1, A, generator=g, dtype=torch.float64)
    values = torch.randn(B, T - 1, A, generator=g, dtype=torch.float64)
    logw = torch.randn(B, T - 1, generator=g, dtype=torch.float64)
    return q, keys, values, logw


@pytest.mark.parametrize("top_k", [1, 3, 8, 100, "all", None])
@pytest.mark.parametrize("use_logw", [False, True])
@pytest.mark.parametrize("lag", [1, 0])
def test_loop_equals_fast(top_k, use_logw, lag):
    q, keys, values, logw = _random_memory()
    T = q.shape[1]
    n_visible = [max(t - lag, 0) for t in range(T)]
    args = (top_k, 2.5, logw if use_logw else None)
    m0, w0, i0 = kv_read_loop(q, keys, values, n_visible, *args)
    m1, w1, i1 = kv_read(q, keys, values, n_visible, *args)
    assert _rel(m1, m0) < 1e-12 and _rel(w1, w0) < 1e-12 and torch.equal(i1, i0)
    assert torch.all(m1[:, : 1 + lag] == 0)  # nothing visible yet -> exactly zero
    assert torch.allclose(w1.sum(-1)[:, 1 + lag :], torch.ones(()).double())


@pytest.mark.parametrize("top_k", [2, 8, "all"])
@pytest.mark.parametrize("lag", [1, 0])
def test_supersede_loop_equals_fast_and_step(top_k, lag):
    q, keys, values, _ = _random_memory(T=10)
    keys[:, 6] = keys[:, 1]  # an exact later rewrite of entry 1's key
    T = q.shape[1]
    n_visible = [max(t - lag, 0) for t in range(T)]
    eta = torch.tensor(0.7, dtype=torch.float64)
    m0, w0, i0 = kv_read_loop(q, keys, values, n_visible, top_k, 2.0, None, eta)
    m1, w1, i1 = kv_read(q, keys, values, n_visible, top_k, 2.0, None, eta)
    assert _rel(m1, m0) < 1e-12 and _rel(w1, w0) < 1e-12 and torch.equal(i1, i0)
    for t in range(1 + lag, T):
        n = n_visible[t]
        mt, _, _ = kv_read_step(q[:, t], keys[:, :n], values[:, :n], top_k, 2.0, None, eta)
        assert _rel(mt, m1[:, t]) < 1e-12


def test_supersede_makes_the_latest_write_win():
    """Tied keys: one key written three times scores the same three times; supersede keeps the last."""
    g = torch.Generator().manual_seed(0)
    keys = torch.randn(1, 6, 16, generator=g, dtype=torch.float64)
    keys[:, 3] = keys[:, 0]
    keys[:, 5] = keys[:, 0]  # entries 0, 3, 5 share one key
    values = torch.eye(6, dtype=torch.float64)[None, :, :]  # value of entry j = one-hot j, [1, 6, 6]
    q = keys[:, :1]  # ask with that key
    m_avg, _, _ = kv_read(q, keys, values, [6], 8, 10.0)
    m_new, _, _ = kv_read(q, keys, values, [6], 8, 10.0, None, torch.tensor(1.0, dtype=torch.float64))
    assert m_avg[0, 0, [0, 3, 5]].min() > 0.3  # averaged over the three writes
    assert m_new[0, 0, 5] > 0.99  # only the latest write
    # entry 0 is not overwritten while the later copies are not yet visible
    m_early, _, _ = kv_read(q, keys, values, [3], 8, 10.0, None, torch.tensor(1.0, dtype=torch.float64))
    assert m_early[0, 0, 0] > 0.99


def test_step_equals_fast():
    q, keys, values, logw = _random_memory(T=7)
    m, _, i = kv_read(q, keys, values, [max(t - 1, 0) for t in range(7)], 3, 1.0, logw)
    for t in range(2, 7):  # at t the cache holds entries j <= t-2
        n = t - 1
        mt, _, it = kv_read_step(q[:, t], keys[:, :n], values[:, :n], 3, 1.0, logw[:, :n])
        assert _rel(mt, m[:, t]) < 1e-12
        assert torch.equal(it, i[:, t, : it.shape[1]])


def _fusion(mode="fast", **kw):
    torch.manual_seed(0)
    return KVFusion(12, KVConfig(assoc_dim=kw.pop("assoc_dim", 6), **kw), mode=mode).double()


@pytest.mark.parametrize("align", ["previous", "current"])
@pytest.mark.parametrize("extra", [{}, {"write_gate": True, "top_k": "all"},
                                   {"learnable_score_scale": True, "score_scale": 3.0, "assoc_dim": 12},
                                   {"gate_outside_norm": True, "top_k": 2},
                                   {"tie_qk": True, "learnable_score_scale": True, "score_scale": 10.0},
                                   {"tie_qk": True, "score_scale": 10.0, "supersede": True, "top_k": 3},
                                   {"read_gate": "query_vector", "score_scale": "printed", "top_k": 3},
                                   {"read_gate": "query_vector", "tie_qk": True, "learnable_score_scale": True}])
def test_module_loop_fast_step_and_chunks_agree(align, extra):
    fast = _fusion(query_align=align, **dict(extra))
    loop = _fusion(query_align=align, mode="loop", **dict(extra))
    loop.load_state_dict(fast.state_dict())
    e = torch.randn(2, 11, 12, dtype=torch.float64)
    (z, _), rec_f = recorded(fast, e)
    (zl, _), rec_l = recorded(loop, e)
    assert _rel(zl, z) < 1e-12 and torch.equal(rec_f["index"], rec_l["index"])
    # token by token with the cache, after a first chunk of 3
    out, st = fast(e[:, :3])
    outs = [out]
    for t in range(3, 11):
        o, st = fast(e[:, t : t + 1], st)
        outs.append(o)
    assert _rel(torch.cat(outs, 1), z) < 1e-12
    assert st["t"] == 11 and st["k"].shape[1] == 10


def test_no_nan_before_the_first_entry_and_gradients_finite():
    f = _fusion()
    e = torch.randn(3, 5, 12, dtype=torch.float64, requires_grad=True)
    (z, _), rec = recorded(f, e)
    assert torch.isfinite(z).all()
    assert torch.all(rec["weights"][:, :2] == 0) and torch.all(rec["index"][:, :2] == -1)
    assert rec["weights"].shape == (3, 5, 4) and rec["read_gate"].shape == (3, 5)
    z.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in f.parameters() if p.grad is not None)
    assert torch.isfinite(e.grad).all()
    # a single token: no memory at all
    z1, _ = f(e[:, :1].detach())
    assert torch.isfinite(z1).all()


@pytest.mark.parametrize("align", ["previous", "current"])
def test_alignment_retrieves_the_right_pair(align):
    # one-hot embeddings, W_q = W_k = W_v = identity, sharp scores: the top entry must be the
    # earlier occurrence of the query token (previous: e_{t-1}, current: e_t)
    f = KVFusion(8, KVConfig(assoc_dim=8, top_k=1, score_scale=50.0, query_align=align)).double()
    with torch.no_grad():
        for lin in (f.key, f.value, f.query):
            lin.weight.copy_(torch.eye(8))
    tokens = torch.tensor([[0, 1, 2, 3, 1, 5, 6]])
    e = torch.nn.functional.one_hot(tokens, 8).double()
    _, rec = recorded(f, e)
    idx = rec["index"][0, :, 0]
    if align == "previous":
        # at t=5 the previous token is 1 (t-1=4); it appeared at j=1, so the value is token 2
        assert idx[5].item() == 1
    else:
        # at t=4 the token is 1; it appeared at j=1 (entry visible as j <= t-1)
        assert idx[4].item() == 1


def test_bad_options():
    with pytest.raises(ValueError, match="query_align"):
        KVFusion(8, KVConfig(query_align="next"))
    with pytest.raises(ValueError, match="top_k"):
        KVFusion(8, KVConfig(top_k=0))
    with pytest.raises(ValueError, match="score_scale"):
        KVFusion(8, KVConfig(score_scale=0.0))


def test_tied_query_key_scores_an_exact_repeat_at_cos_one():
    # one W_qk for queries and keys: at initialization the entry whose key token equals the
    # query token scores exactly tau * 1, the highest possible score, whatever W_qk is
    torch.manual_seed(0)
    f = KVFusion(8, KVConfig(assoc_dim=6, top_k="all", score_scale=10.0, tie_qk=True)).double()
    assert f.query is None
    tokens = torch.tensor([[0, 1, 2, 3, 4, 5, 2, 6]])  # at t=7 the previous token 2 was seen at j=2
    e = torch.randn(7, 8, dtype=torch.float64)[tokens]
    _, rec = recorded(f, e)
    w = rec["weights"][0, 7, :6]  # entries j = 0..5, in memory order
    assert w.argmax().item() == 2 and w[2] > 0.5
    # independent projections: the repeat is not singled out in general
    g = KVFusion(8, KVConfig(assoc_dim=6, top_k="all", score_scale=10.0)).double()
    assert sum(p.numel() for p in g.parameters()) == sum(p.numel() for p in f.parameters()) + 8 * 6


# --- the blockwise read (blockwise_topk.py): exactly the loop's read, without a T x N matrix ----

def _blockwise(key_block, query_block):
    """kv_read's fast form with small blocks, so short sequences cross many block edges."""
    from tl_minimal.blockwise_topk import top_k_read

    def read(q, keys, values, n_visible, top_k, scale, logw=None):
        qn, kn = (torch.nn.functional.normalize(x, dim=-1, eps=1e-12) for x in (q, keys))
        return top_k_read(qn, kn, values, n_visible, min(top_k, keys.shape[1]), scale, logw,
                          key_block=key_block, query_block=query_block)
    return read


def _loop_and_blockwise(q, keys, values, logw, n_visible, top_k, blocks, scale=2.5):
    """(loop, blockwise) each as (m, weights, index, grads of q, keys, values, logw, scale)."""
    out = []
    for read in (kv_read_loop, _blockwise(*blocks)):
        leaves = [x.detach().clone().requires_grad_(True) for x in (q, keys, values, logw)]
        s = torch.tensor(scale, dtype=q.dtype, requires_grad=True)
        m, w, i = read(*leaves[:3], n_visible, top_k, s, leaves[3])
        g = torch.Generator().manual_seed(9)
        if m.requires_grad:  # (the loop's m is a constant when nothing is visible anywhere)
            (m * torch.randn(m.shape, generator=g, dtype=m.dtype)).sum().backward()
        out.append((m.detach(), w, i, [x.grad for x in leaves] + [s.grad]))
    return out


@pytest.mark.parametrize("T", [1, 2, 7, 13, 37])
@pytest.mark.parametrize("blocks", [(3, 4), (5, 1), (64, 64)])
@pytest.mark.parametrize("top_k", [1, 3, 8, 100])
@pytest.mark.parametrize("dense_below", [0, 512])
def test_blockwise_equals_loop(T, blocks, top_k, dense_below, monkeypatch):
    # lengths that are not multiples of the blocks, k larger than the visible entries (100),
    # the causal mask (entry j visible at t when j <= t - 2), a write gate, gradients; the
    # backward's two ways (gathers: dense_below 0; matmuls on [q, seen]: 512)
    monkeypatch.setattr("tl_minimal.kernels.DENSE_BELOW", dense_below)
    q, keys, values, logw = _random_memory(T=T + 1, seed=T)
    q = q[:, :T]
    n_visible = [max(t - 1, 0) for t in range(T)]
    (m0, w0, i0, g0), (m1, w1, i1, g1) = _loop_and_blockwise(q, keys, values, logw, n_visible, top_k, blocks)
    assert torch.equal(i1, i0) and _rel(w1, w0) < 1e-12 and _rel(m1, m0) < 1e-12
    for a, b in zip(g1, g0, strict=True):
        assert _rel(a, b) < 1e-12 if b is not None else a is None or not a.any()


def test_blockwise_ties_keep_the_entry_written_first():
    # keys repeat exactly (one-hot, so every score is exact): among equal scores the lower j
    # wins and comes first, in the loop and blockwise alike, also across block edges
    A, N = 4, 30
    tokens = torch.tensor([[j % A for j in range(N)], [(3 * j) % A for j in range(N)]])  # [2, N]
    keys = torch.nn.functional.one_hot(tokens, A).double()  # [2, N, A]: 7-8 copies of each key
    values = torch.randn(2, N, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    q = torch.nn.functional.one_hot(torch.tensor([[1, 2, 3, 0, 1, 2], [0, 0, 3, 1, 2, 2]]), A).double()
    q = q + 0.01 * torch.arange(A, dtype=torch.float64)  # still best on the one-hot key, ties stay exact
    n_visible = [30, 29, 17, 9, 4, 30]
    for top_k in (3, 8, 12):
        m0, w0, i0 = kv_read_loop(q, keys, values, n_visible, top_k, 3.0)
        for blocks in ((4, 2), (7, 3), (64, 64)):
            m1, w1, i1 = _blockwise(*blocks)(q, keys, values, n_visible, top_k, 3.0)
            assert torch.equal(i1, i0) and torch.equal(w1, w0) and _rel(m1, m0) < 1e-12
        # the kept copies of the best key are its first occurrences, in memory order
        best = tokens.gather(1, i0[:, :, 0])  # [2, T] the key token read first
        for b in range(2):
            for t in range(6):
                copies = [j for j in range(n_visible[t]) if tokens[b, j] == best[b, t]][:top_k]
                assert i0[b, t, : len(copies)].tolist() == copies


def test_blockwise_with_nothing_visible_and_a_single_entry():
    q, keys, values, logw = _random_memory(T=6)
    for n_visible in ([0] * 6, [0, 0, 1, 1, 1, 5], [5] * 6):
        (m0, w0, i0, _), (m1, w1, i1, _) = _loop_and_blockwise(q, keys, values, logw, n_visible, 3, (2, 2))
        assert torch.equal(i1, i0) and _rel(w1, w0) < 1e-12 and _rel(m1, m0) < 1e-12
        assert torch.all(m1[:, [t for t in range(6) if n_visible[t] == 0]] == 0)


@pytest.mark.parametrize("top_k", [2, 8])
def test_dense_and_blockwise_fast_forms_agree(top_k):
    # kv_read (blockwise) and kv_read(dense=True) (the earlier T x N form) on random keys: no ties
    q, keys, values, logw = _random_memory(B=3, T=40, A=6, seed=5)
    n_visible = [max(t - 1, 0) for t in range(40)]
    outs = []
    for dense in (False, True):
        leaves = [x.detach().clone().requires_grad_(True) for x in (q, keys, values, logw)]
        m, w, i = kv_read(*leaves[:3], n_visible, top_k, 1.7, leaves[3], dense=dense)
        m.square().sum().backward()
        outs.append((m.detach(), w, i, [x.grad for x in leaves]))
    (m0, w0, i0, g0), (m1, w1, i1, g1) = outs
    assert torch.equal(i0, i1) and _rel(w0, w1) < 1e-12 and _rel(m0, m1) < 1e-12
    assert all(_rel(a, b) < 1e-12 for a, b in zip(g0, g1, strict=True))


@pytest.mark.parametrize("align", ["previous", "current"])
def test_module_blockwise_across_blocks_equals_loop(align, monkeypatch):
    # the whole key-value path (both alignments, write gate, learnable score scale) with blocks
    # much shorter than the sequence, against the loop form; gradients of every parameter
    import tl_minimal.kv_fusion as kvf
    small = _blockwise(4, 3)
    monkeypatch.setattr(kvf, "top_k_read", lambda qn, kn, v, n, k, s, lw: small(qn, kn, v, n, k, s, lw))
    fast = _fusion(query_align=align, write_gate=True, learnable_score_scale=True, score_scale=4.0, top_k=3)
    loop = _fusion(query_align=align, write_gate=True, learnable_score_scale=True, score_scale=4.0, top_k=3,
                   mode="loop")
    loop.load_state_dict(fast.state_dict())
    e = torch.randn(2, 23, 12, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    z = {}
    for name, f in (("fast", fast), ("loop", loop)):
        out, _ = f(e)
        out.square().sum().backward()
        z[name] = out.detach()
    assert _rel(z["fast"], z["loop"]) < 1e-12
    for (n, p), (_, p0) in zip(fast.named_parameters(), loop.named_parameters(), strict=True):
        assert _rel(p.grad, p0.grad) < 1e-10, n


# --- the paper as printed: score exp(q^ . k^ / sqrt(d_a)) and read gate sigmoid(W_g q_t) * m_t ---

def _printed_reference(f, e):
    """The printed equations, written out one position and one entry at a time (float64), with the
    weights of the KVFusion ``f`` ("previous" query, no write gate): the specification that the
    library's score_scale="printed", read_gate="query_vector" must equal.

        q_t = W_q e_{t-1},  k_j = W_k e_j,  v_{j+1} = W_v e_{j+1},  entries j <= t-2
        alpha_{t,j} ~ exp(q^_t . k^_j / sqrt(d_a)) over the top_k best,  m_t = sum_j alpha_{t,j} v_{j+1}
        m~_t = sigmoid(W_g q_t + b_g) * m_t,  z_t = LN(W_m m~_t)
    """
    B, T, _ = e.shape
    d_a = f.key.weight.shape[0]
    W_q = (f.key if f.query is None else f.query).weight
    W_k, W_v, W_g, b_g = f.key.weight, f.value.weight, f.read_gate.weight, f.read_gate.bias
    rows = []
    for b in range(B):
        zs = []
        for t in range(T):
            e_prev = e[b, t - 1] if t >= 1 else torch.zeros_like(e[b, 0])
            q = W_q @ e_prev
            scores = []  # (score, j)
            for j in range(t - 1):  # entries j = 0 .. t-2
                k = W_k @ e[b, j]
                scores.append((torch.exp((q / q.norm()) @ (k / k.norm()) / d_a ** 0.5), j))
            kept = sorted(scores, key=lambda s: -s[0].item())[: f.top_k]
            total = sum(s for s, _ in kept) if kept else None
            m = sum((s / total) * (W_v @ e[b, j + 1]) for s, j in kept) if kept else q.new_zeros(d_a)
            m_gated = torch.sigmoid(W_g @ q + b_g) * m
            zs.append(f.norm(f.out(m_gated)))
        rows.append(torch.stack(zs))
    return torch.stack(rows)  # [B, T, d]


def _printed(mode="fast", d=12, assoc_dim=6, top_k=3, dtype=torch.float64, **kw):
    """A KVFusion in the printed form, in ``dtype``. The constant log beta is made in float32 (as
    every score scale) and .double() keeps that rounding, so in float64 it is set again at float64
    precision: the comparison with the reference then measures the read, not float32's log."""
    torch.manual_seed(0)
    f = KVFusion(d, KVConfig(assoc_dim=assoc_dim, top_k=top_k, score_scale="printed", read_gate="query_vector",
                             **kw), mode=mode)
    assert f.log_score_scale.exp().item() == pytest.approx(1 / math.sqrt(assoc_dim), rel=1e-6)  # beta, float32
    f = f.to(dtype)
    with torch.no_grad():
        if dtype == torch.float64:
            f.log_score_scale.fill_(-0.5 * math.log(assoc_dim))  # log beta, beta = 1/sqrt(D_kv)
        f.read_gate.bias.normal_()  # a bias that is not zero, so the reference checks it is used
    return f


@pytest.mark.parametrize("T", [1, 2, 7, 13])
@pytest.mark.parametrize("top_k", [3, 100])
def test_printed_score_and_gate_equal_the_reference(T, top_k):
    # float64: fast and loop forms within 1e-12 of the written-out equations; float32 within 1e-5
    fast, loop = _printed(top_k=top_k), _printed("loop", top_k=top_k)
    e = torch.randn(2, T, 12, generator=torch.Generator().manual_seed(T), dtype=torch.float64)
    ref = _printed_reference(fast, e)
    (z, _), rec = recorded(fast, e)
    (zl, _), _ = recorded(loop, e)
    assert _rel(z, ref) < 1e-12 and _rel(zl, ref) < 1e-12
    assert rec["read_gate_vector"].shape == (2, T, 6) and rec["read_gate"].shape == (2, T)
    z32, _ = _printed(top_k=top_k, dtype=torch.float32)(e.float())
    assert _rel(z32.double(), ref) < 1e-5


@pytest.mark.parametrize("T", [7, 13])
def test_printed_gradients_equal_the_reference(T):
    # gradients of every parameter and of the input, against autograd through the written-out form
    f = _printed()
    e = torch.randn(2, T, 12, generator=torch.Generator().manual_seed(1), dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, T, 12, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    grads = []
    for forward in (lambda: f(e)[0], lambda: _printed_reference(f, e)):
        f.zero_grad()
        e.grad = None
        (forward() * w).sum().backward()
        grads.append([e.grad.clone()] + [p.grad.clone() for p in f.parameters()])
    for (name, _), a, b in zip([("e", None), *f.named_parameters()], *grads, strict=True):
        assert _rel(a, b) < 1e-10, name


def test_printed_gate_is_a_vector_from_the_query():
    # the gate sees q_t = W_q e_{t-1}: changing W_q changes it; the scalar gate sees e_{t-1} itself
    f = _printed(assoc_dim=6)
    assert f.read_gate.weight.shape == (6, 6) and f.read_gate.bias.shape == (6,)
    e = torch.randn(1, 9, 12, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    _, rec = recorded(f, e)
    with torch.no_grad():
        f.query.weight.mul_(-1)
    _, rec2 = recorded(f, e)
    assert not torch.allclose(rec["read_gate_vector"], rec2["read_gate_vector"])
    g = torch.sigmoid(f.read_gate(f.query(e[:, 7])))  # at t = 8 the query token is e_7
    assert _rel(rec2["read_gate_vector"][:, 8], g) < 1e-15


def test_printed_settings_through_build_model_and_set():
    from tl_minimal import build_model, default_config
    from tl_research.arguments import key_value

    paper, printed = default_config("gated_hybrid_paper"), default_config("gated_hybrid_printed")
    assert {k for k in printed if printed[k] != paper[k]} == {"score_scale", "read_gate"}
    assert (printed["score_scale"], printed["read_gate"]) == ("printed", "query_vector")
    sets = dict(key_value(s) for s in ("read_gate=query_vector", "score_scale=printed"))
    torch.manual_seed(0)
    a = build_model("gated_hybrid_paper", 64, **sets)
    torch.manual_seed(0)
    b = build_model("gated_hybrid_printed", 64)
    assert a.config.settings() == b.config.settings()
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    assert b.kv.log_score_scale.exp().item() == 0.125  # 1/sqrt(64)
    assert build_model("gated_hybrid_printed", 64, assoc_dim=16).kv.log_score_scale.exp().item() == 0.25
    learn = build_model("gated_hybrid_repaired", 64, score_scale="printed")  # learnable, starting at the printed 0.125
    assert isinstance(learn.kv.log_score_scale, torch.nn.Parameter) and learn.kv.log_score_scale.exp().item() == 0.125


@pytest.mark.parametrize("settings, words", [
    ({"read_gate": "banana"}, "read_gate must be one of scalar, query_vector, got 'banana'"),
    ({"read_gate": None}, "read_gate must be one of"),
    ({"score_scale": -1.0}, "score_scale (beta) must be a number > 0 or 'printed'"),
    ({"score_scale": 0}, "score_scale (beta) must be a number > 0 or 'printed'"),
    ({"score_scale": "Printed"}, "got 'Printed'"),
    ({"read_gate": "query_vector", "gate_outside_norm": True}, "gate_outside_norm=True applies a scalar"),
])
def test_bad_printed_settings(settings, words):
    from tl_minimal import build_model

    for variant in ("gated_hybrid_paper", "gated_hybrid_printed"):
        with pytest.raises(ValueError, match=re.escape(words)):
            build_model(variant, 64, **settings)
    with pytest.raises(ValueError, match=re.escape(words)):
        KVFusion(8, KVConfig(**settings))
    # "printed" where there is no D_kv
    with pytest.raises(ValueError, match="needs assoc_dim"):
        KVFusion(8, KVConfig(score_scale="printed", assoc_dim=None))
    with pytest.raises(ValueError, match="has no setting"):
        build_model("triple_hybrid", 64, score_scale="printed")


@pytest.mark.parametrize("value, words", [("read_gate=banana", "read_gate must be one of scalar, query_vector"),
                                          ("score_scale=-2", "score_scale (beta) must be a number > 0"),
                                          ("score_scale=printd", "or 'printed'")])
def test_bad_printed_set_values_are_one_line_errors(value, words, capsys):
    from tl_research import cli

    assert cli.main(["recall", "--variants", "gated_hybrid_printed", "--set", value, "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and words in err and "\n" not in err
