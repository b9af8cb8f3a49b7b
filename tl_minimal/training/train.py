"""The one training loop every task uses: AdamW, gradient clipping, a constant learning rate.

Glossary
    batches      ``batches(step) -> (x, y)``: batch k a pure function of k, as the samplers of
                 ``tl_minimal.data`` give
    x, y         [B, T] int64 inputs and targets; y = IGNORE (-100) where nothing is supervised
    loss         mean cross-entropy (nats) over the supervised positions
    history      {"loss": [one float per step, nats], "lr": [...], "steps", "seconds", "stopped"}

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
import torch.nn.functional as F

from ..checks import checked_ids
from ..data.recall import IGNORE
from .device import clip_options, get_device, optimizer_options
from .progress import progress_bar  # a text bar in a terminal, one updated line in a notebook

LOG_EVERY = 10  # steps between reads of the losses: 0.1 host-device syncs per step


class TrainingDiverged(RuntimeError):
    """The training loss became NaN or infinite."""


@dataclass
class TrainConfig:
    """Everything the training loop can be told besides the model, the batches and the step count: the one
    config of a run's training (a protocol's optimizer settings, where the run trains and what it shows).

    lr, weight_decay, betas   AdamW (betas: its moment decay rates; the paper's are torch's defaults)
    grad_clip                 clip the gradient's global norm to this (None or 0: no clipping)
    device                    where to train (None / "auto": :func:`~.device.get_device`'s choice)
    seed                      seed the global generators first (dropout); None leaves them alone
    log_every                 read the losses (and show them) every this many steps
    progress, desc            show a progress bar, and its label

    The methods below the fields are the loop's one seam, and here they do nothing: the research
    package's ``tl_research.run_config.RunConfig`` overrides them (lr warmup and cosine decay,
    checkpoints, a time budget, several processes under torchrun). A student can ignore them.
    """

    lr: float = 3e-4
    weight_decay: float = 0.05
    betas: tuple = (0.9, 0.999)
    grad_clip: float | None = 1.0
    device: object = None
    seed: int | None = None
    log_every: int = LOG_EVERY
    progress: bool = True
    desc: str = "train"

    def check(self) -> None:
        if isinstance(self.log_every, bool) or not isinstance(self.log_every, int) or self.log_every < 1:
            raise ValueError(f"log_every must be an int >= 1 (steps between reading the losses), "
                             f"got {self.log_every!r}")

    # the seam (see the class docstring): what the course's runs do at each point of the loop
    def lr_at(self, step: int, steps: int) -> float:
        """The learning rate of step ``step`` (counting from 0) of ``steps``."""
        return self.lr

    def start(self, model, optimizer, device, history: dict) -> tuple[int, dict]:
        """(steps already done, history so far) before the first step."""
        return 0, history

    def read_due(self, step: int, history: dict) -> bool:
        """Read the losses after ``step`` although ``log_every`` steps have not passed."""
        return False

    def after_read(self, model, optimizer, device, history: dict, steps: int) -> str | None:
        """Called after each read of the losses: a reason to stop early, or None."""
        return None

    def agree(self, flag: bool) -> bool:
        """``flag`` as every process sees it (one process: the flag itself)."""
        return flag

    def finish(self, model, optimizer, device, history: dict) -> None:
        """Called once after the last step."""


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


# ----------------------------------------------------------------------------- the loop
def _one_step(model, optimizer, batch, lr: float, s: TrainConfig, device) -> torch.Tensor:
    """Forward, loss, backward, clip, AdamW: one optimizer step; returns the loss (on the device)."""
    x, y = batch[0], batch[1]
    for group in optimizer.param_groups:
        group["lr"] = lr
    with checked_ids(model, x):  # ids checked on the CPU batch: the forward pass skips its device check
        loss = lm_loss(model(x.to(device)), y.to(device))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if s.grad_clip is not None and s.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip, **clip_options(device))
    optimizer.step()
    return loss.detach()


def _read_losses(unread: list, step: int, steps: int, bar, s: TrainConfig) -> list[float]:
    """The interval's losses as floats (its one host-device sync); a NaN or inf stops the run."""
    values = torch.stack(unread).tolist()
    first_bad = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
    if s.agree(first_bad is not None):  # under torchrun every process stops together
        bar.close()
        where = (f"became {values[first_bad]} at step {step - len(values) + 1 + first_bad}" if first_bad is not None
                 else f"became NaN or inf in another process by step {step}")
        raise TrainingDiverged(
            f"training loss {where} (counting from 0, of {steps}); stopped. "
            "Try a lower lr or gradient clipping (research runs: also a warmup, warmup_steps)."
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
    start, history = s.start(model, optimizer, device, history)
    bar = progress_bar(range(start, steps), total=steps, initial=start, desc=s.desc, enabled=s.progress)
    t0 = time.perf_counter() - history["seconds"]
    unread = []  # this interval's losses, still on the device: [loss_k] 0-dim tensors
    for step in bar:
        unread.append(_one_step(model, optimizer, batches(step), s.lr_at(step, steps), s, device))
        history["lr"].append(optimizer.param_groups[0]["lr"])
        history["steps"] = step + 1
        history["seconds"] = time.perf_counter() - t0
        if len(unread) < s.log_every and step < steps - 1 and not s.read_due(step, history):
            continue
        values = _read_losses(unread, step, steps, bar, s)
        history["loss"].extend(values)
        unread = []
        bar.set_postfix(loss=f"{values[-1] / math.log(2):.3f} bits")  # nats / ln 2
        stop = s.after_read(model, optimizer, device, history, steps)
        if stop:
            history["stopped"] = stop
            break
    bar.n = history["steps"]  # the steps really done (a break skips the bar's own count)
    bar.close()
    s.finish(model, optimizer, device, history)
    return history
