"""Pieces every block shares: the GELU feed-forward and the pre-LayerNorm residual block.

A *mixer* (attention, the triple-latent layer, a relative) mixes across time: ``mixer(n, state)``
takes the normalized input n [B, T, d] and a carried state (None at the start) and returns
(o [B, T, d], the state after the last token), for training and generation alike.

    block   x <- x + Dropout(mixer(LN(x)));   x <- x + FFN(LN(x))
    FFN     Linear(d, 4d) -> GELU -> Linear(4d, d)
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
