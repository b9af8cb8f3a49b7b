"""Step 2: the pair memory, a gated sum of outer products (state before t) x (write of t).

Glossary (paper symbol -> code name -> shape)
    s_{t-1}     s_prev     [B, T, H, S]      running state before token t (``running_state.previous_states``)
    b_t         b          [B, T, H, S]      what token t writes into the pair memory
    gamma_t     gam        [B, T, H]         keep gate of the pair memory, in (0, 1)
    P_t         P          [B, T, H, S, S]   pair memory after token t: P[:, t, h, i, j] = P_t[i, j]
    P_{-1}      P0         [B, H, S, S]      memory before the first token (None means zeros)
    w_{t,tau}   w          [B, n, T, H]      unrolled weight of write tau in P_t (rows: chosen t)

The recurrence, per head (row i: the state s_{t-1}; column j: the write b_t):

    P_t = gamma_t P_{t-1} + (1 - gamma_t) outer(s_{t-1}, b_t)        outer(x, y)[i, j] = x[i] y[j]
    P_t = Gamma_t P_{-1} + sum_{tau <= t} w_{t,tau} outer(s_{tau-1}, b_tau)          (unrolled)
    w_{t,tau} = (1 - gamma_tau) prod_{u=tau+1..t} gamma_u,        Gamma_t = prod_{u=0..t} gamma_u

P is a running state over the S x S products, so the fast form reuses ``running_state.decayed_cumsum``.
This file *materializes* P, for teaching and heatmaps at small T; the model never does
(``readout.py`` reads P_t^T q^l_t from the unrolled sum; :func:`pair_memory_at` gives a few P_t).
"""

from __future__ import annotations

import torch

from .checks import check_axes, check_form, check_positions, check_sequence
from .running_state import DEFAULT_CHUNK, decayed_cumsum, log_gate


def pair_memory_step(P_prev: torch.Tensor | None, s_prev_t: torch.Tensor, b_t: torch.Tensor,
                     gam_t: torch.Tensor) -> torch.Tensor:
    """One token: P_prev [B, H, S, S] (None = zeros), s_prev_t, b_t [B, H, S], gam_t [B, H] -> P_t."""
    # outer(s_{t-1}, b_t)[i, j] = s_{t-1}[i] b_t[j]
    outer = s_prev_t.unsqueeze(-1) * b_t.unsqueeze(-2)              # [B, H, S, S]
    gam_t = gam_t[..., None, None]                                  # [B, H, 1, 1]
    # P_t = gamma_t P_{t-1} + (1 - gamma_t) outer(s_{t-1}, b_t)      (P_{-1} = 0)
    return (1 - gam_t) * outer + (0 if P_prev is None else gam_t * P_prev)  # [B, H, S, S]


def pair_memory(s_prev: torch.Tensor, b: torch.Tensor, gam: torch.Tensor, P0: torch.Tensor | None = None,
                mode: str = "fast", chunk_size: int = DEFAULT_CHUNK) -> torch.Tensor:
    """The materialized memory P [B, T, H, S, S] (P[:, t] = P_t), for small T.

    s_prev, b [B, T, H, S]; gam [B, T, H]; P0 [B, H, S, S] or None. mode: "loop" or "fast".
    """
    check_form(mode, chunk_size)                                    # input checks (checks.py)
    check_axes(("s_prev", s_prev, "B T H S"), ("b", b, "B T H S"), ("gam", gam, "B T H"), ("P0", P0, "B H S S"))
    B, T, H, S = s_prev.shape
    if mode == "loop":
        P_t, out = P0, []
        for t in range(T):
            P_t = pair_memory_step(P_t, s_prev[:, t], b[:, t], gam[:, t])
            out.append(P_t)
        return torch.stack(out, dim=1)                              # [B, T, H, S, S]
    # x_t = (1 - gamma_t) outer(s_{t-1}, b_t), flattened to S*S numbers per head
    x = (1 - gam)[..., None, None] * s_prev.unsqueeze(-1) * b.unsqueeze(-2)  # [B, T, H, S, S]
    x = x.reshape(B, T, H, S * S).transpose(1, 2)                   # [B, H, T, S*S]
    h0 = None if P0 is None else P0.reshape(B, H, S * S)
    # P_t = gamma_t P_{t-1} + x_t: a running state over the flattened outer products
    P = decayed_cumsum(log_gate(gam).transpose(1, 2), x, h0, chunk_size)  # [B, H, T, S*S]
    return P.transpose(1, 2).reshape(B, T, H, S, S)


def unrolled_weights(gam: torch.Tensor, positions=None) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights of the unrolled sum, for the rows t in ``positions`` (default: all t).

    gam [B, T, H] -> (w [B, n, T, H], Gamma [B, n, H]) with
    w[:, k, tau] = w_{t,tau} = (1 - gamma_tau) prod_{u=tau+1..t} gamma_u for tau <= t (0 after t)
    and Gamma[:, k] = prod_{u=0..t} gamma_u (the weight of P0), where t = positions[k].
    Each product is summed in log space backwards from t, so long sequences stay accurate.
    """
    check_sequence("gam", gam, 3)                                   # input checks (checks.py)
    T = gam.shape[1]
    rows = list(range(T)) if positions is None else check_positions(positions, T)
    t = torch.tensor(rows, device=gam.device)                      # [n]
    tau = torch.arange(T, device=gam.device)                        # [T]
    upto = (tau.unsqueeze(0) <= t.unsqueeze(1))                     # [n, T]: u <= t
    # row k holds log gamma_u for u <= t_k, zeros after: [B, n, T, H]
    lg = log_gate(gam).unsqueeze(1) * upto[None, :, :, None]
    # sum_{u=tau..t} log gamma_u, a cumulative sum from the right
    incl = lg.flip(2).cumsum(2).flip(2)                             # [B, n, T, H]
    # sum_{u=tau+1..t} log gamma_u: shift left by one, nothing after the last token
    excl = torch.cat([incl[:, :, 1:], torch.zeros_like(incl[:, :, :1])], dim=2)
    # w_{t,tau} = (1 - gamma_tau) exp(sum_{u=tau+1..t} log gamma_u), zero for tau > t
    w = (1 - gam).unsqueeze(1) * torch.exp(excl) * upto[None, :, :, None]  # [B, n, T, H]
    # Gamma_t = exp(sum_{u=0..t} log gamma_u)
    Gamma = torch.exp(incl[:, :, 0])                                # [B, n, H]
    return w, Gamma


def pair_memory_at(s_prev: torch.Tensor, b: torch.Tensor, gam: torch.Tensor, positions,
                   P0: torch.Tensor | None = None) -> torch.Tensor:
    """P_t only at the given positions: [B, n, H, S, S], entry k = P_{positions[k]}.

    Cost O(n T S^2) instead of O(T S^2) memory for every t: cheap snapshots for long sequences.
    """
    check_axes(("s_prev", s_prev, "B T H S"), ("b", b, "B T H S"), ("gam", gam, "B T H"), ("P0", P0, "B H S S"))
    w, Gamma = unrolled_weights(gam, positions)                     # [B, n, T, H], [B, n, H]
    # P_t = sum_tau w_{t,tau} outer(s_{tau-1}, b_tau)  (+ Gamma_t P0)
    P = torch.einsum("bnth,bthi,bthj->bnhij", w, s_prev, b)         # [B, n, H, S, S]
    if P0 is not None:
        P = P + Gamma[..., None, None] * P0.unsqueeze(1)
    return P
