"""The library's layers (pyproject.toml [tool.importlinter], docs/library.md), checked by import-linter.

The contract orders the layers, lowest last: the concept files (in reading order) and their helpers,
the relatives, the model assembly, data and training, the course helpers, the instructor command and
the reader of the committed results; above the whole course package sits the research package
(research/tl_research, never in the course wheel), which the course never imports. A layer imports only
the layers below it, and pictures never train. ``lint-imports`` must pass on the package
and fail on a copy with one import the wrong way. The contract is not exhaustive, so a new top-level
file (a concept or a relative) needs no edit of it; what keeps such a file honest is
:func:`reaching_up`: a file the contract does not name imports nothing from the assembly or above.
The required lessons (00-07 and their second sittings) import nothing from the research package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the dev extra: pip install -e '.[dev]'")
tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml with tomllib")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package and pyproject.toml found in ``root``."""
    code = ("import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())")
    # root's two packages first (the course, the research package in research/), then whatever the caller
    # had (import-linter's own install)
    path = os.pathsep.join(p for p in (str(root), str(root / "research"), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-c", code, "--no-cache"], cwd=root, capture_output=True,
                          text=True, encoding="utf-8", env=env, check=False)


def layers(root: Path = ROOT) -> list[list[str]]:
    """The layers contract's layers, top first, each a list of module names (parentheses dropped)."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "layers"]
    return [[m.strip(" ()") for m in re.split(r"[|:]", layer)] for layer in contract["layers"]]


def assembly_and_above(root: Path = ROOT) -> list[str]:
    """Every module the contract names from the top down to the model assembly (registry .. models' parts)."""
    named = layers(root)
    bottom = next(i for i, layer in enumerate(named) if "transformer" in layer)
    return [m for layer in named[:bottom + 1] for m in layer]


def unlisted(root: Path = ROOT) -> list[str]:
    """Top-level modules and folders of ``root``'s tl_minimal that the contract does not name."""
    named = {m for layer in layers(root) for m in layer}
    found = {p.stem for p in (root / "tl_minimal").glob("*.py") if p.stem != "__init__"}
    found |= {p.name for p in (root / "tl_minimal").iterdir() if (p / "__init__.py").is_file()}
    return sorted(found - named)


REACHES = """
import json, sys
import grimp
graph = grimp.build_graph("tl_minimal", cache_dir=None)
low, high = json.loads(sys.argv[1])
print(json.dumps([[a, b] for a in low for b in high
                  if graph.chain_exists(importer=f"tl_minimal.{a}", imported=f"tl_minimal.{b}", as_packages=True)]))
"""


def reaching_up(root: Path = ROOT) -> list[list[str]]:
    """[module, what it reaches] for every module the contract does not name that imports, directly or
    not, the model assembly or a layer above it (grimp, the graph import-linter builds)."""
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8"}
    out = subprocess.run([sys.executable, "-c", REACHES, json.dumps([unlisted(root), assembly_and_above(root)])],
                         cwd=root, capture_output=True, text=True, encoding="utf-8", env=env, check=True)
    return json.loads(out.stdout)


def test_the_import_contract_holds():
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 kept, 0 broken" in out.stdout, out.stdout


def test_the_research_package_sits_above_the_whole_course():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert set(config["root_packages"]) == {"tl_minimal", "tl_research"}
    (research,) = [c for c in config["contracts"] if c["id"] == "research"]
    assert research["type"] == "layers" and research["layers"] == ["tl_research", "tl_minimal"]


def test_the_contract_orders_the_layers_in_short_steps():
    named = layers()
    order = ["results", "views", "training", "data", "registry", "models", "gla",
             "kv_fusion", "conv", "slots", "readout", "pair_memory", "running_state", "kernels"]
    where = {m: i for i, layer in enumerate(named) for m in layer}
    assert [where[m] for m in order] == sorted(where[m] for m in order), named
    assert max(map(len, named)) <= 4, "a layer of many modules orders nothing: split it"


def test_every_module_the_contract_does_not_name_sits_below_the_assembly():
    assert reaching_up() == [], "a file the contract does not name imports the assembly or above: list it"


def test_a_new_module_needs_no_edit_of_the_contract(tmp_path):
    copy_clone(tmp_path)
    package = tmp_path / "tl_minimal"
    # a new relative and a new concept file at the top level, a new module in a layer's folder
    (package / "scratch_relative.py").write_text("from .gla import gla\nfrom .readout import decayed_attention\n",
                                                 encoding="utf-8")
    (package / "scratch_concept.py").write_text("from .running_state import running_state\n", encoding="utf-8")
    (package / "training" / "scratch.py").write_text("from ..registry import build_model\n", encoding="utf-8")
    out = lint_imports(tmp_path)
    assert out.returncode == 0 and "3 kept, 0 broken" in out.stdout, out.stdout + out.stderr
    assert set(unlisted(tmp_path)) - set(unlisted()) == {"scratch_concept", "scratch_relative"}
    assert reaching_up(tmp_path) == []
    # what import-linter no longer sees in an unnamed file, the test does: a "concept" that builds a model
    (package / "scratch_concept.py").write_text("from .models import TransformerLM\n", encoding="utf-8")
    reached = reaching_up(tmp_path)  # models, and what models imports (transformer, the concepts)
    assert ["scratch_concept", "models"] in reached and {a for a, _ in reached} == {"scratch_concept"}


def copy_clone(where: Path) -> None:
    """The two packages and pyproject.toml, copied to ``where`` (a clone import-linter can read)."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "tl_minimal", where / "tl_minimal", ignore=ignore)
    shutil.copytree(ROOT / "research" / "tl_research", where / "research" / "tl_research", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", where)


def lint_with_import(tmp_path: Path, module: str, line: str):
    """lint-imports on a copy of the clone where ``module`` (a path under it) ends with the import ``line``."""
    copy_clone(tmp_path)
    path = tmp_path / module
    path.write_text(path.read_text(encoding="utf-8") + "\n" + line + "\n", encoding="utf-8")
    return lint_imports(tmp_path)


def test_the_contract_fails_on_a_wrong_way_import(tmp_path):
    out = lint_with_import(tmp_path, "tl_minimal/training/train.py",
                           "from ..results import tables  # training importing the reader of the results above it")
    assert out.returncode != 0, out.stdout
    assert "BROKEN" in out.stdout, out.stdout
    assert "tl_minimal.training.train -> tl_minimal.results" in out.stdout, out.stdout


def test_the_contract_fails_when_the_course_imports_the_research_package(tmp_path):
    out = lint_with_import(tmp_path, "tl_minimal/course/setup.py",
                           "from tl_research import protocols  # the course importing the research package")
    assert out.returncode != 0 and "BROKEN" in out.stdout, out.stdout
    assert "tl_minimal.course.setup -> tl_research" in out.stdout, out.stdout


IMPORT = re.compile(r"^\s*(?:from|import)\s+(tl_(?:minimal|research)(?:\.\w+)*)", re.MULTILINE)
OPTIONAL = re.compile(r"^# \*\*Optional\.\*\*", re.MULTILINE)  # the first cell of an optional notebook says so


def optional(notebook: Path) -> bool:
    """An optional notebook (07b, 07c, 08) says so in its first cell; every other lesson is required."""
    first_cell = notebook.read_text(encoding="utf-8").split("# %%")[1]
    return bool(OPTIONAL.search(first_cell))


# the required lessons, second sittings included (01b, 03b, 03c, 06a, 06b); 07b, 07c and 08 are optional
REQUIRED = sorted(p.name for p in NOTEBOOKS.glob("0[0-9]*.py") if not optional(p))


def test_the_optional_notebooks_are_the_three_that_say_so():
    assert sorted(p.name for p in NOTEBOOKS.glob("0[0-9]*.py") if optional(p)) == [
        "07b_diagnoses.py", "07c_recall_breaks.py", "08_speed.py"]
    assert "07_paper_reproduction.py" in REQUIRED and "06b_family.py" in REQUIRED


@pytest.mark.parametrize("notebook", REQUIRED)
def test_the_required_notebooks_import_only_the_course_package(notebook):
    modules = IMPORT.findall((NOTEBOOKS / notebook).read_text(encoding="utf-8"))
    assert modules, f"{notebook} imports nothing from tl_minimal: the pattern is broken"
    research = [m for m in modules if m.startswith("tl_research")]
    assert not research, f"{notebook} imports research code {research}: a required lesson runs from the course wheel"


def test_the_course_package_never_imports_the_research_package():
    """Without import-linter too: no module of tl_minimal names tl_research in an import."""
    found = [f"{p.relative_to(ROOT)}: {m}" for p in sorted((ROOT / "tl_minimal").rglob("*.py"))
             for m in IMPORT.findall(p.read_text(encoding="utf-8")) if m.startswith("tl_research")]
    assert found == []
