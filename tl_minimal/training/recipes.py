"""The training recipe, in one call: what every notebook and experiment does to train a variant.

    model, history = fit("triple_latent", protocol("lm"), seed=0, device=DEVICE)

The recipe, line by line (notebook 01 shows the training loop itself, ``train.train``):

    seed_everything(seed)                                   initialization and dropout from the seed
    model = build(variant, protocol, overrides)             build_model with the protocol's sizes
    sampler = make_sampler(protocol, seed, data)            batch k is a pure function of (seed, k)
    history = train(model, sampler, protocol.steps, lr, weight decay, grad clip, warmup)

``protocol`` is one of :mod:`tl_minimal.experiments.protocols` (byte-level LM, recall, MQAR,
tokenized): it fixes the sizes, the optimizer settings and which data the sampler draws.
"""

from __future__ import annotations

import torch

from ..data import recall as data_recall
from ..data import text as data_text
from .train import seed_everything, train

TEXT_TASKS = ("lm", "tokenized", "induction")  # tasks that train on windows of a token stream (induction: the lm's)


def count_parameters(model: torch.nn.Module) -> int:
    """Trainable parameters, each shared tensor (the tied embedding) counted once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build(variant: str, protocol, overrides: dict | None = None) -> torch.nn.Module:
    """``tl_minimal.build_model`` with the protocol's model config (and ``--set`` overrides)."""
    from .. import build_model, default_config

    return build_model(variant, protocol.vocab_size, **protocol.model_config(overrides, default_config(variant)))


def make_sampler(protocol, seed: int, data=None, stream: int = 0):
    """The protocol's training batches: ``sampler(step) -> (x, y)``.

    lm / tokenized / induction: random windows of ``data`` (a token tensor [N]; for lm and
    induction, None loads the WikiText-2 train split); recall / mqar: fresh synthetic examples. ``stream`` separates the
    batches of several processes (distributed training).
    """
    task = protocol.task
    if task in TEXT_TASKS:
        if data is None:
            if task == "tokenized":
                raise ValueError("the tokenized protocol needs its token stream: pass data=<tokens [N]>")
            data = data_text.load_split("train").tokens
        return data_text.WindowSampler(data, protocol.batch_size, protocol.seq_len, seed, stream=stream)
    if task in ("recall", "mqar"):
        return data_recall.RecallSampler(protocol.batch_size, seed, n_queries=protocol.n_queries,
                                         n_pairs=protocol.n_pairs, seq_len=protocol.seq_len,
                                         layout=getattr(protocol, "layout", data_recall.PAPER_LAYOUT))
    raise ValueError(f"no training data for task {task!r}: expected {', '.join(TEXT_TASKS)}, recall or mqar")


def fit(variant: str, protocol, seed: int = 0, device=None, overrides: dict | None = None, data=None,
        progress: bool = True, **train_options):
    """Seed, build, sample and train ``variant`` under ``protocol``; returns (model, history).

    ``history`` is :func:`train.train`'s: {"loss": per step (nats), "steps", "seconds", ...}.
    ``train_options`` go to :func:`train.train` (e.g. ``max_seconds``, ``checkpoint_path``).
    """
    seed_everything(seed)
    model = build(variant, protocol, overrides)
    history = train(model, make_sampler(protocol, seed, data), protocol.steps, lr=protocol.lr,
                    weight_decay=protocol.weight_decay, grad_clip=protocol.grad_clip,
                    warmup_steps=protocol.warmup_steps, device=device, progress=progress,
                    desc=train_options.pop("desc", f"{variant} s{seed}"), **train_options)
    return model, history
