"""Step 6: an explicit key-value memory, a read gate, and late logit fusion (the gated hybrid).

The triple-latent state compresses the past; it cannot hand back one exact earlier token.
The gated hybrid therefore keeps, beside the compressed stack, a plain associative memory of
token pairs built from the raw token embeddings e (before positions are added), and adds
what it reads to the logits at the very end ("late fusion").

Glossary (paper symbol -> code name -> shape); D_kv = assoc_dim (64), d = d_model, K = top_k
    e_t          e             [B, T, d]     raw token embedding (no position)
    k_j = W_k e_j     key      [B, N, D_kv]  key of memory entry j (the token at j)
    v_{j+1} = W_v e_{j+1} value [B, N, D_kv] value of entry j (the token AFTER j)
    q_t = W_q e_{t-1} q        [B, T, D_kv]  query ("previous": from the previous token);
                                             tie_qk: W_q = W_k (one W_qk, no W_q parameter)
    N            n entries     int           entries j = 0 .. (tokens seen) - 2
    beta         scale         scalar        the scale multiplying the cosine (an inverse
                                             temperature), exp(log_temperature); config
                                             ``temperature``: 10 and learnable in gated_hybrid,
                                             1 and fixed in gated_hybrid_paper (registry.py)
    rho_{t,j}    scores        [B, T, N]     retrieval score of entry j for the query at t
    omega_j      logw          [B, N]        log write strength (optional write gate)
    alpha_t      weights       [B, T, K]     softmax over the kept scores (0 where no entry)
    j (kept)     index         [B, T, K]     memory position j of each kept entry (-1: none)
    m_t          m             [B, T, D_kv]  retrieved value
    g_t          read_gate     [B, T]        sigmoid(Linear(d -> 1)(e_{t-1})): the read gate
                                             (not slots.py's slot weights g_t[k])
    W_m          out           D_kv -> d     only when D_kv != d (identity otherwise)
    z_t          z             [B, T, d]     LN(W_m g_t m_t): added to h_t before the tied head

Equations (docs/paper.md sections 3.6-3.7; "previous" query alignment):
    memory     pairs (k_j, v_{j+1}) for j <= t-2
    score      rho_{t,j} = beta * cos(q_t, k_j)  (+ log omega_j with a write gate)
    select     keep the top-K scores (K = 8; "all"/None keeps every entry)
    read       alpha_t = softmax(kept scores);   m_t = sum_j alpha_{t,j} v_{j+1}
    gate       g_t = sigmoid(w_g . e_{t-1} + b_g)
    fuse       logits_t = W_vocab h_t + W_vocab z_t,   z_t = LN(W_m g_t m_t)

With "previous" alignment the query at t is the token BEFORE t, so the memory answers "what
came after the previous token, last time it appeared?". That fits the associative-recall
task (... QUERY key ANSWER: at ANSWER, e_{t-1} is the key), not text. The "current" option
queries with e_t over pairs j <= t-1, answering "what came after this token last time?"
(what an induction head does), which is what next-token prediction on text wants.
Positions with no entry yet (t < 2 "previous", t < 1 "current") read m_t = 0.

Note (worth questioning): LN(g_t m_t) removes any positive scale, so the read gate g_t can
barely change the fused vector (only through the LayerNorm epsilon). ``gate_outside_norm``
applies it after the norm instead, g_t LN(W_m m_t); the default follows the paper.

Three forms of the read, tested equal (tests/test_kv_fusion.py):
    kv_read_loop   one position at a time: the specification
    kv_read        all positions at once: masked [B, T, N] scores, topk, scatter, matmul
    kv_read_step   one query against the cached entries: generation

Known limit of a hard top-k: a token that occurs several times writes the same key several
times, so those entries score the same. When such a group straddles the top-k boundary, which
copies are kept is decided by rounding in the last bits, which differs between the whole-sequence
pass and the cached step (their products have different sizes). Both choices are equally good by
the model's own scores, but the values read differ, so a generated token's logits can then differ
from the forward pass's. The tests hold the forms equal on sequences without repeated keys;
``top_k="all"`` has no boundary and no such difference.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .helpers import check_kv_settings, check_mode
from .layers import Recorder

QUERY_ALIGNS = ("previous", "current")


def _keep(top_k, n: int) -> int | None:
    """How many of n entries to keep by topk (sorted by score); None = all, in memory order."""
    return None if top_k is None or top_k == "all" else min(int(top_k), n)


def kv_read_loop(q, keys, values, n_visible, top_k=8, scale=1.0, logw=None):
    """Reference: for each position t, score its n_visible[t] entries, keep top-K, softmax, sum.

    q [B, T, D_kv]; keys, values [B, N, D_kv] (values[:, j] is v_{j+1}); n_visible: T ints;
    scale = beta; logw [B, N] or None. Returns m [B, T, D_kv], weights [B, T, K'], index
    [B, T, K'] with K' = min(top_k, N) (N for "all"); unused places have weight 0 and index -1.
    """
    B, T, _ = q.shape
    N = keys.shape[1]
    width = _keep(top_k, N) or N
    m = q.new_zeros(B, T, values.shape[-1])
    weights = q.new_zeros(B, T, width)
    index = torch.full((B, T, width), -1, dtype=torch.long, device=q.device)
    for t in range(T):
        n = int(n_visible[t])
        if n == 0:
            continue  # no entry yet: m_t = 0
        # rho_{t,j} = beta * cos(q_t, k_j) (+ log omega_j),  j < n
        scores = scale * F.cosine_similarity(q[:, t, None], keys[:, :n], dim=-1, eps=1e-12)  # [B, n]
        if logw is not None:
            scores = scores + logw[:, :n]
        kk = _keep(top_k, n)
        if kk is None:
            kept, idx = scores, torch.arange(n, device=q.device).expand(B, n)  # [B, n]
        else:
            kept, idx = scores.topk(kk, dim=-1)  # [B, kk]
        # alpha_t = softmax(kept);  m_t = sum alpha v
        alpha = kept.softmax(dim=-1)  # [B, kk]
        v = values[:, :n].gather(1, idx[..., None].expand(-1, -1, values.shape[-1]))  # [B, kk, D_kv]
        m[:, t] = (alpha[..., None] * v).sum(1)
        weights[:, t, : alpha.shape[1]] = alpha
        index[:, t, : idx.shape[1]] = idx
    return m, weights, index


def kv_read(q, keys, values, n_visible, top_k=8, scale=1.0, logw=None):
    """Fast form of :func:`kv_read_loop` (same arguments and results), no loop over time."""
    B, T, _ = q.shape
    N = keys.shape[1]
    if N == 0:  # no entries anywhere: m = 0
        return (q.new_zeros(B, T, values.shape[-1]), q.new_zeros(B, T, 0),
                torch.zeros(B, T, 0, dtype=torch.long, device=q.device))
    n_visible = torch.as_tensor(n_visible, device=q.device)
    # rho_{t,j} = beta * cos(q_t, k_j)  (+ log omega_j)
    qn, kn = F.normalize(q, dim=-1, eps=1e-12), F.normalize(keys, dim=-1, eps=1e-12)
    scores = scale * (qn @ kn.transpose(1, 2))  # [B, T, N]
    if logw is not None:
        scores = scores + logw[:, None, :]
    # entry j is visible at t when j < n_visible[t]; hidden ones get the lowest finite score,
    # so topk prefers every visible entry and the softmax gives hidden ones exactly 0
    visible = torch.arange(N, device=q.device)[None, :] < n_visible[:, None]  # [T, N]
    scores = scores.masked_fill(~visible, torch.finfo(scores.dtype).min)  # [B, T, N]
    kk = _keep(top_k, N)
    if kk is None:
        kept, idx = scores, torch.arange(N, device=q.device).expand(B, T, N)  # [B, T, N]
    else:
        kept, idx = scores.topk(kk, dim=-1)  # [B, T, K]
    ok = visible.expand(B, T, N).gather(-1, idx)  # [B, T, K]: was a real entry kept?
    # alpha_t = softmax(kept), zero where nothing is visible (no NaN: all scores are finite)
    alpha = kept.softmax(dim=-1) * ok  # [B, T, K]
    # m_t = sum_j alpha_{t,j} v_{j+1}: scatter alpha back to [B, T, N], one batched matmul
    dense = torch.zeros_like(scores).scatter(-1, idx, alpha)  # [B, T, N]
    m = dense @ values  # [B, T, D_kv]
    return m, alpha, idx.masked_fill(~ok, -1)


def kv_read_step(q_t, keys, values, top_k=8, scale=1.0, logw=None):
    """One query q_t [B, D_kv] against all N cached entries -> (m_t [B, D_kv], weights, index [B, K'])."""
    m, w, idx = kv_read(q_t[:, None], keys, values, [keys.shape[1]], top_k, scale, logw)
    return m[:, 0], w[:, 0], idx[:, 0]


class KVFusion(Recorder, nn.Module):
    """The gated hybrid's associative path: e [B, T, d] -> z [B, T, d], added to h before W_vocab.

    ``forward(e, state=None) -> (z, state)``; the state is the cache
    {"t": tokens seen, "e_last": [B, d], "k": [B, N, D_kv], "v": [B, N, D_kv], "logw": [B, N] or None},
    so calling token by token equals one call on the whole sequence. While recording
    (layers.recording), record["weights"], record["index"] ([B, T, K]) and record["read_gate"] ([B, T]).
    """

    def __init__(self, d_model: int, assoc_dim: int = 64, top_k=8, temperature: float = 1.0,
                 learnable_temperature: bool = False, query_align: str = "previous",
                 write_gate: bool = False, gate_outside_norm: bool = False, tie_qk: bool = False,
                 mode: str = "fast"):
        super().__init__()
        check_kv_settings(query_align, top_k, temperature, QUERY_ALIGNS)  # helpers.py
        self.top_k, self.query_align, self.mode = top_k, query_align, check_mode(mode)
        self.gate_outside_norm = gate_outside_norm
        self.key = nn.Linear(d_model, assoc_dim, bias=False)  # W_k
        self.value = nn.Linear(d_model, assoc_dim, bias=False)  # W_v
        # W_q; with tie_qk the query reuses W_k, so an exact repeat of a key token scores cos = 1
        self.query = None if tie_qk else nn.Linear(d_model, assoc_dim, bias=False)
        self.read_gate = nn.Linear(d_model, 1)  # w_g, b_g
        self.write_gate = nn.Linear(d_model, 1) if write_gate else None  # omega_j = sigmoid(.)
        self.out = nn.Linear(assoc_dim, d_model, bias=False) if assoc_dim != d_model else nn.Identity()
        self.norm = nn.LayerNorm(d_model)
        # beta = exp(log_temperature): a parameter when learnable, a constant buffer otherwise
        log_beta = torch.tensor(math.log(temperature))
        if learnable_temperature:
            self.log_temperature = nn.Parameter(log_beta)
        else:
            self.register_buffer("log_temperature", log_beta, persistent=False)

    def forward(self, e, state=None):
        B, T, d = e.shape
        t0 = state["t"] if state is not None else 0
        e_last = state["e_last"] if state is not None else e.new_zeros(B, d)  # e_{t0-1} (0 at start)
        e_before = torch.cat([e_last[:, None], e[:, :-1]], dim=1)  # [B, T, d]: e_{t-1} for each t
        # new entries, one per token t of this call: (k_{t-1}, v_t); none for t = 0
        k_new, v_new = self.key(e_before), self.value(e)  # [B, T, D_kv]
        logw_new = None
        if self.write_gate is not None:
            # log omega_j = log sigmoid(w_w . e_j + b_w), from the entry's key token
            logw_new = F.logsigmoid(self.write_gate(e_before))[..., 0]  # [B, T]
        first = 1 if t0 == 0 else 0
        keys, values = k_new[:, first:], v_new[:, first:]  # [B, N_new, D_kv]
        logw = logw_new[:, first:] if logw_new is not None else None
        if state is not None:
            keys = torch.cat([state["k"], keys], dim=1)  # [B, N, D_kv]
            values = torch.cat([state["v"], values], dim=1)
            logw = torch.cat([state["logw"], logw], dim=1) if logw is not None else None
        # the query token: e_{t-1} ("previous", the paper) or e_t ("current", induction)
        src = e_before if self.query_align == "previous" else e  # [B, T, d]
        q = (self.key if self.query is None else self.query)(src)  # [B, T, D_kv]
        t_abs = torch.arange(t0, t0 + T, device=e.device)
        # visible entries: j <= t-2 ("previous") or j <= t-1 ("current")
        lag = 1 if self.query_align == "previous" else 0
        n_visible = (t_abs - lag).clamp_min(0)  # [T]
        scale = self.log_temperature.exp()  # beta
        if self.mode == "loop":
            m, w, idx = kv_read_loop(q, keys, values, n_visible.tolist(), self.top_k, scale, logw)
        else:
            m, w, idx = kv_read(q, keys, values, n_visible, self.top_k, scale, logw)
        # g_t = sigmoid(w_g . e_src + b_g)
        g = torch.sigmoid(self.read_gate(src))  # [B, T, 1]
        if self.gate_outside_norm:
            z = g * self.norm(self.out(m))  # [B, T, d]
        else:
            # z_t = LN(W_m g_t m_t)
            z = self.norm(self.out(g * m))  # [B, T, d]
        self.keep(weights=w, index=idx, read_gate=g[..., 0])
        new_state = {"t": t0 + T, "e_last": e[:, -1], "k": keys, "v": values, "logw": logw}
        return z, new_state
