"""What every task shares: the :class:`Task` record, the run record, and the text tasks' evaluation chunks.

A task is ``load(protocol, data_dir, jsonl)`` (its data, loaded once, with a ``source``
sentence for the results; a data file too short for the protocol is a BadDataFile there,
before any training) and ``run_one(protocol, data, variant, seed, overrides, config)`` (one trained and
evaluated run: the model settings ``--set`` and the :class:`~tl_minimal.training.train.TrainConfig`), which returns
one run record (:func:`run_record`)::

    {"variant", "seed", "params", "metric", "value", "steps", "seconds", "device", ...}

Everything random is seeded from the run's seed: the model's initialization and dropout
(:func:`~tl_minimal.training.recipes.fit` seeds before building), the training batches
(samplers keyed by seed and step), and the evaluation set (a different seed than training, so
examples are fresh).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from tl_minimal.data.text import WindowSampler
from tl_minimal.training.recipes import count_parameters

from ..checkpoint import unwrap

FORWARD_BATCH = 64  # evaluation forward batch: the same chunks as a protocol's batches, fewer calls


def in_batches(x: torch.Tensor, y: torch.Tensor, size: int = FORWARD_BATCH) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """x, y [N, T] cut into (x, y) batches of ``size`` rows (the last may be shorter), for the metrics."""
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(x), size)]


def windows(p, seed: int, tokens: torch.Tensor) -> WindowSampler:
    """The training batches of a text task besides lm (tokenized, induction): random windows of ``tokens``
    [N], drawn as the course's lm batches are."""
    return WindowSampler(tokens, p.batch_size, p.seq_len, seed)


@dataclass
class Task:
    name: str
    load: Callable
    run_one: Callable
    distributed: bool = False  # may run under torchrun


class ConfigError(ValueError):
    """A bad task, variant, config value or device: reported by the command line as one line."""


def run_record(variant: str, seed: int, model, p, value, history: dict, seconds: float, device, **extra) -> dict:
    """One run's record in the results file: what ran, its metric ``value``, and ``extra`` fields of the task."""
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
        "config": unwrap(model).config.settings(),
        **extra,
    }


def loss_curve(losses, every: int = 10) -> list[float]:
    """Training loss (nats) averaged over consecutive windows of ``every`` steps, rounded to 4
    decimals: a curve short enough to keep in a results file, to see whether a run has flattened."""
    return [round(sum(losses[i : i + every]) / len(losses[i : i + every]), 4) for i in range(0, len(losses), every)]
