"""The research runs' training config: the course's one loop plus warmup and cosine lr, checkpoints,
a time budget and several processes under torchrun, plugged in through ``TrainConfig``'s seam methods.

    lr_k = lr * min(1, (k + 1) / W)            W = warmup_steps (0: constant lr, the paper)
    "cosine", after the warmup (k = W .. K-1):  lr_k = lr * (1 + cos(pi * (k - W) / (K - W))) / 2

``RunConfig()`` with its defaults trains exactly as ``tl_minimal.training.train.TrainConfig`` does;
the research protocols (:mod:`.protocols`) carry one, so ``p.train_config(...)`` is one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tl_minimal.training.train import TrainConfig

from . import distributed

LR_SCHEDULES = ("constant", "cosine")  # the lr after the warmup


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


@dataclass
class RunConfig(TrainConfig):
    """``TrainConfig`` and the research switches (all off by default: the course's run).

    warmup_steps   linear warmup of the lr over this many steps (0: constant, the paper)
    lr_schedule    "constant" after the warmup (the paper) or "cosine" decay to the last step
    checkpoint     saves the run and resumes it (:class:`~tl_research.checkpoint.Checkpoint`)
    max_seconds    stop early once this wall-clock budget is used (time-matched runs)
    Under torchrun rank 0 alone saves, and all ranks stop together (:mod:`.distributed`).
    """

    warmup_steps: int = 0
    lr_schedule: str = "constant"
    checkpoint: object = None
    max_seconds: float | None = None

    def check(self) -> None:
        w = self.warmup_steps
        if isinstance(w, bool) or not isinstance(w, int) or w < 0:
            raise ValueError(f"warmup_steps must be a whole number >= 0 (0: constant lr), got {w!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, "
                             f"got {self.lr_schedule!r}")
        super().check()

    def lr_at(self, step: int, steps: int) -> float:
        return lr_at(step, self.lr, self.warmup_steps, self.lr_schedule, steps)

    def start(self, model, optimizer, device, history: dict) -> tuple[int, dict]:
        if self.checkpoint is None:
            return 0, history
        return self.checkpoint.resume(model, optimizer, device, history)

    def read_due(self, step: int, history: dict) -> bool:
        if self.checkpoint is not None and self.checkpoint.due(step + 1):
            return True  # a checkpoint holds the losses so far
        # the host's clock: no sync (under torchrun the budget is looked at only at the regular reads)
        return self.max_seconds is not None and not distributed.initialized() and self._over_budget(history)

    def after_read(self, model, optimizer, device, history: dict, steps: int) -> str | None:
        done = history["steps"]
        if self.checkpoint is not None and self.checkpoint.due(done) and distributed.is_main():
            self.checkpoint.save(model, optimizer, done, history, device)
        if self.max_seconds is not None and done < steps and self.agree(self._over_budget(history)):
            return f"time budget of {self.max_seconds:g} s used after {done} steps"
        return None

    def agree(self, flag: bool) -> bool:
        return distributed.any_rank(flag)

    def finish(self, model, optimizer, device, history: dict) -> None:
        if self.checkpoint is not None and distributed.is_main():
            self.checkpoint.save(model, optimizer, history["steps"], history, device)

    def _over_budget(self, history: dict) -> bool:
        return history["seconds"] >= self.max_seconds
