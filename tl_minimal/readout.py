"""Step 3: reading the pair memory, and the assembled triple-latent layer.

Glossary (paper symbol -> code name -> shape)
    n_t           n                  [B, T, d]        LayerNormed input of the layer
    a_t, b_t      a, b               [B, T, H, S]     writes into the running state / pair memory
    q^l_t, q^r_t  q_left, q_right    [B, T, H, S]     left query (reads P's rows), right query
    lambda_t      lam                [B, T, H]        keep gate of the running state
    gamma_t       gam                [B, T, H]        keep gate of the pair memory
    s_{t-1}       s_prev             [B, T, H, S]     running state before token t
    P_t           P                  [B, H, S, S]     pair memory (only ever one t at a time here)
    r_t           r                  [B, T, H, S]     readout: an S-vector per head (not a scalar;
                                                      the scalar q^l_t^T P_t q^r_t is the sum of its entries)
    W_o           out                Linear(H*S, d)   output projection; o_t = W_o vec(r_t)

The readout (the paper's code contracts q^l with the *state* index i of P, i.e. P^T q^l), and
with the unrolled memory of ``pair_memory.py`` put in:

    r_t[j] = (sum_i P_t[i, j] q^l_t[i]) * q^r_t[j]
    r_t = q^r_t * ( sum_{tau <= t} w_{t,tau} (q^l_t . s_{tau-1}) b_tau  +  Gamma_t P_{-1}^T q^l_t )

This is gated linear attention with one scalar decay per head: query q^l_t, key k_tau = s_{tau-1},
value v_tau = (1 - gamma_tau) b_tau. Its chunked form (:func:`decayed_attention`, notebook 03b)
never builds P for every token: within a chunk a masked C x C score matrix, across chunks the
memory entering the chunk (P_{c-1}), itself a running state over chunks; all exponents are <= 0.

Forms: ``mode="loop"`` (builds P_t one step at a time: the specification), ``mode="fast"``
(default, :func:`pair_readout_chunked`), :func:`pair_readout_step` (one token, for generation).
:class:`TripleLatentMixer` checks its inputs once (checks.py) and runs :func:`triple_latent`.
"""

from __future__ import annotations

import torch
from torch import nn

from .checks import check_axes, check_form, check_mixer_call, check_positive_ints
from .pair_memory import pair_memory_at, pair_memory_step
from .recording import Recorder
from .running_state import (
    DEFAULT_CHUNK,
    chunk_decays,
    decayed_cumsum,
    log_gate,
    previous_states,
    running_state_chunked,
    running_state_step,
)

# --- gated linear attention with scalar decay, heads-first layout ---------------------------

def decayed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_decay: torch.Tensor,
                      M0: torch.Tensor | None = None, chunk_size: int = DEFAULT_CHUNK):
    """o_t = sum_{tau<=t} exp(sum_{u=tau+1..t} ld_u) (q_t . k_tau) v_tau + exp(sum_{u<=t} ld_u) M0^T q_t.

    q, k [B, H, T, Dk], v [B, H, T, Dv], log_decay [B, H, T] (<= 0), M0 [B, H, Dk, Dv] or None
    -> (o [B, H, T, Dv], M_last [B, H, Dk, Dv]), where M_t = exp(ld_t) M_{t-1} + outer(k_t, v_t).
    """
    B, H, T, Dk = q.shape
    Dv = v.shape[-1]
    C = min(chunk_size, T)
    N = -(-T // C)                                                  # number of chunks
    pad = N * C - T
    if pad:  # padded tokens: decay 1, zero key and value, so the memory passes through unchanged
        q, k, v = (nn.functional.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        log_decay = nn.functional.pad(log_decay, (0, pad))
    q, k = (x.reshape(B, H, N, C, Dk) for x in (q, k))             # [B, H, N, C, Dk]
    v = v.reshape(B, H, N, C, Dv)
    ld = log_decay.reshape(B, H, N, C)                              # [B, H, N, C]
    # G_t = sum_{u=c..t} log gamma_u from the chunk start, its exp(G_t),
    # decay[t, tau] = exp(sum_{u=tau+1..t} ld_u) for tau <= t, else 0
    G, decay, expG = chunk_decays(ld)                               # [B, H, N, C], [.., C, C], [.., C]
    G_end = G[..., -1:]                                             # [B, H, N, 1]

    # intra-chunk: A[t, tau] = (q_t . k_tau) exp(sum_{u=tau+1..t} ld_u) for tau <= t, then o = A v
    A = (q @ k.transpose(-1, -2)) * decay                           # [B, H, N, C, C]
    o = A @ v                                                       # [B, H, N, C, Dv]

    # what each chunk adds to the memory: U_n = sum_tau exp(sum_{u=tau+1..end} ld_u) outer(k_tau, v_tau);
    # those decays are the last row of the decay matrix
    U = (k * decay[..., -1, :].unsqueeze(-1)).transpose(-1, -2) @ v  # [B, H, N, Dk, Dv]
    # memory after each chunk: M_n = exp(G_end_n) M_{n-1} + U_n  (a running state over chunks)
    M0_flat = None if M0 is None else M0.reshape(B, H, Dk * Dv)
    M_end = decayed_cumsum(G_end.squeeze(-1), U.reshape(B, H, N, Dk * Dv), M0_flat, chunk_size)
    M_end = M_end.reshape(B, H, N, Dk, Dv)                          # [B, H, N, Dk, Dv]
    if N > 1 or M0 is not None:
        first = torch.zeros_like(M_end[:, :, :1]) if M0 is None else M0.unsqueeze(2)
        M_enter = torch.cat([first, M_end[:, :, :-1]], dim=2)       # [B, H, N, Dk, Dv]
        # inter-chunk: exp(G_t) M_enter^T q_t
        o = o + expG.unsqueeze(-1) * (q @ M_enter)                  # [B, H, N, C, Dv]
    return o.reshape(B, H, N * C, Dv)[:, :, :T], M_end[:, :, -1]


# --- the pair readout in the paper's layout -------------------------------------------------

def pair_readout_step(P, s_prev_t, b_t, gam_t, ql_t, qr_t):
    """One token: P [B, H, S, S] (None = zeros), the rest [B, H, S], gam_t [B, H] -> (r_t, P_t)."""
    # P_t = gamma_t P_{t-1} + (1 - gamma_t) outer(s_{t-1}, b_t)
    P = pair_memory_step(P, s_prev_t, b_t, gam_t)                   # [B, H, S, S]
    # r_t[j] = (sum_i P_t[i, j] q^l_t[i]) q^r_t[j]
    r_t = (ql_t.unsqueeze(-1) * P).sum(dim=-2) * qr_t               # [B, H, S]
    return r_t, P


def pair_readout_chunked(s_prev, b, gam, q_left, q_right, P0=None, chunk_size: int = DEFAULT_CHUNK):
    """The fast form of :func:`pair_readout` (inputs not checked): (r [B, T, H, S], P_last [B, H, S, S])."""
    # value v_tau = (1 - gamma_tau) b_tau, key k_tau = s_{tau-1}, query q^l_t, decay gamma
    v = b * (1 - gam).unsqueeze(-1)                                 # [B, T, H, S], b's memory layout
    o, P = decayed_attention(q_left.transpose(1, 2), s_prev.transpose(1, 2), v.transpose(1, 2),
                             log_gate(gam).transpose(1, 2), P0, chunk_size)  # [B, H, T, S] (heads first)
    # r_t = (P_t^T q^l_t) * q^r_t
    return o.transpose(1, 2) * q_right, P                           # [B, T, H, S], [B, H, S, S]


def pair_readout(s_prev, b, gam, q_left, q_right, P0=None, mode: str = "fast",
                 return_state: bool = False, chunk_size: int = DEFAULT_CHUNK):
    """r [B, T, H, S] with r_t[j] = (sum_i P_t[i, j] q_left_t[i]) q_right_t[j].

    s_prev (s_prev[:, t] = s_{t-1}), b, q_left, q_right [B, T, H, S]; gam [B, T, H];
    P0 [B, H, S, S] or None. With ``return_state=True`` returns (r, P_last [B, H, S, S]).
    """
    check_form(mode, chunk_size)                                    # input checks (checks.py)
    check_axes(("s_prev", s_prev, "B T H S"), ("b", b, "B T H S"), ("gam", gam, "B T H"), ("P0", P0, "B H S S"),
               ("q_left", q_left, "B T H S"), ("q_right", q_right, "B T H S"))
    if mode == "fast":
        r, P = pair_readout_chunked(s_prev, b, gam, q_left, q_right, P0, chunk_size)
    else:
        P, rs = P0, []
        for t in range(s_prev.shape[1]):
            r_t, P = pair_readout_step(P, s_prev[:, t], b[:, t], gam[:, t], q_left[:, t], q_right[:, t])
            rs.append(r_t)
        r = torch.stack(rs, dim=1)                                  # [B, T, H, S]
    return (r, P) if return_state else r                            # P: P_last [B, H, S, S]


# --- the layer as a function: gates and projections in, readout and state out ---------------

def triple_latent_step(a_t, b_t, ql_t, qr_t, lam_t, gam_t, s_prev_t, P):
    """One token of the layer: [B, H, S] x5 (s_prev_t = s_{t-1}), [B, H] x2, P [B, H, S, S] (None =
    zeros) -> (r_t, s_t [B, H, S], P_t [B, H, S, S])."""
    # s_t = lam_t s_{t-1} + (1 - lam_t) a_t
    s_t = running_state_step(a_t, lam_t, s_prev_t)                  # [B, H, S]
    # P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t);  r_t = (P_t^T q^l_t) * q^r_t
    r_t, P = pair_readout_step(P, s_prev_t, b_t, gam_t, ql_t, qr_t)  # [B, H, S], [B, H, S, S]
    return r_t, s_t, P


def triple_latent(a, b, q_left, q_right, lam, gam, s0=None, P0=None, mode: str = "fast",
                  chunk_size: int = DEFAULT_CHUNK):
    """The layer's recurrences: returns (r [B, T, H, S], s [B, T, H, S], P_last [B, H, S, S]).

    s_t = lam_t s_{t-1} + (1 - lam_t) a_t;  P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t);
    r_t = (P_t^T q^l_t) * q^r_t. Chunked for ``mode="fast"``; ``mode="loop"`` takes
    :func:`triple_latent_step` once per token (the layer's generation path). Inputs not checked.
    """
    if mode == "fast":
        s = running_state_chunked(a, lam, s0, chunk_size)           # [B, T, H, S]
        s_prev = previous_states(s, s0)                             # [B, T, H, S]
        r, P_last = pair_readout_chunked(s_prev, b, gam, q_left, q_right, P0, chunk_size)
        return r, s, P_last
    s_t, P, rs, states = (torch.zeros_like(a[:, 0]) if s0 is None else s0), P0, [], []  # s_{-1} [B, H, S]
    for t in range(a.shape[1]):
        r_t, s_t, P = triple_latent_step(a[:, t], b[:, t], q_left[:, t], q_right[:, t], lam[:, t], gam[:, t],
                                         s_t, P)
        rs.append(r_t)
        states.append(s_t)
    return torch.stack(rs, dim=1), torch.stack(states, dim=1), P    # [B, T, H, S] x2, [B, H, S, S]


def normal_init(linear: nn.Linear, bias: float = 0.0) -> None:
    """The reference's init of a Linear: weights N(0, 0.02), biases constant (0 unless asked)."""
    nn.init.normal_(linear.weight, mean=0.0, std=0.02)
    if linear.bias is not None:
        nn.init.constant_(linear.bias, bias)


class TripleLatentMixer(Recorder, nn.Module):
    """The triple-latent time mixer: ``forward(n, state=None) -> (o, state)``.

    n [B, T, d] -> o [B, T, d]; state = {"s": [B, H, S], "P": [B, H, S, S]} after the last token.
    ``lam_bias`` / ``gam_bias`` set the gates' initial bias (0 = the reference: gates near 0.5,
    a half-life of one token). ``mode`` ("fast" or "loop") may be changed at any time.
    A call with T = 1 takes one step (the generation path).
    While recording (recording.py), record = {"lam", "gam": [B, T, H], "s": [B, T, H, S],
    "P": {t: [B, H, S, S]} for t in the recording's "snapshot_at" positions} (:meth:`recorded`).
    """

    def __init__(self, d_model: int, n_heads: int, state_dim: int, mode: str = "fast",
                 lam_bias: float = 0.0, gam_bias: float = 0.0, chunk_size: int = DEFAULT_CHUNK):
        super().__init__()
        check_positive_ints(d_model=d_model, n_heads=n_heads, state_dim=state_dim)  # checks.py
        self.d_model, self.n_heads, self.state_dim = d_model, n_heads, state_dim
        self.mode, self.chunk_size = check_form(mode, chunk_size)
        HS = n_heads * state_dim
        # a, b, q^l, q^r = tanh(Linear(d -> H*S, no bias)(n)): one matmul for the four
        self.proj = nn.Linear(d_model, 4 * HS, bias=False)
        # lambda = sigmoid(Linear(d -> H)(n)), gamma = sigmoid(Linear(d -> H)(n)): one Linear(d -> 2H)
        # whose first H outputs are lambda's, the last H gamma's
        self.to_gates = nn.Linear(d_model, 2 * n_heads)
        # o_t = W_o vec(r_t)
        self.out = nn.Linear(HS, d_model, bias=False)
        for layer in (self.proj, self.to_gates, self.out):
            normal_init(layer)
        with torch.no_grad():
            self.to_gates.bias[:n_heads] = lam_bias
            self.to_gates.bias[n_heads:] = gam_bias

    def project(self, n: torch.Tensor):
        """n [B, T, d] -> a, b, q_left, q_right [B, T, H, S] and lam, gam [B, T, H]."""
        B, T, H, S = *n.shape[:2], self.n_heads, self.state_dim
        # a, b, q^l, q^r = tanh(W n), each held heads-first ([B, H, T, S] in memory, as the chunked
        # forms read it) and handed out as [B, T, H, S]
        z = torch.tanh(self.proj(n)).view(B, T, 4, H, S).permute(2, 0, 3, 1, 4).contiguous()  # [4, B, H, T, S]
        a, b, ql, qr = z.transpose(2, 3).unbind(0)                  # 4 x [B, T, H, S]
        # lambda_t, gamma_t = sigmoid(W_lambda n_t + c_lambda), sigmoid(W_gamma n_t + c_gamma)
        lam, gam = torch.sigmoid(self.to_gates(n)).chunk(2, dim=-1)  # [B, T, H] each
        return a, b, ql, qr, lam, gam

    def forward(self, n: torch.Tensor, state=None):
        H, S = self.n_heads, self.state_dim
        # the one input check: n [B, T, d], the form, and the carried s_{-1}, P_{-1} (None = zeros)
        s0, P0 = check_mixer_call(n, state, self.d_model, self.mode, self.chunk_size, {"s": (H, S), "P": (H, S, S)})
        a, b, ql, qr, lam, gam = self.project(n)                     # [B, T, H, S] x4, [B, T, H] x2
        mode = "loop" if n.shape[1] == 1 else self.mode              # one token (generation): one step
        r, s, P_last = triple_latent(a, b, ql, qr, lam, gam, s0, P0, mode, self.chunk_size)
        o = self.out(r.reshape(*n.shape[:2], H * S))                 # o_t = W_o vec(r_t)  [B, T, d]
        return o, {"s": s[:, -1], "P": P_last}

    @torch.no_grad()
    def recorded(self, n: torch.Tensor, state=None) -> dict:
        """The record of a forward call (recording.py calls it after the call, with its inputs): the
        same functions run again, and P_t at the recording's "snapshot_at" positions."""
        a, b, ql, qr, lam, gam = self.project(n)
        s0, P0 = (None, None) if state is None else (state["s"], state["P"])
        mode = "loop" if n.shape[1] == 1 else self.mode              # as forward
        _, s, _ = triple_latent(a, b, ql, qr, lam, gam, s0, P0, mode, self.chunk_size)
        record = {"lam": lam, "gam": gam, "s": s}
        positions = list(self.record_options.get("snapshot_at", ()))
        if positions:  # P_t only at the positions asked for, from the unrolled sum (pair_memory_at)
            P = pair_memory_at(previous_states(s, s0), b, gam, positions, P0)  # [B, n, H, S, S]
            record["P"] = {t: P[:, k] for k, t in enumerate(positions)}      # [B, H, S, S]
        return record
