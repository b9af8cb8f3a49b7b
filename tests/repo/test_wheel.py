"""A normal (non-editable) install is the course: build the wheel, install it into a fresh virtual
environment, run every required notebook (00-07 and their second sittings; not the optional 07b, 07c
and 08, which import the research package) in smoke mode from a copy outside the clone.

The wheel holds the course package only: the research package (research/tl_research: the studies, the
experiments command, the speed bench, the repository's tools) is installed in a clone beside it and
never ships; the test checks the wheel's files and that ``import tl_research`` fails where the
notebooks run.

This is what a JupyterHub image or a hosted notebook does (``pip install .``, then the notebooks
anywhere): nothing may be found relative to the source tree. The new environment downloads nothing:
a ``.pth`` file hands it this interpreter's packages (torch, jupyter, ...), and the wheel itself is
installed with ``--no-deps --no-index``. The environment variable ``PYTHONPATH`` is dropped, so the
only ``tl_minimal`` the notebooks can import is the installed wheel's (the test checks which one).

Slow (minutes, most of it the notebooks): marked ``slow`` and ``repo`` (it builds the
whole repository); `python run.py test-fast` leaves it out, CI runs it. It builds with
``python -m build`` when the ``build`` package is installed, else with ``pip wheel`` (the same setuptools
backend); the notebooks read the data ``TL_MINIMAL_DATA`` names, else the committed fixture
(tests/fixtures/data: smoke mode needs only a few KB of text).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import real_data_dir

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = re.compile(r"^# \*\*Optional\.\*\*", re.MULTILINE)  # an optional notebook says so in its first cell


def required_notebooks() -> list[str]:
    """The required lessons' .ipynb names: every numbered notebook whose first cell does not say Optional."""
    sources = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.py"))
    return [p.with_suffix(".ipynb").name for p in sources
            if not OPTIONAL.search(p.read_text(encoding="utf-8").split("# %%")[1])]


NOTEBOOKS = required_notebooks()
_SKIP_ANYWHERE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                       ".ipynb_checkpoints", "*.checkpoints", "runs")


def skip_outputs(folder, names):
    """What the copies leave out: build and run outputs anywhere, and the top-level checkpoints/ of runs
    (data/checkpoints, the shipped models, is package data and is kept)."""
    skipped = set(_SKIP_ANYWHERE(folder, names))
    if Path(folder).resolve() == ROOT and "checkpoints" in names:
        skipped.add("checkpoints")
    return skipped



def test_every_package_is_listed_for_the_wheel():
    """pyproject lists the packages (to map data/results in as tl_minimal.results_files, data/checkpoints as
    tl_minimal.checkpoint_files): none may be missing."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml with tomllib")
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tl_minimal").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == {"tl_minimal.results_files", "tl_minimal.checkpoint_files"}
    assert not [name for name in listed if not name.startswith("tl_minimal")], "only the course package ships"


def test_the_required_notebooks_are_the_lessons_00_to_07():
    assert NOTEBOOKS[0] == "00_start_here.ipynb" and NOTEBOOKS[-1] == "07_paper_reproduction.ipynb"
    assert "06b_family.ipynb" in NOTEBOOKS and len(NOTEBOOKS) == 13
    assert not {"07b_diagnoses.ipynb", "07c_recall_breaks.ipynb", "08_speed.ipynb"} & set(NOTEBOOKS)


def _run(cmd, cwd, env, timeout=600) -> str:
    done = subprocess.run([str(c) for c in cmd], check=False, cwd=cwd, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _fresh_env() -> dict:
    """This process's environment without anything that would import the clone's tl_minimal."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"), PYTHONNOUSERSITE="1", PYTHONIOENCODING="utf-8")
    return env


def _venv_python(where: Path) -> Path:
    """A fresh virtual environment that sees this interpreter's packages through a .pth file."""
    venv.EnvBuilder(with_pip=False, clear=True).create(where)
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, encoding="utf-8", check=True).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_base_packages.pth").write_text("\n".join(sorted(ours)) + "\n", encoding="utf-8")
    return python


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh environment with the wheel installed, a folder outside the clone, its env)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy, so the build leaves nothing in the clone
    shutil.copytree(ROOT, source, ignore=skip_outputs)
    env = _fresh_env()
    # the standard front end when its distribution is installed; a module named build found some other way
    # (the clone's build/ folder, docs/site/build.py imported by a site test) is not it
    try:
        importlib.metadata.distribution("build")
        front_end = True
    except importlib.metadata.PackageNotFoundError:
        front_end = False
    if front_end:
        _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp / "dist", source], tmp, env)
    else:  # pip drives the same build backend (setuptools) to the same wheel
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", tmp / "dist",
              source], tmp, env)
    (wheel,) = (tmp / "dist").glob("*.whl")
    python = _venv_python(tmp / "venv")
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile", wheel], tmp, env)
    outside = tmp / "elsewhere"
    outside.mkdir()
    env["PATH"] = str(python.parent) + os.pathsep + env.get("PATH", "")  # `python` is the new environment's
    env["TL_WHEEL"] = str(wheel)  # for the test of what it holds
    return python, outside, env


@pytest.mark.slow
@pytest.mark.repo
def test_the_wheel_holds_the_course_and_not_the_research_package(installed):
    python, outside, env = installed
    names = zipfile.ZipFile(env["TL_WHEEL"]).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"tl_minimal"}, tops
    assert "tl_minimal/results/__init__.py" in names and "tl_minimal/course/shipped.py" in names
    assert not [n for n in names if "experiments" in n or "tl_research" in n]
    # where the notebooks run, the research package cannot be imported: what they ran, the wheel held
    probe = "import importlib.util; print(importlib.util.find_spec('tl_research'))"
    assert _run([python, "-c", probe], outside, env).strip() == "None"


@pytest.mark.slow
@pytest.mark.repo
def test_installed_package_finds_its_results_without_the_clone(installed):
    python, outside, env = installed
    probe = ("import json, tl_minimal; from tl_minimal import results; "
             "print(json.dumps([tl_minimal.__file__, str(results.results_dir()), "
             "results.report('tables')['lm_matched_width']['markdown'].splitlines()[2].split('`')[1]]))")
    package, folder, first = json.loads(_run([python, "-c", probe], outside, env))
    venv_root = Path(python).parents[1].resolve()
    assert Path(package).resolve().is_relative_to(venv_root), package  # the wheel, not the clone
    assert Path(folder).resolve().is_relative_to(venv_root) and Path(folder).name == "results_files", folder
    assert (Path(folder) / "README.md").is_file() and (Path(folder) / "lm.json").is_file()
    assert first == "transformer"
    copy = outside / "my results"  # the documented override: another folder of results files
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    moved = _run([python, "-c", "from tl_minimal import results; print(results.results_dir())"], outside,
                 {**env, "TL_MINIMAL_RESULTS": str(copy)})
    assert Path(moved.strip()) == copy


@pytest.mark.slow
@pytest.mark.repo
def test_installed_package_finds_its_shipped_checkpoints_without_the_clone(installed):
    python, outside, env = installed
    probe = ("from tl_minimal.course import shipped; model, record = shipped.load_shipped('triple_latent'); "
             "print(shipped.checkpoint_dir()); print(record['steps'])")
    folder, steps = _run([python, "-c", probe], outside, env).split()
    assert Path(folder).resolve().is_relative_to(Path(python).parents[1].resolve()), folder  # the wheel's copy
    assert Path(folder).name == "checkpoint_files" and steps == "2000"


@pytest.mark.slow
@pytest.mark.repo
def test_notebooks_run_from_a_copy_outside_the_clone(installed):
    """Every required notebook under nbval, from a copy outside the clone, its kernel the new environment's
    python: each cell runs and its text outputs match the committed ones (the root conftest.py's rules).

    This is the nbval run of the required notebooks: when this test is in the session, the suite's own
    nbval run leaves them out (conftest.py, ``WHEEL_NBVAL``), so each runs once, where it proves the most."""
    python, outside, env = installed
    notebooks = outside / "notebooks"
    shutil.copytree(ROOT / "notebooks", notebooks, ignore=skip_outputs)
    check = outside / "which_python.ipynb"  # the kernel the notebooks get: the new environment's python
    check.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "id": "probe",
         "source": "import sys, tl_minimal\nprint(sys.executable)\nprint(tl_minimal.__file__)"}]}), encoding="utf-8")
    env = {**env, "TL_SMOKE": "1", "TL_MINIMAL_DATA": str(real_data_dir())}  # smoke mode: the fixture's text will do
    _run([python, "-m", "nbconvert", "--to", "notebook", "--execute", "--output-dir", outside / "ran", check],
         outside, env)
    probe = json.loads((outside / "ran" / check.name).read_text(encoding="utf-8"))
    kernel_python, package = "".join(probe["cells"][0]["outputs"][0]["text"]).split()
    venv_root = Path(python).parents[1].resolve()
    assert Path(package).resolve().is_relative_to(venv_root), (kernel_python, package)
    # nbval as the suite runs it (run.py: strict encoding): the clone's conftest.py (what it does not compare)
    # and no other configuration
    shutil.copyfile(ROOT / "conftest.py", outside / "conftest.py")
    (outside / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    _run([python, "-X", "warn_default_encoding", "-m", "pytest", "--nbval", "--nbval-current-env", "-q", "-rfE",
          "-p", "no:cacheprovider", "--tb=short", *(Path("notebooks") / n for n in NOTEBOOKS)], outside, env,
         timeout=1800)
