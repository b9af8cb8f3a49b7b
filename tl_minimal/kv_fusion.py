"""Step 6: an explicit key-value memory, a read gate, and late logit fusion (the gated hybrid).

Beside the compressed stack, the gated hybrid keeps a plain associative memory of token pairs
built from the raw token embeddings e (before positions), and adds what it reads to the logits.

Glossary (paper symbol -> code name -> shape); D_kv = assoc_dim (64), d = d_model, top_k = how
many of the best-scoring entries a read keeps (8; the slot count K of slots.py is another thing)
    e_t          e             [B, T, d]     raw token embedding (no position)
    k_j = W_k e_j     key      [B, N, D_kv]  key of memory entry j (the token at j)
    v_{j+1} = W_v e_{j+1} value [B, N, D_kv] value of entry j (the token AFTER j)
    q_t = W_q e_{t-1} q        [B, T, D_kv]  query ("previous": from the previous token);
                                             tie_qk: W_q = W_k (one W_qk, no W_q parameter)
    N            n entries     int           entries j = 0 .. (tokens seen) - 2
    beta         scale         scalar        score scale on the cosine, exp(log_score_scale)
    rho_{t,j}    scores        [B, T, N]     retrieval score of entry j for the query at t
    omega_j      logw          [B, N]        log write strength (optional write gate)
    eta          supersede     scalar        how much a later write replaces an earlier one
    o_{t,j}      overwritten   [B, T, N]     max over later visible entries j' of relu(cos(k_j, k_j'))
    alpha_t      weights       [B, T, top_k] softmax over the kept scores (0 where no entry)
    j (kept)     index         [B, T, top_k] memory position j of each kept entry (-1: none)
    m_t          m             [B, T, D_kv]  retrieved value
    g_t          g             [B, T, 1]     the read gate (not slots.py's slot weights g_t[k]):
                 or            [B, T, D_kv]  one scalar per token ("scalar") or one per entry of m_t
    w_g or W_g, b_g  read_gate d -> 1 (w_g, "scalar") or D_kv -> D_kv (W_g, "query_vector")
    W_m          out           D_kv -> d     only when D_kv != d (identity otherwise)
    z_t          z             [B, T, d]     LN(W_m (g_t ⊙ m_t)): added to h_t before the tied head

Equations (docs/paper.md sections 3.6-3.7; "previous" query alignment):
    memory     pairs (k_j, v_{j+1}) for j <= t-2 ("current": q_t = W_q e_t over j <= t-1)
    score      rho_{t,j} = beta * cos(q_t, k_j)  (+ log omega_j with a write gate)
               supersede: rho_{t,j} = beta * (cos(q_t, k_j) - eta * o_{t,j}),
               o_{t,j} = max_{j < j' < n_t} relu(cos(k_j, k_j'))   (last write wins)
    select     keep the top_k best scores (8; "all"/None keeps every entry)
    read       alpha_t = softmax(kept scores);   m_t = sum_j alpha_{t,j} v_{j+1}   (0 with no entry)
    gate       g_t = sigmoid(w_g . e_{t-1} + b_g)      (read_gate="scalar", the paper's code)
               g_t = sigmoid(W_g q_t + b_g)            (read_gate="query_vector", as printed)
    fuse       logits_t = W_vocab h_t + W_vocab z_t,   z_t = LN(W_m (g_t ⊙ m_t))
               (gate_outside_norm: z_t = g_t LN(W_m m_t); LN removes a scalar gate's scale)
The printed score's beta is 1/sqrt(D_kv) (``score_scale="printed"``; docs/paper.md section 3.6).

Three forms of the read, tested equal (tests/model/test_kv_fusion.py): ``kv_read_loop`` (one
position at a time, the specification), ``kv_read`` (all positions at once: a top_k kept block
by block, blockwise_topk.py, memory linear in T; one masked [B, T, N] score matrix with
``dense=True``, top_k="all" or supersede) and ``kv_read_step`` (one query against the cache, for
generation). Equal scores (a repeated token): the loop and the blockwise read keep the entry
written first, the dense form follows torch.topk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .blockwise_topk import top_k_read
from .checks import check_kv_config, check_mode
from .recording import Recorder

QUERY_ALIGNS = ("previous", "current")
READ_GATES = ("scalar", "query_vector")  # g_t from e_{t-1} (the code's) or from q_t (as printed)


def _kept_count(top_k, n: int) -> int | None:
    """How many of n entries a read keeps by topk (sorted by score); None = all, in memory order."""
    return None if top_k is None or top_k == "all" else min(int(top_k), n)


def overwritten(keys, n):
    """o_j = max_{j < j' < n} relu(cos(k_j, k_j')) for the first n entries of keys [B, N, D_kv] -> [B, n]."""
    kn = F.normalize(keys[:, :n], dim=-1, eps=1e-12)
    c = (kn @ kn.transpose(1, 2)).clamp_min(0).triu(diagonal=1)  # [B, n, n]: only later entries j' > j
    return c.amax(dim=-1)  # [B, n] (n >= 1)


def kv_read_loop(q, keys, values, n_visible, top_k=8, scale=1.0, logw=None, supersede=None):
    """Reference: for each position t, score its n_visible[t] entries, keep the top_k best, softmax, sum.

    q [B, T, D_kv]; keys, values [B, N, D_kv] (values[:, j] is v_{j+1}); n_visible: T ints;
    scale = beta; logw [B, N] or None; supersede = eta (a number or 0-d tensor) or None. Returns
    m [B, T, D_kv], weights [B, T, n_kept], index [B, T, n_kept] with n_kept = min(top_k, N) (N for
    "all"); unused places have weight 0 and index -1.
    """
    B, T, _ = q.shape
    N = keys.shape[1]
    width = _kept_count(top_k, N) or N
    m = q.new_zeros(B, T, values.shape[-1])
    weights = q.new_zeros(B, T, width)
    index = torch.full((B, T, width), -1, dtype=torch.long, device=q.device)
    for t in range(T):
        n = int(n_visible[t])
        if n == 0:
            continue  # no entry yet: m_t = 0
        # rho_{t,j} = beta cos(q_t, k_j) (+ log omega_j),  j < n
        cos = F.cosine_similarity(q[:, t, None], keys[:, :n], dim=-1, eps=1e-12)  # [B, n]
        if supersede is not None:
            # rho_{t,j} = beta (cos(q_t, k_j) - eta o_{t,j}): lowered by later writes of its key
            cos = cos - supersede * overwritten(keys, n)
        rho = scale * cos
        if logw is not None:
            rho = rho + logw[:, :n]
        n_kept = _kept_count(top_k, n)
        if n_kept is None:
            kept, idx = rho, torch.arange(n, device=q.device).expand(B, n)  # [B, n]
        else:  # the n_kept best, best first; equal scores: lower j first (a stable sort)
            kept, idx = (x[:, :n_kept] for x in rho.sort(dim=-1, descending=True, stable=True))  # [B, n_kept]
        # alpha_t = softmax(kept);  m_t = sum alpha v
        alpha = kept.softmax(dim=-1)  # [B, n_kept]
        v = values[:, :n].gather(1, idx[..., None].expand(-1, -1, values.shape[-1]))  # [B, n_kept, D_kv]
        m[:, t] = (alpha[..., None] * v).sum(1)
        weights[:, t, : alpha.shape[1]] = alpha
        index[:, t, : idx.shape[1]] = idx
    return m, weights, index


def kv_read(q, keys, values, n_visible, top_k=8, scale=1.0, logw=None, supersede=None, dense: bool = False):
    """Fast form of :func:`kv_read_loop` (same arguments and results), no loop over time: blockwise
    (blockwise_topk.py), or one masked [B, T, N] score matrix for ``dense``, "all" or ``supersede``."""
    B, T, _ = q.shape
    N = keys.shape[1]
    if N == 0:  # no entries anywhere: m = 0
        return (q.new_zeros(B, T, values.shape[-1]), q.new_zeros(B, T, 0),
                torch.zeros(B, T, 0, dtype=torch.long, device=q.device))
    qn, kn = F.normalize(q, dim=-1, eps=1e-12), F.normalize(keys, dim=-1, eps=1e-12)
    n_kept = _kept_count(top_k, N)
    if n_kept is not None and not dense and supersede is None:
        # rho = beta cos(q_t, k_j) (+ log omega_j), the n_kept best kept block by block, alpha, m
        return top_k_read(qn, kn, values, n_visible, n_kept, scale, logw)
    n_visible = torch.as_tensor(n_visible, device=q.device)
    cos = qn @ kn.transpose(1, 2)  # [B, T, N]
    if supersede is not None:
        # o_{t,j} = max_{j < j' < n_t} relu(cos(k_j, k_j')): a running max over j', read at j' = n_t - 1
        c = (kn @ kn.transpose(1, 2)).clamp_min(0).triu(diagonal=1)  # [B, N, N] (j, j'), j' > j only
        run = c.cummax(dim=-1).values  # [B, N, N]: max over j < j' <= m, at column m
        last = (n_visible - 1).clamp_min(0)  # [T]: the last visible entry at each t
        cos = cos - supersede * run[:, :, last].transpose(1, 2)  # [B, T, N]
    # rho_{t,j} = beta cos(q_t, k_j)  (- beta eta o_{t,j})  (+ log omega_j)
    rho = scale * cos  # [B, T, N]
    if logw is not None:
        rho = rho + logw[:, None, :]
    # entry j is visible at t when j < n_visible[t]; hidden ones get the lowest finite score,
    # so topk prefers every visible entry and the softmax gives hidden ones exactly 0
    visible = torch.arange(N, device=q.device)[None, :] < n_visible[:, None]  # [T, N]
    rho = rho.masked_fill(~visible, torch.finfo(rho.dtype).min)  # [B, T, N]
    if n_kept is None:
        kept, idx = rho, torch.arange(N, device=q.device).expand(B, T, N)  # [B, T, N]
    else:
        kept, idx = rho.topk(n_kept, dim=-1)  # [B, T, n_kept]
    ok = visible.expand(B, T, N).gather(-1, idx)  # [B, T, n_kept]: was a real entry kept?
    # alpha_t = softmax(kept), zero where nothing is visible (no NaN: all scores are finite)
    alpha = kept.softmax(dim=-1) * ok  # [B, T, n_kept]
    # m_t = sum_j alpha_{t,j} v_{j+1}: scatter alpha back to [B, T, N], one batched matmul
    dense_alpha = torch.zeros_like(rho).scatter(-1, idx, alpha)  # [B, T, N]
    m = dense_alpha @ values  # [B, T, D_kv]
    return m, alpha, idx.masked_fill(~ok, -1)


def kv_read_step(q_t, keys, values, top_k=8, scale=1.0, logw=None, supersede=None):
    """One query q_t [B, D_kv] against all N cached entries -> (m_t [B, D_kv], weights, index [B, n_kept]).

    It scores the whole cache: O(N D_kv) work per generated token, growing with the context.
    """
    m, w, idx = kv_read(q_t[:, None], keys, values, [keys.shape[1]], top_k, scale, logw, supersede=supersede)
    return m[:, 0], w[:, 0], idx[:, 0]


@dataclass(frozen=True)
class KVConfig:
    """The key-value memory's settings, passed whole to :class:`KVFusion` (registry.py makes one
    from a model's settings). The defaults are the paper's gated runs (gated_hybrid_paper)."""

    assoc_dim: int = 64                 # D_kv, the width of keys, values and queries
    top_k: int | str | None = 8         # entries a read keeps; "all" or None: every entry
    score_scale: float | str = 1.0      # beta (larger: sharper); "printed": 1/sqrt(assoc_dim)
    learnable_score_scale: bool = False  # beta a parameter (learned as log beta) or a constant
    query_align: str = "previous"       # query from e_{t-1} ("previous") or e_t ("current")
    write_gate: bool = False            # omega_j, a learned write strength per entry
    gate_outside_norm: bool = False     # z_t = g_t LN(W_m m_t) instead of LN(W_m g_t m_t)
    tie_qk: bool = False                # one W_qk for queries and keys
    supersede: bool = False             # eta: a later write of the same key replaces an earlier one
    read_gate: str = "scalar"           # g_t a scalar from e_{t-1} or a vector from q_t ("query_vector")
    read_gate_bias: float = 0.0         # b_g at initialization: 0 gives g ~ 0.5, -2 (recall recipe) ~ 0.12

    def __post_init__(self):
        check_kv_config(self, QUERY_ALIGNS, READ_GATES)             # checks.py


class KVFusion(Recorder, nn.Module):
    """The gated hybrid's associative path: e [B, T, d] -> z [B, T, d], added to h before W_vocab.

    ``forward(e, state=None) -> (z, state)``; the state is the cache
    {"t": tokens seen, "e_last": [B, d], "k": [B, N, D_kv], "v": [B, N, D_kv], "logw": [B, N] or None},
    so calling token by token equals one call on the whole sequence. While recording (recording.py),
    record["weights"], record["index"] ([B, T, n_kept]) and record["read_gate"] ([B, T]; for
    "query_vector" its mean, and the gate itself as record["read_gate_vector"] [B, T, D_kv]).
    ``dense_read = True`` (an attribute, not a setting) switches the fast read to its dense form.
    """

    dense_read = False

    def __init__(self, d_model: int, config: KVConfig = KVConfig(), mode: str = "fast"):
        super().__init__()
        c = config
        self.top_k, self.query_align, self.mode = c.top_k, c.query_align, check_mode(mode)
        self.gate_outside_norm, self.read_gate_form = c.gate_outside_norm, c.read_gate
        self.read_gate_bias = c.read_gate_bias
        self.key = nn.Linear(d_model, c.assoc_dim, bias=False)  # W_k
        self.value = nn.Linear(d_model, c.assoc_dim, bias=False)  # W_v
        # W_q; with tie_qk the query reuses W_k, so an exact repeat of a key token scores cos = 1
        self.query = None if c.tie_qk else nn.Linear(d_model, c.assoc_dim, bias=False)
        # w_g, b_g: on e_{t-1}, one gate per token ("scalar"); W_g, b_g: on q_t, one per entry of m_t
        gate_in, gate_out = (d_model, 1) if c.read_gate == "scalar" else (c.assoc_dim, c.assoc_dim)
        self.read_gate = nn.Linear(gate_in, gate_out)
        self.write_gate = nn.Linear(d_model, 1) if c.write_gate else None  # omega_j = sigmoid(.)
        self.out = nn.Linear(c.assoc_dim, d_model, bias=False) if c.assoc_dim != d_model else nn.Identity()
        self.norm = nn.LayerNorm(d_model)
        # eta: how much a later write of the same key takes from an earlier one (learnable, starts at 1)
        self.supersede = nn.Parameter(torch.tensor(1.0)) if c.supersede else None
        # beta = exp(log_score_scale): a parameter when learnable, a constant buffer otherwise;
        # beta = 1/sqrt(D_kv) for score_scale="printed": exp(beta cos(q, k)) = exp(q^ . k^ / sqrt(d_a))
        beta = 1.0 / math.sqrt(c.assoc_dim) if c.score_scale == "printed" else c.score_scale
        log_beta = torch.tensor(math.log(beta))
        if c.learnable_score_scale:
            self.log_score_scale = nn.Parameter(log_beta)
        else:
            self.register_buffer("log_score_scale", log_beta, persistent=False)

    def init_read_gate_bias(self) -> None:
        """b_g <- read_gate_bias, every entry (the model calls this after its weight init zeroes biases)."""
        with torch.no_grad():
            self.read_gate.bias.fill_(self.read_gate_bias)

    def forward(self, e, state=None):
        B, T, d = e.shape
        t0 = state["t"] if state is not None else 0
        e_last = state["e_last"] if state is not None else e.new_zeros(B, d)  # e_{t0-1} (0 at start)
        e_before = torch.cat([e_last[:, None], e[:, :-1]], dim=1)  # [B, T, d]: e_{t-1} for each t
        # new entries, one per token t of this call: (k_{t-1}, v_t); none for t = 0
        first = 1 if t0 == 0 else 0
        keys, values = self.key(e_before)[:, first:], self.value(e)[:, first:]  # [B, N_new, D_kv]
        # log omega_j = log sigmoid(w_w . e_j + b_w), from the entry's key token (with a write gate)
        logw = None if self.write_gate is None else F.logsigmoid(self.write_gate(e_before))[:, first:, 0]  # [B, N_new]
        if state is not None:
            keys = torch.cat([state["k"], keys], dim=1)  # [B, N, D_kv]
            values = torch.cat([state["v"], values], dim=1)
            logw = torch.cat([state["logw"], logw], dim=1) if logw is not None else None
        # the query token: e_{t-1} ("previous", the paper) or e_t ("current", induction)
        src = e_before if self.query_align == "previous" else e  # [B, T, d]
        q = (self.key if self.query is None else self.query)(src)  # [B, T, D_kv]
        # visible entries: j <= t-2 ("previous") or j <= t-1 ("current"); counted on the host
        lag = 1 if self.query_align == "previous" else 0
        n_visible = (torch.arange(t0, t0 + T) - lag).clamp_min(0).tolist()  # T ints
        scale = self.log_score_scale.exp()  # beta
        if self.mode == "loop":
            m, w, idx = kv_read_loop(q, keys, values, n_visible, self.top_k, scale, logw, self.supersede)
        else:
            m, w, idx = kv_read(q, keys, values, n_visible, self.top_k, scale, logw, dense=self.dense_read,
                                supersede=self.supersede)
        # g_t = sigmoid(w_g . e_src + b_g), one scalar per token ("scalar"), or
        # g_t = sigmoid(W_g q_t + b_g), one gate per entry of m_t ("query_vector", the printed form)
        g = torch.sigmoid(self.read_gate(src if self.read_gate_form == "scalar" else q))  # [B, T, 1 or D_kv]
        # z_t = LN(W_m (g_t * m_t)), or with gate_outside_norm g_t LN(W_m m_t)
        z = g * self.norm(self.out(m)) if self.gate_outside_norm else self.norm(self.out(g * m))  # [B, T, d]
        # one number per token for the plots: the scalar gate, or the vector gate's mean (and itself)
        gates = {"read_gate": g[..., 0]} if self.read_gate_form == "scalar" else \
            {"read_gate": g.mean(-1), "read_gate_vector": g}
        self.save_record(weights=w, index=idx, **gates)
        return z, {"t": t0 + T, "e_last": e[:, -1], "k": keys, "v": values, "logw": logw}

