"""Checkpoints: everything a training run needs to continue exactly where it stopped.

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
from pathlib import Path

import numpy as np
import torch

from .device import rng_state, set_rng_state

FORMAT = "tl_minimal checkpoint 1"
KEYS = ("model", "optimizer", "step", "history", "rng")


class CheckpointError(ValueError):
    """A checkpoint file that cannot be resumed: unreadable, not a checkpoint, or for another model."""


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The plain model inside a DistributedDataParallel wrapper (or the model itself)."""
    return model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model


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
