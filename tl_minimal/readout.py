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

The readout (the paper's code contracts q^l with the *state* index i of P, i.e. P^T q^l):

    r_t[j] = (sum_i P_t[i, j] q^l_t[i]) * q^r_t[j]

Putting in the unrolled memory of ``pair_memory.py`` (w_{t,tau} = (1 - gamma_tau) prod_{u=tau+1..t} gamma_u):

    r_t = q^r_t * ( sum_{tau <= t} w_{t,tau} (q^l_t . s_{tau-1}) b_tau  +  Gamma_t P_{-1}^T q^l_t )

This is gated linear attention with one scalar decay per head: query q^l_t, key k_tau = s_{tau-1}
(the previous running state), value v_tau = (1 - gamma_tau) b_tau. Hence a chunkwise form that
never builds P for every token (:func:`decayed_attention`). In a chunk of C = DEFAULT_CHUNK (16)
tokens starting at c, with G_t = sum_{u=c..t} log gamma_u:
  - intra-chunk:  sum_{c <= tau <= t} (q^l_t . k_tau) exp(sum_{u=tau+1..t} log gamma_u) v_tau,
    a masked C x C score matrix (decays from ``running_state.causal_decay``) times the values;
  - inter-chunk:  exp(G_t) M_enter^T q^l_t, where M_enter, the memory entering the chunk, is the
    pair memory P_{c-1}; it is a running state over chunks (``running_state.decayed_cumsum``):
    M_n = exp(G_end) M_{n-1} + sum_tau exp(sum_{u=tau+1..end} log gamma_u) outer(k_tau, v_tau).
All exponents are <= 0: gates near 0 or near 1 and long sequences stay finite and accurate.

Forms: ``mode="loop"`` (builds P_t one step at a time: the specification), ``mode="fast"``
(default), :func:`pair_readout_step` (one token, O(S^2) work, for generation).
"""

from __future__ import annotations

import torch
from torch import nn

from .checks import check_form, check_layer_input, check_positive_ints, check_readout_inputs, check_state
from .kernels import DEFAULT_CHUNK, decay_exp, heads_first, tanh_heads, times_to_tokens
from .pair_memory import pair_memory_at, pair_memory_step
from .recording import Recorder
from .running_state import causal_decay, decayed_cumsum, log_gate, previous_states, running_state, running_state_step

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
    # G_t = sum_{u=c..t} log gamma_u from the chunk start
    G = torch.cumsum(ld, dim=-1)                                    # [B, H, N, C]
    G_end = G[..., -1:]                                             # [B, H, N, 1]

    # intra-chunk: A[t, tau] = (q_t . k_tau) exp(sum_{u=tau+1..t} ld_u) for tau <= t, then o = A v
    decay = causal_decay(ld)                                        # [B, H, N, C, C]
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
        o = o + decay_exp(G).unsqueeze(-1) * (q @ M_enter)          # [B, H, N, C, Dv]
    return o.reshape(B, H, N * C, Dv)[:, :, :T], M_end[:, :, -1]


# --- the pair readout in the paper's layout -------------------------------------------------

def pair_readout_step(P, s_prev_t, b_t, gam_t, ql_t, qr_t):
    """One token: P [B, H, S, S] (None = zeros), the rest [B, H, S], gam_t [B, H] -> (r_t, P_t)."""
    # P_t = gamma_t P_{t-1} + (1 - gamma_t) outer(s_{t-1}, b_t)
    P = pair_memory_step(P, s_prev_t, b_t, gam_t)                   # [B, H, S, S]
    # r_t[j] = (sum_i P_t[i, j] q^l_t[i]) q^r_t[j]
    r_t = (ql_t.unsqueeze(-1) * P).sum(dim=-2) * qr_t               # [B, H, S]
    return r_t, P


def pair_readout(s_prev, b, gam, q_left, q_right, P0=None, mode: str = "fast",
                 return_state: bool = False, chunk_size: int = DEFAULT_CHUNK):
    """r [B, T, H, S] with r_t[j] = (sum_i P_t[i, j] q_left_t[i]) q_right_t[j].

    s_prev (s_prev[:, t] = s_{t-1}), b, q_left, q_right [B, T, H, S]; gam [B, T, H];
    P0 [B, H, S, S] or None. With ``return_state=True`` returns (r, P_last [B, H, S, S]).
    """
    check_readout_inputs(s_prev, b, gam, q_left, q_right, P0, mode, chunk_size)  # checks.py
    if mode == "loop":
        P, rs = P0, []
        for t in range(s_prev.shape[1]):
            r_t, P = pair_readout_step(P, s_prev[:, t], b[:, t], gam[:, t], q_left[:, t], q_right[:, t])
            rs.append(r_t)
        r = torch.stack(rs, dim=1)                                  # [B, T, H, S]
    else:
        # value v_tau = (1 - gamma_tau) b_tau, key k_tau = s_{tau-1}, query q^l_t, decay gamma
        v = b * (1 - gam).unsqueeze(-1)                             # [B, T, H, S], b's memory layout
        o, P = decayed_attention(heads_first(q_left), heads_first(s_prev), heads_first(v),
                                 heads_first(log_gate(gam)), P0, chunk_size)  # [B, H, T, S]
        # r_t = (P_t^T q^l_t) * q^r_t (kernels.times_to_tokens: stored token-major for W_o)
        r = times_to_tokens(o, q_right)                             # [B, T, H, S]
    return (r, P) if return_state else r                            # P: P_last [B, H, S, S]


# --- the layer as a function: gates and projections in, readout and state out ---------------

def triple_latent(a, b, q_left, q_right, lam, gam, s0=None, P0=None, mode: str = "fast",
                  chunk_size: int = DEFAULT_CHUNK):
    """The layer's recurrences: returns (r [B, T, H, S], s [B, T, H, S], P_last [B, H, S, S]).

    s_t = lam_t s_{t-1} + (1 - lam_t) a_t;  P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t);
    r_t = (P_t^T q^l_t) * q^r_t.
    """
    s = running_state(a, lam, s0, mode=mode, chunk_size=chunk_size)  # [B, T, H, S]
    s_prev = previous_states(s, s0)                                 # [B, T, H, S]
    r, P_last = pair_readout(s_prev, b, gam, q_left, q_right, P0, mode=mode, return_state=True,
                             chunk_size=chunk_size)
    return r, s, P_last


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
    A call with T = 1 uses the one-token step functions (the generation path).
    While recording (recording.py), record = {"lam", "gam": [B, T, H], "s": [B, T, H, S],
    "P": {t: [B, H, S, S]} for t in the recording's "snapshot_at" positions}.
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
        check_layer_input(n, self.d_model)                          # input check (checks.py)
        # a, b, q^l, q^r = tanh(W n): four [B, T, H, S] views of one heads-first buffer, which the
        # fast forms read without copying (kernels.tanh_heads: tanh into that layout in one pass)
        a, b, ql, qr = tanh_heads(self.proj(n), 4, self.n_heads)    # 4 x [B, T, H, S]
        # lambda_t, gamma_t = sigmoid(W_lambda n_t + c_lambda), sigmoid(W_gamma n_t + c_gamma)
        lam, gam = torch.sigmoid(self.to_gates(n)).chunk(2, dim=-1)  # [B, T, H] each
        return a, b, ql, qr, lam, gam

    def forward(self, n: torch.Tensor, state=None):
        a, b, ql, qr, lam, gam = self.project(n)                     # [B, T, H, S] x4, [B, T, H] x2
        B, T, H, S = a.shape
        # s_{-1}, P_{-1}: the carried state (None = zeros), its keys and shapes checked in checks.py
        s0, P0 = check_state(state, {"s": (B, H, S), "P": (B, H, S, S)}, a)
        if T == 1:  # generation: one step, O(1) per token (the mode is checked where it is used)
            s0 = torch.zeros_like(a[:, 0]) if s0 is None else s0         # [B, H, S]
            s = running_state_step(a[:, 0], lam[:, 0], s0).unsqueeze(1)  # [B, 1, H, S]
            r_t, P_last = pair_readout_step(P0, s0, b[:, 0], gam[:, 0], ql[:, 0], qr[:, 0])
            r = r_t.unsqueeze(1)                                    # [B, 1, H, S]
        else:
            r, s, P_last = triple_latent(a, b, ql, qr, lam, gam, s0, P0, self.mode, self.chunk_size)
        o = self.out(r.reshape(B, T, self.n_heads * self.state_dim))  # [B, T, d]
        if self.record_options is not None:
            self._record(s, s0, b, gam, lam, P0)
        return o, {"s": s[:, -1], "P": P_last}

    @torch.no_grad()
    def _record(self, s, s0, b, gam, lam, P0):
        positions = list(self.record_options.get("snapshot_at", ()))
        # P_t only at the positions asked for, from the unrolled sum (pair_memory_at)
        P = pair_memory_at(previous_states(s, s0), b, gam, positions, P0) if positions else None
        self.save_record(lam=lam, gam=gam, s=s)
        if positions:
            self.record["P"] = {t: P[:, k].detach() for k, t in enumerate(positions)}  # [B, H, S, S]
