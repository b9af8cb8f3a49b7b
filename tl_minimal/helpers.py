"""Input checks and speed tricks that the concept files call, kept here so that those files read
as the math. Nothing in this file is part of the model's definition: delete every check and the
numbers stay the same; replace :func:`decay_exp` by ``torch.exp`` and they change below ~1e-37.

What is here
    MODES, check_mode, check_chunk_size     the names of the forms ("loop" = the specification,
                                            "fast" = what models use) and the chunk size
    check_causal_decay_length               causal_decay's limit on the chunk length
    check_sequence                          one tensor's type, rank, dtype, device and shape
    check_*_inputs                          every argument of one op, with shapes named
    check_positions                         time indices asked for (pair-memory snapshots)
    check_positive_ints                     sizes given to a layer's constructor
    check_layer_input, check_state          a mixer's input [B, T, d] and its carried state
    check_conv_input, check_conv_kernel     the convolution's input and kernel
    check_kv_settings                       the key-value memory's settings
    heads_first                             [B, T, H, ...] -> [B, H, T, ...] (a view, no copy)
    causal_segments                         the constant 0/1 matrices of causal_decay, built once
    decay_exp                               exp(x) for x <= 0, never on the CPU's slow path
    tanh_heads                              tanh of a projection, handed out heads-first; its
                                            backward writes dz directly (no stack, no copy)
    times_to_tokens                         o * q_r, written straight into token-major layout
    softmax                                 softmax over a short last axis (the slot weights)
"""

from __future__ import annotations

import math

import torch

# "loop": the for-loop over time, the specification; "fast": what models use (chunked for the
# recurrences, one conv1d for the convolution, all positions at once for the key-value read)
MODES = ("loop", "fast")
MAX_CHUNK = 256  # running_state.causal_decay builds a 0/1 segment matrix with C^3 entries


def check_mode(mode: str) -> str:
    """Return ``mode`` if it is a known op form, else raise ValueError listing the allowed ones."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    return mode


def check_chunk_size(chunk_size: int) -> int:
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or not 2 <= chunk_size <= MAX_CHUNK:
        raise ValueError(f"chunk_size must be an int in [2, {MAX_CHUNK}], got {chunk_size!r}")
    return chunk_size


def check_causal_decay_length(C: int) -> int:
    if C > MAX_CHUNK:
        raise ValueError(f"causal_decay takes chunks of at most {MAX_CHUNK} steps (it builds a C x C^2 "
                         f"matrix), got {C}; split the sequence into chunks")
    return C


def check_sequence(name: str, x, ndim: int, like: torch.Tensor | None = None, shape=None) -> torch.Tensor:
    """Check a tensor's type, rank, dtype (floating, same as ``like``), device and shape."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(x.shape)}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating-point tensor (float32 or float64), got {x.dtype}")
    if like is not None and x.dtype != like.dtype:
        raise TypeError(f"{name} has dtype {x.dtype} but the other inputs have {like.dtype}; convert them to one dtype")
    if like is not None and x.device != like.device:
        raise ValueError(f"{name} is on {x.device} but the other inputs are on {like.device}")
    if shape is not None and tuple(x.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(x.shape)}")
    if x.shape[1] == 0 and ndim >= 3:
        raise ValueError(f"{name} has an empty time axis: need T >= 1")
    return x


def check_running_state_inputs(a, lam, s0=None):
    check_sequence("a", a, 4)
    B, T, H, S = a.shape
    check_sequence("lam", lam, 3, like=a, shape=(B, T, H))
    if s0 is not None:
        check_sequence("s0", s0, 3, like=a, shape=(B, H, S))


def check_pair_inputs(s_prev, b, gam, P0=None):
    check_sequence("s_prev", s_prev, 4)
    B, T, H, S = s_prev.shape
    check_sequence("b", b, 4, like=s_prev, shape=(B, T, H, S))
    check_sequence("gam", gam, 3, like=s_prev, shape=(B, T, H))
    if P0 is not None:
        check_sequence("P0", P0, 4, like=s_prev, shape=(B, H, S, S))


def check_readout_inputs(s_prev, b, gam, q_left, q_right, P0=None):
    check_pair_inputs(s_prev, b, gam, P0)
    check_sequence("q_left", q_left, 4, like=s_prev, shape=s_prev.shape)
    check_sequence("q_right", q_right, 4, like=s_prev, shape=s_prev.shape)


def check_slot_inputs(s_prev, b, g, gam, L0=None, R0=None) -> int:
    """Check the slot memory's inputs; returns K, the number of slots."""
    check_sequence("s_prev", s_prev, 4)
    B, T, H, S = s_prev.shape
    check_sequence("b", b, 4, like=s_prev, shape=(B, T, H, S))
    check_sequence("g", g, 4, like=s_prev)
    if tuple(g.shape[:3]) != (B, T, H):
        raise ValueError(f"g (slot weights) must have shape [B, T, H, K] = [{B}, {T}, {H}, K], got {tuple(g.shape)}")
    K = g.shape[-1]
    check_sequence("gam", gam, 3, like=s_prev, shape=(B, T, H))
    for name, M in (("L0", L0), ("R0", R0)):
        if M is not None:
            check_sequence(name, M, 4, like=s_prev, shape=(B, H, K, S))
    return K


def check_slot_readout_inputs(s_prev, b, g, gam, q_left, q_right, L0=None, R0=None) -> int:
    """Check the slot readout's inputs; returns K, the number of slots."""
    K = check_slot_inputs(s_prev, b, g, gam, L0, R0)
    check_sequence("q_left", q_left, 4, like=s_prev, shape=s_prev.shape)
    check_sequence("q_right", q_right, 4, like=s_prev, shape=s_prev.shape)
    return K


def check_positions(positions, T: int) -> list[int]:
    """``positions`` (an int or ints in [0, T)) as a non-empty list; ValueError otherwise."""
    positions = [positions] if isinstance(positions, int) else list(positions)
    if not positions:
        raise ValueError("positions is empty: give at least one time index")
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < T:
            raise ValueError(f"positions must be ints in [0, {T}) (T = {T}), got {p!r}")
    return positions


def check_positive_ints(**sizes) -> None:
    """Every keyword's value is a positive int (not a bool); ValueError naming the first that is not."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_layer_input(n, d_model: int) -> torch.Tensor:
    """A mixer's input: a tensor [B, T, d_model] with T >= 1."""
    if not isinstance(n, torch.Tensor) or n.dim() != 3 or n.shape[-1] != d_model:
        got = tuple(n.shape) if isinstance(n, torch.Tensor) else type(n).__name__
        raise ValueError(f"input must be [B, T, d_model={d_model}], got {got}")
    if n.shape[1] == 0:
        raise ValueError("input has an empty time axis: need T >= 1")
    return n


def check_state(state, shapes: dict, like: torch.Tensor, keys_text: str) -> tuple:
    """A mixer's carried state: None (nothing carried: returns one None per key) or a dict with
    exactly the keys of ``shapes``, each a tensor of that shape with ``like``'s dtype and device;
    returns its tensors in the order of ``shapes``. ``keys_text`` describes the keys in the error."""
    if state is None:
        return (None,) * len(shapes)
    if not isinstance(state, dict) or set(state) != set(shapes):
        raise ValueError(f"state must be None or a dict with keys {keys_text}")
    for key, shape in shapes.items():
        check_sequence(f"state['{key}']", state[key], len(shape), like=like, shape=shape)
    return tuple(state[key] for key in shapes)


def check_conv_kernel(kernel: int, causal: bool) -> int:
    if kernel < 1:
        raise ValueError(f"conv kernel must be >= 1, got {kernel}")
    if not causal and kernel % 2 == 0:
        raise ValueError(f"the symmetric (causal=False) convolution needs an odd kernel, got {kernel}")
    return kernel


def check_conv_input(x: torch.Tensor, weight: torch.Tensor) -> None:
    """x [B, T, d] with the d the kernel weight [d, d, k] expects."""
    if x.dim() != 3:
        raise ValueError(f"x must be [B, T, d], got shape {tuple(x.shape)}")
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"x has d={x.shape[-1]} but the kernel expects d={weight.shape[1]}")


def check_conv_step_input(x_t: torch.Tensor) -> None:
    if x_t.dim() != 2:
        raise ValueError(f"x_t must be [B, d], got shape {tuple(x_t.shape)}")


def check_kv_settings(query_align: str, top_k, temperature: float, query_aligns: tuple) -> None:
    """The key-value memory's settings: a known query alignment, top_k a positive int, 'all' or
    None, and a scale (config ``temperature``) > 0."""
    if query_align not in query_aligns:
        raise ValueError(f"query_align must be one of {query_aligns}, got {query_align!r}")
    if not (top_k is None or top_k == "all" or (isinstance(top_k, int) and top_k >= 1)):
        raise ValueError(f"top_k must be a positive int, 'all' or None, got {top_k!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")


def heads_first(x: torch.Tensor) -> torch.Tensor:
    """[B, T, H, ...] -> [B, H, T, ...], a view: the chunked forms work heads-first."""
    return x.transpose(1, 2)


# --- decays: exp of sums of log-gates -------------------------------------------------------

_SEGMENTS: dict = {}


def causal_segments(C: int, dtype: torch.dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(Z [C, C*C], lower [C, C]) for running_state.causal_decay, built once per (C, dtype, device).

    Z[u, (t, tau)] = 1 when tau < u <= t (log_decay_u lies in the segment that decays tau's
    contribution by time t); lower[t, tau] = 1 when tau <= t. Building them took a dozen small
    kernels per call (~0.15 ms per chunked op on the CPU); now a dictionary lookup.
    """
    key = (C, dtype, torch.device(device))
    if key not in _SEGMENTS:
        u = torch.arange(C, device=device)
        t, tau, uu = u.view(1, C, 1), u.view(1, 1, C), u.view(C, 1, 1)
        Z = ((tau < uu) & (uu <= t)).to(dtype).view(C, C * C)          # [C(u), C(t) * C(tau)]
        _SEGMENTS[key] = (Z, (tau <= t).to(dtype).view(C, C))           # [C(t), C(tau)]
    return _SEGMENTS[key]


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
