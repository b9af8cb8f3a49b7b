"""The family's models: the same stack as models.py with a relative's layer as the mixer.

The relatives are concept files of their own (gla.py, h3.py, deltanet.py, retnet.py) and the
ablations key_source.py and ladder.py; this file wires each into a language model and names its
settings (the registry adds both tables to its own). A relative is one line of :data:`RELATIVES`
(docs/add_a_relative.md): its mixer class and settings.

    variant             mixer in every block                                   settings beyond COMMON
    gla                 GLAMixer: q, k, v of the token, scalar decay per head  mode, conv_kernel 4
    h3                  H3Mixer: shifted keys, diagonal decayed K v^T, gated q  mode, conv_kernel 4
    deltanet            DeltaNetMixer: S_t = S_{t-1}(I - beta k k^T) + beta v k^T  mode, conv_kernel 4
    retnet              RetNetMixer: M_t = gamma_h M_{t-1} + k v^T, fixed gamma_h  mode
    triple_key_shift    the triple-latent layer, key a_{tau-1} (a token shift)  state_dim, mode, gam_bias
    triple_key_current  the triple-latent layer, key a_tau (the written token)  state_dim, mode, gam_bias
    conv_only           triple_hybrid with lambda = gamma = 0 (no memory)       state_dim, mode, the conv
    transformer_rope    the Transformer with rotary positions, no learned table  (none)
    ladder              LadderMixer, rung 0 (ladder_1 .. 7, gla_short_start: presets)  state_dim, mode, ...
"""

from __future__ import annotations

import torch
from torch import nn

from .deltanet import DeltaNetMixer
from .gla import GLAMixer
from .h3 import H3Mixer
from .key_source import KeySourceMixer
from .ladder import GLA_SHORT_START, RUNGS, LadderMixer
from .model_config import ModelConfig
from .models import LanguageModel, TransformerLM, TripleHybridLM
from .retnet import RetNetMixer
from .transformer import CausalSelfAttention

# the relatives: a mode, and the kernel of their short causal convolution (4, as in Mamba-2 and
# flash-linear-attention); always causal, so they take no conv_causal
RELATIVE = {"mode": "fast", "conv_kernel": 4}
# variant -> (its mixer class, its settings beyond COMMON with their defaults). Its model is RelativeLM:
# the shared stack with mixer(d_model, n_heads, **settings) in every block, each setting read from the
# ModelConfig by name; adding a relative is one line here (and the import of its mixer)
RELATIVES: dict[str, tuple[type[nn.Module], dict]] = {
    "gla": (GLAMixer, RELATIVE),
    "h3": (H3Mixer, RELATIVE),
    "deltanet": (DeltaNetMixer, RELATIVE),
    "retnet": (RetNetMixer, {"mode": "fast"}),
}
ABLATION = {"state_dim": 16, "mode": "fast"}
FAMILY_SETTINGS: dict[str, dict] = {
    **{name: settings for name, (_, settings) in RELATIVES.items()},
    "triple_key_shift": {**ABLATION, "gam_bias": 0.0},  # no lambda to learn: the key is a_{tau-1}
    "triple_key_current": {**ABLATION, "gam_bias": 0.0},
    "conv_only": {**ABLATION, "conv_kernel": 5, "conv_causal": True},  # the hybrid's convolution
    "transformer_rope": {},
    "ladder": {"state_dim": 16, "mode": "fast", "lam_bias": 0.0, "conv_kernel": 4, **RUNGS[0]},
}
# the ladder's rungs and its reverse arm, as presets of ``ladder`` (the registry adds them to its own)
FAMILY_PRESETS: dict[str, tuple[str, dict]] = {f"ladder_{i}": ("ladder", RUNGS[i]) for i in range(1, len(RUNGS))}
FAMILY_PRESETS["gla_short_start"] = ("ladder", GLA_SHORT_START)


class RelativeLM(LanguageModel):
    """A relative's model (:data:`RELATIVES`), and the ladder's (ladder, its presets): the shared stack
    with the mixer in every block, ``mixer_class(d_model, n_heads, **{name: config.name for name in settings})``."""

    def make_mixer(self, config: ModelConfig) -> nn.Module:
        mixers = {**RELATIVES, "ladder": (LadderMixer, FAMILY_SETTINGS["ladder"])}
        mixer_class, settings = mixers[FAMILY_PRESETS.get(config.variant, (config.variant,))[0]]
        return mixer_class(config.d_model, config.n_heads, **{name: getattr(config, name) for name in settings})


# the key-source ablations (key_source.py): variant -> (key_source, memory)
KEY_SOURCE_VARIANTS = {"triple_key_shift": ("shift", True), "triple_key_current": ("current", True),
                       "conv_only": ("shift", False)}


class KeySourceLM(LanguageModel):
    """triple_key_shift, triple_key_current: triple-latent blocks whose key is a_{tau-1} (a token
    shift) or a_tau (the written token's), key_source.py."""

    def make_mixer(self, config):
        key_source, memory = KEY_SOURCE_VARIANTS[config.variant]
        c = config  # a gate the form does not learn has no bias setting (None)
        return KeySourceMixer(c.d_model, c.n_heads, c.state_dim, key_source=key_source, memory=memory,
                              mode=c.mode, lam_bias=c.lam_bias or 0.0, gam_bias=c.gam_bias or 0.0)


class ConvOnlyLM(TripleHybridLM):
    """conv_only: triple_hybrid with lambda = gamma = 0 in every block: only local mixing."""

    make_mixer = KeySourceLM.make_mixer


class NoPositions(nn.Module):
    """Stands in for the learned position table where attention rotates q and k instead: pos_t = 0."""

    def __init__(self, d_model: int):
        super().__init__()
        self.register_buffer("zero", torch.zeros(d_model), persistent=False)  # [d]

    def forward(self, positions):
        return self.zero.expand(len(positions), -1)  # [T, d]


class TransformerRoPELM(TransformerLM):
    """transformer_rope: the Transformer with rotary positions (transformer.py: rotary) in place of W_pos."""

    def make_mixer(self, config):
        return CausalSelfAttention(config.d_model, config.n_heads, rotary=True)

    def __init__(self, config):
        super().__init__(config)
        self.pos = NoPositions(config.d_model)


FAMILY_CLASSES = {**dict.fromkeys(RELATIVES, RelativeLM), "triple_key_shift": KeySourceLM,
                  "triple_key_current": KeySourceLM, "conv_only": ConvOnlyLM, "transformer_rope": TransformerRoPELM,
                  "ladder": RelativeLM}
