"""Pieces every block shares: the GELU feed-forward and the pre-LayerNorm residual block.

A *mixer* is any module that mixes information across time (causal self-attention, the
triple-latent layer, the slot layer). It takes the normalized input ``n`` [B, T, d] and an
optional carried ``state`` and returns ``(o, state)``: the output [B, T, d] and the state
after the last token, so the same code serves training (whole sequence) and generation
(one token at a time).

    block   x <- x + Dropout(mixer(LN(x)));   x <- x + FFN(LN(x))
    FFN     Linear(d, 4d) -> GELU -> Linear(4d, d)

Internals for plots: every mixer (and the convolution and key-value paths) is a
:class:`tl_minimal.recording.Recorder`; see recording.py.
"""

from __future__ import annotations

import torch
from torch import nn


class FeedForward(nn.Module):
    """FFN(x) = W_2 GELU(W_1 x + c_1) + c_2, widening by ``mult`` (4 in the paper)."""

    def __init__(self, d_model: int, mult: int = 4, dropout: float = 0.0):
        super().__init__()
        self.up = nn.Linear(d_model, mult * d_model)
        self.down = nn.Linear(mult * d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, T, d] -> [B, T, d]
        return self.drop(self.down(nn.functional.gelu(self.up(x))))


class Block(nn.Module):
    """Pre-LN residual block around any mixer (attention, triple-latent, slots)."""

    def __init__(self, mixer: nn.Module, d_model: int, dropout: float = 0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.mixer = mixer
        self.drop = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, dropout=dropout)

    def forward(self, x, state=None):
        o, state = self.mixer(self.norm1(x), state=state)  # [B, T, d]
        x = x + self.drop(o)
        x = x + self.ffn(self.norm2(x))
        return x, state
