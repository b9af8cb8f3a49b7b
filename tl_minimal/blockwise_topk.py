"""The key-value read of ``kv_fusion.py`` without a T x N score matrix: a top-k kept block by block.

The read (kv_fusion.py): score every visible entry j for query t, rho_{t,j} = beta cos(q_t, k_j)
(+ log omega_j), keep the k = top_k best, alpha_t = softmax(kept), m_t = sum alpha_{t,j} v_{j+1}.
Written all at once it holds a [B, T, N] score matrix (and, in training, its gradient and a
scattered [B, T, N] copy of alpha): memory quadratic in T. Here the same read is computed the
way flash attention computes a softmax, one block of queries against one block of entries at
a time, keeping a running top-k per query:

    for each block of q query positions:
        best = k empty slots
        for each block of b entries these queries can see:
            rho  = the block's scores, a [q, b] matrix (-inf where j is not visible yet)
            best = the k best of (best, the k best of rho)       <- exact
    alpha = softmax(best);  m = sum alpha v                       (values of the kept only)

Why it is exact: the k best of everything seen so far is all a later block needs. An entry of
the final top k is among the k best of every set of entries it belongs to, so no step throws
it away; an entry outside it is beaten by k entries that all survive. The kept scores are the
same numbers as in the all-at-once read, so their softmax is the same too.

Ties. Two entries can score exactly the same (a token that occurs twice writes the same key
twice), and torch.topk leaves open which of equal scores it keeps. The rule here: among equal
scores the entry written first (lower j) wins and comes first; kv_fusion.kv_read_loop, the
specification, uses the same rule. A block's k best come from one topk of k + 1 values: when
the (k+1)-th equals the k-th, a tie straddles the cut and the block is chosen again by index
among the tied entries (rare; on a GPU the tie path runs every time, so that the host never waits
for the device to say whether it is needed). Merging
two ordered lists of k compares all 2K x 2K pairs by (score, index): no topk, no tie question.

Costs, for T queries over N entries (N ~ T), key width A (= D_kv), blocks of q queries and b entries:
    time     O(T N A) for the scores (the blocks no query can see yet are skipped: about half)
             plus a top-(k+1) over every score, O(T N)
    memory   O(q b) for one block pair, O(T k) for the kept scores and indices: linear in T.
             Nothing of size [T, k, A] or [T, N] is stored for the backward: the autograd
             Function below keeps alpha and the indices and recomputes per query block.

Everything runs on CPU, CUDA and MPS (matmul, topk, gather, scatter_add, index_add); the
block bounds come from n_visible on the host, so the loops never wait for the device.
"""

from __future__ import annotations

import torch

KEY_BLOCK = 1024   # entries scored at a time
QUERY_BLOCK = 256  # query positions at a time (times the batch): a block pair holds B x 256 x 1024 scores
DENSE_BELOW = 512  # backward: queries that see at most this many entries use matmuls, not gathers
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
    # a tie straddles the boundary when an entry left out scores theta too, i.e. when the
    # (kb+1)-th largest equals theta: then choose among the entries scoring theta by index.
    # Rare (it needs exactly equal scores): on the CPU a check skips the tie path when no row
    # needs it; on a GPU the path always runs, since the check would make the host wait
    straddle = (vals[..., kb:] == theta) & (theta > NONE)            # [..., 0 or 1]
    vals, pos = vals[..., :kb], pos[..., :kb]
    if rho.device.type != "cpu" or bool(straddle.any()):
        # (rows without a straddle come out the same: all their entries scoring theta are kept)
        # keep the g entries above theta (the first g found), then the tied entries in index
        # order: the kb largest of (rho == theta) * (b - j) are the tied ones, lowest j first
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
            best = new if best is None else _in_order(*(torch.cat(x, dim=-1) for x in zip(best, new)), k)
        if best is not None:
            scores[:, t0:t1], index[:, t0:t1] = _in_order(*best, k)  # equal scores: lower j first
    return scores, index


class TopKRead(torch.autograd.Function):
    """m_t = sum_{kept j} alpha_{t,j} v_j with alpha = softmax over the kept scores.

    forward(qn [B, T, A], kn [B, N, A], values [B, N, A], logw [B, N] or None, scale (0-d
    tensor), n_visible, k, key_block, query_block) -> (m [B, T, A], alpha [B, T, k],
    index [B, T, k]); alpha and index are not differentiable. It saves O(T k) numbers (alpha,
    index); the backward recomputes what it needs one query block at a time: the kept keys
    and values gathered ([q, k, A]) when the block's queries see many entries, or, when they
    see at most DENSE_BELOW, alpha scattered into a [q, seen] matrix and plain matmuls (the
    gathers move k A numbers per query, the matmuls seen A: fewer below k A ~ 512).
    """

    @staticmethod
    def forward(ctx, qn, kn, values, logw, scale, n_visible, k, key_block, query_block):
        """Positional inputs, as ``autograd.Function.apply`` passes them (it takes no keywords)."""
        kept, index = select_top_k(qn, kn, n_visible, k, scale, logw, key_block, query_block)
        ok = index >= 0                                              # [B, T, k]
        # alpha = softmax(kept) on the entries that exist, 0 elsewhere (rows with none: all 0)
        lowest = torch.finfo(kept.dtype).min
        alpha = kept.masked_fill(~ok, lowest).softmax(dim=-1) * ok   # [B, T, k]
        B, T, _ = qn.shape
        n_host = torch.as_tensor(n_visible, device="cpu")
        m = qn.new_zeros(B, T, values.shape[-1])
        for sl, seen in _query_blocks(n_host, query_block):
            a, idx = alpha[:, sl], index[:, sl]                       # [B, q, k]
            if seen == 0:            # nothing visible yet: m = 0
                continue
            if seen <= DENSE_BELOW:  # m = alpha (scattered to [q, seen]) @ v
                m[:, sl] = _scatter(a, idx, seen) @ values[:, :seen]  # [B, q, A]
            else:                    # m = sum_j alpha_j v_j over the gathered v_j
                m[:, sl] = (a.unsqueeze(-2) @ _gather(values, idx)).squeeze(-2)
        ctx.save_for_backward(qn, kn, values, logw, scale, alpha, index, n_host)
        ctx.query_block = query_block
        ctx.mark_non_differentiable(alpha, index)
        return m, alpha, index

    @staticmethod
    def backward(ctx, dm, _dalpha, _dindex):
        qn, kn, values, logw, scale, alpha, index, n_host = ctx.saved_tensors
        dq, dk, dv = (torch.zeros(x.shape, dtype=x.dtype, device=x.device) for x in (qn, kn, values))
        dlogw = None if logw is None else torch.zeros(logw.shape, dtype=logw.dtype, device=logw.device)
        dscale = torch.zeros_like(scale)
        for sl, seen in _query_blocks(n_host, ctx.query_block):
            a, idx, g, q = alpha[:, sl], index[:, sl], dm[:, sl], qn[:, sl]  # [B, q, k] x2, [B, q, A] x2
            if seen == 0:
                continue
            if seen <= DENSE_BELOW:
                # the same four steps as below, on [q, seen] matrices (scatter, then matmuls)
                A_ = _scatter(a, idx, seen)                          # [B, q, seen]
                dv[:, :seen] += A_.transpose(1, 2) @ g
                da = (g @ values[:, :seen].transpose(1, 2)).gather(-1, idx.clamp_min(0))  # [B, q, k]
                dr = a * (da - (a * da).sum(-1, keepdim=True))       # [B, q, k]
                R_ = _scatter(dr, idx, seen)                         # [B, q, seen]
                K_ = kn[:, :seen]                                    # [B, seen, A]
                dscale += (R_ * (q @ K_.transpose(1, 2))).sum()
                dq[:, sl] = scale * (R_ @ K_)
                dk[:, :seen] += scale * (R_.transpose(1, 2) @ q)
                if dlogw is not None:
                    dlogw[:, :seen] += R_.sum(1)
                continue
            flat = _flat_index(idx, kn.shape[1])                     # [B * q * k]
            # m = sum alpha v:  d alpha_j = dm . v_j,  d v_j += alpha_j dm
            da = (_gather(values, idx) @ g.unsqueeze(-1)).squeeze(-1)  # [B, q, k]
            dv.view(-1, dv.shape[-1]).index_add_(0, flat, (a.unsqueeze(-1) * g.unsqueeze(-2)).flatten(0, 2))
            # alpha = softmax(rho): d rho = alpha (d alpha - sum alpha d alpha)
            dr = a * (da - (a * da).sum(-1, keepdim=True))           # [B, q, k], 0 where no entry
            # rho = beta qn . kn_j (+ log omega_j)
            kj = _gather(kn, idx)                                    # [B, q, k, A]
            dscale += (dr * (kj @ q.unsqueeze(-1)).squeeze(-1)).sum()
            dq[:, sl] = scale * (dr.unsqueeze(-2) @ kj).squeeze(-2)  # [B, q, A]
            dk.view(-1, dk.shape[-1]).index_add_(0, flat, (scale * dr.unsqueeze(-1) * q.unsqueeze(-2)).flatten(0, 2))
            if dlogw is not None:
                dlogw.view(-1).index_add_(0, flat, dr.flatten())
        return dq, dk, dv, dlogw, dscale, None, None, None, None


def _query_blocks(n_host, query_block: int):
    """(slice of query positions, entries any of them sees) for each block of queries."""
    T = len(n_host)
    for t0 in range(0, T, query_block):
        t1 = min(t0 + query_block, T)
        yield slice(t0, t1), int(n_host[t0:t1].max())


def _scatter(w, index, seen: int):
    """w [B, q, k] at entries index [B, q, k] (-1: weight 0) -> [B, q, seen], zeros elsewhere."""
    return w.new_zeros(*w.shape[:-1], seen).scatter_add_(-1, index.clamp_min(0), w)


def _flat_index(index, N: int):
    """index [B, q, k] (entries, -1 = none) -> rows of the [B * N, ...] flattened memory."""
    B = index.shape[0]
    base = torch.arange(B, device=index.device).view(B, 1, 1) * N
    return (index.clamp_min(0) + base).flatten()                    # -1 -> entry 0 (its weight is 0)


def _gather(x, index):
    """x [B, N, A], index [B, q, k] -> x at those entries [B, q, k, A] (-1 reads entry 0)."""
    B, N, A = x.shape
    return x.reshape(B * N, A).index_select(0, _flat_index(index, N)).view(*index.shape, A)


def top_k_read(qn, kn, values, n_visible, k: int, scale, logw=None, key_block: int = KEY_BLOCK,
               query_block: int = QUERY_BLOCK):
    """The blockwise read: (m [B, T, A], alpha [B, T, k], index [B, T, k]); see :class:`TopKRead`.

    Nine parameters: the read's own (as kv_read's) plus the two block sizes, which tests shrink
    so that short sequences cross many block edges."""
    scale = torch.as_tensor(scale, dtype=qn.dtype, device=qn.device)
    return TopKRead.apply(qn, kn, values, logw, scale, n_visible, k, key_block, query_block)
