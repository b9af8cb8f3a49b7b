"""The research variants: model variants that only the research studies train, added to the course's
registry (``tl_minimal.registry.register_variant``) when ``tl_research`` is imported; then
``build_model("ladder_3", V)`` works as for any course variant.

    triple_key_shift    the triple-latent layer, key a_{tau-1} (a token shift; tl_minimal.key_source)
    triple_key_current  the triple-latent layer, key a_tau (the written token)
    conv_only           triple_hybrid with lambda = gamma = 0 (no memory)
    transformer_rope    the Transformer with rotary positions, no learned table
    ladder              LadderMixer, rung 0; ladder_1 .. 7 and gla_short_start are its presets (ladder.py)

Rotary positions (Su et al. 2021), D the head size, w_i = 10000^(-2i/D), x_a = x[:D/2], x_b = x[D/2:]:
    R_t x = (x_a cos(t w_i) - x_b sin(t w_i), x_a sin(t w_i) + x_b cos(t w_i))
"""

from __future__ import annotations

import torch

from tl_minimal.key_source import KeySourceMixer
from tl_minimal.ladder import GLA_SHORT_START, RUNGS
from tl_minimal.models import LanguageModel, ModelConfig, TransformerLM, TripleHybridLM
from tl_minimal.registry import register_variant
from tl_minimal.transformer import CausalSelfAttention

from .ladder import LadderLM

# the key-source ablations: variant -> (key_source, memory); gates not learned have bias None
KEY_SOURCE_VARIANTS = {"triple_key_shift": ("shift", True), "triple_key_current": ("current", True),
                       "conv_only": ("shift", False)}


class KeySourceLM(LanguageModel):
    """triple_key_shift, triple_key_current: the triple-latent layer keyed by a_{tau-1} or a_tau."""

    def make_mixer(self, c: ModelConfig):
        key_source, memory = KEY_SOURCE_VARIANTS[c.variant]
        return KeySourceMixer(c.d_model, c.n_heads, c.state_dim, key_source=key_source, memory=memory,
                              mode=c.mode, lam_bias=c.lam_bias or 0.0, gam_bias=c.gam_bias or 0.0)


class ConvOnlyLM(TripleHybridLM):
    """conv_only: triple_hybrid with lambda = gamma = 0 in every block: only local mixing."""

    make_mixer = KeySourceLM.make_mixer


def rotary(x: torch.Tensor, start: int) -> torch.Tensor:
    """R_t x for x [B, H, T, D] at absolute positions start .. start+T-1 (D even)."""
    T, D = x.shape[-2], x.shape[-1]
    w = 10000.0 ** (-torch.arange(D // 2, device=x.device, dtype=x.dtype) * 2 / D)  # w_i  [D/2]
    angle = torch.arange(start, start + T, device=x.device, dtype=x.dtype)[:, None] * w  # t w_i  [T, D/2]
    cos, sin = angle.cos(), angle.sin()  # [T, D/2]
    a, b = x[..., : D // 2], x[..., D // 2 :]  # [B, H, T, D/2] each
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)  # [B, H, T, D]


class RotaryAttention(CausalSelfAttention):
    """Causal self-attention with q_t <- R_t q_t, k_t <- R_t k_t (the cache keeps rotated keys)."""

    def __init__(self, d_model: int, n_heads: int):
        if d_model % n_heads != 0 or (d_model // n_heads) % 2:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}) into heads of even "
                             "size (rotary pairs)")
        super().__init__(d_model, n_heads)

    def place(self, q, k, past: int):
        return rotary(q, past), rotary(k, past)  # [B, H, T, D] each


class TransformerRoPELM(TransformerLM):
    """transformer_rope: the Transformer with rotary positions (RotaryAttention) in place of W_pos."""

    def make_mixer(self, config):
        return RotaryAttention(config.d_model, config.n_heads)

    def __init__(self, config):
        super().__init__(config)
        self.pos = None  # no learned position table: pos_t = 0


ABLATION = {"state_dim": 16, "mode": "fast"}
register_variant("triple_key_shift", {**ABLATION, "gam_bias": 0.0}, KeySourceLM)  # no lambda: the key is a_{tau-1}
register_variant("triple_key_current", {**ABLATION, "gam_bias": 0.0}, KeySourceLM)
register_variant("conv_only", {**ABLATION, "conv_kernel": 5, "conv_causal": True}, ConvOnlyLM)  # the hybrid's conv
register_variant("transformer_rope", {}, TransformerRoPELM)
register_variant("ladder", {"state_dim": 16, "mode": "fast", "lam_bias": 0.0, "conv_kernel": 4, **RUNGS[0]}, LadderLM)
for i in range(1, len(RUNGS)):  # the ladder's rungs and its reverse arm, as presets of ``ladder``
    register_variant(f"ladder_{i}", RUNGS[i], base="ladder")
register_variant("gla_short_start", GLA_SHORT_START, base="ladder")
