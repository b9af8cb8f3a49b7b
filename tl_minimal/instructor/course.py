"""The instructor's command: release, collect, grade and export the exercises with nbgrader.

    python -m tl_minimal.instructor release COURSE [--exercise 01_running_state ...]
    python -m tl_minimal.instructor collect COURSE SUBMISSIONS   (a folder or a .zip)
    python -m tl_minimal.instructor grade   COURSE [--exercise ...] [--jobs N]
    python -m tl_minimal.instructor export  COURSE [--to grades.csv]

docs/instructors.md walks through a term. Bad input stops with a message naming it and a non-zero exit.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .blanks import blank_path
from .grading import DEFAULT_JOBS, REPAIRS, feedback, grade_exercise, nbgrader_env, start_autograde
from .predictions import GRADED, grade_cells, load

OURS = "from tl_minimal.instructor.nbgrader_config import configure"
CONFIG = f"# added by python -m tl_minimal.instructor release (lines of your own go below)\n{OURS}\n\n" \
         "configure(get_config())  # noqa: F821\n"
OLD = "tl_minimal.exercises.nbgrader_config"  # where the settings lived before version 1.1
STATUS = "grading.json"  # grade's record: exercise -> student -> {"status": ..., "flags": [...]}
NOT_SUBMITTED = "not submitted"


class CourseError(Exception):
    """Bad input: the message says what and where."""


def _nbgrader(course: Path, *args: str) -> None:
    force = [] if args[0] == "export" else ["--force"]  # redo a step that ran before (export has no such flag)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, *force], check=False, cwd=course,
                          env=nbgrader_env())
    if done.returncode != 0:
        raise CourseError(f"nbgrader {args[0]} {' '.join(args[1:])} failed (exit {done.returncode}): see its log above")


def _course(path: Path) -> Path:
    if not (path / "nbgrader_config.py").is_file():
        raise CourseError(f"{path} is not a course directory (no nbgrader_config.py): "
                          "make one with: python -m tl_minimal.instructor release " + str(path))
    return path


def released(course: Path) -> list[str]:
    """The exercises released in ``course`` (folder names under release/)."""
    return sorted(p.name for p in (course / "release").glob("*") if p.is_dir())


def _pick(wanted: list[str] | None, known: list[str], what: str) -> list[str]:
    unknown = sorted(set(wanted or []) - set(known))
    if unknown:
        raise CourseError(f"unknown exercise {', '.join(unknown)}; {what}: {', '.join(known) or 'none'}")
    return wanted or known


def write_config(path: Path) -> None:
    """Put our two lines at the top of a course's nbgrader_config.py, keeping every other line.

    Ours go first, so a setting of the instructor's (a longer Execute.timeout) wins over ours."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if OURS in text:
        return
    if OLD in text:  # a course made before the settings moved: point its line at the new place
        path.write_text(text.replace(OLD, "tl_minimal.instructor.nbgrader_config"), encoding="utf-8")
        return
    path.write_text(CONFIG + ("\n" + text if text.strip() else ""), encoding="utf-8")


def release(course: Path, solutions: Path, exercises: list[str] | None = None) -> list[Path]:
    """Write source/ from the solutions, generate the student release and its zips; return the notebooks."""
    import jupytext

    if not solutions.is_dir():
        raise CourseError(f"no solutions folder at {solutions} (give --solutions notebooks/exercises/solutions)")
    sources = {blank_path(p).stem: p for p in sorted(solutions.glob("*_solutions.py"))}
    course.mkdir(parents=True, exist_ok=True)
    write_config(course / "nbgrader_config.py")
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


def _read_notebook(path: Path) -> dict:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CourseError(f"{path}: not a notebook ({type(exc).__name__})") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise CourseError(f"{path}: not a notebook (no list of cells)")
    return notebook


def repair(notebook: dict, release: dict) -> list[str]:
    """Restore every grade cell's metadata (and a locked cell's type and text) from the release.

    Returns what was changed ("task2_check: metadata"), empty when the grade cells are intact. A cell
    that claims a grade id the release does not have, or a second copy of one, loses that metadata."""
    want, changes, seen = grade_cells(release), [], set()
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader")
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if grade_id is None and meta is None:
            continue
        if grade_id not in want or grade_id in seen:
            cell["metadata"].pop("nbgrader")
            changes.append(f"{grade_id or 'a cell'}: grade metadata not in the release (removed)")
            continue
        seen.add(grade_id)
        original = want[grade_id]
        if meta != original["metadata"]["nbgrader"]:
            cell["metadata"]["nbgrader"] = json.loads(json.dumps(original["metadata"]["nbgrader"]))
            changes.append(f"{grade_id}: metadata")
        changed = [f"{grade_id}: {what}" for key, what in (("cell_type", "cell type"), ("source", "text"))
                   if "".join(cell.get(key, "")) != "".join(original[key])]
        if changed and original["metadata"]["nbgrader"].get("locked"):  # the release's cell, outputs and all
            cell.clear()
            cell.update(json.loads(json.dumps(original)))
            changes += changed
    return changes


def collect(course: Path, submissions: Path) -> tuple[list[Path], list[str], list[str]]:
    """Check, repair and file every submission; return (the files written, the problems found,
    the repairs made, each naming the student)."""
    known, written, problems, repairs = released(_course(course)), [], [], []
    record = load(course / REPAIRS)  # exercise -> student -> what was restored: grade puts it in the CSV
    if not submissions.exists():
        raise CourseError(f"no submissions at {submissions} (a folder or a .zip of <student>/<exercise>.ipynb)")
    with tempfile.TemporaryDirectory() as unpacked:
        folder = submissions
        if submissions.is_file():
            if not zipfile.is_zipfile(submissions):
                raise CourseError(f"{submissions}: neither a folder nor a zip file")
            zipfile.ZipFile(submissions).extractall(unpacked)
            folder = Path(unpacked)
        # <student>/<exercise>.ipynb or <student>/<exercise>/<exercise>.ipynb
        for path in sorted(p for p in folder.glob("*/**/*.ipynb") if ".ipynb_checkpoints" not in p.parts):
            student, name = path.relative_to(folder).parts[0], path.stem
            try:
                if name not in known:
                    raise CourseError(f"{path}: unknown exercise {name!r} (released: {', '.join(known)})")
                release_nb = _read_notebook(course / "release" / name / f"{name}.ipynb")
                notebook = _read_notebook(path)
                missing = set(grade_cells(release_nb)) - set(grade_cells(notebook))
                if missing:
                    raise CourseError(f"{path}: cells of the release are missing (deleted?): "
                                      f"{', '.join(sorted(missing))}")
            except CourseError as problem:
                problems.append(str(problem))
                continue
            changes = repair(notebook, release_nb)
            record.setdefault(name, {})[student] = changes
            if changes:
                repairs.append(f"{student} ({name}): grade cells changed, restored from the release: "
                               + "; ".join(changes))
            target = course / "submitted" / student / name / f"{name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            written.append(target)
    (course / REPAIRS).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return written, problems, repairs


def grade(course: Path, exercises: list[str] | None = None, jobs: int = DEFAULT_JOBS) -> dict:
    """Grade each collected submission (grading.py: nbgrader runs the notebook, ``jobs`` at once, default
    one; a clean process judges the hidden tests' records), then write the feedback;
    record and return ``{exercise: {student: {"status": "graded" or "not graded: <why>", "flags": [...],
    "tasks": {test cell: {"status", "score", "points", "reason"}}}}}``."""
    names = _pick(exercises, released(_course(course)), "released")
    if jobs < 1:
        raise CourseError(f"--jobs must be at least 1, not {jobs}")
    record = load(course / STATUS)
    started, runs = time.monotonic(), {}
    pool = ThreadPoolExecutor(max_workers=jobs)  # its threads wait for the notebooks' nbgrader processes
    try:
        for name in names:  # every notebook queued now: a slow one holds up the next exercise's, not all
            students = sorted(p.parent.name for p in (course / "submitted").glob(f"*/{name}") if p.is_dir())
            runs[name] = start_autograde(course, name, students, pool)
        for name in names:
            record[name] = grade_exercise(course, name, runs[name])
            feedback(course, name, record[name])  # then one line per student
            (course / STATUS).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    finally:
        pool.shutdown(cancel_futures=True)  # after an error: no new notebook starts
    print(f"grade step: {time.monotonic() - started:.0f} s for "
          f"{sum(len(record[n]) for n in names)} notebook(s) of {len(names)} exercise(s)")
    return {n: record.get(n, {}) for n in names}


def export(course: Path, to: Path) -> Path:
    """nbgrader's grades table (one row per student and exercise) as CSV at ``to``, with a ``status``
    column (graded, not graded: <why>, not submitted) and a ``flags`` column; a grade that was not
    given is left empty instead of nbgrader's 0."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "nbgrader.csv"
        _nbgrader(_course(course), "export", f"--to={raw}")
        with raw.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    record = load(course / STATUS)
    fields = list(rows[0]) if rows else ["assignment", "student_id", "score", "max_score"]
    columns = sorted({g for per in record.values() for e in per.values() for g in e.get("tasks", {})})
    for row in rows:
        submitted = (course / "submitted" / row["student_id"] / row["assignment"]).is_dir()
        entry = record.get(row["assignment"], {}).get(row["student_id"]) \
            or {"status": "not graded yet (run grade)" if submitted else NOT_SUBMITTED}
        row.update(status=entry["status"], flags="; ".join(entry.get("flags", [])),
                   repairs="; ".join(entry.get("repairs", [])))
        for column in columns:  # one status per test cell: "<status> (<score>/<points>): <why>"
            task = entry.get("tasks", {}).get(column)
            score = "" if task is None or task["score"] is None else task["score"]
            row[column] = NOT_SUBMITTED if entry["status"] == NOT_SUBMITTED else "" if task is None else \
                f"{task['status']} ({score}/{task['points']}): {task['reason']}"
        if not entry["status"].startswith("graded"):  # no grade given: empty; tests that did not run: 0
            for column in ("raw_score", "score", "late_submission_penalty"):
                if column in row:
                    row[column] = "0" if entry["status"].startswith("tests did not run") else ""
    with to.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*fields, "status", "flags", "repairs", *columns])
        writer.writeheader()
        writer.writerows(rows)
    return to


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tl_minimal.instructor", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = {name: sub.add_parser(name) for name in ("release", "collect", "grade", "export")}
    for each in p.values():
        each.add_argument("course", type=Path, help="the nbgrader course directory")
    p["collect"].add_argument("submissions", type=Path, help="a folder or .zip of <student>/<exercise>.ipynb")
    for name in ("release", "grade"):
        p[name].add_argument("--exercise", action="append",
                             help="only this exercise (repeatable), e.g. 01_running_state")
    p["grade"].add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N",
                            help=f"notebooks autograded at once, each in its own kernel (default {DEFAULT_JOBS}: "
                            "one at a time, each notebook alone; more is faster, but notebooks graded side by "
                            "side could reach each other's folders)")
    p["release"].add_argument("--solutions", type=Path, default=Path("notebooks/exercises/solutions"))
    p["export"].add_argument("--to", type=Path, default=Path("grades.csv"))
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
        written, problems, repairs = collect(args.course, args.submissions)
        print(f"collected {len(written)} submission(s)")
        for fixed in repairs:
            print(f"repaired: {fixed}", file=sys.stderr)
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1 if problems else 0
    elif args.command == "grade":
        done = grade(args.course, args.exercise, jobs=args.jobs)
        graded = sum(e["status"] == GRADED for per in done.values() for e in per.values())
        every = [(n, s, e) for n, per in done.items() for s, e in per.items()]
        failed = [f"{n} {s}: {e['status']}" for n, s, e in every if e["status"] != GRADED]
        failed += [f"{n} {s} {g}: {t['status']}: {t['reason']}" for n, s, e in every if e["status"] == GRADED
                   for g, t in e["tasks"].items() if t["status"] not in (GRADED, "flagged")]
        flagged = [f"{n} {s}: {'; '.join(e['flags'])}" for n, s, e in every if e["flags"]]
        print(f"graded {graded} submission(s) of {', '.join(done) or 'nothing (collect submissions first)'}")
        for line in failed:
            print(f"NOT GRADED {line}")
        for line in flagged:
            print(f"FLAGGED for review (not a zero) {line}")
    else:
        print("wrote", export(args.course, args.to))
    return 0
