"""Checkpoints: everything a training run needs to continue exactly where it stopped.

    train(model, batches, steps, RunConfig(checkpoint=Checkpoint(path, every=100)))  # saves, resumes from path
    save_checkpoint(path, model, optimizer, step, history, device=device)
    ckpt = load_checkpoint(path, model, optimizer, device=device)     # -> the saved dict

A checkpoint is plain data (read with ``weights_only=True``: a file from elsewhere cannot run
code): "format", the model's and the optimizer's state dicts, the "step" done, the "history" so
far, "rng" (torch's CPU and CUDA or MPS generators, numpy's and python's states, as tensors) and
"extra". It is written atomically (a temporary file, then a rename), so a run killed while saving
keeps the previous one. A file that cannot be read or does not fit the model is a
:class:`CheckpointError` naming the file.
"""

from __future__ import annotations

import os
import random
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

FORMAT = "tl_minimal checkpoint 1"
KEYS = ("model", "optimizer", "step", "history", "rng")


class CheckpointError(ValueError):
    """A checkpoint file that cannot be resumed: unreadable, not a checkpoint, or for another model."""


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The plain model inside a DistributedDataParallel wrapper (or the model itself)."""
    return model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model


@dataclass
class Checkpoint:
    """What :class:`~tl_research.run_config.RunConfig`'s ``checkpoint`` field takes: save the run to
    ``path`` at the end and every ``every`` steps, and continue from ``path`` when it exists."""

    path: object
    every: int | None = None

    def due(self, done: int) -> bool:
        """Whether to save after ``done`` steps (between the end's save)."""
        return bool(self.every) and done % self.every == 0

    def resume(self, model, optimizer, device, history: dict) -> tuple[int, dict]:
        """(steps done, history so far): the saved ones when ``path`` exists, else (0, ``history``)."""
        if not Path(self.path).exists():
            return 0, history
        ckpt = load_checkpoint(self.path, model, optimizer, device=device)
        return ckpt["step"], {**ckpt["history"], "stopped": "done"}

    def save(self, model, optimizer, step: int, history: dict, device) -> None:
        save_checkpoint(self.path, model, optimizer, step, history, device=device)


# ----------------------------------------------------------------------------- torch's generators per device
def rng_state(device: torch.device | str) -> dict:
    """The torch generators a run on ``device`` draws from, each a CPU uint8 tensor: "cpu" always, and
    "cuda" (the GPU in use) or "mps" when training there (dropout there draws from its generator)."""
    device = torch.device(device)
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device).cpu()
    elif device.type == "mps":
        state["mps"] = torch.mps.get_rng_state().cpu()
    return state


def set_rng_state(state: dict, device: torch.device | str) -> None:
    """Restore what :func:`rng_state` saved (states are moved to the CPU first, as torch requires)."""
    device = torch.device(device)
    torch.set_rng_state(state["cpu"].cpu())
    if "cuda" in state and device.type == "cuda":
        torch.cuda.set_rng_state(state["cuda"].cpu(), device)
    elif "mps" in state and device.type == "mps":
        torch.mps.set_rng_state(state["mps"].cpu())
    elif set(state) - {"cpu"}:
        saved = ", ".join(sorted(set(state) - {"cpu"}))
        warnings.warn(f"resuming a {saved} checkpoint on {device}: the run continues, but not bit-exactly "
                      f"as it would have on {saved} (its generator state has no use here)", stacklevel=3)


# ----------------------------------------------------------------------------- random states as plain data
def random_states(device) -> dict:
    """torch's generators (CPU, and the CUDA or MPS one of ``device``), numpy's and python's, as tensors."""
    _, keys, pos, has_gauss, cached = np.random.get_state()
    version, state, gauss_next = random.getstate()
    return {
        "torch": rng_state(device),
        "numpy": {"keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos), "has_gauss": int(has_gauss),
                  "cached_gaussian": float(cached)},
        "python": {"version": version, "state": torch.tensor(state, dtype=torch.int64), "gauss_next": gauss_next},
    }


def set_random_states(states: dict, device) -> None:
    """Restore what :func:`random_states` saved."""
    set_rng_state(states["torch"], device)
    n = states["numpy"]
    np.random.set_state(("MT19937", n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                         n["cached_gaussian"]))
    p = states["python"]
    random.setstate((p["version"], tuple(p["state"].tolist()), p["gauss_next"]))


# ----------------------------------------------------------------------------- save and load
def _where(model, device) -> torch.device:
    return torch.device(device) if device is not None else next(unwrap(model).parameters()).device


def save_checkpoint(path, model, optimizer, step: int, history: dict, extra: dict | None = None,
                    device=None) -> None:
    """Write everything needed to continue at ``step`` (atomically: temporary file, then rename).

    ``device`` is where the run trains (default: where the model is): its generator is saved too.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
        "history": history,
        "rng": random_states(_where(model, device)),
        "extra": extra or {},
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(payload, tmp)
        os.replace(tmp, path)
    except BaseException:  # Ctrl-C while saving: the previous checkpoint stays, no stray file
        Path(tmp).unlink(missing_ok=True)
        raise


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def read_checkpoint(path) -> dict:
    """The checkpoint's contents (on the CPU), or a CheckpointError naming the file and the problem."""
    path = Path(path)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # any error: truncated zip, not a zip, objects from elsewhere, unreadable
        raise CheckpointError(
            f"checkpoint {path} cannot be read ({_first_line(exc)}): it is truncated, corrupted or not a "
            "tl_minimal checkpoint (only plain data is loaded from checkpoints). Delete it to start the run "
            "from the beginning") from None
    missing = [k for k in KEYS if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise CheckpointError(f"{path} is not a tl_minimal checkpoint: it has no {', '.join(missing)}")
    return ckpt


def load_checkpoint(path, model, optimizer=None, device=None) -> dict:
    """Restore the model (and optimizer, random states) from ``path``; returns the checkpoint dict.

    The file is read onto the CPU (random states must stay there); the weights are copied into
    the model where it is, and the optimizer moves its state next to the parameters.
    """
    ckpt = read_checkpoint(path)
    try:
        unwrap(model).load_state_dict(ckpt["model"])
        if optimizer is not None:
            optimizer.load_state_dict(ckpt["optimizer"])
        set_random_states(ckpt["rng"], _where(model, device))
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path} does not fit this run ({_first_line(exc)}); it was saved by "
                              "another model or settings. Delete it to start the run from the beginning") from None
    return ckpt
