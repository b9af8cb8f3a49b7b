"""The one training loop every task uses: AdamW, gradient clipping, constant lr (or warmup, cosine decay).

Glossary
    batches      ``batches(step) -> (x, y)``: batch k a pure function of k, as the samplers of
                 ``tl_minimal.data`` give
    x, y         [B, T] int64 inputs and targets; y = IGNORE (-100) where nothing is supervised
    loss         mean cross-entropy (nats) over the supervised positions
    history      {"loss": [one float per step, nats], "lr": [...], "steps", "seconds", "stopped"}

    lr_k = lr * min(1, (k + 1) / W)            W = warmup_steps (0: constant lr, the paper)
    "cosine", after the warmup (k = W .. K-1):  lr_k = lr * (1 + cos(pi * (k - W) / (K - W))) / 2

Each step's loss stays on the device until every ``log_every`` steps (a GPU waits only then). A NaN or
inf loss stops the run with :class:`TrainingDiverged` naming the first bad step; nothing after it is saved.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

from ..checks import checked_ids
from ..data.recall import IGNORE
from .device import clip_options, get_device, optimizer_options
from .progress import progress_bar  # a text bar in a terminal, one updated line in a notebook

LOG_EVERY = 10  # steps between reads of the losses: 0.1 host-device syncs per step
LR_SCHEDULES = ("constant", "cosine")  # the lr after the warmup


class TrainingDiverged(RuntimeError):
    """The training loss became NaN or infinite."""


@dataclass
class TrainConfig:
    """Everything the training loop can be told besides the model, the batches and the step count: the one
    config of a run's training (a protocol's optimizer settings and where, how long and how the run saves).

    lr, weight_decay, betas   AdamW (betas: its moment decay rates; the paper's are torch's defaults)
    grad_clip                 clip the gradient's global norm to this (None or 0: no clipping)
    warmup_steps              linear warmup of the lr over this many steps (0: constant, the paper)
    lr_schedule               "constant" after the warmup (the paper) or "cosine" decay to the last step
    device                    where to train (None / "auto": :func:`~.device.get_device`'s choice)
    seed                      seed the global generators first (dropout); None leaves them alone
    checkpoint                saves the run and resumes it (``tl_research.checkpoint.Checkpoint``)
    log_every                 read the losses (and show them) every this many steps
    progress, desc            show a progress bar, and its label
    max_seconds               stop early once this wall-clock budget is used (time-matched runs)
    """

    lr: float = 3e-4
    weight_decay: float = 0.05
    betas: tuple = (0.9, 0.999)
    grad_clip: float | None = 1.0
    warmup_steps: int = 0
    lr_schedule: str = "constant"
    device: object = None
    seed: int | None = None
    checkpoint: object = None
    log_every: int = LOG_EVERY
    progress: bool = True
    max_seconds: float | None = None
    desc: str = "train"

    def check(self) -> None:
        w = self.warmup_steps
        if isinstance(w, bool) or not isinstance(w, int) or w < 0:
            raise ValueError(f"warmup_steps must be a whole number >= 0 (0: constant lr), got {w!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, "
                             f"got {self.lr_schedule!r}")
        if isinstance(self.log_every, bool) or not isinstance(self.log_every, int) or self.log_every < 1:
            raise ValueError(f"log_every must be an int >= 1 (steps between reading the losses), "
                             f"got {self.log_every!r}")


# ----------------------------------------------------------------------------- several processes
# Under torchrun (tl_research.distributed starts it) every rank runs this loop: rank 0 alone shows
# progress and saves, and all ranks stop together. Outside torchrun these are constants.
def initialized() -> bool:
    return dist.is_available() and dist.is_initialized()


def is_main() -> bool:
    """Rank 0, or the only process: the one that shows progress and saves."""
    return not initialized() or dist.get_rank() == 0


def any_rank(flag: bool) -> bool:
    """True on every rank if ``flag`` is True on at least one (so all ranks stop together)."""
    if not initialized():
        return flag
    t = torch.tensor([1.0 if flag else 0.0])
    if dist.get_backend() == "nccl":
        t = t.cuda()
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def seed_everything(seed: int) -> None:
    """Seed torch (CPU and all GPUs), numpy and python's ``random`` with ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def lm_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over supervised positions: logits [B, T, V], y [B, T] (IGNORE = skip)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1), ignore_index=IGNORE)


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float, betas=(0.9, 0.999), device=None):
    """AdamW over all parameters (the paper's setting: decoupled weight decay everywhere), with
    :func:`~.device.optimizer_options` for ``device`` (default: where the parameters are)."""
    params = list(model.parameters())
    settings = {"lr": lr, "weight_decay": weight_decay, "betas": tuple(betas)}
    try:
        return torch.optim.AdamW(params, **settings, **optimizer_options(device or params[0].device))
    except RuntimeError:  # "`fused=True` requires ... supported devices": an older torch
        return torch.optim.AdamW(params, **settings, foreach=True)


def lr_at(step: int, lr: float, warmup_steps: int, schedule: str = "constant",
          steps: int | None = None) -> float:
    """lr_k of the module docstring: warmup, then constant or cosine."""
    if step < warmup_steps:
        return lr * ((step + 1) / warmup_steps)  # the same rounding as lr * min(1, (k + 1) / W) before
    if schedule == "constant":
        return lr
    if schedule != "cosine" or steps is None:
        raise ValueError(f"lr schedule {schedule!r}: expected 'constant', "
                         "or 'cosine' with the run's step count")
    done = (step - warmup_steps) / max(steps - warmup_steps, 1)  # 0 after the warmup, < 1 at the last step
    return lr * (1.0 + math.cos(math.pi * min(done, 1.0))) / 2.0


# ----------------------------------------------------------------------------- the loop
def _one_step(model, optimizer, batch, step: int, steps: int, s: TrainConfig, device) -> torch.Tensor:
    """Forward, loss, backward, clip, AdamW: one optimizer step; returns the loss (on the device)."""
    x, y = batch[0], batch[1]
    for group in optimizer.param_groups:
        group["lr"] = lr_at(step, s.lr, s.warmup_steps, s.lr_schedule, steps)
    with checked_ids(model, x):  # ids checked on the CPU batch: the forward pass skips its device check
        loss = lm_loss(model(x.to(device)), y.to(device))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if s.grad_clip is not None and s.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip, **clip_options(device))
    optimizer.step()
    return loss.detach()


def _read_losses(unread: list, step: int, steps: int, bar) -> list[float]:
    """The interval's losses as floats (its one host-device sync); a NaN or inf stops the run."""
    values = torch.stack(unread).tolist()
    first_bad = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
    if any_rank(first_bad is not None):  # under DDP every rank stops together
        bar.close()
        where = (f"became {values[first_bad]} at step {step - len(values) + 1 + first_bad}" if first_bad is not None
                 else f"became NaN or inf in another process by step {step}")
        raise TrainingDiverged(
            f"training loss {where} (counting from 0, of {steps}); stopped. "
            "Try a lower lr, warmup (warmup_steps) or gradient clipping."
        )
    return values


def train(model: torch.nn.Module, batches, steps: int, config: TrainConfig | None = None, **changes) -> dict:
    """Train ``model`` for ``steps`` optimizer steps and return the history (see module docstring).

    ``config`` (a :class:`TrainConfig`) or its fields as keywords (``lr=1e-3, device="cpu"``).
    Seed *before* building the model if initialization should be reproducible too
    (``seed`` only seeds dropout and what follows).
    """
    s = dataclasses.replace(config or TrainConfig(), **changes)
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    s.check()
    device = get_device(s.device)  # before any work: an unavailable device is an error here
    if s.seed is not None:
        seed_everything(s.seed)
    model.to(device)
    model.train()
    optimizer = make_optimizer(model, s.lr, s.weight_decay, s.betas, device=device)
    history = {"loss": [], "lr": [], "steps": 0, "seconds": 0.0, "stopped": "done"}
    start = 0
    if s.checkpoint is not None:
        start, history = s.checkpoint.resume(model, optimizer, device, history)
    bar = progress_bar(range(start, steps), total=steps, initial=start, desc=s.desc, enabled=s.progress and is_main())
    t0 = time.perf_counter() - history["seconds"]
    unread = []  # this interval's losses, still on the device: [loss_k] 0-dim tensors
    for step in bar:
        unread.append(_one_step(model, optimizer, batches(step), step, steps, s, device))
        history["lr"].append(optimizer.param_groups[0]["lr"])
        history["steps"] = step + 1
        history["seconds"] = time.perf_counter() - t0
        checkpoint_due = s.checkpoint is not None and s.checkpoint.due(step + 1)
        read = len(unread) == s.log_every or step == steps - 1 or checkpoint_due
        if not read and s.max_seconds is not None and not initialized():
            read = history["seconds"] >= s.max_seconds  # the host's clock: no sync (under DDP: at reads only)
        if not read:
            continue
        values = _read_losses(unread, step, steps, bar)
        history["loss"].extend(values)
        unread = []
        bar.set_postfix(loss=f"{values[-1] / math.log(2):.3f} bits")  # nats / ln 2
        if checkpoint_due and is_main():
            s.checkpoint.save(model, optimizer, step + 1, history, device)
        if s.max_seconds is not None and step + 1 < steps and any_rank(history["seconds"] >= s.max_seconds):
            history["stopped"] = f"time budget of {s.max_seconds:g} s used after {step + 1} steps"
            break
    bar.n = history["steps"]  # the steps really done (a break skips the bar's own count)
    bar.close()
    if s.checkpoint is not None and is_main():
        s.checkpoint.save(model, optimizer, history["steps"], history, device)
    return history

