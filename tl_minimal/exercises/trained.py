"""Tiny trained models for the exercises: seconds of training, then look at their internals.

    model, info = tiny_model("triple_latent")        # trained on bytes of WikiText-2 (or recall)
    tokens = sample_tokens(info, batch=2)            # [2, T] int64 from the same source
    parts = layer_inputs(model, tokens)              # a, b, q_left, q_right [B, T, H, S], lam, gam [B, T, H]

The models are small (d_model 32, 2 layers, 2 heads, S = 8, context 64) and train for
``config.pick(150, 8)`` steps: enough for the gates to move away from their initial 0.5, not
enough to be good language models. Everything is seeded, on the CPU, so a notebook's plots
come out the same on every run of the same machine.
"""

from __future__ import annotations

import torch

from .. import build_model
from ..data.recall import RecallSampler
from ..data.text import DataUnavailable, WindowSampler, load_split
from ..training.config import pick
from ..training.train import seed_everything, train
from .harness import one_thread

TINY = {"d_model": 32, "n_layers": 2, "n_heads": 2, "max_seq_len": 64, "dropout": 0.0}
SEQ_LEN, BATCH, RECALL_VOCAB = 64, 8, 64


def _text_tokens():
    try:
        return load_split("validation").tokens
    except DataUnavailable:
        return None


def tiny_model(variant: str, task: str = "text", steps: int | None = None, seed: int = 0, **config):
    """Build and train a tiny ``variant`` on "text" (WikiText-2 bytes; recall when unavailable) or "recall".

    Returns (model in eval mode on the CPU, info) with info = {"task", "losses", "tokens" (text only)}.
    """
    steps = steps or pick(150, 8)
    tokens = _text_tokens() if task == "text" else None
    if task == "text" and tokens is None:
        print("WikiText-2 is not available here (see README, Data): training on the recall task instead")
        task = "recall"
    sizes = {**TINY, **({"state_dim": 8} if variant != "transformer" else {}), **config}
    seed_everything(seed)
    if task == "text":
        model = build_model(variant, 259, **sizes)
        batches = WindowSampler(tokens, BATCH, SEQ_LEN, seed)
    else:
        model = build_model(variant, RECALL_VOCAB, **sizes)
        batches = RecallSampler(BATCH, seed, seq_len=SEQ_LEN)
    with one_thread():
        history = train(model, batches, steps, lr=3e-3, weight_decay=0.0, device="cpu", progress=False)
    model.eval()
    return model, {"task": task, "losses": history["loss"], "tokens": tokens}


def sample_tokens(info: dict, batch: int = 2, seed: int = 1) -> torch.Tensor:
    """A few sequences [batch, 64] from the model's task (fixed windows of text, or recall examples)."""
    if info["task"] == "text":
        return WindowSampler(info["tokens"], batch, SEQ_LEN, seed)(0)[0]
    return RecallSampler(batch, seed + 10_000, seq_len=SEQ_LEN)(0)[0]


@torch.no_grad()
def layer_inputs(model, tokens: torch.Tensor, layer: int = 0) -> dict:
    """What the triple-latent mixer of block ``layer`` computes from its input, before any recurrence.

    Returns {"a", "b", "q_left", "q_right": [B, T, H, S], "lam", "gam": [B, T, H]} (and "g"
    [B, T, H, K], the slot weights, for slot models), all detached.
    """
    x = model.embed(tokens) + model.pos(torch.arange(tokens.shape[1], device=tokens.device))  # [B, T, d]
    x, _ = model.before_stack(x, None)
    for block in model.blocks[:layer]:
        x, _ = block(x)
    mixer = model.blocks[layer].mixer
    n = model.blocks[layer].norm1(x)  # [B, T, d]
    a, b, ql, qr, lam, gam = mixer.project(n)
    out = {"a": a, "b": b, "q_left": ql, "q_right": qr, "lam": lam, "gam": gam}
    if hasattr(mixer, "to_slots"):
        B, T = tokens.shape
        out["g"] = torch.softmax(mixer.to_slots(n).view(B, T, mixer.n_heads, mixer.num_slots), dim=-1)
    return out
