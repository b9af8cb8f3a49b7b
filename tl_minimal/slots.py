"""Step 4: slot-compressed pair memory (the paper's triple_slot variant).

Glossary (paper symbol -> code name -> shape)
    n_t           n                  [B, T, d]        LayerNormed input of the layer
    s_{t-1}       s_prev             [B, T, H, S]     running state before token t (``running_state.py``)
    b_t           b                  [B, T, H, S]     write vector of token t
    q^l_t, q^r_t  q_left, q_right    [B, T, H, S]     left and right queries
    gamma_t       gam                [B, T, H]        keep gate of the slot memories
    g_t           g (slot_weights)   [B, T, H, K]     soft choice of slot, sums to 1 over K
    L_k, R_k      L, R               [B, H, K, S]     left / right memory of slot k (one t at a time)
    f_t           f                  [B, T, H, K]     one feature per slot
    W_o           out                Linear(H*K, d)   o_t = W_o vec(f_t)
    K             num_slots          int              number of slots, 8 in the paper (not top_k)

Each head keeps K slots, each a pair of S-vectors (2 K S numbers instead of S^2):

    g_t    = softmax_K(Linear(d -> H*K)(n_t))
    L_k,t  = gamma_t L_k,t-1 + (1 - gamma_t) g_t[k] s_{t-1}
    R_k,t  = gamma_t R_k,t-1 + (1 - gamma_t) g_t[k] b_t
    f_t[k] = (q^l_t . L_k,t) (q^r_t . R_k,t)

L and R are accumulated *separately*, so sum_k outer(L_k, R_k) is NOT P restricted to rank K: a
cheaper, different memory. Both are running states with gate gamma (:func:`slot_memory`
materializes them); the fast form reads them as two ``readout.decayed_attention`` calls (query
q^l, key s_prev; query q^r, key b; value the slot weights). Forms: ``mode="loop"`` (the
specification), ``mode="fast"`` (default), :func:`slot_readout_step` (one token, O(K S) work).
"""

from __future__ import annotations

import torch
from torch import nn

from .checks import check_axes, check_form, check_mixer_call, check_mode, check_positive_ints
from .kernels import softmax, times_to_tokens
from .readout import TripleLatentMixer, decayed_attention, normal_init
from .running_state import DEFAULT_CHUNK, log_gate, previous_states, running_state, running_state_step


def slot_readout_step(L, R, s_prev_t, b_t, g_t, gam_t, ql_t, qr_t):
    """One token. L, R [B, H, K, S] (None = zeros); s_prev_t, b_t, ql_t, qr_t [B, H, S];
    g_t [B, H, K]; gam_t [B, H] -> (f_t [B, H, K], L_t, R_t)."""
    keep = gam_t[..., None, None]                                   # [B, H, 1, 1]
    write = (1 - keep) * g_t.unsqueeze(-1)                          # [B, H, K, 1]
    # L_k,t = gamma_t L_k,t-1 + (1 - gamma_t) g_t[k] s_{t-1}
    L = write * s_prev_t.unsqueeze(-2) + (0 if L is None else keep * L)  # [B, H, K, S]
    # R_k,t = gamma_t R_k,t-1 + (1 - gamma_t) g_t[k] b_t
    R = write * b_t.unsqueeze(-2) + (0 if R is None else keep * R)  # [B, H, K, S]
    # f_t[k] = (q^l_t . L_k,t) (q^r_t . R_k,t)
    f_t = (L * ql_t.unsqueeze(-2)).sum(-1) * (R * qr_t.unsqueeze(-2)).sum(-1)  # [B, H, K]
    return f_t, L, R


def slot_readout(s_prev, b, g, gam, q_left, q_right, L0=None, R0=None, mode: str = "fast",
                 return_state: bool = False, chunk_size: int = DEFAULT_CHUNK):
    """Slot features f [B, T, H, K] (or (f, L_last, R_last) with return_state=True).

    s_prev, b, q_left, q_right [B, T, H, S]; g [B, T, H, K]; gam [B, T, H];
    L0, R0 [B, H, K, S] or None. mode: "loop" or "fast".
    """
    check_form(mode, chunk_size)                                    # input checks (checks.py)
    check_axes(("s_prev", s_prev, "B T H S"), ("b", b, "B T H S"), ("g (slot weights)", g, "B T H K"),
               ("gam", gam, "B T H"), ("L0", L0, "B H K S"), ("R0", R0, "B H K S"),
               ("q_left", q_left, "B T H S"), ("q_right", q_right, "B T H S"))
    if mode == "loop":
        L, R, fs = L0, R0, []
        for t in range(s_prev.shape[1]):
            f_t, L, R = slot_readout_step(L, R, s_prev[:, t], b[:, t], g[:, t], gam[:, t],
                                          q_left[:, t], q_right[:, t])
            fs.append(f_t)
        f = torch.stack(fs, dim=1)                                  # [B, T, H, K]
        return (f, L, R) if return_state else f
    log_gam = log_gate(gam).transpose(1, 2)                         # [B, H, T]
    # value v_tau = (1 - gamma_tau) g_tau: the memory M[i, k] = sum w g[k] key[i] is L^T (or R^T)
    v = ((1 - gam).unsqueeze(-1) * g).transpose(1, 2)               # [B, H, T, K]
    def as_M0(M):                                                   # [B, H, K, S] -> [B, H, S, K]
        return None if M is None else M.transpose(-1, -2)
    # q^l_t . L_k,t: query q^l, key s_{tau-1}
    left, ML = decayed_attention(q_left.transpose(1, 2), s_prev.transpose(1, 2), v, log_gam, as_M0(L0), chunk_size)
    # q^r_t . R_k,t: query q^r, key b_tau
    right, MR = decayed_attention(q_right.transpose(1, 2), b.transpose(1, 2), v, log_gam, as_M0(R0), chunk_size)
    # f_t[k] = (q^l_t . L_k,t) (q^r_t . R_k,t), stored token-major (kernels.times_to_tokens)
    f = times_to_tokens(left, right.transpose(1, 2))                # [B, T, H, K]
    return (f, ML.transpose(-1, -2), MR.transpose(-1, -2)) if return_state else f


def slot_memory(s_prev, b, g, gam, L0=None, R0=None, mode: str = "fast"):
    """The materialized slot memories, for plots: (L, R) each [B, T, H, K, S] (entry t = after token t)."""
    check_mode(mode)                                                # input checks (checks.py)
    num_slots = check_axes(("s_prev", s_prev, "B T H S"), ("b", b, "B T H S"), ("g (slot weights)", g, "B T H K"),
                           ("gam", gam, "B T H"), ("L0", L0, "B H K S"), ("R0", R0, "B H K S"))["K"]
    B, T, H, S = s_prev.shape
    def flat(M):                                                    # [B, H, K, S] -> [B, H, K*S]
        return None if M is None else M.reshape(B, H, num_slots * S)
    # L_k,t = gamma_t L_k,t-1 + (1 - gamma_t) (g_t[k] s_{t-1})
    L = running_state((g.unsqueeze(-1) * s_prev.unsqueeze(-2)).reshape(B, T, H, num_slots * S), gam, flat(L0), mode)
    # R_k,t = gamma_t R_k,t-1 + (1 - gamma_t) (g_t[k] b_t)
    R = running_state((g.unsqueeze(-1) * b.unsqueeze(-2)).reshape(B, T, H, num_slots * S), gam, flat(R0), mode)
    return L.reshape(B, T, H, num_slots, S), R.reshape(B, T, H, num_slots, S)


class SlotMixer(TripleLatentMixer):
    """The triple_slot time mixer: the triple-latent layer with K slots in place of P.

    ``forward(n, state=None) -> (o, state)``, n, o [B, T, d];
    state = {"s": [B, H, S], "L": [B, H, K, S], "R": [B, H, K, S]}.
    While recording (recording.py), record = {"lam", "gam": [B, T, H], "s": [B, T, H, S],
    "slot_weights": g [B, T, H, K]}. A call with T = 1 uses the one-token step functions.
    """

    def __init__(self, d_model: int, n_heads: int, state_dim: int, num_slots: int = 8, mode: str = "fast",
                 lam_bias: float = 0.0, gam_bias: float = 0.0, chunk_size: int = DEFAULT_CHUNK):
        super().__init__(d_model, n_heads, state_dim, mode=mode, lam_bias=lam_bias, gam_bias=gam_bias,
                         chunk_size=chunk_size)
        check_positive_ints(num_slots=num_slots)                    # checks.py
        self.num_slots = num_slots
        # g_t = softmax_K(Linear(d -> H*K)(n_t))
        self.to_slots = nn.Linear(d_model, n_heads * num_slots)
        # o_t = W_o vec(f_t), W_o: H*K -> d (replaces the dense layer's H*S -> d)
        self.out = nn.Linear(n_heads * num_slots, d_model, bias=False)
        normal_init(self.to_slots)
        normal_init(self.out)

    recorded = None  # it saves its record in forward (recording.py)

    def forward(self, n: torch.Tensor, state=None):
        K = self.num_slots                                          # the glossary's K
        # the input check: n [B, T, d], the form, the carried s_{-1}, L_{-1}, R_{-1} (None = zeros)
        H, S = self.n_heads, self.state_dim
        s0, L0, R0 = check_mixer_call(n, state, self.d_model, self.mode, self.chunk_size,
                                      {"s": (H, S), "L": (H, K, S), "R": (H, K, S)})
        a, b, ql, qr, lam, gam = self.project(n)                    # [B, T, H, S] x4, [B, T, H] x2
        B, T = a.shape[:2]
        # g_t = softmax over the K slots, per head (kernels.softmax: faster over a short axis)
        g = softmax(self.to_slots(n).view(B, T, H, K))              # [B, T, H, K]
        if T == 1:  # generation: one step, O(1) per token
            s0 = torch.zeros_like(a[:, 0]) if s0 is None else s0         # [B, H, S]
            s = running_state_step(a[:, 0], lam[:, 0], s0).unsqueeze(1)  # [B, 1, H, S]
            f_t, L, R = slot_readout_step(L0, R0, s0, b[:, 0], g[:, 0], gam[:, 0], ql[:, 0], qr[:, 0])
            f = f_t.unsqueeze(1)                                    # [B, 1, H, K]
        else:
            s = running_state(a, lam, s0, mode=self.mode, chunk_size=self.chunk_size)  # [B, T, H, S]
            s_prev = previous_states(s, s0)                         # [B, T, H, S]
            f, L, R = slot_readout(s_prev, b, g, gam, ql, qr, L0, R0, mode=self.mode, return_state=True,
                                   chunk_size=self.chunk_size)
        o = self.out(f.reshape(B, T, self.n_heads * self.num_slots))  # [B, T, d]
        self.save_record(lam=lam, gam=gam, s=s, slot_weights=g)
        return o, {"s": s[:, -1], "L": L, "R": R}
