"""Reading the committed results files as runs, for every table (one file: the course's
:func:`tl_minimal.results.load`). A file holds one *suite*, the runs of one task under one
set of settings; a file merged from several commands lists them in ``merged_from``.

    runs = load_runs(results_dir() / "lm.json")     # each run tagged with overrides, label, file
"""

from __future__ import annotations

import glob
from pathlib import Path

from tl_minimal.course.files import RESULTS_ENV as ENV
from tl_minimal.course.files import results_dir
from tl_minimal.results.files import load

__all__ = ["ENV", "SHORT", "expand", "load", "load_runs", "override_label", "provenance", "results_dir"]

SHORT = {"d_model": "d", "state_dim": "S", "num_slots": "K", "conv_causal": "causal",  # labels of --set keys
         "read_gate_bias": "gatebias"}


def expand(paths) -> list[Path]:
    """One path, a glob, or a list of them -> the files, sorted per pattern (a missing plain path stays, so
    :func:`load` can say it is missing)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    for p in paths:
        hits = sorted(glob.glob(str(p)))
        out += [Path(h) for h in hits] if hits else [Path(p)]
    return out


def is_gathered(data: dict) -> bool:
    """A file gathered from other results files (``sources``; an lr sweep's ``sweep_runs``), not one
    suite's file: merge and table 5 leave it alone."""
    return "sweep_runs" in data or "sources" in data


def override_label(overrides: dict) -> str:
    """{"d_model": 56, "state_dim": 16} -> "d=56, S=16" ("" for no overrides)."""
    return ", ".join(f"{SHORT.get(k, k)}={v}" for k, v in sorted(overrides.items()))


def load_runs(paths) -> list[dict]:
    """Every run of every file (globs allowed), each with ``overrides``, ``label``, ``file`` and ``protocol``."""
    runs = []
    for path in expand(paths):
        data = load(path)
        overrides = data["protocol"].get("overrides") or {}
        for run in data["runs"]:
            label = run["variant"] + (f" ({override_label(overrides)})" if overrides else "")
            runs.append({**run, "overrides": overrides, "label": label, "file": path.name,
                         "protocol": data["protocol"]})
    return runs


def _provenance_row(name: str, protocol: dict) -> dict:
    env = protocol.get("environment", {})
    return {"file": name, "task": protocol.get("task"), "steps": protocol.get("steps"),
            "seeds": protocol.get("seeds"), "max_seconds": protocol.get("max_seconds"),
            "overrides": protocol.get("overrides"), "data_source": protocol.get("data_source"),
            "data_note": protocol.get("data_note"), "device": env.get("device"),
            "threads": env.get("threads"), "git_commit": env.get("git_commit"),
            "date": env.get("date"), "command": env.get("command")}


def provenance(paths) -> list[dict]:
    """Per command behind the files: protocol summary, data source, device, commit, date and the exact
    command. A merged file gives one entry per part, named ``file (from part)``."""
    out = []
    for path in expand(paths):
        data = load(path)
        parts = data.get("merged_from") or []
        if not parts or not all("protocol" in part for part in parts):  # one command (or the recall study's merge)
            out.append(_provenance_row(path.name, data["protocol"]))
            continue
        for part in parts:
            out.append(_provenance_row(f"{path.name} (from {part['file']})", {**data["protocol"], **part["protocol"]}))
    return out
