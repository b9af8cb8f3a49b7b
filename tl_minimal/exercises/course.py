"""The instructor's command: release, collect, grade and export the exercises with nbgrader.

    python -m tl_minimal.exercises.course release COURSE [--exercise 01_running_state ...]
    python -m tl_minimal.exercises.course collect COURSE SUBMISSIONS   (a folder or a .zip)
    python -m tl_minimal.exercises.course grade   COURSE [--exercise ...]
    python -m tl_minimal.exercises.course export  COURSE [--to grades.csv]

``release`` makes (or updates) the nbgrader course directory COURSE: the solutions notebooks
(``--solutions``, default notebooks/exercises/solutions) become nbgrader's ``source/``, and
``nbgrader generate_assignment`` writes the student version to ``release/<exercise>/`` (no
solutions, no outputs, no hidden tests: the text of the self-study blank) and a zip of it to
``zips/`` for courses without a hub. ``collect`` files submissions as
``SUBMISSIONS/<student>/<exercise>.ipynb`` (or ``<student>/<exercise>/<exercise>.ipynb``) into
``submitted/``; a hub's exchange (``nbgrader collect``) fills the same folder. ``grade`` runs
``nbgrader autograde`` with ``TL_GRADED=1`` (failed checks raise, so a test cell scores zero) and
``nbgrader generate_feedback``; ``export`` writes nbgrader's grades CSV. docs/instructors.md
walks through a term. Needs the ``course`` extra (nbgrader).

Bad input stops with a message naming it and a non-zero exit: a missing course directory, an
unknown exercise, a submission that is not a notebook or lacks cells of the release (the other
submissions are still collected). A submission whose code raises or never ends is graded: that
cell scores zero with its error (``TL_CELL_TIMEOUT`` seconds per cell, nbgrader_config.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .blanks import blank_path

CONFIG = "# written by python -m tl_minimal.exercises.course release\n" \
         "from tl_minimal.exercises.nbgrader_config import configure\n\nconfigure(get_config())  # noqa: F821\n"


class CourseError(Exception):
    """Bad input: the message says what and where."""


def _nbgrader(course: Path, *args: str, graded: bool = False) -> None:
    env = dict(os.environ, **({"TL_GRADED": "1"} if graded else {}))
    # nbgrader runs the `alembic` script of its environment: find it even when no venv is activated
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    force = [] if args[0] == "export" else ["--force"]  # redo a step that ran before (export has no such flag)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, *force], check=False, cwd=course, env=env)
    if done.returncode != 0:
        raise CourseError(f"nbgrader {args[0]} {' '.join(args[1:])} failed (exit {done.returncode}): see its log above")


def _course(path: Path) -> Path:
    if not (path / "nbgrader_config.py").is_file():
        raise CourseError(f"{path} is not a course directory (no nbgrader_config.py): "
                          "make one with: python -m tl_minimal.exercises.course release " + str(path))
    return path


def released(course: Path) -> list[str]:
    """The exercises released in ``course`` (folder names under release/)."""
    return sorted(p.name for p in (course / "release").glob("*") if p.is_dir())


def _pick(wanted: list[str] | None, known: list[str], what: str) -> list[str]:
    unknown = sorted(set(wanted or []) - set(known))
    if unknown:
        raise CourseError(f"unknown exercise {', '.join(unknown)}; {what}: {', '.join(known) or 'none'}")
    return wanted or known


def release(course: Path, solutions: Path, exercises: list[str] | None = None) -> list[Path]:
    """Write source/ from the solutions, generate the student release and its zips; return the notebooks."""
    import jupytext

    if not solutions.is_dir():
        raise CourseError(f"no solutions folder at {solutions} (give --solutions notebooks/exercises/solutions)")
    sources = {blank_path(p).stem: p for p in sorted(solutions.glob("*_solutions.py"))}
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    written = []
    for name in _pick(exercises, sorted(sources), "the solutions folder has"):
        target = course / "source" / name / f"{name}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(jupytext.read(sources[name]), target)
        _nbgrader(course, "generate_assignment", name)
        student = course / "release" / name
        text = (student / f"{name}.ipynb").read_text(encoding="utf-8")
        if any(marker in text for marker in ("### BLANK:", "BEGIN HIDDEN TESTS", "mark_prediction")):
            raise CourseError(f"{student}: the release still holds solution markers: nbgrader did not load "
                              f"{course / 'nbgrader_config.py'} (run nbgrader there with --debug to see why)")
        (course / "zips").mkdir(exist_ok=True)
        shutil.make_archive(str(course / "zips" / name), "zip", student.parent, name)
        written.append(student / f"{name}.ipynb")
    return written


def _grade_ids(notebook: dict) -> set[str]:
    return {c["metadata"]["nbgrader"]["grade_id"] for c in notebook.get("cells", [])
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}


def _read_notebook(path: Path) -> dict:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CourseError(f"{path}: not a notebook ({type(exc).__name__})") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise CourseError(f"{path}: not a notebook (no list of cells)")
    return notebook


def _submissions(folder: Path):
    """(student, exercise, path) for SUBMISSIONS/<student>/<exercise>.ipynb or .../<exercise>/<exercise>.ipynb."""
    for student in sorted(p for p in folder.iterdir() if p.is_dir()):
        for path in sorted(student.rglob("*.ipynb")):
            if ".ipynb_checkpoints" not in path.parts:
                yield student.name, path.stem, path


def collect(course: Path, submissions: Path) -> tuple[list[Path], list[str]]:
    """Check and file every submission; return (the files written, the problems found)."""
    known, written, problems = released(_course(course)), [], []
    if not submissions.exists():
        raise CourseError(f"no submissions at {submissions} (a folder or a .zip of <student>/<exercise>.ipynb)")
    with tempfile.TemporaryDirectory() as unpacked:
        folder = submissions
        if submissions.is_file():
            if not zipfile.is_zipfile(submissions):
                raise CourseError(f"{submissions}: neither a folder nor a zip file")
            zipfile.ZipFile(submissions).extractall(unpacked)
            folder = Path(unpacked)
        for student, name, path in _submissions(folder):
            try:
                if name not in known:
                    raise CourseError(f"{path}: unknown exercise {name!r} (released: {', '.join(known)})")
                missing = _grade_ids(_read_notebook(course / "release" / name / f"{name}.ipynb")) - \
                    _grade_ids(_read_notebook(path))
                if missing:
                    raise CourseError(f"{path}: cells of the release are missing (deleted?): {', '.join(sorted(missing))}")
            except CourseError as problem:
                problems.append(str(problem))
                continue
            target = course / "submitted" / student / name / f"{name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            written.append(target)
    return written, problems


def grade(course: Path, exercises: list[str] | None = None) -> list[str]:
    """Autograde (graded mode) and write feedback for every collected submission of the exercises."""
    submitted = sorted({p.name for p in (_course(course) / "submitted").glob("*/*") if p.is_dir()})
    names = _pick(exercises, released(course), "released")
    for name in names:
        if name in submitted:
            _nbgrader(course, "autograde", name, graded=True)
            _nbgrader(course, "generate_feedback", name)
    return [n for n in names if n in submitted]


def export(course: Path, to: Path) -> Path:
    """nbgrader's grades table (one row per student and exercise) as CSV at ``to``."""
    _nbgrader(_course(course), "export", f"--to={to.resolve()}")
    return to


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tl_minimal.exercises.course", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("release", "collect", "grade", "export"):
        p = sub.add_parser(name)
        p.add_argument("course", type=Path, help="the nbgrader course directory")
        if name == "collect":
            p.add_argument("submissions", type=Path, help="a folder or .zip of <student>/<exercise>.ipynb")
        if name in ("release", "grade"):
            p.add_argument("--exercise", action="append", help="only this exercise (repeatable), e.g. 01_running_state")
        if name == "release":
            p.add_argument("--solutions", type=Path, default=Path("notebooks/exercises/solutions"))
        if name == "export":
            p.add_argument("--to", type=Path, default=Path("grades.csv"))
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except CourseError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2


def _run(args) -> int:
    if args.command == "release":
        for path in release(args.course, args.solutions, args.exercise):
            print("released", path)
    elif args.command == "collect":
        written, problems = collect(args.course, args.submissions)
        print(f"collected {len(written)} submission(s)")
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1 if problems else 0
    elif args.command == "grade":
        print("graded", ", ".join(grade(args.course, args.exercise)) or "nothing (collect submissions first)")
    else:
        print("wrote", export(args.course, args.to))
    return 0


if __name__ == "__main__":
    sys.exit(main())
