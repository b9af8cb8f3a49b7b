"""A relative: scalar-decay gated linear attention (simple GLA, Mamba-2's SSD form), with its
short causal convolution.

Glossary (symbol -> code name -> shape)
    n_t            n              [B, T, d]        LayerNormed input of the layer
    x_t            x              [B, T, 3*H*D]    W_qkv n_t, the input of the short convolution
    c_t            z              [B, T, 3*H*D]    x after the short convolution and SiLU: (q_t, k_t, v_t)
    q_t, k_t, v_t  q, k, v        [B, T, H, D]     query, key, value of the CURRENT token (D = d / H)
    zeta_t         alpha          [B, T, H]        decay, one scalar per head and token, in (0, 1)
                                                   (flash-linear-attention's name; the course's alpha is
                                                   the key-value memory's retrieval weights)
    M_t            M              [B, H, D, D]     memory after token t (M[i, j]: key i, value j)
    o_t            o              [B, T, H, D]     read-out, then RMSNorm, output gate, W_o
    w              conv_weight    [3*H*D, k]       depthwise kernel of the short convolution (k = 4)

    c_t   = SiLU(sum_{i=0..k-1} w[:, i] * x_{t-(k-1)+i})        (each channel on its own; x_{<0} = 0 or the past)
    M_t   = zeta_t M_{t-1} + outer(k_t, v_t),   o_t = M_t^T q_t   (q_t scaled by D^-1/2)
    log zeta_t = logsigmoid(w_a . n_t + c_a) / GATE_NORMALIZER
    out_t = W_o (RMSNorm(o_t) * SiLU(W_g n_t)),   the RMSNorm per head

The memory is the pair readout's with key k_t for s_{t-1} and value v_t for (1 - gamma_t) b_t:
exactly :func:`readout.decayed_attention`, which the fast form calls. Forms (tests/model/test_gla.py
holds them equal): ``mode="loop"``, ``mode="fast"`` (default) and :func:`short_conv_step` /
:func:`gla_step` (one token, for generation).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_axes, check_form, check_heads, check_layer_input, check_short_conv_input, check_state
from .readout import decayed_attention, normal_init
from .recording import Recorder
from .running_state import DEFAULT_CHUNK, log_gate

# flash-linear-attention's simple-GLA default: log zeta = logsigmoid(.) / 16, so at
# initialization (logit 0) zeta = 2^(-1/16) ~ 0.958: a half-life of 16 tokens
GATE_NORMALIZER = 16


# --- the short causal convolution: depthwise, kernel k ---------------------------------------

def short_conv(x, weight, past=None, activation: bool = True, mode: str = "fast"):
    """y_t = act(sum_i w[:, i] x_{t-(k-1)+i}), x [B, T, C], weight [C, k], past [B, k-1, C] or None.

    ``activation``: SiLU (True) or none. Returns y [B, T, C]."""
    check_short_conv_input(x, weight, past, mode)                   # input checks (checks.py)
    k = weight.shape[-1]
    if past is None:
        past = x.new_zeros(x.shape[0], k - 1, x.shape[2])            # [B, k-1, C]
    xp = torch.cat([past, x], dim=1)                                # [B, k-1+T, C]
    T = x.shape[1]
    if mode == "loop":  # the sum over taps, written out
        y = sum(xp[:, i:i + T] * weight[:, i] for i in range(k))    # [B, T, C]
    else:  # the same sum as one grouped conv1d (channels first)
        y = F.conv1d(xp.transpose(1, 2), weight.unsqueeze(1), groups=weight.shape[0]).transpose(1, 2)
    return F.silu(y) if activation else y


def short_conv_step(x_t, past, weight, activation: bool = True):
    """One token: x_t [B, C], past [B, k-1, C] -> (y_t [B, C], new past [B, k-1, C])."""
    window = torch.cat([past, x_t.unsqueeze(1)], dim=1)             # [B, k, C]: x_{t-k+1} .. x_t
    y_t = (window * weight.T).sum(dim=1)                            # [B, C]
    return (F.silu(y_t) if activation else y_t), window[:, 1:]


def next_past(x, past, k: int):
    """The last k-1 inputs after x [B, T, C] (older ones from ``past`` when T < k-1)."""
    if past is None:
        past = x.new_zeros(x.shape[0], k - 1, x.shape[2])
    return torch.cat([past, x], dim=1)[:, x.shape[1]:]              # [B, k-1, C]


# --- the memory: M_t = zeta_t M_{t-1} + outer(k_t, v_t), o_t = M_t^T q_t ----------------------

def gla_step(M, q_t, k_t, v_t, alpha_t):
    """One token: M [B, H, D, D] (None = zeros), q_t, k_t, v_t [B, H, D], alpha_t [B, H] -> (o_t, M_t)."""
    # M_t = zeta_t M_{t-1} + outer(k_t, v_t)
    M = k_t.unsqueeze(-1) * v_t.unsqueeze(-2) + (0 if M is None else alpha_t[..., None, None] * M)
    # o_t = M_t^T q_t
    return (q_t.unsqueeze(-1) * M).sum(dim=-2), M                   # [B, H, D], [B, H, D, D]


def gla(q, k, v, alpha, M0=None, mode: str = "fast", chunk_size: int = DEFAULT_CHUNK):
    """(o [B, T, H, Dv], M_last [B, H, Dk, Dv]) for q, k [B, T, H, Dk], v [B, T, H, Dv], alpha [B, T, H]."""
    # input checks (checks.py): clear errors for a wrong mode, chunk size, shape, dtype or device
    check_form(mode, chunk_size)
    check_axes(("q", q, "B T H Dk"), ("k", k, "B T H Dk"), ("v", v, "B T H Dv"), ("alpha", alpha, "B T H"),
               ("the initial state", M0, "B H Dk Dv"))
    if mode == "loop":
        M, os = M0, []
        for t in range(q.shape[1]):
            o_t, M = gla_step(M, q[:, t], k[:, t], v[:, t], alpha[:, t])
            os.append(o_t)
        return torch.stack(os, dim=1), M                            # [B, T, H, Dv]
    # exactly the pair readout's chunked attention: query q, key k, value v, decay alpha
    o, M = decayed_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                             log_gate(alpha).transpose(1, 2), M0, chunk_size)  # [B, H, T, Dv]
    return o.transpose(1, 2), M                                     # [B, T, H, Dv]


# --- the layer ----------------------------------------------------------------------------------

class GLAMixer(Recorder, nn.Module):
    """The simple-GLA time mixer: ``forward(n, state=None) -> (o, state)``, n, o [B, T, d].

    state = {"conv": [B, k-1, 3*H*D] (the last k-1 projected inputs), "M": [B, H, D, D]}.
    While recording, record = {"alpha": [B, T, H]}. A call with T = 1 takes the step path.
    """

    def __init__(self, d_model: int, n_heads: int, conv_kernel: int = 4, mode: str = "fast",
                 chunk_size: int = DEFAULT_CHUNK):
        super().__init__()
        head_dim = check_heads(d_model, n_heads, conv_kernel=conv_kernel)  # checks.py
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, head_dim
        self.kernel, (self.mode, self.chunk_size) = conv_kernel, check_form(mode, chunk_size)
        # q, k, v (before the convolution) = W_qkv n: one Linear(d -> 3*H*D)
        self.proj = nn.Linear(d_model, 3 * d_model, bias=False)
        # w [3*H*D, k]: one short kernel per channel (nn.Conv1d's default init, fan-in k)
        self.conv_weight = nn.Parameter(nn.Conv1d(3 * d_model, 3 * d_model, conv_kernel, groups=3 * d_model,
                                                  bias=False).weight.detach().squeeze(1))
        # one logit per head and token, Linear(d -> H): here log zeta = logsigmoid(w_a n + c_a) /
        # GATE_NORMALIZER (DeltaNet, which reuses this layer, reads its beta from it)
        self.to_head_gate = nn.Linear(d_model, n_heads)
        # output gate g_t = SiLU(W_g n_t), per-head RMSNorm weight, W_o
        self.to_out_gate = nn.Linear(d_model, d_model, bias=False)
        self.norm = nn.RMSNorm(self.head_dim, eps=1e-5)
        self.out = nn.Linear(d_model, d_model, bias=False)
        for layer in (self.proj, self.to_head_gate, self.to_out_gate, self.out):
            normal_init(layer)

    def forward(self, n: torch.Tensor, state=None):
        check_layer_input(n, self.d_model)
        B, T, _ = n.shape
        H, D, k = self.n_heads, self.head_dim, self.kernel
        x = self.proj(n)                                            # [B, T, 3*H*D]
        past, M0 = check_state(state, {"conv": (B, k - 1, 3 * H * D), "M": (B, H, D, D)}, x,
                               "'conv' [B, k-1, 3*H*D] and 'M' [B, H, D, D]")
        if T == 1 and self.mode == "fast":  # generation: one step, O(1) per token
            z, _ = short_conv_step(x[:, 0], next_past(x[:, :0], past, k), self.conv_weight)
            z = z.unsqueeze(1)                                      # [B, 1, 3*H*D]
        else:
            z = short_conv(x, self.conv_weight, past, mode=self.mode)  # [B, T, 3*H*D]
        q, kk, v = z.view(B, T, 3, H, D).unbind(2)                   # [B, T, H, D] each
        o, M = self.memory(q, kk, v, n, M0)                         # [B, T, H, D], [B, H, D, D]
        # out_t = W_o (RMSNorm(o_t) * SiLU(W_g n_t))
        o = self.norm(o).reshape(B, T, H * D) * F.silu(self.to_out_gate(n))  # [B, T, d]
        return self.out(o), {"conv": next_past(x, past, k), "M": M}

    def memory(self, q, k, v, n, M0):
        """o [B, T, H, D] and M_last of the decayed memory (DeltaNet overrides this one method)."""
        # zeta_t = exp(logsigmoid(w_a n_t + c_a) / GATE_NORMALIZER)
        alpha = torch.exp(F.logsigmoid(self.to_head_gate(n)) / GATE_NORMALIZER)  # [B, T, H]
        self.save_record(alpha=alpha)
        q = q * self.head_dim ** -0.5                               # scaled as in attention
        if q.shape[1] == 1 and self.mode == "fast":
            o, M = gla_step(M0, q[:, 0], k[:, 0], v[:, 0], alpha[:, 0])
            return o.unsqueeze(1), M                                # [B, 1, H, D]
        return gla(q, k, v, alpha, M0, self.mode, self.chunk_size)
