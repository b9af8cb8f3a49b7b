"""The language models: their config, the block, one base class, and each variant as a small
assembly of mixers (docs/paper.md sections 2.2 and 3).

    e_t = E[token_t]                              token embedding        [B, T, d]
    x_t = e_t + pos_t,   pos_t = W_pos[t]         learned absolute position
    x   <- before_stack(x)                        (the hybrid's local convolution)
    x   <- Block(mixer)(x), n_layers times        x <- x + Dropout(mixer(LN(x)));  x <- x + FFN(LN(x))
    h_t = LN(x_t)                                 final LayerNorm
    h_t <- h_t + after_stack(e)_t                 (late fusion: kv memory or side triple layer)
    logits_t = W_vocab h_t                        head tied to E, no bias (W_vocab (h_t + z_t): one matmul)

A *mixer* (attention, the triple-latent layer, a relative) mixes across time: ``mixer(n, state)``
takes the normalized input n [B, T, d] and a carried state (None at the start) and returns
(o [B, T, d], the state after the last token), for training and generation alike.

Glossary (symbol -> code name -> shape)
    E, W_vocab   embed.weight (= head.weight)   [V, d]
    W_pos        pos.weight                     [max_seq_len, d]   (pos_t = W_pos[t]; P is the pair memory)
    state        dict                           {"t": tokens seen, "batch_size", "layers": [per
                                                 block mixer state], "before", "after"}

Build models with :func:`tl_minimal.build_model`, which checks a variant's settings (registry.py)
and packs them in a :class:`ModelConfig`, passed whole (as nanoGPT passes GPTConfig).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from .checks import check_generate_args, check_positive_ints, check_step_token, check_tokens, trust_ids
from .conv import LocalConv
from .kv_fusion import KVConfig, KVFusion
from .readout import TripleLatentMixer
from .recording import recording
from .slots import SlotMixer
from .transformer import CausalSelfAttention

KV_SETTINGS = tuple(f.name for f in dataclasses.fields(KVConfig))


@dataclass(frozen=True)
class ModelConfig:
    """Everything one language model is built from; fields in the order of the registry's table. A
    setting the variant does not use is None; ``kv`` is None without the key-value memory."""

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
    init: str | None = None        # None / "paper": N(0, 0.02); "fan_in", "fan_in_all" (_reference_init)

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
    """Pre-LN residual block around any mixer: x <- x + Dropout(mixer(LN(x))); x <- x + FFN(LN(x))."""

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


def _reference_init(*modules: nn.Module, init: str | None = None) -> None:
    """GPT-style init, as in the reference: Linear / Embedding weights N(0, 0.02), biases 0. init="fan_in"
    keeps PyTorch's Linear default, U(+-1/sqrt(fan_in)), and draws embeddings N(0, 1/d) ("fan_in_all": also
    the mixers' Linear weights, in LanguageModel)."""
    fan_in = init in ("fan_in", "fan_in_all")
    for m in (m for root in modules for m in root.modules() if isinstance(m, (nn.Linear, nn.Embedding))):
        if fan_in and isinstance(m, nn.Linear):
            m.reset_parameters()
        else:
            nn.init.normal_(m.weight, mean=0.0, std=m.weight.shape[1] ** -0.5 if fan_in else 0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)


class LanguageModel(nn.Module):
    """Shared skeleton of every variant: run (the one forward, with a carried state), internals (for
    plots), step, generate and the input checks; subclasses choose the mixer and the two hooks."""

    config_class: ClassVar[type[ModelConfig]] = ModelConfig  # what build_model packs the settings in

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.variant, self.vocab_size, self.config = config.variant, config.vocab_size, config
        d, self.max_seq_len = config.d_model, config.max_seq_len
        self.embed = nn.Embedding(self.vocab_size, d)  # E  [V, d]
        self.pos = nn.Embedding(self.max_seq_len, d)  # W_pos  [max_seq_len, d]
        self.blocks = nn.ModuleList(Block(self.make_mixer(config), d, config.dropout)
                                    for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, self.vocab_size, bias=False)
        _reference_init(self.embed, self.pos, *(b.ffn for b in self.blocks), init=config.init)
        for m in (m for b in self.blocks for m in b.mixer.modules() if config.init == "fan_in_all"):
            if isinstance(m, nn.Linear):  # PyTorch's default weight scale, as attention's projections have
                nn.init.kaiming_uniform_(m.weight, a=5 ** 0.5)
        self.head.weight = self.embed.weight  # tied: W_vocab = E

    # --- what a variant chooses ------------------------------------------------------------
    def make_mixer(self, config: ModelConfig) -> nn.Module:
        """The time mixer of one block."""
        raise NotImplementedError

    def before_stack(self, x, state):
        """Hook before the blocks: x [B, T, d] -> (x, state). Identity by default."""
        return x, None

    def after_stack(self, h, e, state):
        """Hook after the final LN: (h, raw embeddings e) -> (h + z, state). Identity by default."""
        return h, None

    def check_can_step(self) -> None:
        """Raise if this model cannot continue from a carried state (the leaky conv cannot)."""

    def check_tokens(self, tokens, start: int = 0) -> None:
        """int64 ids [B, T] in [0, vocab_size) at positions start.. below max_seq_len (checks.py)."""
        check_tokens(tokens, self.vocab_size, self.max_seq_len, start)

    def _start(self, state, tokens) -> int:
        """Check ``tokens`` and ``state``; the position of the first token: 0 or state["t"]."""
        t0 = 0
        if state is not None:
            if not isinstance(state, dict) or "t" not in state or "layers" not in state:
                raise ValueError("state must be None or a dict from init_state() / run() / step()")
            self.check_can_step()
            t0 = state["t"]
        self.check_tokens(tokens, t0)
        if state is not None and state.get("batch_size", len(tokens)) != len(tokens):
            raise ValueError(f"state is for batch size {state['batch_size']}, tokens have batch size {len(tokens)}")
        return t0

    # --- the one forward implementation ------------------------------------------------------
    extra_records: ClassVar[dict[str, str]] = {}  # record key -> a Recorder's attribute outside the blocks

    def run(self, tokens, state=None):
        """tokens [B, T] -> (logits [B, T, V], state after the last token); ``state`` (from
        :meth:`init_state` or an earlier call) continues a sequence from position state["t"]."""
        t0 = self._start(state, tokens)
        B, T = tokens.shape
        carried = (lambda part: None) if state is None else state.get
        # e_t = E[token_t];  x_t = e_t + pos_t  (pos None: attention places q and k itself)
        e = self.embed(tokens)  # [B, T, d]
        x = e if self.pos is None else e + self.pos(torch.arange(t0, t0 + T, device=tokens.device))  # [B, T, d]
        x, before = self.before_stack(x, carried("before"))
        layers = []
        for i, block in enumerate(self.blocks):
            x, s = block(x, None if state is None else state["layers"][i])  # [B, T, d]
            layers.append(s)
        # h_t = LN(x_t), then late fusion h_t + z_t (when the variant has one)
        h, after = self.after_stack(self.norm(x), e, carried("after"))  # [B, T, d]
        # logits_t = W_vocab h_t
        logits = self.head(h)  # [B, T, V]
        return logits, {"t": t0 + T, "batch_size": B, "layers": layers, "before": before, "after": after}

    def forward(self, tokens):
        """tokens [B, T] int64 -> logits [B, T, vocab_size]."""
        return self.run(tokens)[0]

    @torch.no_grad()
    def internals(self, tokens, snapshot_at=(), attention: bool = False):
        """The forward pass in eval mode with recording on: (logits, {"layers": [one dict per block], and
        :attr:`extra_records`' keys}). snapshot_at: positions t at which triple-latent layers keep P_t;
        attention=True: attention's weights record["attn"] [B, H, T, T]."""
        was_training = self.training
        self.eval()
        try:
            with recording(self, snapshot_at=tuple(snapshot_at), attention=attention):
                logits, _ = self.run(tokens)
        finally:
            self.train(was_training)
        record = {"layers": [block.mixer.record or {} for block in self.blocks]}
        record.update({key: getattr(self, name).record or {} for key, name in self.extra_records.items()})
        return logits, record

    # --- generation ---------------------------------------------------------------------------
    def init_state(self, batch_size: int) -> dict:
        """The state before the first token (every part empty); step() and run() continue it."""
        self.check_can_step()
        check_positive_ints(batch_size=batch_size)
        return {"t": 0, "batch_size": batch_size, "layers": [None] * len(self.blocks),
                "before": None, "after": None}

    def step(self, token, state):
        """One token per sequence: token [B] int64 -> (logits [B, V], state). O(1) for recurrent mixers."""
        check_step_token(token)
        logits, state = self.run(token[:, None], state)
        return logits[:, 0], state

    @torch.no_grad()
    def generate(self, prompt_tokens, n_new: int, temperature: float = 1.0, top_k=None, generator=None):
        """Sample ``n_new`` tokens after the prompt ([T0] or [B, T0]) in eval mode; returns prompt + new
        tokens, at most max_seq_len. temperature 0 is greedy; top_k keeps the k most likely tokens."""
        self.check_can_step()
        check_generate_args(n_new, temperature, top_k)
        single = isinstance(prompt_tokens, torch.Tensor) and prompt_tokens.dim() == 1
        tokens = prompt_tokens[None] if single else prompt_tokens
        self.check_tokens(tokens)
        T0 = tokens.shape[1]
        if T0 + n_new > self.max_seq_len:
            raise ValueError(f"prompt length {T0} + n_new {n_new} = {T0 + n_new} exceeds max_seq_len = "
                             f"{self.max_seq_len}; shorten the prompt or generate fewer tokens")
        was_training = self.training
        self.eval()
        try:
            with trust_ids():  # the prompt is checked above; sampled ids lie in [0, V): no sync per token
                logits, state = self.run(tokens)
                out, last = [tokens], logits[:, -1]  # [B, V]
                for i in range(n_new):
                    nxt = sample(last, temperature, top_k, generator)  # [B]
                    out.append(nxt[:, None])
                    if i + 1 < n_new:
                        last, state = self.step(nxt, state)
        finally:
            self.train(was_training)
        result = torch.cat(out, dim=1)  # [B, T0 + n_new]
        return result[0] if single else result


def sample(logits, temperature: float = 1.0, top_k=None, generator=None):
    """Draw one token per row from logits [B, V]: softmax(logits / temperature) over the top_k."""
    if temperature == 0:
        return logits.argmax(dim=-1)  # [B]
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]  # [B, 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = logits.softmax(dim=-1)  # [B, V]
    return torch.multinomial(probs, 1, generator=generator)[:, 0]  # [B]


# --- the variants -----------------------------------------------------------------------------

def triple_latent_mixer(config: ModelConfig) -> TripleLatentMixer:
    """The triple-latent layer of a block, or transformer_plus_triple's side layer."""
    c = config
    return TripleLatentMixer(c.d_model, c.n_heads, c.state_dim, mode=c.mode, lam_bias=c.lam_bias,
                             gam_bias=c.gam_bias)


class TransformerLM(LanguageModel):
    """transformer: causal self-attention blocks (transformer.py)."""

    def make_mixer(self, config):
        return CausalSelfAttention(config.d_model, config.n_heads)

    def __init__(self, config):
        super().__init__(config)
        _reference_init(*(b.mixer for b in self.blocks), init=config.init)


class TripleLatentLM(LanguageModel):
    """triple_latent: triple-latent blocks (readout.py)."""

    def make_mixer(self, config):
        return triple_latent_mixer(config)


class TripleSlotLM(LanguageModel):
    """triple_slot: slot-compressed pair memory blocks (slots.py)."""

    def make_mixer(self, config):
        c = config
        return SlotMixer(c.d_model, c.n_heads, c.state_dim, num_slots=c.num_slots, mode=c.mode,
                         lam_bias=c.lam_bias, gam_bias=c.gam_bias)


class TripleHybridLM(TripleLatentLM):
    """triple_hybrid: the causal local convolution (conv.py) once before a triple_latent stack."""

    extra_records: ClassVar[dict[str, str]] = {"conv": "conv"}

    def __init__(self, config):
        super().__init__(config)
        c = config
        self.conv = LocalConv(c.d_model, c.conv_kernel, c.dropout, causal=c.conv_causal, mode=c.mode)

    def before_stack(self, x, state):
        # x <- x + Dropout(GELU(Conv1d(x)))
        return self.conv(x, state)

    def check_can_step(self):
        self.conv.check_can_step()


class GatedHybridLM(TripleHybridLM):
    """gated_hybrid_repaired: triple_hybrid + the gated key-value memory of raw embeddings (kv_fusion.py)."""

    extra_records: ClassVar[dict[str, str]] = {"conv": "conv", "retrieval": "kv"}

    def __init__(self, config):
        super().__init__(config)
        self.kv = KVFusion(config.d_model, config.kv, mode=config.mode)
        _reference_init(self.kv, init=config.init)
        self.kv.init_read_gate_bias()  # b_g: 0, or the setting read_gate_bias

    def after_stack(self, h, e, state):
        # logits = W_vocab h_t + W_vocab LN(g_t m_t)  ->  W_vocab (h_t + z_t)
        z, state = self.kv(e, state)  # [B, T, d]
        return h + z, state


class TransformerPlusTripleLM(TransformerLM):
    """transformer_plus_triple: the Transformer, plus ONE triple-latent layer reading LN(e)."""

    extra_records: ClassVar[dict[str, str]] = {"side": "side"}

    def __init__(self, config):
        super().__init__(config)
        self.side_in = nn.LayerNorm(config.d_model)
        self.side = triple_latent_mixer(config)
        self.side_out = nn.LayerNorm(config.d_model)

    def after_stack(self, h, e, state):
        # c_t = TripleLatent(LN(e))_t: the layer reads the token stream, not the stack
        c, state = self.side(self.side_in(e), state)  # [B, T, d]
        # logits = W_vocab h_t + W_vocab LN(c_t)  ->  W_vocab (h_t + LN(c_t))
        return h + self.side_out(c), state


MODEL_CLASSES = {"transformer": TransformerLM, "triple_latent": TripleLatentLM, "triple_slot": TripleSlotLM,
                 "triple_hybrid": TripleHybridLM, "transformer_plus_triple": TransformerPlusTripleLM,
                 "gated_hybrid_repaired": GatedHybridLM}  # the family's models: registry.py
