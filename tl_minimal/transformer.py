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

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads = d_model, n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)  # W_q, W_k, W_v stacked, with bias
        self.out = nn.Linear(d_model, d_model)  # W_o, c_o

    def forward(self, n, state=None):
        check_layer_input(n, self.d_model)                          # input checks (checks.py)
        B, T, d = n.shape
        H = self.n_heads
        # q_t, k_t, v_t = split(W_qkv n_t + c_qkv), one head each D = d / H
        q, k, v = self.qkv(n).view(B, T, 3, H, d // H).permute(2, 0, 3, 1, 4)  # 3 x [B, H, T, D]
        past = 0 if state is None else state["k"].shape[2]
        q, k = self.place(q, k, past)  # positions come from W_pos here; tl_research's rotary attention rotates
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

    def place(self, q, k, past: int):
        """A hook: q, k [B, H, T, D] at positions past.. (the cache keeps what it returns); as they are here."""
        return q, k
