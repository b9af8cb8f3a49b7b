"""The baseline's one specific piece (the pre-LN Transformer is assembled in models.py): causal
multi-head self-attention, as a mixer with a key-value cache.

Glossary (paper symbol -> code name -> shape); H heads, D = d / H per head
    n_t                 n         [B, T, d]      LayerNormed block input
    q_t, k_t, v_t       q, k, v   [B, H, T, D]   Linear(d, 3d, bias) split into three, then heads
    A_{t,u}             attn      [B, H, T, T']  softmax_u(q_t . k_u / sqrt(D)), u <= t
    y_t                 y         [B, T, d]      heads concatenated
    o_t = W_o y_t + c   o         [B, T, d]      Linear(d, d, bias)
    cache               state     {"k", "v": [B, H, T', D]}   all keys/values so far (T' of them)

    attention   A_{t,u} = softmax_{u <= t}(q_t . k_u / sqrt(D))       (causal: u > t masked)
    read        y_t = sum_{u <= t} A_{t,u} v_u,     o_t = W_o y_t + c_o
    rotary      R_t x = (x_a cos(t w_i) - x_b sin(t w_i), x_a sin(t w_i) + x_b cos(t w_i)),
                w_i = 10000^(-2i/D), x_a = x[:D/2], x_b = x[D/2:]  (transformer_rope; Su et al. 2021)

The state is the key-value cache (it grows with t), so one call on the whole sequence equals
token-by-token calls. The fast path is ``F.scaled_dot_product_attention``; A is formed explicitly
only when a recording asks for it (``recording(model, attention=True)`` -> record["attn"]).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_layer_input
from .recording import Recorder


def causal_mask(T: int, past: int, device) -> torch.Tensor:
    """Boolean [T, past+T]: query t (absolute past+t) may see key u iff u <= past+t."""
    q_pos = torch.arange(past, past + T, device=device)[:, None]  # [T, 1]
    k_pos = torch.arange(past + T, device=device)[None, :]  # [1, past+T]
    return k_pos <= q_pos  # [T, past+T]


def rotary(x: torch.Tensor, start: int) -> torch.Tensor:
    """R_t x for x [B, H, T, D] at absolute positions start .. start+T-1 (D even)."""
    T, D = x.shape[-2], x.shape[-1]
    w = 10000.0 ** (-torch.arange(D // 2, device=x.device, dtype=x.dtype) * 2 / D)  # w_i  [D/2]
    angle = torch.arange(start, start + T, device=x.device, dtype=x.dtype)[:, None] * w  # t w_i  [T, D/2]
    cos, sin = angle.cos(), angle.sin()  # [T, D/2]
    a, b = x[..., : D // 2], x[..., D // 2 :]  # [B, H, T, D/2] each
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)  # [B, H, T, D]


def attention_explicit(q, k, v, past: int):
    """The specification: weights formed explicitly. q [B, H, T, D], k/v [B, H, past+T, D]."""
    D = q.shape[-1]
    # A_{t,u} = softmax_{u <= t}(q_t . k_u / sqrt(D))
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # [B, H, T, past+T]
    scores = scores.masked_fill(~causal_mask(q.shape[2], past, q.device), float("-inf"))
    attn = scores.softmax(dim=-1)  # [B, H, T, past+T]
    # y_t = sum_u A_{t,u} v_u
    return attn @ v, attn  # [B, H, T, D], [B, H, T, past+T]


def attention_fast(q, k, v, past: int) -> torch.Tensor:
    """Same result through the fused kernel (flash / memory-efficient where available)."""
    T = q.shape[2]
    if past == 0:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, H, T, D]
    if T == 1:  # one new token sees the whole cache: no mask needed
        return F.scaled_dot_product_attention(q, k, v)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(T, past, q.device))


class CausalSelfAttention(Recorder, nn.Module):
    """Multi-head causal self-attention: ``forward(n, state=None) -> (o, state)``, state None (start
    of sequence) or the cache; while recording with attention=True, record["attn"] = [B, H, T, T']."""

    def __init__(self, d_model: int, n_heads: int, rotary: bool = False):
        super().__init__()
        if d_model % n_heads != 0 or (rotary and (d_model // n_heads) % 2):
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})"
                             + (" into heads of even size (rotary pairs)" if rotary else ""))
        self.d_model, self.n_heads, self.rotary = d_model, n_heads, rotary
        self.qkv = nn.Linear(d_model, 3 * d_model)  # W_q, W_k, W_v stacked, with bias
        self.out = nn.Linear(d_model, d_model)  # W_o, c_o

    def forward(self, n, state=None):
        check_layer_input(n, self.d_model)                          # input checks (checks.py)
        B, T, d = n.shape
        H = self.n_heads
        # q_t, k_t, v_t = split(W_qkv n_t + c_qkv), one head each D = d / H
        q, k, v = self.qkv(n).view(B, T, 3, H, d // H).permute(2, 0, 3, 1, 4)  # 3 x [B, H, T, D]
        past = 0 if state is None else state["k"].shape[2]
        if self.rotary:  # q_t <- R_t q_t, k_t <- R_t k_t (the cache keeps rotated keys)
            q, k = rotary(q, past), rotary(k, past)  # [B, H, T, D]
        if state is not None:
            k = torch.cat([state["k"], k], dim=2)  # [B, H, past+T, D]
            v = torch.cat([state["v"], v], dim=2)
        if self.record_options is not None and self.record_options.get("attention"):
            y, attn = attention_explicit(q, k, v, past)  # [B, H, T, D]
            self.save_record(attn=attn)
        else:
            y = attention_fast(q, k, v, past)  # [B, H, T, D]
        y = y.transpose(1, 2).reshape(B, T, d)  # [B, T, d]: heads side by side
        # o_t = W_o y_t + c_o
        return self.out(y), {"k": k, "v": v}
