"""A relative: H3 (Fu et al. 2023, "Hungry Hungry Hippos"), in its multi-head outer-product form.

Glossary (symbol -> code name -> shape)
    n_t            n               [B, T, d]          LayerNormed input of the layer
    q_t, k_t, v_t  q, k, v         [B, T, H, D]       W_q n_t, W_k n_t, W_v n_t split into H heads (D = d / H)
    w              shift_weight    [H*D, m]           the shift SSM's filter, one per channel (m = 4)
    kbar_t         kbar            [B, T, H, D]       SSM_shift(k)_t, the shifted key
    a_{h,n}        decay           [H, N]             the diagonal SSM's decays, in (0, 1), the SAME for
                                                      every token (learned, not computed from n_t)
    c_{h,n}        coef            [H, N]             how much each of the N modes adds to the read
    X^n_t          X               [B, H, N, D, D]    the diagonal state of mode n after token t
    o_t            o               [B, T, H, D]       the read; out_t = W_o vec(o_t)

H3 computes  Q * SSM_diag(SSM_shift(K) * V). Per head, with outer products:

    kbar_t = sum_{i=0..m-1} w[:, i] k_{t-(m-1)+i}              (shift SSM: a causal FIR filter)
    X^n_t  = a_{h,n} X^n_{t-1} + outer(kbar_t, v_t)           (diagonal SSM over k v^T, n = 1..N)
    o_t    = sum_n c_{h,n} (X^n_t)^T q_t                      (the query's multiplicative read)

Shared with the course: the shift SSM is ``gla.short_conv`` without the SiLU; each mode is a
``readout.decayed_attention`` head with log-decay log a_{h,n} at every token. Deviations from the
H3 code: a real diagonal SSM read with coefficients c (not a complex one via FFT), no D skip term.
Forms (tests/model/test_h3.py holds them equal): ``mode="loop"``, ``mode="fast"`` (default) and
:func:`h3_step` (one token, for generation).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .checks import check_axes, check_form, check_heads, check_layer_input, check_state
from .gla import next_past, short_conv, short_conv_step
from .readout import decayed_attention, normal_init
from .recording import Recorder
from .running_state import DEFAULT_CHUNK


def h3_step(X, q_t, kbar_t, v_t, decay, coef):
    """One token: X [B, H, N, Dk, Dv] (None = zeros), q_t, kbar_t [B, H, Dk], v_t [B, H, Dv],
    decay, coef [H, N] -> (o_t [B, H, Dv], X_t)."""
    # X^n_t = a_{h,n} X^n_{t-1} + outer(kbar_t, v_t)
    write = (kbar_t.unsqueeze(-1) * v_t.unsqueeze(-2)).unsqueeze(2)  # [B, H, 1, Dk, Dv]
    if X is None:
        X = write.new_zeros(*write.shape[:2], decay.shape[1], *write.shape[3:])  # [B, H, N, Dk, Dv]
    X = decay[..., None, None] * X + write                          # [B, H, N, Dk, Dv]
    # o_t = sum_n c_{h,n} (X^n_t)^T q_t
    read = (q_t[:, :, None, :, None] * X).sum(dim=-2)              # [B, H, N, Dv]
    return (coef.unsqueeze(-1) * read).sum(dim=2), X               # [B, H, Dv]


def h3_memory(q, kbar, v, decay, coef, X0=None, mode: str = "fast", chunk_size: int = DEFAULT_CHUNK):
    """(o [B, T, H, Dv], X_last [B, H, N, Dk, Dv]); q, kbar [B, T, H, Dk], v [B, T, H, Dv], decay and
    coef [H, N] (decay in (0, 1)), X0 [B, H, N, Dk, Dv] or None."""
    # input checks (checks.py): clear errors for a wrong mode, chunk size, shape, dtype or device
    check_form(mode, chunk_size)
    check_axes(("q", q, "B T H Dk"), ("k", kbar, "B T H Dk"), ("v", v, "B T H Dv"), ("decay", decay, "H N"),
               ("the initial state", X0, "B H N Dk Dv"), ("coef", coef, "H N"))
    B, T, H, _ = q.shape
    N = decay.shape[1]
    if mode == "loop":
        X, os = X0, []
        for t in range(q.shape[1]):
            o_t, X = h3_step(X, q[:, t], kbar[:, t], v[:, t], decay, coef)
            os.append(o_t)
        return torch.stack(os, dim=1), X                            # [B, T, H, Dv]
    # every mode n is one head of decayed_attention: repeat q, kbar, v over the N modes
    q, kbar, v = (x.transpose(1, 2).unsqueeze(2).expand(-1, -1, N, -1, -1).flatten(1, 2)
                  for x in (q, kbar, v))                            # [B, H*N, T, D]
    # log-decay log a_{h,n}, the same at every token
    log_decay = torch.log(decay).reshape(1, H * N, 1).expand(B, -1, T)  # [B, H*N, T]
    X0 = None if X0 is None else X0.flatten(1, 2)                   # [B, H*N, Dk, Dv]
    o, X = decayed_attention(q, kbar, v, log_decay, X0, chunk_size)  # [B, H*N, T, Dv]
    # o_t = sum_n c_{h,n} (X^n_t)^T q_t
    o = (coef[None, :, :, None, None] * o.unflatten(1, (H, N))).sum(dim=2)  # [B, H, T, Dv]
    return o.transpose(1, 2), X.unflatten(1, (H, N))                # [B, T, H, Dv], [B, H, N, Dk, Dv]


class H3Mixer(Recorder, nn.Module):
    """The H3 time mixer: ``forward(n, state=None) -> (o, state)``, n, o [B, T, d].

    state = {"shift": [B, m-1, d] (the last m-1 keys before the filter), "X": [B, H, N, D, D]};
    record = {"decay": a [H, N]}. A call with T = 1 takes the step path.
    """

    def __init__(self, d_model: int, n_heads: int, conv_kernel: int = 4, n_modes: int = 4,
                 mode: str = "fast", chunk_size: int = DEFAULT_CHUNK):
        super().__init__()
        head_dim = check_heads(d_model, n_heads, conv_kernel=conv_kernel, n_modes=n_modes)
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, head_dim
        self.kernel, (self.mode, self.chunk_size) = conv_kernel, check_form(mode, chunk_size)
        # q, k, v = W_q n, W_k n, W_v n: one Linear(d -> 3d)
        self.proj = nn.Linear(d_model, 3 * d_model, bias=False)
        # the shift SSM's filter w [d, m] (nn.Conv1d's default init, fan-in m)
        self.shift_weight = nn.Parameter(nn.Conv1d(d_model, d_model, conv_kernel, groups=d_model,
                                                   bias=False).weight.detach().squeeze(1))
        # a_{h,n} = exp(-exp(log_rate)), initialised at half-lives 4^n tokens (1, 4, 16, 64 for N = 4):
        # from one token to half the paper's 128-token context; a = 2^(-1/half-life)
        half_lives = 4.0 ** torch.arange(n_modes, dtype=torch.float32)
        self.log_rate = nn.Parameter(torch.log(math.log(2) / half_lives).repeat(n_heads, 1))  # [H, N]
        # c_{h,n}: every mode read with weight 1/N at first
        self.coef = nn.Parameter(torch.full((n_heads, n_modes), 1.0 / n_modes))  # [H, N]
        self.out = nn.Linear(d_model, d_model, bias=False)
        for layer in (self.proj, self.out):
            normal_init(layer)

    def forward(self, n: torch.Tensor, state=None):
        check_layer_input(n, self.d_model)
        B, T, d = n.shape
        H, D, N, m = self.n_heads, self.head_dim, self.coef.shape[1], self.kernel
        q, k, v = self.proj(n).view(B, T, 3, H * D).unbind(2)        # [B, T, d] each
        past, X0 = check_state(state, {"shift": (B, m - 1, d), "X": (B, H, N, D, D)}, q,
                               "'shift' [B, m-1, d] and 'X' [B, H, N, D, D]")
        decay = torch.exp(-torch.exp(self.log_rate))                # [H, N], a_{h,n} in (0, 1)
        if T == 1 and self.mode == "fast":  # generation: one step, O(1) per token
            kbar, _ = short_conv_step(k[:, 0], next_past(k[:, :0], past, m), self.shift_weight,
                                      activation=False)             # [B, d]
            o, X = h3_step(X0, q[:, 0].view(B, H, D), kbar.view(B, H, D), v[:, 0].view(B, H, D), decay,
                           self.coef)
            o = o.unsqueeze(1)                                      # [B, 1, H, D]
        else:
            # kbar = SSM_shift(k): the short filter without an activation
            kbar = short_conv(k, self.shift_weight, past, activation=False, mode=self.mode)  # [B, T, d]
            q, kbar, v = (x.reshape(B, T, H, D) for x in (q, kbar, v))  # [B, T, H, D]
            o, X = h3_memory(q, kbar, v, decay, self.coef, X0, self.mode, self.chunk_size)  # [B, T, H, D]
        self.save_record(decay=decay)
        # out_t = W_o vec(o_t)
        return self.out(o.reshape(B, T, d)), {"shift": next_past(k, past, m), "X": X}
