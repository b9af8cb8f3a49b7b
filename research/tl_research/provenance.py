"""Where a result came from: the environment, the git commit and the command line, recorded in every results file."""

from __future__ import annotations

import datetime
import platform
import subprocess
import sys
from pathlib import Path

import torch

from tl_minimal.training.device import device_name

from . import distributed


def git_commit() -> str | None:
    """The repository's current commit (with "+dirty" when files changed), or None outside git."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, encoding="utf-8", check=False,
            timeout=5,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("+dirty" if dirty else "")) or None


def portable(word: str) -> str:
    """One word of a recorded command, as it reads on another machine: an absolute path inside this
    checkout (``--out /home/me/tl-minimal/data/results/x.json``, or ``--out=...``) is written
    relative to the checkout's root (``data/results/x.json``); every other word is kept."""
    root = Path(__file__).resolve().parents[2]  # the checkout: research/tl_research/ -> ..
    option, eq, value = word.partition("=") if word.startswith("--") else ("", "", word)
    path = Path(value)
    if not path.is_absolute() or root not in path.resolve().parents:
        return word
    return option + eq + path.resolve().relative_to(root).as_posix()


def command_line() -> str:
    """The command that is running, as a reader would type it: a module of this package run with
    ``python -m`` is written ``python -m tl_research...`` (not the file's path on this machine), and
    paths inside the checkout relative to it (:func:`portable`)."""
    package = Path(__file__).resolve().parent  # research/tl_research/
    program = Path(sys.argv[0]).resolve()
    args = [portable(word) for word in sys.argv[1:]]
    if program.suffix != ".py" or package not in program.parents:  # a script, an interactive session
        return " ".join([sys.argv[0], *args])
    module = program.relative_to(package.parent).with_suffix("")
    parts = [part for part in module.parts if part != "__main__"]
    return " ".join(["python -m " + ".".join(parts), *args])


def environment(device: torch.device, command: str | None = None) -> dict:
    """The versions, the device, the commit, the date and the command of a run (``command``: the one
    that resumes it, when known; else the command line that is running)."""
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": str(device),
        "cuda_device": device_name(device),
        "threads": torch.get_num_threads(),
        "world_size": distributed.world_size(),
        "git_commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command or command_line(),
    }
