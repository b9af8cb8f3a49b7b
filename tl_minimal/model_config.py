"""The config object a language model is built from, passed whole (as nanoGPT passes GPTConfig).

:func:`tl_minimal.build_model` checks a variant's settings (registry.py) and packs them here; every
model class and mixer reads its sizes from it by name. A setting the variant does not use is None;
``kv`` (kv_fusion.KVConfig) is None without the key-value memory. ``config.settings()`` gives the
flat dict back (what ``model.config`` shows and results files save).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .kv_fusion import KVConfig

KV_SETTINGS = tuple(f.name for f in dataclasses.fields(KVConfig))


@dataclass(frozen=True)
class ModelConfig:
    """Everything one language model is built from; fields in the order of the registry's table."""

    variant: str                   # a name in tl_minimal.VARIANTS (a variant or a preset)
    vocab_size: int                # V
    d_model: int                   # d
    n_layers: int
    n_heads: int                   # H
    max_seq_len: int               # learned positions 0 .. max_seq_len - 1
    dropout: float
    state_dim: int | None = None   # S: the running state and pair memory size
    mode: str | None = None        # "fast" or "loop" for the recurrent parts
    lam_bias: float | None = None  # initial bias of the keep gate lambda
    gam_bias: float | None = None  # initial bias of the pair gate gamma
    num_slots: int | None = None   # K: slots of the slot memory
    conv_kernel: int | None = None
    conv_causal: bool | None = None
    kv: KVConfig | None = None     # the key-value memory (gated hybrids only)
    init: str | None = None        # None / "paper": N(0, 0.02); "fan_in", "fan_in_all" (models.py)
    key_source: str | None = None  # the ladder's six choices (ladder.py's table): "state" or "current"
    write: str | None = None       # "convex" or "additive"
    right_query: bool | None = None
    out_norm: bool | None = None
    features: str | None = None    # "tanh" or "conv"
    gate_norm: float | None = None  # gamma = exp(logsigmoid(.) / gate_norm)

    @classmethod
    def from_settings(cls, variant: str, vocab_size: int, settings: dict) -> ModelConfig:
        """A config from a checked settings dict (registry.resolve_config's result)."""
        kv = {k: settings[k] for k in KV_SETTINGS if k in settings}
        plain = {k: v for k, v in settings.items() if k not in kv}
        return cls(variant=variant, vocab_size=vocab_size, kv=KVConfig(**kv) if kv else None, **plain)

    def settings(self) -> dict:
        """The settings as ``build_model`` takes them: None ones left out, the key-value memory's flattened in."""
        out = {}
        for field in dataclasses.fields(self)[2:]:  # after variant and vocab_size
            value = getattr(self, field.name)
            if field.name == "kv":
                out.update(dataclasses.asdict(value) if value is not None else {})
            elif value is not None:
                out[field.name] = value
        return out
