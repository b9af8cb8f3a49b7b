"""The model registry: one function builds any variant by name, from checked settings.

    model = build_model("triple_hybrid", vocab_size=259, state_dim=8)

Every variant starts from the paper's byte-level protocol (d_model 64, 3 layers, 4 heads,
context 128, dropout 0.1) and adds its own settings. :data:`DEFAULTS` is the single table of
them; :func:`default_config` shows one variant's row, and a name that a variant does not use
is an error (so a typo never silently falls back to a default).

Variants (docs/paper.md section 3)
    transformer              pre-LN attention baseline (174,848 parameters at the defaults)
    triple_latent            stacked triple-latent layers (state_dim 16: matched width)
    triple_slot              the same with K learnable slots instead of the S x S memory
    triple_hybrid            a causal local convolution once before a triple_latent stack
    transformer_plus_triple  the Transformer plus one triple-latent layer on the token stream
    gated_hybrid             triple_hybrid plus the gated key-value memory fused at the logits,
                             with this repository's defaults (GATED below): one tied W_qk and a
                             learnable beta starting at 10, from the recall study
    gated_hybrid_paper       the paper's gated configuration (GATED_PAPER below), kept fixed so
                             the paper's numbers can always be rerun

Settings
    d_model, n_layers, n_heads, max_seq_len   sizes (positive ints; d_model % n_heads == 0)
    dropout                                   in [0, 1)
    state_dim, num_slots                      S and K of the triple-latent / slot memories
    mode                                      "fast" (default) or "loop" (the specification)
    lam_bias, gam_bias                        initial bias of the keep / pair gates (0: ~0.5)
    conv_kernel, conv_causal                  the hybrid's convolution (False: the paper's leak)
    assoc_dim, top_k, temperature, learnable_temperature, query_align, write_gate,
    gate_outside_norm, tie_qk, supersede      the key-value memory (see kv_fusion.py): D_kv,
                                              K, beta (the scale of the cosine scores), ...
"""

from __future__ import annotations

import numbers

from .checks import MODES
from .kv_fusion import QUERY_ALIGNS

COMMON = {"d_model": 64, "n_layers": 3, "n_heads": 4, "max_seq_len": 128, "dropout": 0.1}
RECURRENT = {"state_dim": 16, "mode": "fast", "lam_bias": 0.0, "gam_bias": 0.0}
CONV = {"conv_kernel": 5, "conv_causal": True}
# the paper's gated runs: S = 8, assoc dim D_kv = 64, top-8 cosine scores at scale beta = 1,
# previous-token query, no write gate, the read gate inside the LayerNorm
GATED_PAPER = {"state_dim": 8, "assoc_dim": 64, "top_k": 8, "temperature": 1.0,
               "learnable_temperature": False, "query_align": "previous", "write_gate": False,
               "gate_outside_norm": False, "tie_qk": False, "supersede": False}
# gated_hybrid's own defaults: the paper's, with retrieval made to work from step 0 (the recall
# study, data/results/RECALL_STUDY.md): one W_qk for query and key, so an exact repeat of a
# token scores cos = 1 at initialization, and a learnable scale beta starting at 10, so the
# softmax over cosines (in [-1, 1]) can be sharp instead of near uniform. Everything else as
# in the paper (top-8, previous-token query, read gate inside the LayerNorm).
GATED = {**GATED_PAPER, "tie_qk": True, "temperature": 10.0, "learnable_temperature": True}

DEFAULTS: dict[str, dict] = {
    "transformer": {**COMMON},
    "triple_latent": {**COMMON, **RECURRENT},
    "triple_slot": {**COMMON, **RECURRENT, "num_slots": 8},
    "triple_hybrid": {**COMMON, **RECURRENT, **CONV},
    "transformer_plus_triple": {**COMMON, **RECURRENT},
    "gated_hybrid": {**COMMON, **RECURRENT, **CONV, **GATED},
    "gated_hybrid_paper": {**COMMON, **RECURRENT, **CONV, **GATED_PAPER},
}
VARIANTS: tuple[str, ...] = tuple(DEFAULTS)

_POSITIVE_INTS = ("d_model", "n_layers", "n_heads", "max_seq_len", "state_dim", "num_slots",
                  "conv_kernel", "assoc_dim")
_BOOLS = ("conv_causal", "learnable_temperature", "write_gate", "gate_outside_norm", "tie_qk", "supersede")
_REALS = ("lam_bias", "gam_bias")


def _check_variant(variant) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    return variant


def default_config(variant: str) -> dict:
    """The settings ``build_model(variant, V)`` uses when none are given (a fresh copy)."""
    return dict(DEFAULTS[_check_variant(variant)])


def resolve_config(variant: str, **config) -> dict:
    """Defaults updated by ``config``, every value checked; ValueError says what is expected."""
    allowed = DEFAULTS[_check_variant(variant)]
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        raise ValueError(f"variant {variant!r} has no setting(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(sorted(allowed))}")
    cfg = {**allowed, **config}
    for name in _POSITIVE_INTS:
        if name in cfg:
            v = cfg[name]
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
            cfg[name] = int(v)
    for name in _BOOLS:
        if name in cfg and not isinstance(cfg[name], bool):
            raise ValueError(f"{name} must be True or False, got {cfg[name]!r}")
    for name in _REALS:
        if name in cfg and (isinstance(cfg[name], bool) or not isinstance(cfg[name], numbers.Real)):
            raise ValueError(f"{name} must be a real number, got {cfg[name]!r}")
    if cfg["d_model"] % cfg["n_heads"] != 0:
        raise ValueError(f"d_model ({cfg['d_model']}) must be divisible by n_heads ({cfg['n_heads']})")
    d = cfg["dropout"]
    if isinstance(d, bool) or not isinstance(d, numbers.Real) or not 0 <= d < 1:
        raise ValueError(f"dropout must be a number in [0, 1), got {d!r}")
    if "mode" in cfg and cfg["mode"] not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {cfg['mode']!r}")
    if "conv_causal" in cfg and not cfg["conv_causal"] and cfg["conv_kernel"] % 2 == 0:
        raise ValueError(f"conv_causal=False (symmetric padding) needs an odd conv_kernel, got {cfg['conv_kernel']}")
    if "top_k" in cfg:
        k = cfg["top_k"]
        if not (k is None or k == "all" or (isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1)):
            raise ValueError(f"top_k must be a positive int, 'all' or None (all entries), got {k!r}")
    if "temperature" in cfg:
        beta = cfg["temperature"]
        if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not beta > 0:
            raise ValueError(f"temperature must be a number > 0, got {beta!r}")
    if "query_align" in cfg and cfg["query_align"] not in QUERY_ALIGNS:
        raise ValueError(f"query_align must be one of {', '.join(QUERY_ALIGNS)}, got {cfg['query_align']!r}")
    return cfg


def build_model(variant: str, vocab_size: int, **config):
    """Build ``variant`` for a vocabulary of ``vocab_size`` tokens; see :data:`DEFAULTS` for settings.

    Returns a :class:`tl_minimal.models.LanguageModel`: ``model(tokens [B, T] int64)`` gives
    logits [B, T, vocab_size]; ``model.variant``, ``model.config`` and ``model.vocab_size`` say
    what was built.
    """
    from .models import MODEL_CLASSES  # models imports the mixers; keep the registry light

    cfg = resolve_config(variant, **config)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, numbers.Integral) or vocab_size < 1:
        raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
    return MODEL_CLASSES[variant](variant, int(vocab_size), cfg)
