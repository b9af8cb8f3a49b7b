"""Speed kernels: custom autograd functions that compute the same numbers as a line of plain
PyTorch (named in each docstring), only faster on the CPU builds this repository was measured on
(``top_k_sum``: in less memory); tests/model/test_kernels.py holds each equal to its plain form,
gradients too. The seam a reader can skip: the triple-latent layer calls it once
(``kernels.decays`` in ``running_state.chunk_decays``).
"""

from __future__ import annotations

import math

import torch

# --- decays: exp of sums of log-gates -------------------------------------------------------

def _clamped_exp(x: torch.Tensor) -> torch.Tensor:
    """exp(max(x, log(tiny) + 1))."""
    return x.clamp_min(math.log(torch.finfo(x.dtype).tiny) + 1).exp_()


class _Decays(torch.autograd.Function):
    """decays(seg, lower, G) = (torch.exp(seg) * lower, torch.exp(G)) for seg, G <= 0 (chunk_decays).

    On the CPU build used here torch.exp takes 10-100x longer when the result underflows below the
    smallest normal float (gates near 0); clamping first changes results below ~1e-37 (float32) /
    1e-307 (float64) only. An output no loss reaches passes no gradient back.
    """

    @staticmethod
    def forward(ctx, seg, lower, G):
        ctx.set_materialize_grads(False)
        W, D = _clamped_exp(seg).mul_(lower), _clamped_exp(G)
        ctx.save_for_backward(W, D)
        return W, D

    @staticmethod
    def backward(ctx, dW, dD):
        W, D = ctx.saved_tensors
        return None if dW is None else dW * W, None, None if dD is None else dD * D


decays = _Decays.apply


# --- layouts: one pass where autograd would make two --------------------------------------

class _TimesToTokens(torch.autograd.Function):
    """times_to_tokens(o, q) = o.transpose(1, 2) * q, o [B, H, T, S] heads-first, q [B, T, H, S], stored
    contiguous token-major: as autograd ops it comes out heads-first and the Linear after it copies it."""

    @staticmethod
    def forward(ctx, o, q):
        r = torch.empty(q.shape, dtype=q.dtype, device=q.device)         # [B, T, H, S] contiguous
        torch.mul(o.transpose(1, 2), q, out=r)
        ctx.save_for_backward(o, q)
        return r

    @staticmethod
    def backward(ctx, dr):
        o, q = ctx.saved_tensors
        do = torch.empty(o.shape, dtype=o.dtype, device=o.device)        # heads-first, like o
        torch.mul(dr.transpose(1, 2), q.transpose(1, 2), out=do)
        dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
        torch.mul(dr, o.transpose(1, 2), out=dq)
        return do, dq


times_to_tokens = _TimesToTokens.apply


class _Softmax(torch.autograd.Function):
    """softmax(x) = torch.softmax(x, dim=-1) written out, exp(x - max) / sum; backward y (g - sum(g y)).
    Faster on this CPU over a short last axis (the K = 8 slot weights); the same numbers to ~1e-7."""

    @staticmethod
    def forward(ctx, x):
        y = (x - x.amax(-1, keepdim=True)).exp_()
        y.div_(y.sum(-1, keepdim=True))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        gy = grad * y
        return gy.sub_(y * gy.sum(-1, keepdim=True))


softmax = _Softmax.apply


# --- the blockwise top-k read's sum: a backward that stores O(T k), not [T, k, A] ------------
DENSE_BELOW = 512  # backward: queries that see at most this many entries use matmuls, not gathers


class _TopKSum(torch.autograd.Function):
    """top_k_sum: blockwise_topk.top_k_read(plain=True)'s m_t = sum_{kept j} alpha_{t,j} v_j, alpha =
    softmax over the kept scores. (qn [B, T, A], kn [B, N, A], values [B, N, A], logw [B, N] or None, scale
    (0-d), kept, index [B, T, k] (select_top_k), n_visible, query_block) -> (m [B, T, A], alpha, index).
    Only for memory: it saves O(T k) numbers where autograd would keep the gathered [T, k, A] keys and
    values; the backward recomputes them per query block (gathers, or below DENSE_BELOW seen entries
    alpha scattered to [q, seen] and plain matmuls). Positional inputs only (``apply`` takes no keywords).
    """

    @staticmethod
    def forward(ctx, qn, kn, values, logw, scale, kept, index, n_visible, query_block):
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
            ddk = scale * dr.unsqueeze(-1) * q.unsqueeze(-2)          # [B, q, k, A]
            dk.view(-1, dk.shape[-1]).index_add_(0, flat, ddk.flatten(0, 2))
            if dlogw is not None:
                dlogw.view(-1).index_add_(0, flat, dr.flatten())
        return dq, dk, dv, dlogw, dscale, None, None, None, None


top_k_sum = _TopKSum.apply


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
