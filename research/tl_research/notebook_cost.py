"""What a notebook costs to run, measured: wall time, CPU time and peak memory, into a JSON file.

A notebook's "Time" line and the README's learning path should read its run time from a
measurement, not from a guess. This module runs notebooks top to bottom the way a student
does (a fresh Jupyter kernel, default mode: ``TL_SMOKE`` is removed from the kernel's
environment) and records, per notebook,

- ``wall_s``: seconds from starting the kernel to the end of the last cell, measured outside
  the kernel (a student's run of the whole notebook, kernel start included);
- ``cpu_s``: CPU seconds the kernel process used (``time.process_time()`` inside it: every
  thread of the kernel, not processes it starts, which no notebook here does);
- ``peak_mb``: the kernel's peak resident memory in MiB (``resource`` on Linux and macOS,
  ``psutil`` on Windows when it is installed; ``null`` when neither can say);
- ``load_1min``: the machine's load average when the run started (``null`` where the system has
  none, e.g. Windows): a busy machine inflates ``wall_s`` far more than ``cpu_s``.

Usage, from a clone's root::

    python -m tl_research.notebook_cost notebooks                      # every NN_*.ipynb and solution
    python -m tl_research.notebook_cost notebooks/00_start_here.ipynb  # one notebook
    python -m tl_research.notebook_cost notebooks --out docs/notebook_cost.json --timeout 1800

A folder means its ``NN_*.ipynb`` notebooks and ``exercises/solutions/*.ipynb``. Results are
merged into ``--out`` (default ``docs/notebook_cost.json``) under the notebook's path as given,
beside a description of the machine; run it on a quiet machine, since other work inflates the
wall time (CPU time much less). The executed notebook is not saved: its committed outputs stay.
Needs ``nbclient`` and ``nbformat``, which JupyterLab installs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time
from pathlib import Path

import torch

MARKER = "NOTEBOOK_COST "
# appended as the last cell: the kernel reports its own CPU time and peak memory
MEASURE_CELL = f'''
import json as _json, sys as _sys, time as _time
def _peak_mb():
    try:
        import resource
    except ImportError:  # Windows: psutil, if installed, knows the peak working set
        try:
            import psutil
            return psutil.Process().memory_info().peak_wset / 2**20
        except (ImportError, AttributeError):
            return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 2**20 if _sys.platform == "darwin" else peak / 1024
print("{MARKER}" + _json.dumps({{"cpu_s": _time.process_time(), "peak_mb": _peak_mb()}}))
'''


def notebooks_in(target: Path) -> list[Path]:
    """The notebooks a path names: a file itself, a folder's NN_*.ipynb and its exercise solutions."""
    if target.is_file():
        if target.suffix != ".ipynb":
            raise ValueError(f"{target}: expected a .ipynb notebook or a folder of them")
        return [target]
    if not target.is_dir():
        raise FileNotFoundError(f"{target}: no such notebook or folder")
    found = sorted(target.glob("[0-9][0-9]*_*.ipynb")) + sorted(target.glob("exercises/solutions/*.ipynb"))
    if not found:
        raise ValueError(f"{target}: no NN_*.ipynb notebooks or exercises/solutions/*.ipynb in this folder")
    return found


def run_notebook(path: Path, timeout: int = 1800) -> dict:
    """Execute the notebook in a fresh kernel (default mode) and return its measured cost."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(MEASURE_CELL))
    smoke = os.environ.pop("TL_SMOKE", None)  # default mode: the kernel inherits this environment
    try:
        load = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None  # POSIX only
        client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                         resources={"metadata": {"path": str(path.parent)}})
        start = time.perf_counter()
        client.execute()
        wall = time.perf_counter() - start
    finally:
        if smoke is not None:
            os.environ["TL_SMOKE"] = smoke
    printed = "".join(out.get("text", "") for out in nb.cells[-1].get("outputs", []))
    line = next((ln for ln in printed.splitlines() if ln.startswith(MARKER)), None)
    if line is None:
        raise RuntimeError(f"{path}: the measuring cell printed nothing ({printed[:200]!r})")
    measured = json.loads(line[len(MARKER):])
    return {"wall_s": round(wall, 1), "cpu_s": round(measured["cpu_s"], 1),
            "peak_mb": None if measured["peak_mb"] is None else round(measured["peak_mb"]),
            "load_1min": load, "mode": "default",
            "measured": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def machine() -> dict:
    """What the numbers were measured on (they mean little without it)."""
    return {"platform": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
            "cpu_count": os.cpu_count(), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")}


def record(costs: dict, out: Path) -> dict:
    """Merge {notebook: cost} into the JSON file ``out`` (created if missing); returns its content."""
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    data.setdefault("notebooks", {}).update(costs)
    data["notebooks"] = dict(sorted(data["notebooks"].items()))
    data["machine"] = machine()
    data["command"] = "python -m tl_research.notebook_cost"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tl_research.notebook_cost",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks (.ipynb) or folders of them")
    parser.add_argument("--out", type=Path, default=Path("docs/notebook_cost.json"), help="JSON file to merge into")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    targets = [nb for p in args.paths for nb in notebooks_in(p)]
    costs = {}
    for nb in targets:
        costs[nb.as_posix()] = cost = run_notebook(nb, args.timeout)
        print(f"{nb.as_posix():55s} wall {cost['wall_s']:7.1f} s   cpu {cost['cpu_s']:7.1f} s   "
              f"peak {cost['peak_mb']} MiB", flush=True)
    record(costs, args.out)
    print(f"recorded in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
