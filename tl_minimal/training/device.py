"""Choosing the device: Apple MPS, then CUDA, then the CPU, in one helper.

Every notebook, training run and benchmark calls :func:`get_device`. An explicit choice
(argument, or the ``TL_DEVICE`` environment variable) overrides the automatic order; asking
for a device that this machine does not have is an error that says what is available.
MPS has no float64: :func:`default_dtype` is float32 everywhere, and tests that need float64
run on the CPU.
"""

from __future__ import annotations

import os

import torch

CHOICES = ("auto", "cpu", "cuda", "mps")


def available_devices() -> list[str]:
    """Device types usable here, in the order ``auto`` prefers them."""
    found = []
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        found.append("mps")
    if torch.cuda.is_available():
        found.append("cuda")
    found.append("cpu")
    return found


def get_device(choice: str | torch.device | None = None) -> torch.device:
    """Return the torch.device to use.

    ``choice`` is ``"auto"`` (default: MPS, then CUDA, then CPU), ``"cpu"``, ``"cuda"``,
    ``"cuda:N"`` or ``"mps"``. ``None`` reads ``TL_DEVICE`` and falls back to ``"auto"``.
    """
    if isinstance(choice, torch.device):
        choice = str(choice)
    if choice is None:
        choice = os.environ.get("TL_DEVICE", "auto").strip() or "auto"
    if not isinstance(choice, str):
        raise TypeError(f"device choice must be a string or torch.device, got {type(choice).__name__}")
    kind = choice.split(":", 1)[0].lower()
    if kind not in CHOICES:
        raise ValueError(f"unknown device {choice!r}: expected one of {', '.join(CHOICES)} (or 'cuda:N')")
    here = available_devices()
    if kind == "auto":
        return torch.device(here[0])
    if kind not in here:
        raise RuntimeError(f"device {choice!r} was asked for but is not available here; available: {', '.join(here)}")
    if kind == "cuda" and ":" in choice:
        index = int(choice.split(":", 1)[1])
        if index >= torch.cuda.device_count():
            raise RuntimeError(f"device {choice!r}: only {torch.cuda.device_count()} CUDA device(s) here")
    return torch.device(choice.lower())


def synchronize(device: torch.device | str) -> None:
    """Wait for queued kernels on ``device`` (needed before reading a clock on CUDA or MPS)."""
    kind = torch.device(device).type
    if kind == "cuda":
        torch.cuda.synchronize()
    elif kind == "mps":
        torch.mps.synchronize()


def describe() -> dict:
    """Versions and devices, for the start-here notebook and for results files."""
    import platform

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "available": available_devices(),
        "chosen": str(get_device()),
        "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "threads": torch.get_num_threads(),
    }
