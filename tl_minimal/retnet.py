"""A relative: retention (RetNet, Sun et al. 2023), the decayed memory with a fixed decay per head.

Glossary (symbol -> code name -> shape)
    n_t            n            [B, T, d]        LayerNormed input of the layer
    q_t, k_t, v_t  q, k, v      [B, T, H, D]     query, key, value of the current token (D = d / H)
    gamma_h        gamma        [H]              decay of head h, fixed (not learned): 1 - 2^(-5-h)
    M_t            M            [B, H, D, D]     memory after token t (M[i, j]: key i, value j)
    o_t            o            [B, T, H, D]     read-out, then GroupNorm per head, output gate, W_o

    gamma_h = 1 - 2^(-5-h)     (h = 0..3: half-lives of 22, 44, 88 and 177 tokens: multi-scale)
    M_t = gamma_h M_{t-1} + outer(k_t, v_t),   o_t = M_t^T q_t   (q_t scaled by D^-1/2)
    out_t = W_o (GroupNorm_h(o_t) * SiLU(W_g n_t))

It is simple GLA's memory (gla.py) with zeta_t = gamma_h at every token, so :func:`retention` is
``gla.gla`` and one token ``gla.gla_step``. No xPos rotation (every model here has learned
positions) and no short convolution. Forms (tests/model/test_retnet.py holds them equal, and to
flash-linear-attention's naive retention): ``mode="loop"``, ``mode="fast"`` (default), one token.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_axes, check_form, check_heads, check_layer_input, check_state
from .gla import gla, gla_step
from .readout import normal_init
from .recording import Recorder
from .running_state import DEFAULT_CHUNK


def decays(n_heads: int) -> torch.Tensor:
    """RetNet's fixed decays gamma [H], float32."""
    # gamma_h = 1 - 2^(-5-h), h = 0 .. H-1
    return (1 - 2.0 ** (-5.0 - torch.arange(n_heads, dtype=torch.float64))).float()


def retention(q, k, v, gamma, M0=None, mode: str = "fast", chunk_size: int = DEFAULT_CHUNK):
    """(o [B, T, H, Dv], M_last [B, H, Dk, Dv]) for q, k [B, T, H, Dk], v [B, T, H, Dv], gamma [H]:
    :func:`gla.gla` with zeta_t = gamma_h at every token (its loop and fast forms; one token: gla_step)."""
    check_axes(("q", q, "B T H Dk"), ("gamma", gamma, "H"))         # input checks (checks.py)
    # M_t = gamma_h M_{t-1} + outer(k_t, v_t),  o_t = M_t^T q_t
    return gla(q, k, v, gamma.expand(q.shape[:3]), M0, mode, chunk_size)


# --- the layer ----------------------------------------------------------------------------------

class RetNetMixer(Recorder, nn.Module):
    """RetNet's multi-scale retention as a time mixer: ``forward(n, state=None) -> (o, state)``,
    n, o [B, T, d]. state = {"M": [B, H, D, D]}. While recording, record = {"gamma": [H]}.
    A call with T = 1 takes the step path.
    """

    def __init__(self, d_model: int, n_heads: int, mode: str = "fast", chunk_size: int = DEFAULT_CHUNK):
        super().__init__()
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, check_heads(d_model, n_heads)
        self.mode, self.chunk_size = check_form(mode, chunk_size)
        # q, k, v = W_qkv n: one Linear(d -> 3*H*D)
        self.proj = nn.Linear(d_model, 3 * d_model, bias=False)
        # gamma_h = 1 - 2^(-5-h): fixed, so a buffer (it follows the model's dtype and device, unsaved)
        self.register_buffer("gamma", decays(n_heads), persistent=False)
        # output gate g_t = SiLU(W_g n_t), GroupNorm with one group per head, W_o
        self.to_out_gate = nn.Linear(d_model, d_model, bias=False)
        self.norm = nn.GroupNorm(n_heads, d_model, eps=1e-5)
        self.out = nn.Linear(d_model, d_model, bias=False)
        for layer in (self.proj, self.to_out_gate, self.out):
            normal_init(layer)

    def forward(self, n: torch.Tensor, state=None):
        check_layer_input(n, self.d_model)
        B, T, d = n.shape
        H, D = self.n_heads, self.head_dim
        q, k, v = self.proj(n).view(B, T, 3, H, D).unbind(2)         # [B, T, H, D] each
        (M0,) = check_state(state, {"M": (B, H, D, D)}, q, "'M' [B, H, D, D]")
        self.save_record(gamma=self.gamma)
        q = q * D ** -0.5                                           # scaled as in attention
        if T == 1 and self.mode == "fast":  # generation: one step, O(1) per token
            o, M = gla_step(M0, q[:, 0], k[:, 0], v[:, 0], self.gamma)
            o = o.unsqueeze(1)                                      # [B, 1, H, D]
        else:
            o, M = retention(q, k, v, self.gamma, M0, self.mode, self.chunk_size)  # [B, T, H, D]
        # out_t = W_o (GroupNorm_h(o_t) * SiLU(W_g n_t))
        o = self.norm(o.reshape(B * T, d)).view(B, T, d) * F.silu(self.to_out_gate(n))  # [B, T, d]
        return self.out(o), {"M": M}
