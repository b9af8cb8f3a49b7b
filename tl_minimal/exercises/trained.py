"""Tiny trained models for the exercises: seconds of training, then look at their internals.

    model, info = tiny_model("triple_latent")        # trained on bytes of WikiText-2 (or recall)
    print(training_note(info))                       # steps, learning rate, loss in bits, baseline
    tokens = sample_tokens(info, batch=2)            # [2, T] int64 from the same source
    parts = layer_inputs(model, tokens)              # a, b, q_left, q_right [B, T, H, S], lam, gam [B, T, H]

Small models (d_model 32, 2 layers, 2 heads, S = 8, context 64), seeded, on the CPU, at a learning
rate ten times the notebooks' so that 150 steps move the gates away from their initial 0.5.
"""

from __future__ import annotations

import math

import torch

from .. import build_model
from ..data.recall import PAPER_LAYOUT, RecallSampler
from ..data.text import VOCAB_SIZE, DataUnavailable, Offline, WindowSampler, load_split
from ..training.config import pick
from ..training.evaluate import unigram_bits
from ..training.protocols import protocol
from ..training.train import seed_everything, train
from .harness import one_thread

TINY = {"d_model": 32, "n_layers": 2, "n_heads": 2, "max_seq_len": 64, "dropout": 0.0}
SEQ_LEN, BATCH, RECALL_VOCAB = 64, 8, 64
LR = 3e-3  # 10x the notebooks' protocol("lm").lr = 3e-4: 150 steps must do in seconds


def tiny_model(variant: str, task: str = "text", steps: int | None = None, seed: int = 0, **config):
    """Build and train a tiny ``variant`` on "text" (WikiText-2 bytes; recall when unavailable) or "recall".

    Returns (model in eval mode on the CPU, info) with info = {"task", "steps", "lr", "losses" (nats),
    "loss_bits", "unit", "baseline", "baseline_bits", "tokens" (text only)}.
    """
    steps, tokens = steps or pick(150, 8), None
    try:
        tokens = load_split("validation").tokens if task == "text" else None
    except (Offline, DataUnavailable) as exc:  # Offline is decided before any request: about a second
        why = f"offline: {exc.reason}; no local or cached copy" if isinstance(exc, Offline) else "see README, Data"
        print(f"WikiText-2 is not available here ({why}): training on the recall task instead")
        task = "recall"
    sizes = {**TINY, **({"state_dim": 8} if variant != "transformer" else {}), **config}
    seed_everything(seed)
    text = task == "text"  # the yardstick on text: each byte from its frequency in the same text, no context;
    # on recall only the answer is supervised: a constant guess among the values scores log2(n_values)
    model = build_model(variant, 259 if text else RECALL_VOCAB, **sizes)
    batches = WindowSampler(tokens, BATCH, SEQ_LEN, seed) if text else RecallSampler(BATCH, seed, seq_len=SEQ_LEN)
    unit, baseline = ("bits per byte", "unigram baseline") if text else ("bits per answer token", "constant guess")
    baseline_bits = unigram_bits(tokens, tokens, VOCAB_SIZE) if text else math.log2(PAPER_LAYOUT.n_values)
    with one_thread():
        history = train(model, batches, steps, lr=LR, weight_decay=0.0, device="cpu", progress=False)
    model.eval()
    return model, {"task": task, "steps": steps, "lr": LR, "losses": history["loss"],
                   "loss_bits": [v / math.log(2) for v in history["loss"]], "unit": unit,
                   "baseline": baseline, "baseline_bits": baseline_bits, "tokens": tokens}


def training_note(info: dict) -> str:
    """One line: what the tiny model trained on, how long, at which rate, and its loss in bits."""
    bits = info["loss_bits"]
    last = sum(bits[-10:]) / len(bits[-10:])
    notebook_lr = protocol("lm").lr
    return (f"{info['task']}: {info['steps']} steps at lr {info['lr']:g} ({info['lr'] / notebook_lr:.0f}x "
            f"the notebooks' {notebook_lr:g}, to train in seconds); training loss {bits[0]:.2f} (first step) -> "
            f"{last:.2f} (last 10) "
            f"{info['unit']}; {info['baseline']}: {info['baseline_bits']:.2f} {info['unit']}")


def sample_tokens(info: dict, batch: int = 2, seed: int = 1) -> torch.Tensor:
    """A few sequences [batch, 64] from the model's task (fixed windows of text, or recall examples)."""
    if info["task"] == "text":
        return WindowSampler(info["tokens"], batch, SEQ_LEN, seed)(0)[0]
    return RecallSampler(batch, seed + 10_000, seq_len=SEQ_LEN)(0)[0]


@torch.no_grad()
def layer_inputs(model, tokens: torch.Tensor) -> dict:
    """What the triple-latent mixer of the first block computes from its input, before any recurrence.

    Returns {"a", "b", "q_left", "q_right": [B, T, H, S], "lam", "gam": [B, T, H]} (and "g"
    [B, T, H, K], the slot weights, for slot models), all detached.
    """
    x = model.embed(tokens) + model.pos(torch.arange(tokens.shape[1], device=tokens.device))  # [B, T, d]
    x, _ = model.before_stack(x, None)
    mixer = model.blocks[0].mixer
    n = model.blocks[0].norm1(x)  # [B, T, d]
    a, b, ql, qr, lam, gam = mixer.project(n)
    out = {"a": a, "b": b, "q_left": ql, "q_right": qr, "lam": lam, "gam": gam}
    if hasattr(mixer, "to_slots"):
        B, T = tokens.shape
        out["g"] = torch.softmax(mixer.to_slots(n).view(B, T, mixer.n_heads, mixer.num_slots), dim=-1)
    return out
