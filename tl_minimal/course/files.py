"""Where the committed files are: ``results_dir()`` (data/results) and ``checkpoint_dir()`` (data/checkpoints).

In a clone each is the clone's folder; in a normal install (a wheel) the same files ship as package data
and are found with :mod:`importlib.resources`. ``TL_MINIMAL_RESULTS=/some/folder`` names another results folder.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

CLONE = Path(__file__).resolve().parents[2]  # the repository, when this is a clone
RESULTS_ENV = "TL_MINIMAL_RESULTS"  # an explicit results folder (a copy elsewhere, a read-only hub image)


def committed_folder(clone_path: str, package: str) -> Path | None:
    """The clone's ``clone_path`` when it exists, else the installed package data ``package``, else None."""
    clone = CLONE / clone_path
    if clone.is_dir():
        return clone
    try:
        installed = Path(str(resources.files(package)))
    except ModuleNotFoundError:
        return None
    return installed if installed.is_dir() else None


def results_dir() -> Path:
    """The results folder: $TL_MINIMAL_RESULTS, else the clone's data/results, else the installed copy."""
    override = os.environ.get(RESULTS_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"{RESULTS_ENV}={override} is not a folder; point it at a folder of "
                                    "results files (a copy of the repository's data/results) or unset it")
        return path
    found = committed_folder("data/results", "tl_minimal.results_files")
    if found is None:
        raise FileNotFoundError("no results folder: not a clone (no data/results) and no installed "
                                f"tl_minimal.results_files; set {RESULTS_ENV} to a copy of the "
                                "repository's data/results")
    return found


def checkpoint_dir() -> Path:
    """The folder of the shipped checkpoints: the clone's data/checkpoints, else the installed copy (a missing
    one is the clone's path, so the error names where the files belong)."""
    found = committed_folder("data/checkpoints", "tl_minimal.checkpoint_files")
    return found if found is not None else CLONE / "data" / "checkpoints"
