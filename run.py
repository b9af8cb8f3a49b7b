#!/usr/bin/env python3
"""The course's one launcher: the same two commands on Windows, macOS and Linux, Python only.

    python run.py lab         create .venv/ (once), install the course, open JupyterLab on notebooks/
    python run.py test        the same set-up, then the whole suite in smoke mode: pytest --nbval
    python run.py test-fast   the fast tier: tests/ without the tests marked slow, repo or browser
                              (no notebook runs, no wheel, no copy of the clone; minutes, not an hour)
    python run.py setup       only create and install .venv/ (the course and, from research/, the
                              research package tl_research: both editable)
    python run.py sync        after editing a notebook's .py (or .ipynb), bring its pair up to date
    python run.py site        build the course website into build/site/html (adds the site extra)
    python run.py clean       remove the virtual environment

(On Windows type `py` where these say `python`.) Options, before or after the command:

    --python PATH        the interpreter that creates the virtual environment (default: this one)
    --venv DIR           where the virtual environment lives (default .venv, with --latest .venv-latest)
    --torch SPEC         install this torch first, e.g. torch==2.13.0 (default: pip picks one)
    --torch-index NAME   take torch from PyTorch's own wheel index: `cpu` (on Linux the CPU-only
                         build, a fraction of the default CUDA download), `cu126`, ..., or a URL
    --extras LIST        the optional dependencies to install (default dev,lab; add browser for
                         tests/repo/test_browser.py)
    --data DIR           read the data sets from this directory (sets TL_MINIMAL_DATA)
    --no-lock            ignore requirements/lock.txt (the course edition's pinned versions)
    --latest             a separate venv with the newest release of every dependency, no lock
    --reinstall          install again even when nothing changed since the last set-up
    --dry-run            print the commands instead of running them
    -- ARGS              everything after `--` goes to pytest (test, test-fast), JupyterLab (lab) or
                         the site build (site: e.g. -- --out DIR, --no-figures)

Only the standard library is used, and this file parses on Python 3.7 and later, so that a Python
older than 3.10 gets one clear line instead of a syntax error. Every mistake the launcher can see ends
in one line `run.py: error: ...` and exit status 2; a failing child command passes its status on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

MINIMUM = (3, 10)
ROOT = Path(__file__).resolve().parent
COMMANDS = ("lab", "test", "test-fast", "setup", "sync", "site", "clean")
DEFAULT_EXTRAS = "dev,lab"
LOCK = Path("requirements") / "lock.txt"
# the second package of the clone: the research code (tl_research), never in the course wheel; a clone
# installs it beside the course (its studies, the experiments CLI, the speed bench, the repository tools)
RESEARCH = Path("research")
STAMP = ".tl-minimal-installed"
TORCH_INDEX = "https://download.pytorch.org/whl/"
# The portability proof of the suite: every text read or write must name its encoding (see
# strict_encoding_env for why the error is scoped to the course's own modules).
STRICT_ENCODING = ["-X", "warn_default_encoding"]
# `torch`, or `torch` with version clauses (torch==2.13.0, torch>=2.4,<3), or a wheel file
_CLAUSE = r"\s*(==|>=|<=|~=|!=|<|>)\s*[0-9][0-9a-z.+*]*"  # one version clause: ==2.13.0, >=2.4, <3
TORCH_SPEC = re.compile(rf"torch({_CLAUSE})?(\s*,{_CLAUSE})*")


class LauncherError(Exception):
    """A mistake in what the launcher was asked to do: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but its errors are one LauncherError line instead of usage text."""

    def error(self, message):
        raise LauncherError(message)


def parse(argv: list[str]) -> argparse.Namespace:
    """Read the command line; what follows `--` is kept apart in `.passthrough`."""
    passthrough = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    p = Parser(prog="run.py", description="Set up and run tl-minimal (see this file's docstring).")
    p.add_argument("command", help="one of " + ", ".join(COMMANDS))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--venv", default=None)
    p.add_argument("--torch", default="", dest="torch_spec")
    p.add_argument("--torch-index", default="")
    p.add_argument("--extras", default=DEFAULT_EXTRAS)
    p.add_argument("--data", default=os.environ.get("TL_MINIMAL_DATA", ""))
    p.add_argument("--no-lock", action="store_true")
    p.add_argument("--latest", action="store_true")
    p.add_argument("--reinstall", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    args.passthrough = passthrough
    if args.command not in COMMANDS:
        raise LauncherError(f"unknown command {args.command!r}; expected one of {', '.join(COMMANDS)}")
    if args.venv is None:
        args.venv = ".venv-latest" if args.latest else ".venv"
    if args.command == "site" and "site" not in args.extras.split(","):
        args.extras += ",site"  # the site needs its builder (Sphinx, MyST-NB, the book theme)
    return args


# --- checks: each says what was expected -------------------------------------------------------
def check_version(version: tuple, where: str = "this Python") -> None:
    """Refuse interpreters older than 3.10, naming the version found."""
    if tuple(version[:2]) < MINIMUM:
        found = ".".join(str(v) for v in version[:3])
        hint = "run this file with a newer one" if where == "this Python" else "pass a newer one"
        raise LauncherError(f"tl-minimal needs Python >= 3.10, {where} is {found} ({hint})")


def interpreter_version(python: str) -> tuple:
    """The (major, minor, micro) of another interpreter, asked by running it."""
    try:
        done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"],
                              capture_output=True, text=True, encoding="utf-8", timeout=60, check=False)
    except OSError as error:
        raise LauncherError(f"cannot run the interpreter {python!r} ({error.strerror or error})") from None
    fields = done.stdout.split()
    if done.returncode != 0 or len(fields) != 3 or not all(f.isdigit() for f in fields):
        raise LauncherError(f"{python!r} did not answer like a Python interpreter (exit {done.returncode})")
    return tuple(int(f) for f in fields)


def check_torch_spec(spec: str) -> None:
    """Accept `torch`, `torch` with version clauses, or an existing wheel file; refuse the rest."""
    if not spec or TORCH_SPEC.fullmatch(spec.strip()):
        return
    if spec.endswith(".whl") and Path(spec).is_file():
        return
    raise LauncherError(f"--torch {spec!r} is not a torch requirement; expected e.g. torch==2.13.0, "
                        "torch>=2.4 or the path of a torch wheel")


def check_extras(extras: str) -> list[str]:
    """'dev,lab' -> ['dev', 'lab']; names are letters, digits and - or _."""
    names = [e.strip() for e in extras.split(",") if e.strip()]
    bad = [e for e in names if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", e)]
    if bad:
        raise LauncherError(f"--extras {extras!r}: {bad[0]!r} is not an extra name; expected e.g. dev,lab,browser")
    return names


def check_data(data: str) -> str:
    """The data directory, which must exist when one is named ('' = none)."""
    if data and not Path(data).expanduser().is_dir():
        raise LauncherError(f"the data directory {data!r} does not exist (given by --data or TL_MINIMAL_DATA)")
    return str(Path(data).expanduser().resolve()) if data else ""


def torch_index_url(name: str) -> str:
    """`cpu` -> PyTorch's CPU wheel index; `cu126` -> its CUDA 12.6 index; a URL stays as it is."""
    if not name or "://" in name:
        return name
    if not re.fullmatch(r"cpu|cu\d+|rocm[\d.]+|xpu", name):
        raise LauncherError(f"--torch-index {name!r}: expected cpu, cu126 (a CUDA build), rocm6.4, xpu or a URL")
    return TORCH_INDEX + name


# --- paths and commands --------------------------------------------------------------------------
def venv_dir(venv: str) -> Path:
    """The virtual environment's folder; a relative one lives in the clone."""
    path = Path(venv).expanduser()
    return path if path.is_absolute() else ROOT / path


def venv_python(venv: Path, windows: bool | None = None) -> Path:
    """The interpreter inside a virtual environment: Scripts\\python.exe on Windows, bin/python elsewhere."""
    windows = os.name == "nt" if windows is None else windows
    return venv / "Scripts" / "python.exe" if windows else venv / "bin" / "python"


def install_commands(args: argparse.Namespace, py: str) -> list[tuple[str, list[str]]]:
    """pip's commands, in order, each with what it installs: pip itself, torch (first, from its
    index if one is chosen), then the course with its extras and the research package beside it, both
    editable, in one pip command (under the lock file when there is one)."""
    pip = [py, "-m", "pip", "install", "--quiet"]
    upgrade = ["--upgrade", "--upgrade-strategy", "eager"] if args.latest else []
    commands = [("pip", [*pip, "--upgrade", "pip"])]
    index = torch_index_url(args.torch_index)
    if args.torch_spec or index:
        torch = args.torch_spec or "torch"
        commands.append((torch, pip + upgrade + [torch] + (["--index-url", index] if index else [])))
    extras = check_extras(args.extras)
    project = "." + (f"[{','.join(extras)}]" if extras else "")
    lock = [] if args.no_lock or args.latest or not (ROOT / LOCK).is_file() else ["-c", LOCK.as_posix()]
    commands.append(("the course", pip + upgrade + ["-e", project, "-e", RESEARCH.as_posix()] + lock))
    return commands


FAST = "not slow and not repo and not browser"  # the markers are described in pyproject.toml


def test_command(py: str, fast: bool, passthrough: list[str]) -> list[str]:
    """The README's test command: pytest in strict-encoding mode, all of it or the fast tier
    (test-fast: tests/ without the tests marked slow, repo or browser, or only the test files given
    after `--`; a `-m` given after `--` replaces the tier's). `-- -n 2 --dist loadfile` runs it in two
    pytest-xdist workers (the dev extra), a file at a time: a notebook's cells share one kernel, and the
    site's test modules count as one file (conftest.py). CI runs one process: two workers were not yet
    shown faster on a loaded 2-core machine."""
    named = any(not a.startswith("-") and (ROOT / a.split("::")[0]).exists() for a in passthrough)
    target = (["-m", FAST] if named else ["tests", "-m", FAST]) if fast else ["--nbval"]
    return [py, *STRICT_ENCODING, "-m", "pytest", *target, *passthrough]


def our_modules(root: Path) -> list[str]:
    """The module names the course's own code runs under: the library, the research package, the tests,
    the data scripts, this launcher, and `__main__` (notebook cells in a kernel, scripts run directly)."""
    names = ["__main__", "run", "conftest"]
    packages = [(root, p) for p in sorted(root.glob("tl_minimal/**/*.py"))]
    packages += [(root / RESEARCH, p) for p in sorted((root / RESEARCH).glob("tl_research/**/*.py"))]
    for top, path in packages:
        parts = path.relative_to(top).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    names += sorted({p.stem for pattern in ("tests/**/*.py", "data/*.py") for p in root.glob(pattern)})
    return names


def strict_encoding_env(root: Path, inherited: str = "") -> dict:
    """Environment variables that turn a text read or write without a named encoding into an error
    in the course's own code, in this process's children too (the notebooks' kernels).

    Plain `-W error::EncodingWarning` cannot be used: third-party packages the course imports
    (torch imports dill, which opens a file without one) would fail on import. A warnings filter
    given on the command line or in PYTHONWARNINGS matches one module name exactly, so every module
    of ours is listed; everyone else's EncodingWarning is ignored."""
    filters = [inherited] if inherited else []
    filters += ["ignore::EncodingWarning"] + [f"error::EncodingWarning:{name}" for name in our_modules(root)]
    return {"PYTHONWARNDEFAULTENCODING": "1", "PYTHONWARNINGS": ",".join(filters)}


def running_as_root() -> bool:
    """True for the superuser on POSIX; Windows has no uid (and JupyterLab no root check there)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_command(py: str, as_root: bool, passthrough: list[str]) -> list[str]:
    """JupyterLab on notebooks/; it refuses to run as root unless told, so tell it only then."""
    return [py, "-m", "jupyter", "lab", "notebooks", *(["--allow-root"] if as_root else []), *passthrough]


def site_command(py: str, passthrough: list[str]) -> list[str]:
    """The static site from the committed notebooks, none re-executed (docs/site/build.py)."""
    return [py, str(Path("docs") / "site" / "build.py"), *passthrough]


def sync_command(py: str) -> list[str]:
    """jupytext --sync over every notebook pair (the paths listed here: no shell globbing)."""
    notebooks = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("notebooks/exercises/**/*.ipynb"))
    return [py, "-m", "jupytext", "--sync", *(str(p.relative_to(ROOT)) for p in notebooks)]


def signature(args: argparse.Namespace, python_version: tuple) -> str:
    """What an installation depends on; a set-up whose signature is unchanged is skipped."""
    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""

    return json.dumps({"python": list(python_version), "torch": args.torch_spec, "index": args.torch_index,
                       "extras": check_extras(args.extras), "lock": "" if args.no_lock else digest(ROOT / LOCK),
                       "pyproject": digest(ROOT / "pyproject.toml"),
                       "research": digest(ROOT / RESEARCH / "pyproject.toml")}, sort_keys=True)


# --- running -------------------------------------------------------------------------------------
def show(cmd: list[str]) -> str:
    """A command as one would type it on this system."""
    return subprocess.list2cmdline(cmd) if os.name == "nt" else shlex.join(cmd)


def execute(cmd: list[str], args: argparse.Namespace, env: dict | None = None) -> int:
    """Run one command in the clone (or print it with --dry-run); return its exit status."""
    print("$ " + show(cmd), flush=True)
    if args.dry_run:
        return 0
    try:
        return subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
    except OSError as error:
        raise LauncherError(f"cannot run {cmd[0]!r} ({error.strerror or error})") from None


def setup(args: argparse.Namespace) -> str:
    """Create the virtual environment and install into it, unless that is already done; return its python."""
    python_version = interpreter_version(args.python)
    check_version(python_version, f"--python {args.python}")
    check_torch_spec(args.torch_spec)
    venv = venv_dir(args.venv)
    py, stamp = venv_python(venv), venv / STAMP
    wanted = signature(args, python_version)
    done_before = stamp.is_file() and py.is_file() and stamp.read_text(encoding="utf-8") == wanted
    if done_before and not (args.dry_run or args.reinstall or args.latest):
        return str(py)
    if (args.dry_run or not py.is_file()) and execute([args.python, "-m", "venv", str(venv)], args) != 0:
        raise LauncherError(f"could not create the virtual environment {venv} with {args.python}")
    for what, cmd in install_commands(args, str(py)):
        if execute(cmd, args) == 0:
            continue
        if what.startswith("torch"):
            version = ".".join(map(str, python_version[:2]))
            raise LauncherError(f"pip could not install {what!r} for Python {version} on this system (pip's "
                                "reason is above); try another --torch spec or --torch-index")
        raise LauncherError(f"installing {what} failed: {show(cmd)} (pip's reason is above)")
    if not args.dry_run:
        stamp.write_text(wanted, encoding="utf-8")
    return str(py)


def child_env(args: argparse.Namespace, smoke: bool) -> dict:
    """The environment of the commands run: TL_MINIMAL_DATA when given; for the tests TL_SMOKE=1 and
    the strict-encoding filters."""
    env = dict(os.environ)
    data = check_data(args.data)
    if data:
        env["TL_MINIMAL_DATA"] = data
    if smoke:
        env["TL_SMOKE"] = "1"
        env.update(strict_encoding_env(ROOT, env.get("PYTHONWARNINGS", "")))
    return env


def main(argv: list[str] | None = None) -> int:
    """Parse, check, set up and run; every mistake seen here is one line and exit status 2."""
    try:
        check_version(sys.version_info)
        args = parse(sys.argv[1:] if argv is None else list(argv))
        if args.command == "clean":
            venv = venv_dir(args.venv)
            print(f"removing {venv}")
            if not args.dry_run:
                shutil.rmtree(venv, ignore_errors=True)
            return 0
        env = child_env(args, smoke=args.command.startswith("test"))
        py = setup(args)
        if args.command == "setup":
            return 0
        if args.command == "lab":
            return execute(lab_command(py, running_as_root(), args.passthrough), args, env)
        if args.command == "sync":
            return execute(sync_command(py), args, env)
        if args.command == "site":
            return execute(site_command(py, args.passthrough), args, env)
        return execute(test_command(py, args.command == "test-fast", args.passthrough), args, env)
    except LauncherError as error:
        print(f"run.py: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
