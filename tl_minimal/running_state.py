"""Step 1: the running state, an exponential moving average with a learned gate.

Glossary (paper symbol -> code name -> shape)
    a_t         a          [B, T, H, S]   what token t writes into the state
    lambda_t    lam        [B, T, H]      keep gate, one scalar per head and token, in (0, 1)
    s_t         s          [B, T, H, S]   running state after token t (s[:, t] = s_t)
    s_{-1}      s0         [B, H, S]      state before the first token (None means zeros)
    s_{t-1}     s_prev     [B, T, H, S]   the state each token *reads*: s_prev[:, t] = s_{t-1}
    B, T, H, S  -                         batch, time, heads, state size
    C           chunk_size int            tokens per chunk of the fast form, DEFAULT_CHUNK (16)

The recurrence, per head:   s_t = lambda_t * s_{t-1} + (1 - lambda_t) * a_t
(a constant gate lambda halves a write's weight every ln(1/2) / ln(lambda) tokens: notebook 01).

Three forms, held equal by tests/model/test_running_state.py: ``mode="loop"`` (a for-loop over
time, the specification), ``mode="fast"`` (default, :func:`running_state_chunked`: chunks of C
tokens, notebook 01b) and :func:`running_state_step` (one token, for generation). Unrolled from
the start c of a chunk, with Lambda_t = prod_{u=c..t} lambda_u,

    s_t = Lambda_t s_{c-1} + sum_{tau=c..t} (Lambda_t / Lambda_tau) (1 - lambda_tau) a_tau,
    Lambda_t / Lambda_tau = exp(sum_{u=tau+1..t} log lambda_u)        (:func:`causal_decay`)

so a chunk is one masked C x C matmul, and the chunk-end states follow the same recurrence over
T / C steps, solved by calling the same function (:func:`decayed_cumsum`, reused by readout.py).
"""

from __future__ import annotations

import functools

import torch

from . import kernels  # the speed kernels: the same numbers as plain torch (a reader can skip them)
from .checks import check_axes, check_causal_decay_length, check_form

# tokens per chunk: fastest measured on a 2-core CPU for T = 128 and T = 2048 (S = 16); any size
# gives the same numbers
DEFAULT_CHUNK = 16


def log_gate(gate: torch.Tensor) -> torch.Tensor:
    """log(gate), finite even where a float32 sigmoid rounded the gate to exactly 0."""
    return torch.log(gate.clamp_min(torch.finfo(gate.dtype).tiny))


# --- the building block: h_t = exp(log_decay_t) * h_{t-1} + x_t ---------------------------

@functools.cache  # built once per size, dtype and device: they are constants
def segment_matrices(C: int, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Z [C, C*C] with Z[u, (t, tau)] = 1 when tau < u <= t, and lower [C, C] = [tau <= t]."""
    u = torch.arange(C, device=device)
    t, tau, uu = u.view(1, C, 1), u.view(1, 1, C), u.view(C, 1, 1)
    return ((tau < uu) & (uu <= t)).to(dtype).view(C, C * C), (tau <= t).to(dtype).view(C, C)


def chunk_decays(log_decay: torch.Tensor):
    """A chunk's decays, log_decay [..., C] (<= 0) -> (G, W, expG):

    G [..., C]     G_t = sum_{u=c..t} log_decay_u, the running sum from the chunk start c
    W [..., C, C]  W[t, tau] = exp(sum_{u=tau+1..t} log_decay_u) for tau <= t, 0 for tau > t
    expG [..., C]  exp(G_t), the decay of what entered the chunk

    Each segment of W is summed directly, not as a difference G_t - G_tau: same numbers, but the
    difference's gradient cancels large terms, and that rounding error, divided by a gate near 0
    (the chain rule of log(gate)), swamps float32 gate gradients. All C x C sums are one matmul
    with a constant 0/1 matrix Z [C, C*C] (C^3 entries, hence C <= checks.MAX_CHUNK), then exp.
    W[t, t] = exp(empty sum) = 1.
    """
    C = log_decay.shape[-1]
    Z, lower = segment_matrices(C, log_decay.dtype, log_decay.device)  # [C, C*C], [C, C]
    G = torch.cumsum(log_decay, dim=-1)                             # [..., C]
    # seg[t, tau] = sum_u log_decay_u Z[u, t, tau] = sum_{u=tau+1..t} log_decay_u
    seg = (log_decay.reshape(-1, C) @ Z).view(*log_decay.shape, C)  # [..., C(t), C(tau)]
    # W = exp(seg) below the diagonal, 0 above; exp(G) (kernels.decays: torch.exp without its slow
    # path for results below ~1e-37, the layer's one call into the kernels)
    W, expG = kernels.decays(seg, lower, G)                         # [..., C, C], [..., C]
    return G, W, expG


def causal_decay(log_decay: torch.Tensor) -> torch.Tensor:
    """W[..., t, tau] = exp(sum_{u=tau+1..t} log_decay_u) for tau <= t, 0 for tau > t.

    log_decay [..., C] -> W [..., C, C] (:func:`chunk_decays` says how it is computed).
    """
    check_causal_decay_length(log_decay.shape[-1])                 # C <= MAX_CHUNK (checks.py)
    return chunk_decays(log_decay)[1]                               # [..., C(t), C(tau)]


def decayed_cumsum(log_decay: torch.Tensor, x: torch.Tensor, h0: torch.Tensor | None = None,
                   chunk_size: int = DEFAULT_CHUNK) -> torch.Tensor:
    """All states of h_t = exp(log_decay_t) h_{t-1} + x_t (h_{-1} = h0 or 0), chunkwise.

    Heads-first layout: log_decay [B, H, T], x [B, H, T, D], h0 [B, H, D] -> h [B, H, T, D].
    ``log_decay`` must be <= 0 (a decay in (0, 1]).
    """
    B, H, T, D = x.shape
    C = min(chunk_size, T)
    N = -(-T // C)                                                  # number of chunks
    pad = N * C - T
    if pad:  # padded tokens keep the state (decay 1) and write nothing, so earlier h are unchanged
        log_decay = torch.nn.functional.pad(log_decay, (0, pad))
        x = torch.nn.functional.pad(x, (0, 0, 0, pad))
    ld = log_decay.reshape(B, H, N, C)                              # [B, H, N, C]
    xc = x.reshape(B, H, N, C, D)                                   # [B, H, N, C, D]

    # G_t = sum_{u=c..t} log lambda_u, counted from the start of each chunk; expG_t = Lambda_t;
    # W[t, tau] = Lambda_t / Lambda_tau = exp(sum_{u=tau+1..t} log lambda_u) for tau <= t, else 0
    G, W, expG = chunk_decays(ld)                                   # [B, H, N, C], [.., C, C], [.., C]
    # h_t (from a zero state at the chunk start) = sum_{tau=c..t} W[t, tau] x_tau
    h_local = W @ xc                                                # [B, H, N, C, D]

    # the state entering each chunk: H_n = exp(G_end_n) H_{n-1} + h_local_end_n, H_{-1} = h0
    if N == 1:
        h_enter = (torch.zeros(B, H, 1, D, dtype=x.dtype, device=x.device) if h0 is None
                   else h0.unsqueeze(2))                            # [B, H, 1, D]
    else:  # the same recurrence over N < T chunk-end states: recurse
        h_end = decayed_cumsum(G[..., -1], h_local[..., -1, :], h0, chunk_size)  # [B, H, N, D]
        first = torch.zeros_like(h_end[:, :, :1]) if h0 is None else h0.unsqueeze(2)
        h_enter = torch.cat([first, h_end[:, :, :-1]], dim=2)       # [B, H, N, D]
    # h_t = Lambda_t H_{n-1} + h_local_t
    h = h_local + expG.unsqueeze(-1) * h_enter.unsqueeze(3)         # [B, H, N, C, D]
    return h.reshape(B, H, N * C, D)[:, :, :T]


# --- the running state in the paper's layout [B, T, H, S] -----------------------------------

def running_state_step(a_t: torch.Tensor, lam_t: torch.Tensor, s_prev: torch.Tensor) -> torch.Tensor:
    """One token: a_t [B, H, S], lam_t [B, H], s_prev [B, H, S] -> s_t [B, H, S]."""
    # s_t = lambda_t s_{t-1} + (1 - lambda_t) a_t
    lam_t = lam_t.unsqueeze(-1)                                     # [B, H, 1]
    return lam_t * s_prev + (1 - lam_t) * a_t                       # [B, H, S]


def running_state(a: torch.Tensor, lam: torch.Tensor, s0: torch.Tensor | None = None,
                  mode: str = "fast", chunk_size: int = DEFAULT_CHUNK) -> torch.Tensor:
    """s[:, t] = s_t for s_t = lam_t s_{t-1} + (1 - lam_t) a_t, s_{-1} = s0 (or zeros).

    a [B, T, H, S], lam [B, T, H] in (0, 1), s0 [B, H, S] or None -> s [B, T, H, S].
    ``mode`` is "loop" (the reference) or "fast" (default, ``chunk_size`` tokens per chunk).
    Gate values are not checked (that would need a device sync); log(0) is clamped to stay finite.
    """
    check_form(mode, chunk_size)                                    # input checks (checks.py)
    check_axes(("a", a, "B T H S"), ("lam", lam, "B T H"), ("s0", s0, "B H S"))
    if mode == "fast":
        return running_state_chunked(a, lam, s0, chunk_size)
    s_t, states = (torch.zeros_like(a[:, 0]) if s0 is None else s0), []  # s_{-1} [B, H, S]
    for t in range(a.shape[1]):
        s_t = running_state_step(a[:, t], lam[:, t], s_t)
        states.append(s_t)
    return torch.stack(states, dim=1)                               # [B, T, H, S]


def running_state_chunked(a: torch.Tensor, lam: torch.Tensor, s0: torch.Tensor | None = None,
                          chunk_size: int = DEFAULT_CHUNK) -> torch.Tensor:
    """The fast form of :func:`running_state` (inputs not checked): s [B, T, H, S]."""
    # x_t = (1 - lambda_t) a_t, decay = lambda_t: then s_t = lambda_t s_{t-1} + x_t
    x = (a * (1 - lam).unsqueeze(-1)).transpose(1, 2)               # [B, H, T, S] (a's memory layout)
    s = decayed_cumsum(log_gate(lam).transpose(1, 2), x, s0, chunk_size)  # [B, H, T, S]
    return s.transpose(1, 2)                                        # [B, T, H, S]


def previous_states(s: torch.Tensor, s0: torch.Tensor | None = None) -> torch.Tensor:
    """Shift by one token: s_prev[:, 0] = s0 (or zeros), s_prev[:, t] = s[:, t-1].

    The pair memory pairs the state *before* token t with token t's write, so it reads s_prev.
    """
    s0 = torch.zeros_like(s[:, 0]) if s0 is None else s0           # [B, H, S]
    # joined along time heads-first (the chunked forms' layout), so the readout reads it without a copy
    s_prev = torch.cat([s0.unsqueeze(2), s.transpose(1, 2)[:, :, :-1]], dim=2)  # [B, H, T, S]
    return s_prev.transpose(1, 2)                                   # [B, T, H, S]
