"""The one training loop every task uses: AdamW, gradient clipping, constant lr (optional warmup).

Glossary
    batches      where training data comes from: a callable ``batches(step) -> (x, y[, mask])``
                 (preferred: batch k is a pure function of k, see ``data_*.py`` samplers) or an
                 iterator of such tuples (on resume it is fast-forwarded past the steps done)
    x, y         [B, T] int64 inputs and targets; y = IGNORE (-100) where nothing is supervised
    mask         optional [B, T] bool: False positions are not supervised (same as y = -100)
    loss         mean cross-entropy (nats) over the supervised positions
    history      {"loss": [one float per step], "lr": [...], "steps", "seconds", "stopped"}

    lr_k = lr * min(1, (k + 1) / warmup_steps)     (constant lr when warmup_steps = 0, the paper)

Reproducibility: :func:`seed_everything` seeds torch, numpy and python's ``random`` (model
initialization and dropout use torch's global generator; data samplers use their own). A
checkpoint stores the model, the optimizer, the step, the losses so far and every random
state, so resuming on the CPU reproduces the uninterrupted run's losses exactly.

A loss that becomes NaN or inf stops the run with :class:`TrainingDiverged` naming the step.
"""

from __future__ import annotations

import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .device import get_device

IGNORE = -100


class TrainingDiverged(RuntimeError):
    """The training loss became NaN or infinite."""


def seed_everything(seed: int) -> None:
    """Seed torch (CPU and all GPUs), numpy and python's ``random`` with ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The plain model inside a DistributedDataParallel wrapper (or the model itself)."""
    return (
        model.module
        if hasattr(model, "module") and isinstance(model, torch.nn.parallel.DistributedDataParallel)
        else model
    )


def lm_loss(logits: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean cross-entropy over supervised positions: logits [B, T, V], y [B, T] (IGNORE = skip)."""
    if mask is not None:
        y = y.masked_fill(~mask.bool(), IGNORE)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1), ignore_index=IGNORE)


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float, betas=(0.9, 0.999)):
    """AdamW over all parameters (the paper's setting: decoupled weight decay everywhere)."""
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=betas)


def lr_at(step: int, lr: float, warmup_steps: int) -> float:
    """lr_k = lr * min(1, (k + 1) / warmup_steps); constant ``lr`` without warmup."""
    return lr if warmup_steps <= 0 else lr * min(1.0, (step + 1) / warmup_steps)


# ----------------------------------------------------------------------------- checkpoints
def _rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path, model, optimizer, step: int, history: dict, extra: dict | None = None) -> None:
    """Write everything needed to continue at ``step`` (atomically: temp file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
        "history": history,
        "rng": _rng_state(),
        "extra": extra or {},
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def load_checkpoint(path, model, optimizer=None, map_location="cpu") -> dict:
    """Restore model (and optimizer, random states) from ``path``; returns the checkpoint dict."""
    ckpt = torch.load(path, map_location=map_location, weights_only=False)
    unwrap(model).load_state_dict(ckpt["model"])
    if optimizer is not None:
        optimizer.load_state_dict(ckpt["optimizer"])
    _set_rng_state(ckpt["rng"])
    return ckpt


# ----------------------------------------------------------------------------- the loop
def _batch_source(batches, start: int):
    """Turn ``batches`` into a function of the step; iterators are fast-forwarded to ``start``."""
    if callable(batches) and not hasattr(batches, "__next__"):
        return batches
    it = iter(batches)
    for _ in range(start):
        next(it)
    return lambda step: next(it)


def train(
    model: torch.nn.Module,
    batches,
    steps: int,
    lr: float = 3e-4,
    weight_decay: float = 0.05,
    grad_clip: float | None = 1.0,
    warmup_steps: int = 0,
    device=None,
    seed: int | None = None,
    checkpoint_path=None,
    checkpoint_every: int | None = None,
    resume: bool = False,
    log_every: int = 1,
    progress: bool = True,
    max_seconds: float | None = None,
    desc: str = "train",
) -> dict:
    """Train ``model`` for ``steps`` optimizer steps and return the history (see module docstring).

    ``seed`` (optional) seeds the global generators first (dropout); seed *before* building the
    model if initialization should be reproducible too. ``checkpoint_path`` saves at the end
    (and every ``checkpoint_every`` steps); ``resume=True`` continues from it when it exists.
    ``max_seconds`` stops early once the wall-clock budget is used (for time-matched runs).
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    from .distributed import any_rank, is_main

    device = get_device(device) if not isinstance(device, torch.device) else device
    if seed is not None:
        seed_everything(seed)
    model.to(device)
    model.train()
    optimizer = make_optimizer(model, lr, weight_decay)
    history = {"loss": [], "lr": [], "steps": 0, "seconds": 0.0, "stopped": "done"}
    start = 0
    if resume and checkpoint_path is not None and Path(checkpoint_path).exists():
        ckpt = load_checkpoint(checkpoint_path, model, optimizer, map_location=device)
        start, history = ckpt["step"], ckpt["history"]
        history["stopped"] = "done"
    next_batch = _batch_source(batches, start)

    from .progress import progress_bar  # a text bar in a terminal, one updated line in a notebook

    bar = progress_bar(range(start, steps), total=steps, initial=start, desc=desc,
                       enabled=progress and is_main())
    t0 = time.perf_counter() - history["seconds"]
    for step in bar:
        batch = next_batch(step)
        x, y = batch[0].to(device), batch[1].to(device)
        mask = batch[2].to(device) if len(batch) > 2 else None
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, lr, warmup_steps)

        loss = lm_loss(model(x), y, mask)
        value = loss.item()
        if any_rank(not math.isfinite(value)):  # under DDP every rank stops together
            bar.close()
            raise TrainingDiverged(
                f"training loss became {value} at step {step} (counting from 0, of {steps}); "
                "stopped. Try a lower lr, warmup (warmup_steps) or gradient clipping."
            )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if grad_clip is not None and grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()

        history["loss"].append(value)
        history["lr"].append(optimizer.param_groups[0]["lr"])
        history["steps"] = step + 1
        history["seconds"] = time.perf_counter() - t0
        if log_every and (step % log_every == 0 or step == steps - 1):
            bar.set_postfix(loss=f"{value:.4f}")
        if (
            checkpoint_path is not None
            and checkpoint_every
            and (step + 1) % checkpoint_every == 0
            and is_main()
        ):
            save_checkpoint(checkpoint_path, model, optimizer, step + 1, history)
        if max_seconds is not None and step + 1 < steps and any_rank(history["seconds"] >= max_seconds):
            history["stopped"] = f"time budget of {max_seconds:g} s used after {step + 1} steps"
            break
    bar.n = history["steps"]  # the steps really done (a break skips the bar's own count)
    bar.close()
    if checkpoint_path is not None and is_main():
        save_checkpoint(checkpoint_path, model, optimizer, history["steps"], history)
    return history
