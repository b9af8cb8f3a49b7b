"""Choosing the device (:func:`get_device`: an explicit choice, then ``TL_DEVICE``, then MPS, CUDA, the CPU;
a missing device is an error before any work starts) and what the loop does differently per device.
MPS has no float64: cast on the CPU (``x.cpu().double()``). How to choose, what is checked: docs/devices.md.
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
    choice = "auto" if choice is None else str(choice).strip().lower() or "auto"  # str() of a torch.device too
    where, env = "asked for", os.environ.get(ENV, "").strip()
    if choice == "auto" and env.lower() not in ("", "auto"):
        choice, where = env.lower(), f"asked for by {ENV}={env}"
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
