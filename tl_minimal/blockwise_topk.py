"""The key-value read of ``kv_fusion.py`` without a T x N score matrix: a top-k kept block by block.

The read scores every visible entry, rho_{t,j} = beta cos(q_t, k_j) (+ log omega_j), keeps the
k = top_k best, alpha_t = softmax(kept), m_t = sum alpha_{t,j} v_{j+1}. All at once it holds a
[B, T, N] score matrix (memory quadratic in T). Here, as flash attention computes a softmax:

    for each block of q query positions:
        best = k empty slots
        for each block of b entries these queries can see:
            rho  = the block's scores, a [q, b] matrix (-inf where j is not visible yet)
            best = the k best of (best, the k best of rho)       <- exact
    alpha = softmax(best);  m = sum alpha v                       (values of the kept only)

Exact, because an entry of the final top k is among the k best of every set it belongs to. Ties
(a repeated token writes the same key twice): as in kv_fusion.kv_read_loop, the entry written
first (lower j) wins and comes first. Memory O(q b) per block pair and O(T k) kept (with
kernels.top_k_sum's backward); the block bounds come from n_visible on the host (no device wait).
"""

from __future__ import annotations

import torch

from .kernels import top_k_sum

KEY_BLOCK = 1024   # entries scored at a time
QUERY_BLOCK = 256  # query positions at a time (times the batch): a block pair holds B x 256 x 1024 scores
NONE = float("-inf")  # the score of an empty slot (index -1) and of an entry not yet visible


def _in_order(rho, idx, keep: int):
    """The ``keep`` first of the candidates rho, idx [..., m] in the read's order: higher score
    first, equal scores lower index first (empty slots, index -1, are interchangeable)."""
    m = rho.shape[-1]
    pos = torch.arange(m, device=rho.device)
    si, sj = rho.unsqueeze(-1), rho.unsqueeze(-2)                    # [..., m(i), 1], [..., 1, m(j)]
    ii, ij = idx.unsqueeze(-1), idx.unsqueeze(-2)
    # j comes before i: higher score, or equal score and lower index (or the same, earlier slot)
    ahead = (sj > si) | ((sj == si) & ((ij < ii) | ((ij == ii) & (pos.view(1, m) < pos.view(m, 1)))))
    rank = ahead.sum(-1)                                             # [..., m]: a permutation of 0..m-1
    return rho.scatter(-1, rank, rho)[..., :keep], idx.scatter(-1, rank, idx)[..., :keep]


def _block_best(rho, j0: int, k: int):
    """The k best entries of one block (the read's set; equal scores not yet in index order).
    rho [..., b]: scores of entries j0 .. j0+b-1 (NONE where not visible). Returns (scores,
    index) [..., k], index -1 = empty."""
    b = rho.shape[-1]
    kb = min(k, b)
    vals, pos = rho.topk(min(kb + 1, b), dim=-1)                     # the kb + 1 largest; ties: any
    theta = vals[..., kb - 1:kb]                                     # the kb-th largest score
    # a tie straddles the cut when the (kb+1)-th largest equals theta: then choose the entries scoring
    # theta by index. Rare; the CPU skips it when no row needs it, a GPU always runs it (no host wait)
    straddle = (vals[..., kb:] == theta) & (theta > NONE)            # [..., 0 or 1]
    vals, pos = vals[..., :kb], pos[..., :kb]
    if rho.device.type != "cpu" or bool(straddle.any()):
        # keep the g entries above theta, then the tied ones in index order: the kb largest of
        # (rho == theta) * (b - j), lowest j first (rows without a straddle come out the same)
        above = (vals > theta).sum(-1, keepdim=True)                 # g  [..., 1]
        ramp = torch.arange(b, 0, -1, device=rho.device, dtype=rho.dtype)  # b .. 1
        tied = ((rho == theta) * ramp).topk(kb, dim=-1).indices     # [..., kb]
        slot = torch.arange(kb, device=rho.device)
        first = slot < above                                         # [..., kb]
        pos = torch.where(first, pos, tied.gather(-1, (slot - above).clamp_min(0)))
        vals = torch.where(first, vals, theta)
    idx = torch.where(vals > NONE, pos + j0, -1)                     # not visible: no entry
    if kb < k:  # a block shorter than k: pad with empty slots
        pad = (*vals.shape[:-1], k - kb)
        vals = torch.cat([vals, vals.new_full(pad, NONE)], dim=-1)
        idx = torch.cat([idx, idx.new_full(pad, -1)], dim=-1)
    return vals, idx  # the right set; ordered by score, equal scores in any order (see _in_order)


@torch.no_grad()
def select_top_k(qn, kn, n_visible, k: int, scale, logw=None, key_block: int = KEY_BLOCK,
                 query_block: int = QUERY_BLOCK):
    """The k best visible entries of every query, block by block.

    qn [B, T, A], kn [B, N, A] (unit vectors); n_visible: T non-decreasing ints on the host
    (entry j is visible at t when j < n_visible[t]); scale: float or 0-d tensor; logw [B, N] or
    None. Returns (scores [B, T, k], index [B, T, k]) in the read's order (score descending,
    lower j first among equal scores); slots with no visible entry: score -inf, index -1.
    """
    B, T, _ = qn.shape
    n_host = torch.as_tensor(n_visible, device="cpu")                # [T], for the loop bounds
    n_dev = n_host.to(qn.device)                                     # [T], for the masks
    scores = qn.new_full((B, T, k), NONE)
    index = torch.full((B, T, k), -1, dtype=torch.long, device=qn.device)
    qs = scale * qn                                                  # beta q_t / |q_t|  [B, T, A]
    for t0 in range(0, T, query_block):
        t1 = min(t0 + query_block, T)
        all_see, seen = int(n_host[t0:t1].min()), int(n_host[t0:t1].max())  # visible to all / any
        best = None
        for j0 in range(0, seen, key_block):
            j1 = min(j0 + key_block, seen)
            # rho_{t,j} = beta cos(q_t, k_j) (+ log omega_j) for this block
            rho = qs[:, t0:t1] @ kn[:, j0:j1].transpose(1, 2)       # [B, q, b]
            if logw is not None:
                rho = rho + logw[:, None, j0:j1]
            if j1 > all_see:  # entries j >= all_see are not yet visible to some of the queries
                lo = max(all_see, j0)
                j = torch.arange(lo, j1, device=qn.device)
                rho[..., lo - j0:].masked_fill_(j >= n_dev[t0:t1, None], NONE)  # [B, q, j1 - lo]
            new = _block_best(rho, j0, k)
            # best = the k best of (best, new): every index in best is below every index in new
            best = new if best is None else _in_order(*(torch.cat(x, dim=-1) for x in zip(best, new, strict=True)), k)
        if best is not None:
            scores[:, t0:t1], index[:, t0:t1] = _in_order(*best, k)  # equal scores: lower j first
    return scores, index


def top_k_read(qn, kn, values, n_visible, k: int, scale, logw=None, key_block: int = KEY_BLOCK,
               query_block: int = QUERY_BLOCK, plain: bool = False):
    """The blockwise read: (m [B, T, A], alpha [B, T, k], index [B, T, k]); alpha and index carry no
    gradient. Inputs as :func:`select_top_k`'s, plus values [B, N, A]; the block sizes (tests shrink
    them to cross many block edges) and ``plain`` (the form below, which the tests compare)."""
    scale = torch.as_tensor(scale, dtype=qn.dtype, device=qn.device)
    kept, index = select_top_k(qn, kn, n_visible, k, scale, logw, key_block, query_block)  # [B, T, k]
    if not plain:  # kernels.top_k_sum: same numbers, O(T k) kept for the backward (tests/model/test_kernels.py)
        return top_k_sum(qn, kn, values, logw, scale, kept, index, n_visible, query_block)
    B, T, _ = qn.shape
    ok = index >= 0                                                  # [B, T, k]: a real entry?
    j = index.clamp_min(0).flatten(1)                                # [B, T*k] (-1 reads entry 0)
    kj, vj = (x.gather(1, j[..., None].expand(-1, -1, x.shape[-1])).view(B, T, k, -1)
              for x in (kn, values))                                 # [B, T, k, A] each
    # the kept scores again, with gradients: rho_{t,j} = beta qn_t . kn_j (+ log omega_j)
    rho = scale * (kj @ qn.unsqueeze(-1)).squeeze(-1)                # [B, T, k]
    if logw is not None:
        rho = rho + logw.gather(1, j).view(B, T, k)
    # alpha_t = softmax(kept), 0 on empty slots;  m_t = sum_j alpha_{t,j} v_j
    alpha = rho.masked_fill(~ok, torch.finfo(rho.dtype).min).softmax(dim=-1) * ok  # [B, T, k]
    m = (alpha.unsqueeze(-2) @ vj).squeeze(-2)                        # [B, T, A]
    return m, alpha.detach(), index
