"""Speed kernels: custom autograd functions that compute the same numbers as a line of plain
PyTorch, only faster on the CPU builds this repository was measured on, and the heads-first
layout the chunked forms compute in. They change no formula: replace each by the plain line in
its docstring and the model is the same (:func:`decay_exp` differs from ``torch.exp`` only below
~1e-37). tests/test_kernels.py holds each autograd function equal to its plain form, gradients too.

What is here
    heads_first         [B, T, H, ...] -> [B, H, T, ...] (a view, no copy)
    decay_exp           exp(x) for x <= 0, never on the CPU's slow path
    tanh_heads          tanh of a projection, handed out heads-first; its backward writes dz
                        directly (no stack, no copy)
    times_to_tokens     o * q_r, written straight into token-major layout
    softmax             softmax over a short last axis (the slot weights)
    causal_segments     running_state.causal_decay's constant 0/1 matrices, cached per size and device
"""

from __future__ import annotations

import math

import torch


def heads_first(x: torch.Tensor) -> torch.Tensor:
    """[B, T, H, ...] -> [B, H, T, ...], a view: the chunked forms work heads-first."""
    return x.transpose(1, 2)


# --- decays: exp of sums of log-gates -------------------------------------------------------

class _DecayExp(torch.autograd.Function):
    """exp(max(x, log(tiny) + 1)) * mask, backward grad * result.

    Only for speed: on the CPU build used here torch.exp takes 10-100x longer (0.4-3.5 ms instead
    of 0.03 ms for 131,072 numbers) when its argument is -inf or so negative that the result
    underflows below the smallest normal float. A decay exp(sum of log-gates) is such an
    argument for gates near 0 (and was, for the -inf that used to mark the future). Clamping
    first changes results below ~1e-37 (float32) / 1e-307 (float64) only; the true gradient
    there is below that too. Masking after the exp gives the future exactly 0, gradient 0.
    """

    @staticmethod
    def forward(ctx, x, mask):
        y = x.clamp_min(math.log(torch.finfo(x.dtype).tiny) + 1).exp_()
        if mask is not None:
            y.mul_(mask)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y, None


def decay_exp(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """exp(x) for x <= 0 (times ``mask``), the same numbers as torch.exp down to ~1e-37, faster."""
    return _DecayExp.apply(x, mask)


# --- layouts: one pass where autograd would make two --------------------------------------

class _TanhHeads(torch.autograd.Function):
    """z [B, T, P*H*S] -> P tensors [B, T, H, S] = tanh(z) piece p, stored heads-first.

    Only for speed. The chunked forms want each of the P projections heads-first ([B, H, T, S]
    in memory) while the Linear writes token-major ([B, T, P, H, S]). As autograd ops that is a
    copy (permute + contiguous) and a tanh forward, and in the backward a stack of the P
    gradients, a tanh_backward and a second copy back. Here the backward writes each
    gradient's tanh_backward straight into the token-major dz (no stack, no copy).
    """

    @staticmethod
    def forward(ctx, z, pieces: int, heads: int):
        B, T, F = z.shape
        S = F // (pieces * heads)
        y = z.new_empty(pieces, B, heads, T, S)                          # heads-first
        # tanh where z lies (a tanh over 16-number rows of a permuted view is 4x slower), then
        # one copy into the heads-first buffer
        y.copy_(torch.tanh(z).view(B, T, pieces, heads, S).permute(2, 0, 3, 1, 4))
        ctx.save_for_backward(y)
        ctx.shape = (B, T, pieces, heads, S)
        return tuple(y.transpose(2, 3).unbind(0))                        # P x [B, T, H, S] views

    @staticmethod
    def backward(ctx, *grads):
        (y,) = ctx.saved_tensors
        dz = y.new_empty(ctx.shape)                                      # [B, T, P, H, S] token-major
        for p, g in enumerate(grads):
            if g is None:
                dz[:, :, p].zero_()
            else:  # d tanh = (1 - tanh^2) g, written into piece p of dz
                torch.ops.aten.tanh_backward.grad_input(g, y[p].transpose(1, 2), grad_input=dz[:, :, p])
        return dz.flatten(2), None, None


def tanh_heads(z: torch.Tensor, pieces: int, heads: int):
    """tanh(z) split into ``pieces`` tensors [B, T, H, S] (views of a heads-first buffer)."""
    return _TanhHeads.apply(z, pieces, heads)


class _TimesToTokens(torch.autograd.Function):
    """o [B, H, T, S] (heads-first) times q [B, T, H, S] -> r [B, T, H, S] stored token-major.

    Only for speed: the output projection reads r token-major; as autograd ops the product
    comes out heads-first (like its inputs) and the reshape before the Linear copies it.
    """

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


def times_to_tokens(o: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """o.transpose(1, 2) * q as a contiguous [B, T, H, S] tensor (o heads-first [B, H, T, S])."""
    return _TimesToTokens.apply(o, q)


class _Softmax(torch.autograd.Function):
    """softmax over the last axis, written out: exp(x - max) / sum; backward y (g - sum(g y)).

    Only for speed: torch.softmax over a short last axis (the K = 8 slot weights of each head
    and token) takes ~1.4 ms forward for [16, 128, 4, 8] on this CPU, this ~0.3 ms (forward +
    backward 2.1 -> 0.75 ms). Same numbers to ~1e-7.
    """

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


def softmax(x: torch.Tensor) -> torch.Tensor:
    """torch.softmax(x, dim=-1), faster when the last axis is short (see _Softmax)."""
    return _Softmax.apply(x)


# --- the constant 0/1 matrices of running_state.causal_decay, built once per (C, dtype, device) ---
_SEGMENTS: dict = {}


def causal_segments(C: int, dtype: torch.dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(Z [C, C*C], lower [C, C]) for running_state.causal_decay, built once per (C, dtype, device).

    Z[u, (t, tau)] = 1 when tau < u <= t (log_decay_u lies in the segment that decays tau's
    contribution by time t); lower[t, tau] = 1 when tau <= t. Only for speed: building them took a
    dozen small kernels per call (~0.15 ms per chunked op on the CPU); the cache is a dictionary lookup.
    """
    key = (C, dtype, torch.device(device))
    if key not in _SEGMENTS:
        u = torch.arange(C, device=device)
        t, tau, uu = u.view(1, C, 1), u.view(1, 1, C), u.view(C, 1, 1)
        Z = ((tau < uu) & (uu <= t)).to(dtype).view(C, C * C)          # [C(u), C(t) * C(tau)]
        _SEGMENTS[key] = (Z, (tau <= t).to(dtype).view(C, C))           # [C(t), C(tau)]
    return _SEGMENTS[key]
