"""Metrics: bits per byte, mean token loss, recall accuracy (and per-query accuracy for MQAR).

Glossary
    CE            cross-entropy in nats, -log p(target), averaged over supervised positions (mean token loss)
    BPB           bits per byte = CE / ln 2 on byte-level text; uniform over 259 ids: log2(259) = 8.017
    accuracy      fraction of supervised positions where argmax over the WHOLE vocabulary equals the target
    unigram       BPB's yardstick: every byte from its frequency in the training text, no context

All metrics run the model in eval mode under ``torch.no_grad``, then restore its mode; positions whose
target is IGNORE (-100) are skipped.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from ..checks import checked_ids
from ..data.recall import IGNORE


@contextmanager
def evaluating(model: torch.nn.Module):
    """Eval mode and no gradients inside the block; the previous mode afterwards."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def mean_token_loss(model: torch.nn.Module, batches) -> float:
    """Mean CE per supervised token (nats) over ``batches`` of (x, y).
    Batch sums stay on the device until the end (one sync), then add up in float64."""
    device = next(model.parameters()).device
    sums, count = [], 0
    with evaluating(model):
        for x, y, *_ in batches:
            count += int((y != IGNORE).sum())  # on y's own device: the CPU for the library's batches
            with checked_ids(model, x):
                logits = model(x.to(device))  # [B, T, V]
            ce = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(),
                y.to(device).reshape(-1),
                ignore_index=IGNORE,
                reduction="sum",
            )
            sums.append(ce)
    if count == 0:
        raise ValueError("no supervised tokens in the evaluation batches")
    return sum(torch.stack(sums).tolist(), 0.0) / count  # one sync; python floats: float64 on the host


def bits_per_byte(model: torch.nn.Module, batches) -> float:
    """BPB = mean CE (nats) / ln 2 over all target bytes of ``batches``."""
    return mean_token_loss(model, batches) / math.log(2)


def unigram_bits(train_tokens: torch.Tensor, targets: torch.Tensor, vocab_size: int) -> float:
    """Bits per token of the unigram model: p(v) = (count of v in train + 1) / (N + vocab_size).

    train_tokens [N] and targets (any shape; IGNORE positions skipped) are int64 ids. On byte-level
    text this is the unigram BPB, the number every BPB should be read against.
    """
    counts = torch.bincount(train_tokens.flatten().cpu(), minlength=vocab_size).double() + 1  # add-one
    targets = targets.flatten().cpu()
    targets = targets[targets != IGNORE]
    if targets.numel() == 0:
        raise ValueError("no targets to score (all are IGNORE)")
    if int(targets.max()) >= vocab_size or int(targets.min()) < 0:
        raise ValueError(f"targets must be ids in [0, {vocab_size}), got [{int(targets.min())}, {int(targets.max())}]")
    return -(counts / counts.sum()).log2()[targets].mean().item()


def recall_accuracy(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 256) -> dict:
    """Accuracy at the supervised positions of x, y [N, T] (argmax over the whole vocabulary):
    {"accuracy": over all questions, "per_query": [for question 1, 2, ...], "n": sequences}."""
    device = next(model.parameters()).device
    labelled = y != IGNORE  # [N, T]
    per_row = labelled.sum(1)
    if per_row.min() < 1 or per_row.min() != per_row.max():
        raise ValueError("every sequence needs the same number (>= 1) of supervised positions")
    n_queries = int(per_row[0])
    correct = []
    with evaluating(model):
        for i in range(0, len(x), batch_size):
            xb, yb = x[i : i + batch_size], y[i : i + batch_size]  # [b, T] where x, y are
            with checked_ids(model, xb):
                pred = model(xb.to(device)).argmax(dim=-1)  # [b, T]
            # the supervised positions: Q per row, in order (gather, not a boolean mask: no sync)
            where = labelled[i : i + batch_size].int().argsort(dim=1, descending=True, stable=True)[:, :n_queries]
            where = where.sort(dim=1).values.to(device)  # [b, Q]
            hit = pred.gather(1, where) == yb.to(device).gather(1, where)  # [b, Q]
            correct.append(hit)
    hits = torch.cat(correct).cpu().float()  # [N, Q]: the one host-device sync
    return {"accuracy": hits.mean().item(), "per_query": hits.mean(0).tolist(), "n": len(x)}
