"""Choosing the device: Apple MPS, then CUDA, then the CPU, in one helper; and what differs per device.

:func:`get_device`: an explicit choice (``"cuda:1"``) wins, then ``TL_DEVICE``, then MPS, CUDA,
the CPU. A device this machine lacks is an error naming the available ones, raised before any
work starts. Per device, kept here so the training loop reads the same everywhere: AdamW's fused
kernel (:func:`optimizer_options`), clip_grad_norm_'s foreach path (:func:`clip_options`), waiting for
queued kernels (:func:`synchronize`).

MPS has no float64: tensors are float32 everywhere, and anything that needs float64 moves to
the CPU first and casts there (``x.cpu().double()``, never ``x.double().cpu()``).
"""

from __future__ import annotations

import os
import platform

import torch

CHOICES = ("auto", "cpu", "cuda", "mps")
ENV = "TL_DEVICE"


def available_devices() -> list[str]:
    """Device types usable here, in the order ``auto`` prefers them."""
    found = []
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        found.append("mps")
    if torch.cuda.is_available():
        found.append("cuda")
    found.append("cpu")
    return found


def cuda_device_count() -> int:
    return torch.cuda.device_count()


def get_device(choice: str | torch.device | None = None) -> torch.device:
    """The torch.device for ``choice`` ("auto" or None, "cpu", "cuda", "cuda:N", "mps"): an unknown name is a
    ValueError, a missing device a RuntimeError."""
    if isinstance(choice, torch.device):
        choice = str(choice)
    if choice is not None and not isinstance(choice, str):
        raise TypeError(f"device choice must be a string or torch.device, got {type(choice).__name__}")
    where = "asked for"
    if choice is None or choice.strip().lower() in ("", "auto"):
        env = os.environ.get(ENV, "").strip()
        if env and env.lower() != "auto":
            choice, where = env, f"asked for by {ENV}={env}"
        else:
            choice = "auto"
    choice = choice.strip().lower()
    kind, _, index = choice.partition(":")
    if kind not in CHOICES or (index and (kind != "cuda" or not index.isdigit())):
        source = f" ({where})" if where != "asked for" else ""
        raise ValueError(f"unknown device {choice!r}{source}: expected one of {', '.join(CHOICES)} (or 'cuda:N')")
    here = available_devices()
    if kind == "auto":
        return torch.device(here[0])
    if kind not in here:
        raise RuntimeError(f"device {choice!r} was {where} but is not available here; available: {', '.join(here)}")
    if index and int(index) >= cuda_device_count():
        raise RuntimeError(f"device {choice!r} was {where}, but this machine has only {cuda_device_count()} "
                           f"CUDA device(s): cuda:0..cuda:{cuda_device_count() - 1}")
    return torch.device(choice)


# ----------------------------------------------------------------------------- per-device kernels
def optimizer_options(device: torch.device | str) -> dict:
    """Extra AdamW arguments: ``fused=True`` (one kernel for all parameters) on CUDA and MPS; none on the CPU."""
    return {"fused": True} if torch.device(device).type in ("cuda", "mps") else {}


def clip_options(device: torch.device | str) -> dict:
    """``foreach=True`` for clip_grad_norm_ on CUDA and the CPU; not on MPS, where torch has no foreach
    kernels (clip_grad_norm_(foreach=True) raises there)."""
    return {"foreach": True} if torch.device(device).type in ("cuda", "cpu") else {}


# ----------------------------------------------------------------------------- clocks and names
def synchronize(device: torch.device | str) -> None:
    """Wait for queued kernels on ``device`` (needed before reading a clock on CUDA or MPS)."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def device_name(device: torch.device | str) -> str | None:
    """The GPU's name for ``device`` (the one in use: cuda:1 is GPU 1), or None off CUDA."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    index = device.index if device.index is not None else torch.cuda.current_device()
    return torch.cuda.get_device_name(index)


def describe() -> dict:
    """Versions and devices, for the start-here notebook and for results files."""
    chosen = get_device()
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "available": available_devices(),
        "chosen": str(chosen),
        "TL_DEVICE": os.environ.get(ENV) or None,
        "cuda_device": device_name(chosen),
        "threads": torch.get_num_threads(),
    }
