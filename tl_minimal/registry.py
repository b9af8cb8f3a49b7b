"""The model registry: one function builds any variant by name, from checked settings; and the
family's models (models.py's stack with a relative's layer as the mixer).

    model = build_model("triple_hybrid", vocab_size=259, state_dim=8)

Every variant starts from the paper's byte-level protocol (d_model 64, 3 layers, 4 heads,
context 128, dropout 0.1) and adds its own settings. :data:`DEFAULTS` is the single table of
them (each setting is described where the model reads it: models.ModelConfig and
kv_fusion.KVConfig); a name that a variant does not use is an error, never a silent default.

Variants (docs/paper.md section 3)
    transformer              pre-LN attention baseline (174,848 parameters at the defaults)
    triple_latent            stacked triple-latent layers (state_dim 16: matched width)
    triple_slot              the same with K = num_slots learnable slots instead of the S x S memory
    triple_hybrid            a causal local convolution once before a triple_latent stack
    transformer_plus_triple  the Transformer plus one triple-latent layer on the token stream
    gated_hybrid_repaired    triple_hybrid + the key-value memory at the logits, our repair (GATED: tied W_qk, beta 10)
    gated_hybrid_paper       a preset (PRESETS) of gated_hybrid_repaired: the paper's configuration as coded
    gated_hybrid_printed     a preset: the paper's printed beta = 1/sqrt(D_kv), g_t = sigmoid(W_g q_t)
The family: the relatives, one line each in :data:`RELATIVES`
(docs/add_a_relative.md)
    gla, h3, deltanet, retnet  GLA / Mamba-2, H3, DeltaNet, RetNet's retention (gla.py, h3.py, ...)
The research variants (:data:`RESEARCH_VARIANTS`: the ablations of 06b, the ladder's rungs, the rotary
Transformer) live in the research package, which adds them by :func:`register_variant` when imported.
"""

from __future__ import annotations

import dataclasses

from torch import nn

from .checks import check_choice, check_conv_kernel, check_heads, check_mode, check_positive_ints, check_setting_types
from .deltanet import DeltaNetMixer
from .gla import GLAMixer
from .h3 import H3Mixer
from .kv_fusion import KVConfig
from .models import KV_SETTINGS, MODEL_CLASSES, LanguageModel, ModelConfig
from .retnet import RetNetMixer

COMMON = {"d_model": 64, "n_layers": 3, "n_heads": 4, "max_seq_len": 128, "dropout": 0.1}
RECURRENT = {"state_dim": 16, "mode": "fast", "lam_bias": 0.0, "gam_bias": 0.0}
CONV = {"conv_kernel": 5, "conv_causal": True}
# the paper's gated runs: S = 8, and KVConfig's defaults: assoc dim D_kv = 64, top-8 cosine
# scores at scale beta = 1, previous-token query, no write gate, the read gate inside the LayerNorm
GATED_PAPER = {"state_dim": 8, **dataclasses.asdict(KVConfig())}
# gated_hybrid_repaired: the paper's, with retrieval working from step 0 (RECALL_STUDY.md): one W_qk for query
# and key (an exact repeat scores cos = 1 at initialization) and a learnable beta from 10 (a sharp softmax over
# cosines in [-1, 1]). Everything else as in the paper (top-8, previous-token query, read gate inside the norm).
GATED = {**GATED_PAPER, "tie_qk": True, "score_scale": 10.0, "learnable_score_scale": True}
# the paper as printed (docs/paper.md section 3.6): its score exp(q^.k^ / sqrt(d_a)), beta = 1/sqrt(D_kv) ("printed"
# follows assoc_dim), and its read gate sigmoid(W_g q_t) * m_t; where text and code differ, GATED_PAPER is the code
GATED_PRINTED = {**GATED_PAPER, "score_scale": "printed", "read_gate": "query_vector"}

# the relatives: a mode, and the kernel of their short causal convolution (4, as in Mamba-2 and
# flash-linear-attention; always causal). variant -> (mixer class, its settings beyond COMMON); its model
# is RelativeLM, mixer(d_model, n_heads, **settings) in every block; a new relative is one line here
RELATIVE = {"mode": "fast", "conv_kernel": 4}
RELATIVES: dict[str, tuple[type[nn.Module], dict]] = {
    "gla": (GLAMixer, RELATIVE),
    "h3": (H3Mixer, RELATIVE),
    "deltanet": (DeltaNetMixer, RELATIVE),
    "retnet": (RetNetMixer, {"mode": "fast"}),
}

DEFAULTS: dict[str, dict] = {
    "transformer": {**COMMON},
    "triple_latent": {**COMMON, **RECURRENT},
    "triple_slot": {**COMMON, **RECURRENT, "num_slots": 8},
    "triple_hybrid": {**COMMON, **RECURRENT, **CONV},
    "transformer_plus_triple": {**COMMON, **RECURRENT},
    "gated_hybrid_repaired": {**COMMON, **RECURRENT, **CONV, **GATED},
}
# named ModelConfig presets (a variant with fixed settings): the paper's gated runs, as coded and as printed
PRESETS: dict[str, tuple[str, dict]] = {"gated_hybrid_paper": ("gated_hybrid_repaired", GATED_PAPER),
                                        "gated_hybrid_printed": ("gated_hybrid_repaired", GATED_PRINTED)}
DEFAULTS.update({name: {**DEFAULTS[base], **fixed} for name, (base, fixed) in PRESETS.items()})
DEFAULTS.update({name: {**COMMON, **settings} for name, (_, settings) in RELATIVES.items()})  # the family
VARIANTS: tuple[str, ...] = tuple(DEFAULTS)  # the variants, the presets, then the family (registered ones: not)
# the research package's variants (tl_research.variants): known here only to say where they come from
RESEARCH_VARIANTS = ("triple_key_shift", "triple_key_current", "conv_only", "transformer_rope", "ladder",
                     *(f"ladder_{i}" for i in range(1, 8)), "gla_short_start")
_POSITIVE_INTS = ("d_model", "n_layers", "n_heads", "max_seq_len", "state_dim", "num_slots",
                  "conv_kernel", "assoc_dim")
_BOOLS = ("conv_causal", "learnable_score_scale", "write_gate", "gate_outside_norm", "tie_qk", "supersede")
_REALS = ("lam_bias", "gam_bias", "read_gate_bias")
# settings of every variant absent from its defaults (older results keep their settings): the values allowed
OPTIONAL = {"init": ("paper", "fan_in", "fan_in_all")}
RENAMED = {"gated_hybrid": "gated_hybrid_repaired"}  # old name -> new name (the repair is not the paper's model)


def _check_variant(variant) -> str:
    if variant in RENAMED:  # old name
        raise ValueError(f"variant {variant!r} is now called {RENAMED[variant]!r} (our repair; the paper's model is "
                         "'gated_hybrid_paper'); convert a saved file: `python -m tl_research.convert OLD.pt NEW.pt`")
    if variant in RESEARCH_VARIANTS and variant not in DEFAULTS:
        raise ValueError(f"{variant!r} is a research variant: `import tl_research` registers it")
    if variant not in DEFAULTS:
        raise ValueError(f"unknown variant {variant!r}: expected one of {', '.join(DEFAULTS)}")
    return variant


def register_variant(name: str, settings: dict, model_class: type[LanguageModel] | None = None,
                     base: str | None = None) -> None:
    """Add a variant from outside the course (``import tl_research`` adds its own so): ``model_class`` with
    ``settings``, its defaults beyond COMMON; or, with ``base``, a preset: that variant with ``settings`` fixed."""
    DEFAULTS[name] = {**(DEFAULTS[base] if base else COMMON), **settings}
    if base:
        PRESETS[name] = (base, settings)
    else:
        FAMILY_CLASSES[name] = model_class


def default_config(variant: str) -> dict:
    """The settings ``build_model(variant, V)`` uses when none are given (a fresh copy)."""
    return dict(DEFAULTS[_check_variant(variant)])


def setting_names(variant: str) -> set:
    """Every setting ``variant`` takes: its defaults' names and the optional ones (:data:`OPTIONAL`)."""
    return {*DEFAULTS[_check_variant(variant)], *OPTIONAL}


def resolve_config(variant: str, **config) -> dict:
    """Defaults updated by ``config``, every value checked; ValueError says what is expected."""
    allowed, names = DEFAULTS[_check_variant(variant)], setting_names(variant)
    unknown = sorted(set(config) - names)
    if unknown:
        raise ValueError(f"variant {variant!r} has no setting(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(sorted(names))}")
    for name in set(OPTIONAL) & set(config):
        check_choice(name, config[name], OPTIONAL[name])
    cfg = {**allowed, **config}
    check_setting_types(cfg, _POSITIVE_INTS, _BOOLS, _REALS)
    cfg.update({name: int(cfg[name]) for name in _POSITIVE_INTS if name in cfg})
    check_heads(cfg["d_model"], cfg["n_heads"])
    if "mode" in cfg:
        check_mode(cfg["mode"])
    if "conv_kernel" in cfg:
        check_conv_kernel(cfg["conv_kernel"], cfg.get("conv_causal", True))  # the family: always causal
    if "score_scale" in cfg:
        KVConfig(**{name: cfg[name] for name in KV_SETTINGS})  # the key-value memory's settings (checks.py)
    return cfg


def model_config(variant: str, vocab_size: int, **config) -> ModelConfig:
    """The checked :class:`ModelConfig` of a variant or a preset (what :func:`build_model` builds)."""
    cfg = resolve_config(variant, **config)
    check_positive_ints(vocab_size=vocab_size)                      # checks.py
    return model_class(variant).config_class.from_settings(variant, int(vocab_size), cfg)


class RelativeLM(LanguageModel):
    """A relative's model: its mixer in every block, its settings read from the config."""

    def make_mixer(self, config: ModelConfig) -> nn.Module:
        mixer_class, settings = RELATIVES[config.variant]
        return mixer_class(config.d_model, config.n_heads, **{name: getattr(config, name) for name in settings})


FAMILY_CLASSES: dict[str, type[LanguageModel]] = dict.fromkeys(RELATIVES, RelativeLM)  # and registered ones


def model_class(variant: str) -> type[LanguageModel]:  # a preset's: its variant's
    return {**MODEL_CLASSES, **FAMILY_CLASSES}[PRESETS.get(_check_variant(variant), (variant,))[0]]


def build_model(variant: str, vocab_size: int, **config) -> LanguageModel:
    """Build ``variant`` for a vocabulary of ``vocab_size`` tokens (settings: :data:`DEFAULTS`): a
    :class:`~tl_minimal.models.LanguageModel`, ``model(tokens [B, T] int64)`` -> logits [B, T, vocab_size];
    ``model.config`` is the :class:`~tl_minimal.models.ModelConfig` it was built from."""
    return model_class(variant)(model_config(variant, vocab_size, **config))

