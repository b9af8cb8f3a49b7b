"""The paper's tasks: byte-level LM, associative recall (and MQAR), MiniMind-tokenized LM.

Each is a :class:`~.common.Task`: load its data once, then train (:func:`~tl_minimal.training.recipes.fit`,
the one recipe; the lm task through :func:`tl_research.distributed.fit`, the same under torchrun) and
evaluate one (variant, seed) per ``run_one`` call.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

from tl_minimal.data import text as data_text
from tl_minimal.training.evaluate import mean_token_loss, recall_accuracy
from tl_minimal.training.protocols import chunk_eval_set
from tl_minimal.training.recipes import fit
from tl_minimal.training.train import TrainConfig

from .. import distributed
from ..checkpoint import unwrap
from . import tokenized_data as data_tokenized
from .common import Task, in_batches, loss_curve, run_record, windows


# ----------------------------------------------------------------------------- byte-level LM
def require_tokens(split: data_text.TextSplit, needed: int, what: str) -> None:
    """A BadDataFile naming the split's file unless it holds at least ``needed`` tokens for ``what``."""
    n = len(split.tokens)
    if n < needed:
        where = split.path or f"the {split.name} split ({split.source})"
        raise data_text.BadDataFile(f"{where} is too short: {n - 2:,} bytes of text ({n:,} tokens with BOS and "
                                    f"EOS); {what} needs at least {needed:,} tokens ({needed - 2:,} bytes)")


def load_lm(p, data_dir=None, jsonl=None):
    train_split = data_text.load_split("train", data_dir)
    eval_split = data_text.load_split(p.eval_split, data_dir)
    window = f"one window of {p.seq_len} bytes (+1 target) of the lm protocol"
    require_tokens(train_split, p.seq_len + 1, f"training on {window}")
    require_tokens(eval_split, p.seq_len + 1, f"evaluating {window}")
    x, y = chunk_eval_set(eval_split.tokens, p)
    source = f"train: {train_split.source}; eval: {eval_split.source}, {len(x):,} chunks of {p.seq_len}"
    note = (
        "training windows come from the head of the train split only (the offline copy), not the full split"
        if train_split.partial
        else None
    )
    return SimpleNamespace(train=train_split.tokens, eval=(x, y), eval_tokens=eval_split.tokens, source=source,
                           note=note)


def run_lm(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    """Train on random windows of the train split (under torchrun: DDP, each rank its own windows);
    ``value`` is bits per byte on the evaluation chunks, measured by the main process."""
    t0 = time.perf_counter()
    model, history = distributed.fit(variant, p, seed, data.train, overrides=overrides, config=config)
    extra = {}
    if distributed.initialized():
        extra = {
            "world_size": distributed.world_size(),
            "ranks_agree": distributed.ranks_agree(unwrap(model)),
        }
    value = None
    if distributed.is_main():
        value = mean_token_loss(unwrap(model), in_batches(*data.eval)) / math.log(2)  # BPB
    distributed.barrier()
    return run_record(variant, seed, model, p, value, history, time.perf_counter() - t0, config.device, **extra)


# ----------------------------------------------------------------------------- recall and MQAR
def load_recall(p, data_dir=None, jsonl=None):
    return SimpleNamespace(
        note=None,
        source=f"synthetic associative recall ({p.n_pairs} pairs, {p.n_queries} "
        f"question(s), seq {p.seq_len}), generated from each run's seed",
    )


def run_recall(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    """Train on fresh synthetic examples; ``value`` is the accuracy on ``eval_examples`` fresh ones
    (the training loss every 10 steps is kept too: did the run flatten, or was it still learning?)."""
    t0 = time.perf_counter()
    model, history = fit(variant, p, seed, overrides=overrides, config=config)
    x, y = p.eval_set(seed)
    result = recall_accuracy(model, x, y)
    return run_record(variant, seed, model, p, result["accuracy"], history, time.perf_counter() - t0, config.device,
                      per_query=result["per_query"], eval_examples=result["n"],
                      loss_curve_every_10=loss_curve(history["loss"]))


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


def run_tokenized(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    """Train on random windows of the token stream; ``value`` is the mean token loss (nats) on the holdout."""
    t0 = time.perf_counter()
    model, history = fit(variant, p, seed, sampler=windows(p, seed, data.train), overrides=overrides, config=config)
    value = mean_token_loss(model, in_batches(*data.eval))
    return run_record(variant, seed, model, p, value, history, time.perf_counter() - t0, config.device)


PAPER_TASKS = {
    "lm": Task("lm", load_lm, run_lm, distributed=True),
    "recall": Task("recall", load_recall, run_recall),
    "mqar": Task("mqar", load_recall, run_recall),
    "tokenized": Task("tokenized", load_tokenized, run_tokenized),
}
