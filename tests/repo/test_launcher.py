"""run.py, the launcher of the quick start: its commands (printed with --dry-run, so nothing heavy
is installed), its functions one by one, and every bad input ending in one line and exit status 2.
One test creates a real virtual environment offline to see a torch spec pip cannot install."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run", ROOT / "run.py")
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)
OLD_PYTHON = Path("/root/.pyenv/versions/3.9.18/bin/python")  # where this machine keeps one, if any


def launch(*args: str, python: str = sys.executable, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python run.py ARGS` in a child process, as a user would type it."""
    return subprocess.run([python, str(ROOT / "run.py"), *args], cwd=ROOT, capture_output=True, text=True,
                          encoding="utf-8", env=env, timeout=600, check=False)


def dry_commands(*args: str) -> list[str]:
    done = launch("--dry-run", *args)
    assert done.returncode == 0, done.stderr
    return [line[2:] for line in done.stdout.splitlines() if line.startswith("$ ")]


# --- the commands, printed ------------------------------------------------------------------------
def test_test_creates_the_venv_installs_torch_first_then_runs_the_strict_suite():
    cmds = dry_commands("test", "--venv", "build/v", "--torch", "torch==2.13.0", "--extras", "dev,browser")
    venv = ROOT / "build" / "v"
    py = str(run.venv_python(venv))
    pip = [py, "-m", "pip", "install", "--quiet"]
    assert cmds[0] == run.show([sys.executable, "-m", "venv", str(venv)])
    assert cmds[1] == run.show([*pip, "--upgrade", "pip"]) and cmds[2] == run.show([*pip, "torch==2.13.0"])
    assert cmds[3].startswith(run.show([*pip, "-e", ".[dev,browser]"]))  # then -c the lock file, if there is one
    assert cmds[4] == run.show([py, "-X", "warn_default_encoding", "-m", "pytest", "--nbval", *run.WORKERS])


def test_test_fast_skips_the_notebooks_and_the_slow_tiers_and_passes_arguments_on():
    fast = "not slow and not repo and not browser"
    cmd = dry_commands("test-fast", "--", "-k", "launcher", "-q")[-1]
    assert cmd.endswith(run.show(["-m", "pytest", "tests", "-m", fast, "-k", "launcher", "-q"]))
    one_test = "tests/repo/test_launcher.py::test_the_venv_interpreter_path_per_system"
    one_file = dry_commands("test-fast", "--", one_test)[-1]
    assert one_file.endswith(run.show(["-m", "pytest", "-m", fast, one_test]))


def test_every_marker_test_fast_leaves_out_is_registered():
    """A marker pytest does not know is a typo that silently selects nothing (--strict-markers)."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml with tomllib")
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    registered = {line.split(":")[0] for line in ini["markers"]}
    assert set(re.findall(r"not (\w+)", run.FAST)) == {"slow", "repo", "browser"} <= registered
    assert "--strict-markers" in ini["addopts"]


def test_cpu_torch_index_is_pytorchs_cpu_wheel_index():
    torch_cmd = dry_commands("setup", "--torch", "torch==2.13.0", "--torch-index", "cpu")[2]
    assert torch_cmd.endswith("torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu")
    assert run.torch_index_url("cu126") == "https://download.pytorch.org/whl/cu126"
    assert run.torch_index_url("https://example.org/simple") == "https://example.org/simple"


def test_latest_uses_its_own_venv_no_lock_and_upgrades_everything():
    cmds = dry_commands("test-fast", "--latest")
    assert str(ROOT / ".venv-latest") in cmds[0]
    assert run.show(["--upgrade", "--upgrade-strategy", "eager", "-e", ".[dev,lab]"]) in cmds[2]
    assert " -c " not in cmds[2]


def test_the_lock_file_constrains_the_course_when_it_exists(monkeypatch, tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "lock.txt").write_text("numpy==2.0.0\n", encoding="utf-8")
    monkeypatch.setattr(run, "ROOT", tmp_path)
    args = run.parse(["setup"])
    assert run.install_commands(args, "py")[-1][1][-2:] == ["-c", "requirements/lock.txt"]
    assert "-c" not in run.install_commands(run.parse(["setup", "--no-lock"]), "py")[-1][1]
    assert "-c" not in run.install_commands(run.parse(["setup", "--latest"]), "py")[-1][1]


def test_lab_asks_for_allow_root_only_as_root():
    assert run.lab_command("py", True, []) == ["py", "-m", "jupyter", "lab", "notebooks", "--allow-root"]
    assert run.lab_command("py", False, ["--no-browser"]) == ["py", "-m", "jupyter", "lab", "notebooks", "--no-browser"]
    cmd = dry_commands("lab")[-1]
    assert cmd.endswith("--allow-root") == run.running_as_root()


def test_sync_lists_every_notebook_pair_without_a_shell_glob():
    cmd = run.sync_command("py")
    assert cmd[:4] == ["py", "-m", "jupytext", "--sync"]
    expected = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("notebooks/**/*.ipynb"))
    assert sorted(cmd[4:]) == expected and len(expected) >= 21


def test_site_installs_the_site_extra_and_builds_from_docs_site():
    cmds = dry_commands("site", "--venv", "build/v", "--reinstall", "--", "--no-figures")
    assert any(".[dev,lab,site]" in c for c in cmds)  # the builder comes with the site extra
    py = str(run.venv_python(ROOT / "build" / "v"))
    assert cmds[-1] == run.show([py, str(Path("docs") / "site" / "build.py"), "--no-figures"])
    assert run.parse(["site", "--extras", "dev,site"]).extras == "dev,site"  # not added twice


def test_strict_encoding_fails_our_code_and_spares_third_party(tmp_path):
    """The test commands' environment: a file opened without an encoding is an error in a module of
    ours (here `__main__`, as in a notebook's kernel, and `tl_minimal`), a warning ignored elsewhere."""
    (tmp_path / "elsewhere.py").write_text("open(__file__).close()\n", encoding="utf-8")
    env = {**os.environ, **run.strict_encoding_env(ROOT), "PYTHONPATH": str(tmp_path)}
    assert "error::EncodingWarning:tl_minimal.instructor.blanks" in env["PYTHONWARNINGS"]
    assert "error::EncodingWarning:test_launcher" in env["PYTHONWARNINGS"]

    def child(code: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              encoding="utf-8", timeout=60, check=False)

    assert child("import elsewhere").returncode == 0
    ours = child("open(__import__('os').devnull).close()")
    assert ours.returncode == 1 and "EncodingWarning: 'encoding' argument not specified" in ours.stderr
    assert child("open(__import__('os').devnull, encoding='utf-8').close()").returncode == 0


def test_the_test_commands_run_strict_and_smoke(tmp_path):
    env = run.child_env(run.parse(["test-fast"]), smoke=True)
    assert env["TL_SMOKE"] == "1" and env["PYTHONWARNDEFAULTENCODING"] == "1"
    assert "PYTHONWARNINGS" not in run.child_env(run.parse(["lab"]), smoke=False) or os.environ.get("PYTHONWARNINGS")


def test_the_venv_interpreter_path_per_system():
    venv = Path("env")
    assert run.venv_python(venv, windows=True) == venv / "Scripts" / "python.exe"
    assert run.venv_python(venv, windows=False) == venv / "bin" / "python"


def test_data_directory_is_handed_to_the_commands(tmp_path):
    args = run.parse(["test", "--data", str(tmp_path)])
    env = run.child_env(args, smoke=True)
    assert env["TL_MINIMAL_DATA"] == str(tmp_path.resolve()) and env["TL_SMOKE"] == "1"


def test_an_unchanged_setup_is_skipped(monkeypatch, tmp_path):
    """The stamp holds what the set-up depended on; while it matches, nothing is installed again."""
    venv = tmp_path / "v"
    py = run.venv_python(venv)
    py.parent.mkdir(parents=True)
    py.write_text("", encoding="utf-8")
    args = run.parse(["setup", "--venv", str(venv)])
    (venv / run.STAMP).write_text(run.signature(args, sys.version_info[:3]), encoding="utf-8")
    ran = []
    monkeypatch.setattr(run, "execute", lambda cmd, *a, **k: ran.append(cmd) or 0)
    assert run.setup(args) == str(py) and ran == []
    assert run.setup(run.parse(["setup", "--venv", str(venv), "--extras", "dev"])) == str(py)
    assert len(ran) == 2  # the extras changed: pip, then the course (the venv exists already)


# --- bad input: one line, exit 2, no traceback ------------------------------------------------------
def _one_line_error(done: subprocess.CompletedProcess, words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert err.startswith("run.py: error: ") and words in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("args, words", [
    (["frobnicate"], "unknown command 'frobnicate'; expected one of lab, test, test-fast"),
    (["test", "--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["test", "--data", "no such folder"], "the data directory 'no such folder' does not exist"),
    (["setup", "--torch", "numpy==2.0"], "--torch 'numpy==2.0' is not a torch requirement"),
    (["setup", "--torch-index", "tpu"], "--torch-index 'tpu': expected cpu"),
    (["setup", "--extras", "dev;rm"], "'dev;rm' is not an extra name"),
    (["setup", "--python", "no-such-python-3.10"], "cannot run the interpreter 'no-such-python-3.10'"),
])
def test_bad_input_is_one_line(args, words):
    _one_line_error(launch("--dry-run", *args), words)


def test_a_missing_tl_minimal_data_directory_is_named(tmp_path):
    env = {**os.environ, "TL_MINIMAL_DATA": str(tmp_path / "gone")}
    _one_line_error(launch("test", "--dry-run", env=env), "does not exist (given by --data or TL_MINIMAL_DATA)")


def test_an_old_python_is_refused_in_one_line():
    with pytest.raises(run.LauncherError, match=r"needs Python >= 3.10, --python py39 is 3.9.18"):
        run.check_version((3, 9, 18), "--python py39")
    run.check_version((3, 10, 0))


@pytest.mark.skipif(not OLD_PYTHON.is_file(), reason="no Python 3.9 on this machine to run the launcher with")
def test_the_launcher_run_by_an_old_python_says_so():
    # without the strict-encoding filters of `run.py test`: Python 3.9 has no EncodingWarning to filter
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "PYTHONWARNDEFAULTENCODING")}
    _one_line_error(launch("test", python=str(OLD_PYTHON), env=env), "needs Python >= 3.10, this Python is 3.9")
    _one_line_error(launch("setup", "--dry-run", "--python", str(OLD_PYTHON)), f"--python {OLD_PYTHON} is 3.9")


@pytest.mark.slow
def test_a_torch_spec_pip_cannot_install_is_one_line(tmp_path):
    """A real venv, pip offline with an empty wheel folder: pip fails on torch, the launcher says so."""
    empty = tmp_path / "no wheels"
    empty.mkdir()
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty), "PIP_CONFIG_FILE": os.devnull}
    done = launch("setup", "--venv", str(tmp_path / "venv"), "--torch", "torch==0.0.1", "--no-lock", env=env)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("run.py: error: pip could not install 'torch==0.0.1' for Python 3.")
    assert "Traceback" not in done.stderr
