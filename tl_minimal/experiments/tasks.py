"""One function per task: load its data once, then train and evaluate one (variant, seed).

Each task is a :class:`Task`: ``load(protocol, data_dir, jsonl)`` returns the data (with a
``source`` sentence for the results; a data file too short for the protocol is a BadDataFile
there, before any training), ``run_one(p, data, variant, seed, device, overrides, progress,
max_seconds, checkpoint_path=None, checkpoint_every=None)`` returns one run record:

    {"variant", "seed", "params", "metric", "value", "steps", "seconds", "device", ...}

Everything random is seeded from the run's seed: the model's initialization and dropout
(:func:`seed_everything` before building), the training batches (samplers keyed by seed and
step), and the recall evaluation set (a different seed than training, so examples are fresh).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import torch

from ..data import recall as data_recall
from ..data import text as data_text
from ..data import tokenized as data_tokenized
from ..training import distributed
from ..training.evaluate import mean_token_loss, recall_accuracy
from ..training.recipes import build, count_parameters, make_sampler
from ..training.train import seed_everything, train, unwrap

FORWARD_BATCH = 64  # evaluation forward batch (the same chunks as the protocol's batches, fewer calls)


def chunk_eval_set(tokens: torch.Tensor, p) -> tuple[torch.Tensor, torch.Tensor]:
    """x, y [C, T]: the first ``eval_batches`` batches of non-overlapping chunks (all when None)."""
    x, y = data_text.eval_chunks(tokens, p.seq_len)
    if p.eval_batches is not None:
        x, y = x[: p.eval_batches * p.eval_batch_size], y[: p.eval_batches * p.eval_batch_size]
    return x, y


def _batched(x, y, size=FORWARD_BATCH):
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(x), size)]


def _fit(model, sampler, p, device, progress, max_seconds, desc, checkpoint_path=None, checkpoint_every=None):
    """train() with the protocol's settings; with a checkpoint path it saves every ``checkpoint_every``
    steps and continues from the checkpoint when one is there (a killed run resumes mid-run)."""
    return train(
        model,
        sampler,
        p.steps,
        lr=p.lr,
        weight_decay=p.weight_decay,
        grad_clip=p.grad_clip,
        warmup_steps=p.warmup_steps,
        device=device,
        progress=progress,
        max_seconds=max_seconds,
        desc=desc,
        checkpoint_path=checkpoint_path,
        checkpoint_every=checkpoint_every,
        resume=checkpoint_path is not None,
    )


def _record(variant, seed, model, p, value, history, seconds, device, **extra) -> dict:
    return {
        "variant": variant,
        "seed": seed,
        "params": count_parameters(unwrap(model)),
        "metric": p.metric,
        "value": value,
        "steps": history["steps"],
        "seconds": round(seconds, 3),
        "device": str(device),
        "train_seconds": round(history["seconds"], 3),
        "final_train_loss": history["loss"][-1],
        "stopped": history["stopped"],
        "config": dict(getattr(unwrap(model), "config", {})),
        **extra,
    }


# ----------------------------------------------------------------------------- byte-level LM
def load_lm(p, data_dir=None, jsonl=None):
    train_split = data_text.load_split("train", data_dir)
    eval_split = data_text.load_split(p.eval_split, data_dir)
    window = f"one window of {p.seq_len} bytes (+1 target) of the lm protocol"
    data_text.require_tokens(train_split, p.seq_len + 1, f"training on {window}")
    data_text.require_tokens(eval_split, p.seq_len + 1, f"evaluating {window}")
    x, y = chunk_eval_set(eval_split.tokens, p)
    source = f"train: {train_split.source}; eval: {eval_split.source}, {len(x):,} chunks of {p.seq_len}"
    note = (
        "training windows come from the head of the train split only (the offline copy), not the full split"
        if train_split.partial
        else None
    )
    return SimpleNamespace(train=train_split.tokens, eval=(x, y), eval_tokens=eval_split.tokens, source=source,
                           note=note)


def train_lm(p, data, variant, seed, device, overrides=None, progress=True, max_seconds=None, checkpoint_path=None,
             checkpoint_every=None):
    """The byte-level LM's training, (model, history): seed, build, random windows of the train split, train.
    Under torchrun the model is wrapped for DDP and each rank draws its own windows."""
    seed_everything(seed)
    device = distributed.setup(device)
    model = distributed.wrap(build(variant, p, overrides).to(device), device)
    sampler = make_sampler(p, seed, data.train, stream=distributed.rank())
    history = _fit(model, sampler, p, device, progress, max_seconds, f"{p.task} {variant} s{seed}", checkpoint_path,
                   checkpoint_every)
    return model, history


def run_lm(
    p, data, variant, seed, device, overrides=None, progress=True, max_seconds=None, checkpoint_path=None,
    checkpoint_every=None,
):
    t0 = time.perf_counter()
    device = distributed.setup(device)
    model, history = train_lm(p, data, variant, seed, device, overrides, progress, max_seconds, checkpoint_path,
                              checkpoint_every)
    extra = {}
    if distributed.initialized():
        extra = {
            "world_size": distributed.world_size(),
            "ranks_agree": distributed.ranks_agree(unwrap(model)),
        }
    value = None
    if distributed.is_main():
        value = mean_token_loss(unwrap(model), _batched(*data.eval)) / math.log(2)  # BPB
    distributed.barrier()
    return _record(variant, seed, model, p, value, history, time.perf_counter() - t0, device, **extra)


# ----------------------------------------------------------------------------- recall and MQAR
def load_recall(p, data_dir=None, jsonl=None):
    return SimpleNamespace(
        note=None,
        source=f"synthetic associative recall ({p.n_pairs} pairs, {p.n_queries} "
        f"question(s), seq {p.seq_len}), generated from each run's seed",
    )


def run_recall(
    p, data, variant, seed, device, overrides=None, progress=True, max_seconds=None, checkpoint_path=None,
    checkpoint_every=None,
):
    t0 = time.perf_counter()
    seed_everything(seed)
    model = build(variant, p, overrides).to(device)
    kw = {"n_queries": p.n_queries, "n_pairs": p.n_pairs, "seq_len": p.seq_len}
    sampler = make_sampler(p, seed)
    history = _fit(
        model, sampler, p, device, progress, max_seconds, f"{p.task} {variant} s{seed}", checkpoint_path,
        checkpoint_every,
    )
    x, y = data_recall.eval_set(p.eval_examples, seed, **kw)
    result = recall_accuracy(model, x, y)
    return _record(
        variant,
        seed,
        model,
        p,
        result["accuracy"],
        history,
        time.perf_counter() - t0,
        device,
        per_query=result["per_query"],
        eval_examples=result["n"],
    )


# ----------------------------------------------------------------------------- tokenized (MiniMind)
def load_tokenized(p, data_dir=None, jsonl=None):
    corpus = data_tokenized.load_corpus(jsonl=jsonl, data_dir=data_dir, max_docs=p.max_docs)
    for side, stream in (("training", corpus.train), ("holdout", corpus.holdout)):
        if len(stream) < p.seq_len + 1:
            raise data_text.BadDataFile(
                f"{corpus.source}: the {side} stream holds {len(stream):,} tokens; one window of the tokenized "
                f"protocol needs {p.seq_len + 1:,} ({p.seq_len} + 1 target)")
    x, y = chunk_eval_set(corpus.holdout, p)
    note = (
        "stand-in corpus: WikiText-2 text with the MiniMind tokenizer, not MiniMind's pretraining data; "
        "losses are not comparable with the paper's"
        if "stand-in" in corpus.source
        else None
    )
    return SimpleNamespace(
        train=corpus.train,
        eval=(x, y),
        note=note,
        source=f"{corpus.source}; eval: {len(x):,} holdout chunks of {p.seq_len} tokens",
    )


def run_tokenized(
    p, data, variant, seed, device, overrides=None, progress=True, max_seconds=None, checkpoint_path=None,
    checkpoint_every=None,
):
    t0 = time.perf_counter()
    seed_everything(seed)
    model = build(variant, p, overrides).to(device)
    sampler = make_sampler(p, seed, data.train)
    history = _fit(
        model, sampler, p, device, progress, max_seconds, f"tok {variant} s{seed}", checkpoint_path,
        checkpoint_every,
    )
    value = mean_token_loss(model, _batched(*data.eval))
    return _record(variant, seed, model, p, value, history, time.perf_counter() - t0, device)


@dataclass
class Task:
    name: str
    load: Callable
    run_one: Callable
    distributed: bool = False  # may run under torchrun


TASKS = {
    "lm": Task("lm", load_lm, run_lm, distributed=True),
    "recall": Task("recall", load_recall, run_recall),
    "mqar": Task("mqar", load_recall, run_recall),
    "tokenized": Task("tokenized", load_tokenized, run_tokenized),
}

# the "where recall breaks" tasks (breaks.py and induction.py use the functions above, so they are imported last)
from .breaks import BREAK_TASKS
from .induction import INDUCTION_TASKS

TASKS.update(BREAK_TASKS)
TASKS.update(INDUCTION_TASKS)
