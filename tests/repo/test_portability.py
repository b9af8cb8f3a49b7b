"""Every student's computer, as far as one Linux machine can prove it: each hazard of Windows and
macOS that can be reproduced here is a test.

- Text files: every read and write names its encoding (Windows' default is not UTF-8). Checked
  statically here over all of the course's code; `python run.py test` also runs the suite and the
  notebooks with `-X warn_default_encoding`, an unnamed encoding in our code an error.
- No POSIX-only call without a fallback in the library (Windows has no os.getloadavg, os.killpg,
  fcntl, or signals other than SIGINT to send).
- Processes start under `spawn` (macOS and Windows): two training ranks started that way agree.
- A clone at a path with spaces and non-ASCII characters runs its unit tests and a notebook.
- A CRLF checkout (Windows with core.autocrlf) keeps the notebook pairs and the blank generator correct,
  and .gitattributes keeps checkouts LF in the first place.
- No two tracked paths differ only by case (macOS and Windows file systems fold case), none is
  longer than 200 characters, none uses a name or character Windows refuses.
"""

from __future__ import annotations

import ast
import json
import multiprocessing
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURE_DATA

ROOT = Path(__file__).resolve().parents[2]
CODE = ["tl_minimal", "tests", "data", "notebooks", "run.py", "conftest.py"]


def tracked_files() -> list[str]:
    """The clone's tracked files (git ls-files), or every file but caches when this is not a checkout."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60, check=True)
        names = [n for n in done.stdout.decode("utf-8").split("\0") if n]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    skip = {".git", ".venv", "__pycache__", ".ipynb_checkpoints", "build"}
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]


def python_files() -> list[Path]:
    files = []
    for name in CODE:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts]


# --- text encodings ----------------------------------------------------------------------------------
def _mode(call: ast.Call, position: int) -> str | None:
    """The constant mode argument of an open() call (positional or mode=), None when not constant."""
    for kw in call.keywords:
        if kw.arg == "mode":
            return kw.value.value if isinstance(kw.value, ast.Constant) else None
    if len(call.args) > position:  # given: a constant mode, or something else (e.g. Suite.open(path, ...))
        return call.args[position].value if isinstance(call.args[position], ast.Constant) else None
    return "r"


def unnamed_encodings(source: str) -> list[tuple[int, str]]:
    """(line, what) for each text open/read/write in ``source`` that names no encoding: open(),
    Path.open(), read_text(), write_text(), and subprocess calls in text mode."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func, keywords = node.func, {kw.arg for kw in node.keywords}
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if "encoding" in keywords or None in keywords:  # named, or passed on with **options
            continue
        if (name == "read_text" and not node.args) or (name == "write_text" and len(node.args) < 2):
            found.append((node.lineno, f"{name}()"))
        elif name == "open" and not (isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "os"):
            mode = _mode(node, 1 if isinstance(func, ast.Name) else 0)
            if mode is not None and "b" not in mode:
                found.append((node.lineno, "open()"))
        elif name in {"run", "Popen", "check_output"} and keywords & {"text", "universal_newlines"}:
            found.append((node.lineno, f"subprocess {name}(text=True)"))
    return found


def test_the_scanner_finds_unnamed_encodings():
    code = ('open(p)\nopen(p, "rb")\np.open("w")\np.read_text()\np.write_text(s)\np.read_bytes()\n'
            'subprocess.run(c, text=True)\nopen(p, encoding="utf-8")\np.write_text(s, encoding="utf-8")\n'
            'subprocess.run(c, text=True, encoding="utf-8")\nos.open(p, 0)\n')
    assert [line for line, _ in unnamed_encodings(code)] == [1, 3, 4, 5, 7]


def test_every_text_read_and_write_names_its_encoding():
    sites = [f"{path.relative_to(ROOT).as_posix()}:{line}: {what}"
             for path in python_files() for line, what in unnamed_encodings(path.read_text(encoding="utf-8"))]
    assert not sites, f"{len(sites)} text reads/writes name no encoding (add encoding=\"utf-8\"):\n" + "\n".join(sites)


# --- POSIX-only calls ----------------------------------------------------------------------------------
POSIX_ONLY = {"os": {"getloadavg", "killpg", "getpgid", "setsid", "setpgrp", "fork", "geteuid", "getuid",
                     "nice", "sched_getaffinity", "mkfifo"},
              # SIGINT and SIGTERM exist on Windows too (Popen.send_signal(SIGTERM) terminates there)
              "signal": {"SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGCHLD",
                         "alarm", "setitimer", "SIGPIPE"}}
POSIX_MODULES = {"fcntl", "resource", "termios", "pwd", "grp", "pty"}


def _guarded(chain: list[ast.AST]) -> bool:
    """A use is guarded inside try/except, or under a test of hasattr/getattr, sys.platform or os.name."""
    for node in chain:
        if isinstance(node, ast.Try) and node.handlers:
            return True
        if isinstance(node, (ast.If, ast.IfExp, ast.BoolOp)):
            text = ast.unparse(node.test if not isinstance(node, ast.BoolOp) else node)
            if re.search(r"hasattr|getattr|sys\.platform|os\.name|platform\.system", text):
                return True
    return False


def posix_only_uses(source: str) -> list[tuple[int, str, bool]]:
    """(line, name, guarded) for each use of a POSIX-only function, signal or module in ``source``."""
    uses = []

    def visit(node: ast.AST, chain: list[ast.AST]) -> None:
        hit = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in POSIX_ONLY.get(node.value.id, ()):
                hit = f"{node.value.id}.{node.attr}"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            hit = next((n for n in names if n in POSIX_MODULES), None)
        if hit:
            uses.append((node.lineno, hit, _guarded(chain)))
        for child in ast.iter_child_nodes(node):
            visit(child, [*chain, node])

    visit(ast.parse(source), [])
    return uses


def test_the_posix_scanner_sees_guards():
    code = ("import os, signal\nos.getloadavg()\ntry:\n    os.getloadavg()\nexcept OSError:\n    pass\n"
            "x = os.getloadavg() if hasattr(os, 'getloadavg') else None\nsignal.SIGINT\nsignal.SIGKILL\n"
            "if os.name == 'posix':\n    import fcntl\n")
    assert posix_only_uses(code) == [(2, "os.getloadavg", False), (4, "os.getloadavg", True),
                                     (7, "os.getloadavg", True), (9, "signal.SIGKILL", False), (11, "fcntl", True)]


@pytest.mark.parametrize("where", ["tl_minimal", "data", "run.py", "tests"])
def test_no_posix_only_call_without_a_fallback(where):
    """The library, the data scripts and the launcher work without them; a test that needs one
    must skip elsewhere (its use guarded, or under a skipif naming the system)."""
    path = ROOT / where
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    bare = [f"{f.relative_to(ROOT).as_posix()}:{line}: {name}"
            for f in files for line, name, guarded in posix_only_uses(f.read_text(encoding="utf-8")) if not guarded]
    assert not bare, "POSIX-only, with no fallback (Windows lacks it):\n" + "\n".join(bare)


# --- processes under spawn ------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _train_rank(rank: int, port: int, out: str, data: str) -> None:
    """One rank of a two-process run, as torchrun would set it up, in a process started by `spawn`."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), TL_MINIMAL_DATA=data, OMP_NUM_THREADS="1")
    from tl_research.cli import main

    code = main(["lm", "--variants", "transformer", "--seeds", "0", "--steps", "2", "--eval-batches", "1",
                 "--device", "cpu", "--no-progress", "--set", "d_model=16", "--set", "n_layers=1", "--out", out])
    sys.exit(code)


@pytest.mark.slow
def test_two_training_ranks_started_by_spawn_agree(tmp_path):
    """macOS and Windows start processes with `spawn`: each child imports everything afresh and gets
    its work by pickling. The library starts no worker pool of its own (checked below); its
    multi-process path is distributed training, run here as two spawned ranks."""
    context = multiprocessing.get_context("spawn")
    out, port = tmp_path / "ddp.json", _free_port()
    ranks = [context.Process(target=_train_rank, args=(r, port, str(out), str(FIXTURE_DATA))) for r in range(2)]
    for p in ranks:
        p.start()
    for p in ranks:
        p.join(timeout=240)
    assert [p.exitcode for p in ranks] == [0, 0]
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    assert run["world_size"] == 2 and run["ranks_agree"] is True and run["steps"] == 2


def test_the_library_starts_no_process_pool_of_its_own():
    """So `spawn` versus `fork` matters only where processes are started: torchrun (above) and the
    subprocess calls, which start a fresh interpreter on every system."""
    pattern = re.compile(r"multiprocessing|ProcessPoolExecutor|num_workers\s*=\s*[1-9]|os\.fork")
    scanner = ROOT / "tl_minimal" / "instructor" / "scan.py"  # names them only to flag them in submissions
    hits = [f"{p.relative_to(ROOT)}" for p in (ROOT / "tl_minimal").rglob("*.py")
            if p != scanner and pattern.search(p.read_text(encoding="utf-8"))]
    assert not hits, f"start processes; add a spawn test for them: {hits}"


# --- a path with spaces and non-ASCII characters ---------------------------------------------------------
@pytest.mark.slow
@pytest.mark.repo
def test_a_clone_under_a_non_ascii_path_with_spaces_runs_tests_and_a_notebook(tmp_path):
    clone = tmp_path / "Ünïcode dir" / "tl minimal"
    for name in tracked_files():
        if name.startswith(("data/results/", ".github/")) and not name.endswith(".py"):
            continue  # results and workflows: not needed by the tests run below
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    env = {**os.environ, "PYTHONPATH": str(clone), "OMP_NUM_THREADS": "1", "TL_SMOKE": "1", "MPLBACKEND": "Agg",
           "TL_MINIMAL_DATA": str(clone / "tests" / "fixtures" / "data"), "PYTHONWARNDEFAULTENCODING": "1"}
    tests = ["tests/model/test_running_state.py", "tests/model/test_data_text.py",
             "tests/repo/test_launcher.py::test_sync_lists_every_notebook_pair_without_a_shell_glob"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests], cwd=clone,
                          env=env, capture_output=True, text=True, encoding="utf-8", timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]
    notebook = clone / "notebooks" / "00_start_here.py"
    run = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')",
                          str(notebook)], cwd=notebook.parent, env=env, capture_output=True, text=True,
                         encoding="utf-8", timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    import tl_minimal

    assert Path(tl_minimal.__file__).resolve().is_relative_to(ROOT)  # this process still imports its own copy


# --- line endings -------------------------------------------------------------------------------------------
def test_gitattributes_keeps_every_checkout_lf():
    text = (ROOT / ".gitattributes").read_text(encoding="utf-8")
    for pattern in ["*.py", "*.ipynb", "*.md", "*.sh", "*.toml", "*.yml", "*.cfg", "*.txt"]:
        assert re.search(rf"^{re.escape(pattern)}\s+text eol=lf$", text, re.MULTILINE), pattern
    if shutil.which("git") and (ROOT / ".git").exists():
        names = ["run.py", "README.md", "notebooks/00_start_here.ipynb", "pyproject.toml", ".ci/run"]
        done = subprocess.run(["git", "check-attr", "eol", "--", *names], cwd=ROOT, capture_output=True,
                              text=True, encoding="utf-8", timeout=60, check=True)
        assert done.stdout.count(": eol: lf") == len(names), done.stdout


def _to_crlf(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.suffix in (".py", ".ipynb") and path.is_file():
            path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


@pytest.mark.slow
@pytest.mark.repo
def test_a_crlf_checkout_keeps_the_pairs_and_the_blanks_correct(tmp_path):
    jupytext = pytest.importorskip("jupytext")
    copy = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    _to_crlf(copy)
    assert b"\r\n" in (copy / "00_start_here.py").read_bytes()

    def cells(nb):
        return [(c.cell_type, c.source.strip()) for c in nb.cells]

    pairs = sorted(copy.rglob("*.ipynb"))
    assert len(pairs) >= 21
    for ipynb in pairs:  # the pair check, on CRLF files: each pair agrees, and with the LF original
        original = ROOT / "notebooks" / ipynb.relative_to(copy)
        assert cells(jupytext.read(ipynb)) == cells(jupytext.read(ipynb.with_suffix(".py"))) \
            == cells(jupytext.read(original.with_suffix(".py"))), ipynb.name
    exercises = copy / "exercises"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "research")])}
    done = subprocess.run([sys.executable, "-m", "tl_research.blanks", str(exercises)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, encoding="utf-8", timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    blanks = sorted(exercises.glob("[0-9]*.py"))
    assert len(blanks) == 6
    for blank in blanks:  # generated from CRLF solutions: the committed blanks, line for line
        committed = (ROOT / "notebooks" / "exercises" / blank.name).read_text(encoding="utf-8")
        assert blank.read_text(encoding="utf-8").splitlines() == committed.splitlines(), blank.name
        assert cells(jupytext.read(blank.with_suffix(".ipynb"))) == cells(jupytext.read(blank)), blank.name


# --- tracked paths -------------------------------------------------------------------------------------------
WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$", re.IGNORECASE)


def test_no_two_paths_differ_only_by_case_none_too_long_none_refused_by_windows():
    names = tracked_files()
    assert len(names) > 100
    folded = {}
    for name in names:
        folded.setdefault(name.casefold(), []).append(name)
    assert not [v for v in folded.values() if len(v) > 1], "paths differing only by case"
    assert not [n for n in names if len(n) > 200], "paths longer than 200 characters"
    parts = {part for name in names for part in name.split("/")}
    refused = [p for p in parts if WINDOWS_RESERVED.match(p) or re.search(r'[<>:"\\|?*]', p) or p.endswith((" ", "."))]
    assert not refused, f"names Windows cannot store: {refused}"
