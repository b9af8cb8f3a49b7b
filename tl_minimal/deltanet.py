"""A relative: DeltaNet, the delta rule, and its chunked form through the WY / UT representation.

Glossary (symbol -> code name -> shape)
    q_t, k_t, v_t  q, k, v      [B, T, H, Dk|Dv]  query, key (both L2-normalised), value of token t
    beta_t         beta         [B, T, H]         writing strength, sigmoid(w_b . n_t + c_b), in (0, 1)
    M_t            M            [B, H, Dk, Dv]    memory after token t (key index i, value index j);
                                                  the papers' S_t (Dv x Dk) is M_t^T
    C              chunk_size   int               tokens per chunk (DEFAULT_CHUNK, 16)
    K, V, Q        k, v, q      [C, D] per chunk  the chunk's keys, values, queries as rows
    A              A            [C, C]            I + tril(diag(beta) K K^T, -1), unit lower-triangular
    W, U           W, U         [C, Dk], [C, Dv]  A^{-1} diag(beta) K and A^{-1} diag(beta) V

The delta rule (Widrow-Hoff; Schlag et al. 2021, Yang et al. 2024): read what the memory holds
for k_t, move it a fraction beta_t towards v_t (with |k_t| = 1 and beta_t = 1: replace it),

    M_t = M_{t-1} + beta_t k_t (v_t - M_{t-1}^T k_t)^T,        o_t = M_t^T q_t.

The chunked form (notebook 06b derives it), one chunk entering with M_0:
  1. u_t = beta_t (v_t - M_{t-1}^T k_t), so M_t = M_0 + sum_{i<=t} k_i u_i^T;
  2. u_t = beta_t (v_t - M_0^T k_t - sum_{i<t} (k_i . k_t) u_i);
  3. all C at once: A U_c = diag(beta) (V - K M_0),  A = I + tril(diag(beta) K K^T, -1);
  4. A is unit lower-triangular: U_c = U - W M_0 with W = A^{-1} diag(beta) K, U = A^{-1} diag(beta) V,
     which do not depend on M_0 (every chunk in parallel);
  5. O = Q M_0 + tril(Q K^T) U_c   (the diagonal included);
  6. M_end = M_0 + K^T U_c, one product per chunk, in order.

Forms (tests/model/test_deltanet.py holds them equal): ``mode="loop"`` (the rule, token by token),
``mode="fast"`` (steps 1-6), :func:`delta_step` (one token). The layer is gla.py's with this memory.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .checks import check_axes, check_form
from .gla import GLAMixer
from .running_state import DEFAULT_CHUNK


def delta_step(M, q_t, k_t, v_t, beta_t):
    """One token: M [B, H, Dk, Dv] (None = zeros), q_t, k_t [B, H, Dk], v_t [B, H, Dv], beta_t [B, H]
    -> (o_t [B, H, Dv], M_t)."""
    if M is None:
        M = k_t.new_zeros(*k_t.shape, v_t.shape[-1])                # [B, H, Dk, Dv]
    # u_t = beta_t (v_t - M_{t-1}^T k_t)
    u = beta_t.unsqueeze(-1) * (v_t - (k_t.unsqueeze(-1) * M).sum(dim=-2))  # [B, H, Dv]
    # M_t = M_{t-1} + k_t u_t^T
    M = M + k_t.unsqueeze(-1) * u.unsqueeze(-2)                     # [B, H, Dk, Dv]
    # o_t = M_t^T q_t
    return (q_t.unsqueeze(-1) * M).sum(dim=-2), M


def _delta_loop(q, k, v, beta, M0):
    M, os = M0, []
    for t in range(q.shape[1]):
        o_t, M = delta_step(M, q[:, t], k[:, t], v[:, t], beta[:, t])
        os.append(o_t)
    return torch.stack(os, dim=1), M                                # [B, T, H, Dv]


def _delta_chunked(q, k, v, beta, M0, C):
    B, T, H, Dk = k.shape
    C = min(C, T)
    N = -(-T // C)                                                  # number of chunks
    pad = N * C - T  # padded tokens: beta = 0 and k = 0, so they write nothing (u = 0)
    # heads first, padded, cut into chunks: [B, H, N, C, D]
    q, k, v = (F.pad(x.transpose(1, 2), (0, 0, 0, pad)).unflatten(2, (N, C)) for x in (q, k, v))
    beta = F.pad(beta.transpose(1, 2), (0, pad)).unflatten(2, (N, C)).unsqueeze(-1)  # [B, H, N, C, 1]
    # step 3: A = I + tril(diag(beta) K K^T, -1)
    eye = torch.eye(C, dtype=k.dtype, device=k.device)
    A = torch.tril((beta * k) @ k.transpose(-1, -2), diagonal=-1) + eye  # [B, H, N, C, C]
    # step 4: W = A^{-1} diag(beta) K, U = A^{-1} diag(beta) V (triangular solves, all chunks at once)
    W = torch.linalg.solve_triangular(A, beta * k, upper=False, unitriangular=True)  # [B, H, N, C, Dk]
    U = torch.linalg.solve_triangular(A, beta * v, upper=False, unitriangular=True)  # [B, H, N, C, Dv]
    # step 5's causal scores tril(Q K^T), diagonal included
    scores = torch.tril(q @ k.transpose(-1, -2))                    # [B, H, N, C, C]
    M = q.new_zeros(B, H, Dk, v.shape[-1]) if M0 is None else M0    # [B, H, Dk, Dv]
    outs = []
    for c in range(N):  # step 6: the chunk-level recurrence, in order
        # U_c = U - W M_0: what each token of the chunk writes, given the memory entering it
        U_c = U[:, :, c] - W[:, :, c] @ M                           # [B, H, C, Dv]
        # O = Q M_0 + tril(Q K^T) U_c
        outs.append(q[:, :, c] @ M + scores[:, :, c] @ U_c)         # [B, H, C, Dv]
        # M_end = M_0 + K^T U_c
        M = M + k[:, :, c].transpose(-1, -2) @ U_c                  # [B, H, Dk, Dv]
    o = torch.stack(outs, dim=2).flatten(2, 3)[:, :, :T]            # [B, H, T, Dv]
    return o.transpose(1, 2), M                                     # [B, T, H, Dv]


def delta_rule(q, k, v, beta, M0=None, mode: str = "fast", chunk_size: int = DEFAULT_CHUNK):
    """(o [B, T, H, Dv], M_last [B, H, Dk, Dv]) of the delta rule; q, k [B, T, H, Dk] (k normalised
    by the caller), v [B, T, H, Dv], beta [B, T, H] in (0, 1), M0 [B, H, Dk, Dv] or None."""
    # input checks (checks.py): clear errors for a wrong mode, chunk size, shape, dtype or device
    check_form(mode, chunk_size)
    check_axes(("q", q, "B T H Dk"), ("k", k, "B T H Dk"), ("v", v, "B T H Dv"), ("beta", beta, "B T H"),
               ("the initial state", M0, "B H Dk Dv"))
    if mode == "loop":
        return _delta_loop(q, k, v, beta, M0)
    return _delta_chunked(q, k, v, beta, M0, chunk_size)


class DeltaNetMixer(GLAMixer):
    """The DeltaNet time mixer: the GLA layer (gla.py) with the delta-rule memory.

    q, k = L2-normalise(SiLU(conv(W n))), v = SiLU(conv(W n)), beta_t = sigmoid(w_b . n_t + c_b).
    state = {"conv": [B, k-1, 3*H*D], "M": [B, H, D, D]}; record = {"beta": [B, T, H]}.
    Deliberate choice: the output gate SiLU(W_g n_t) is kept (flash-linear-attention's DeltaNet has it
    as the option use_gate, off by default), so DeltaNet and GLA differ only in their memory.
    """

    def memory(self, q, k, v, n, M0):
        # beta_t = sigmoid(w_b . n_t + c_b), from the layer's per-head logit
        beta = torch.sigmoid(self.to_head_gate(n))                  # [B, T, H]
        self.save_record(beta=beta)
        # |q_t| = |k_t| = 1 (then q scaled by D^-1/2, as in flash-linear-attention's DeltaNet)
        q = F.normalize(q, dim=-1) * self.head_dim ** -0.5          # [B, T, H, D]
        k = F.normalize(k, dim=-1)                                  # [B, T, H, D]
        if q.shape[1] == 1 and self.mode == "fast":
            o, M = delta_step(M0, q[:, 0], k[:, 0], v[:, 0], beta[:, 0])
            return o.unsqueeze(1), M                                # [B, 1, H, D]
        return delta_rule(q, k, v, beta, M0, self.mode, self.chunk_size)
