"""The three layers' rule (pyproject.toml [tool.importlinter], docs/library.md), checked by import-linter.

The course library imports neither the course helpers nor the research code, the helpers never
import the research code, the concept files import no model assembly, and pictures never train.
``lint-imports`` must pass on the package and fail on a copy with one import the wrong way; the
notebooks a student works through (00-06) import only the library and the helpers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the dev extra: pip install -e '.[dev]'")

ROOT = Path(__file__).resolve().parents[2]
RESEARCH = ("experiments", "instructor")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package and pyproject.toml found in ``root``."""
    code = ("import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())")
    # root's package first, then whatever the caller had (import-linter's own install)
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-c", code, "--no-cache"], cwd=root, capture_output=True,
                          text=True, encoding="utf-8", env=env, check=False)


def test_the_import_contract_holds():
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 kept, 0 broken" in out.stdout, out.stdout


def test_the_contract_fails_on_a_wrong_way_import(tmp_path):
    shutil.copytree(ROOT / "tl_minimal", tmp_path / "tl_minimal",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    train = tmp_path / "tl_minimal" / "training" / "train.py"
    wrong_way = "\nfrom ..experiments import protocols  # the library importing the research code\n"
    train.write_text(train.read_text(encoding="utf-8") + wrong_way, encoding="utf-8")
    out = lint_imports(tmp_path)
    assert out.returncode != 0, out.stdout
    assert "BROKEN" in out.stdout, out.stdout
    assert "tl_minimal.training.train -> tl_minimal.experiments" in out.stdout, out.stdout


IMPORT = re.compile(r"^\s*(?:from|import)\s+(tl_minimal(?:\.\w+)*)", re.MULTILINE)


STUDENT_NOTEBOOKS = sorted([p.name for p in (ROOT / "notebooks").glob("0[0-6]_*.py")]
                           + ["03b_chunked_readout.py", "06a_kv_recall.py"])  # the lessons' second sittings too


@pytest.mark.parametrize("notebook", STUDENT_NOTEBOOKS)
def test_the_student_notebooks_import_only_the_library_and_the_helpers(notebook):
    modules = IMPORT.findall((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    assert modules, f"{notebook} imports nothing from tl_minimal: the pattern is broken"
    research = [m for m in modules if m.split(".")[1:2] and m.split(".")[1] in RESEARCH]
    assert not research, f"{notebook} imports research code {research}: notebooks 00-06 use layers 1-2"
