"""Pieces every block shares: the GELU feed-forward, the pre-LayerNorm residual block, and the
switch that lets a module keep its internals for plots.

A *mixer* is any module that mixes information across time (causal self-attention, the
triple-latent layer, the slot layer). It takes the normalized input ``n`` [B, T, d] and an
optional carried ``state`` and returns ``(o, state)``: the output [B, T, d] and the state
after the last token, so the same code serves training (whole sequence) and generation
(one token at a time).

    block   x <- x + Dropout(mixer(LN(x)));   x <- x + FFN(LN(x))
    FFN     Linear(d, 4d) -> GELU -> Linear(4d, d)

Internals for plots: every mixer (and the convolution and key-value paths) is a
:class:`Recorder`. Inside ``with recording(model, snapshot_at=..., attention=...)`` each of them
keeps what it computed (gates, states, retrieval weights) in its ``record`` attribute;
outside, they keep nothing. So the forward pass has no extra argument to thread through
every block: ``LanguageModel.internals`` switches recording on, runs the model once and
collects the records.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn


class Recorder:
    """Mixin for a module that can keep its internals (detached tensors) for plots.

    ``recording`` is None (the default: keep nothing) or the options of the current
    recording, e.g. {"snapshot_at": (0, 9), "attention": True}; ``record`` is the dict the
    module kept on its last forward call while recording.
    """

    recording: dict | None = None
    record: dict | None = None

    def keep(self, **internals) -> None:
        """Store ``internals`` (tensors detached) as this module's record, if recording."""
        if self.recording is not None:
            self.record = {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in internals.items()}


@contextmanager
def recording(module: nn.Module, **options):
    """Inside the block every Recorder in ``module`` (itself included) keeps its last record.

    Records of an earlier recording are cleared on entry; on exit recording stops and the
    records stay readable until the next recording.
    """
    recorders = [m for m in module.modules() if isinstance(m, Recorder)]
    for m in recorders:
        m.recording, m.record = dict(options), None
    try:
        yield recorders
    finally:
        for m in recorders:
            m.recording = None


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
