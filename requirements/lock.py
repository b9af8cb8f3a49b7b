"""Make the edition's lock, and check that the newest releases of the dependencies still pass.

    python requirements/lock.py compile              rewrite requirements/lock.txt (needs: pip install uv)
    python requirements/lock.py newest [TESTS ...]   newest releases (torch kept) -> unit tests

``compile`` resolves pyproject.toml's dependencies and the dev, lab, course, browser and site extras once
for every platform and every Python >= 3.10 (``uv pip compile --universal``), pins them without
hashes, and leaves out torch and the packages only its CUDA builds pull in: each machine keeps the
torch build that fits it (CPU, CUDA or MPS), and a constraint on a package it does not install
costs nothing. Install the edition with ``pip install -c requirements/lock.txt -e ".[dev]"``.

``newest`` is the scheduled job's check (weekly, say) that the lock is not holding a course back
from fixes: in a temporary virtual environment that sees this interpreter's torch, it installs
the newest release of every other dependency, prints which differ from the lock, and runs the
unit tests (default: ``tests -m "not browser"``, in smoke mode). Its exit status is pytest's.
"""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
EXTRAS = ("dev", "lab", "course", "browser", "site")
TORCH_ONLY = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*)$")  # torch and what only its builds install


def pinned(text: str) -> dict[str, str]:
    """name -> version for every ``name==version`` line of a lock or of ``pip freeze`` whose
    environment marker (``; python_full_version < '3.11'``) holds for this interpreter."""
    from packaging.markers import Marker

    found = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^ ;]+)\s*(?:;(.*))?$", line)
        if match and (not match.group(3) or Marker(match.group(3).strip()).evaluate()):
            found.setdefault(match.group(1).lower().replace("_", "-"), match.group(2))
    return found


def compile_lock() -> int:
    listed = subprocess.run([sys.executable, "-m", "uv", "pip", "compile", "--universal", "--python-version", "3.10",
                             "pyproject.toml", *[a for e in EXTRAS for a in ("--extra", e)], "--no-header",
                             "--no-annotate", "-q"], cwd=ROOT, capture_output=True, text=True, check=True)
    skipped = sorted({n for n in pinned(listed.stdout) if TORCH_ONLY.match(n)})
    cmd = [sys.executable, "-m", "uv", "pip", "compile", "--universal", "--python-version", "3.10", "pyproject.toml",
           *[a for e in EXTRAS for a in ("--extra", e)], *[a for n in skipped for a in ("--no-emit-package", n)],
           "--no-header", "-q", "-o", str(LOCK.relative_to(ROOT))]
    head = ("# The edition's pinned dependencies (torch and its CUDA-only packages left out: each machine keeps\n"
            "# its own torch build). Made by: python requirements/lock.py compile  (see requirements/README.md)\n")
    done = subprocess.run(cmd, cwd=ROOT, check=False)
    if done.returncode == 0:
        LOCK.write_text(head + LOCK.read_text(encoding="utf-8"), encoding="utf-8")
    return done.returncode


def newest(tests: list[str]) -> int:
    import torch  # the build this machine already has, kept in the check

    with tempfile.TemporaryDirectory() as folder:
        venv.create(folder, with_pip=True)
        python = str(Path(folder) / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))
        # the new environment sees this one's packages after its own (so torch need not be installed
        # again), and what it installs itself, the newest releases, comes first
        inner = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip()
        Path(inner, "parent-environment.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
        keep = Path(folder) / "keep-torch.txt"
        keep.write_text(f"torch=={torch.__version__}\n", encoding="utf-8")
        subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "--upgrade-strategy", "eager",
                        "-c", str(keep), f"{ROOT}[{','.join(EXTRAS)}]"], check=True)
        freeze = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
        now, locked = pinned(freeze), pinned(LOCK.read_text(encoding="utf-8"))
        moved = [f"{n} {locked[n]} -> {v}" for n, v in sorted(now.items()) if n in locked and locked[n] != v]
        print(f"{len(moved)} dependencies newer than the lock:", *moved, sep="\n  ")
        env_cmd = [python, "-m", "pytest", *(tests or ["tests", "-m", "not browser"]), "-q", "-p", "no:cacheprovider"]
        return subprocess.run(env_cmd, cwd=ROOT, check=False, env={**os.environ, "TL_SMOKE": "1"}).returncode


if __name__ == "__main__":
    command, rest = (sys.argv[1] if len(sys.argv) > 1 else ""), sys.argv[2:]
    if command == "compile":
        sys.exit(compile_lock())
    if command == "newest":
        sys.exit(newest(rest))
    sys.exit(__doc__)
