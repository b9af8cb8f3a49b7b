"""The instructor's ``grade`` step: nbgrader runs each notebook, the course decides each task's points.

docs/instructors.md, section 5, gives the steps and the statuses: scan.py's flags, a fresh record folder
per notebook (``tl_minimal.exercises.record``), one verdict.py process per exercise that never ran
student code, predictions read from the text (predictions.py), the verdicts added to the feedback.
"""

from __future__ import annotations

import base64
import html
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from concurrent.futures import Executor, Future
from pathlib import Path

from nbgrader.api import Gradebook

from tl_minimal.exercises.record import RECORD_ENV

from .nbgrader_config import DEFAULT_GRACE, DEFAULT_TIMEOUT, IGNORED_INTERRUPT
from .predictions import GRADED, NOT_RUN, grade_prediction, load, plan
from .scan import scan

FLAGGED, RESTORED = "flagged", "test cells changed and restored"
REPAIRS = "repairs.json"  # collect's record: exercise -> student -> [what was restored]
DB_WAIT_S = 120  # how long a gradebook write waits for another process's (SQLite's default is 5 s)
DEFAULT_JOBS = 1  # notebooks graded at once: side by side, one student's code could reach another's folder


def gradebook_url(course: Path) -> str:
    """The course's gradebook (course/gradebook.db) as a URL whose connections wait up to ``DB_WAIT_S``
    for a lock another process holds (another autograde of grade --jobs)."""
    path = urllib.parse.quote(str(course.resolve() / "gradebook.db"))  # SQLAlchemy unquotes it: % and ? stay
    return f"sqlite:///{path}?timeout={DB_WAIT_S}"


def nbgrader_env(extra: dict | None = None) -> dict:
    """This process's environment and ``extra``, with this Python's scripts first on PATH (nbgrader runs
    the `alembic` script of its environment, also when no venv is activated)."""
    env = dict(os.environ, **(extra or {}))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_nbgrader(course: Path, log: Path, *args: str, limit: float, env: dict | None = None) -> str:
    """Run one nbgrader step with its output in ``log``; return "" when it worked, else why not.

    ``limit`` (seconds) ends a run that hangs, with everything it started (its own process group)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        database = f"--CourseDirectory.db_url={gradebook_url(course)}"  # waits for another process's write
        child = subprocess.Popen([sys.executable, "-m", "nbgrader", *args, "--force", database], cwd=course,
                                 env=nbgrader_env(env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = child.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return f"not graded: grading ran past {limit:.0f} s (kernel ignored the interrupt?); see {log}"
    if code == 0:
        return ""
    text = log.read_text(encoding="utf-8", errors="replace")
    if IGNORED_INTERRUPT in text:  # GuardedExecute's words
        return f"not graded: {IGNORED_INTERRUPT}"
    if "DeadKernelError" in text:  # a cell ended the kernel (os._exit, a crash): no hidden test after it ran
        return "tests did not run: the kernel exited (a cell ended it)"
    if "checksum" in text.lower() and "inconsistent" in text.lower():
        return "not graded: test cells changed"
    return f"not graded: nbgrader {args[0]} failed (exit {code}); see {log}"


def _limit(notebook: Path) -> float:
    """Seconds one student's grading may take in all: every code cell at its timeout, plus start-up."""
    cells = sum(c.get("cell_type") == "code" for c in load(notebook)["cells"])
    per_cell = int(os.environ.get("TL_CELL_TIMEOUT", DEFAULT_TIMEOUT)) \
        + float(os.environ.get("TL_INTERRUPT_GRACE", DEFAULT_GRACE))
    return 120 + cells * per_cell


def _task_of(label: str) -> str:
    return label.split("_")[0] if label.startswith("task") else ""


def _answer_cell(release: dict, name: str) -> str:
    return next((c["metadata"]["nbgrader"]["grade_id"] for c in release["cells"]
                 if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c["cell_type"] == "code"
                 and f"{name} =" in "".join(c["source"])), "")


def _verdicts(jobs: dict) -> dict | None:
    """Run verdict.py once, in an empty folder, for every student of ``jobs`` ({student: (tasks, records)})."""
    job = {student: {"tasks": tasks, "records": records} for student, (tasks, records) in jobs.items()}
    with tempfile.TemporaryDirectory(prefix="tl-verdict-") as tmp:
        (Path(tmp) / "job.json").write_text(json.dumps(job), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in (RECORD_ENV, "TL_GRADED", "PYTHONSTARTUP")}
        done = subprocess.run([sys.executable, "-m", "tl_minimal.instructor.verdict", "job.json", "out.json"],
                              cwd=tmp, env=env, capture_output=True, text=True, encoding="utf-8", check=False)
        if done.returncode != 0:
            print(f"the verdict process failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
            return None
        return json.loads((Path(tmp) / "out.json").read_text(encoding="utf-8"))


def _take_records(folder: Path, tasks: dict) -> dict:
    """{nonce: [the record's .json, its .npz], each as base64} of the records in ``folder``, then removed."""
    records = {}
    for task in tasks.values():
        files = [folder / f"{task['nonce']}.json", folder / f"{task['nonce']}.npz"]
        if all(f.is_file() for f in files):
            records[task["nonce"]] = [base64.b64encode(f.read_bytes()).decode("ascii") for f in files]
    shutil.rmtree(folder, ignore_errors=True)
    return records


def _set_scores(course: Path, name: str, student: str, scores: dict) -> None:
    with Gradebook(gradebook_url(course)) as gb:
        for grade_id, score in scores.items():
            gb.find_grade(grade_id, name, name, student).manual_score = score
        gb.db.commit()


def _feedback_page(course: Path, name: str, student: str, tasks: dict, why: str = "") -> None:
    """Add the course's verdicts to nbgrader's feedback page (or write the page when there is none)."""
    path = course / "feedback" / student / name / f"{name}.html"
    rows = "".join(f"<tr><td>{html.escape(t)}</td><td>{html.escape(e['status'])}</td>"
                   f"<td>{'' if e['score'] is None else e['score']} / {e['points']}</td>"
                   f"<td>{html.escape(e['reason'])}</td></tr>" for t, e in tasks.items())
    block = ("<div id='tl-verdicts'><h2>The course's verdicts</h2>"
             + (f"<p>{html.escape(why)}</p>" if why else "")
             + f"<table><tr><th>test</th><th>status</th><th>points</th><th>why</th></tr>{rows}</table></div>")
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        text = text.replace("</body>", block + "</body>", 1) if "</body>" in text else text + block
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{name}</title></head><body>" \
               f"<h1>{html.escape(name)}: {html.escape(student)}</h1>{block}</body></html>"
    path.write_text(text, encoding="utf-8")


def _task_entries(tasks: dict, verdicts: dict, flags: list[str], repairs: list[str]) -> dict:
    """One status, score and reason per test cell, in the order of the statuses' importance."""
    out = {}
    for grade_id, task in tasks.items():
        verdict, number = verdicts[grade_id], _task_of(grade_id)
        mine = [f for f in flags if _task_of(f) in (number, "")]  # "cell 7: ..." concerns every task
        fixed = [r for r in repairs if _task_of(r) == number]
        score = task["points"] if verdict["passed"] else 0
        status, reason = verdict["status"], verdict["reason"]
        if status == GRADED and mine:
            status, reason = FLAGGED, f"{reason}; for a person to read: {'; '.join(mine)}"
        elif status == GRADED and fixed:
            status, reason = RESTORED, f"{reason}; the test cell was restored from the release: {'; '.join(fixed)}"
        out[grade_id] = {"status": status, "score": score, "points": task["points"], "reason": reason}
    return out


def _functions(course: Path, name: str) -> tuple[dict, dict]:
    tasks = plan(load(course / "source" / name / f"{name}.ipynb"))
    return tasks, {g: t for g, t in tasks.items() if t["kind"] == "function"}


def start_autograde(course: Path, name: str, students: list[str], pool: Executor) -> dict[str, Future]:
    """Queue each student's notebook of exercise ``name`` on ``pool`` (its workers are the notebooks
    graded at once). Returns {student: the run's future}, for :func:`grade_exercise`."""
    functions = _functions(course, name)[1]
    limit = _limit(course / "release" / name / f"{name}.ipynb")

    def autograde(student: str) -> tuple:
        """One notebook: its own folder of seeds and nonces, nbgrader's run, the records taken at once."""
        began = time.monotonic()
        folder = Path(tempfile.mkdtemp(prefix="tl-grade-"))
        drawn = {g: {"check": t["check"], "seed": secrets.randbelow(10**8), "nonce": secrets.token_hex(16)}
                 for g, t in functions.items()}
        tasks_json = {t["check"]: {"seed": t["seed"], "nonce": t["nonce"]} for t in drawn.values()}
        (folder / "tasks.json").write_text(json.dumps(tasks_json), encoding="utf-8")
        why = run_nbgrader(course, course / "logs" / name / student / "autograde.log", "autograde", name,
                           f"--student={student}", limit=limit, env={"TL_GRADED": "1", RECORD_ENV: str(folder)})
        return why, drawn, _take_records(folder, drawn), (began, time.monotonic())

    return {student: pool.submit(autograde, student) for student in students}


def grade_exercise(course: Path, name: str, runs: dict[str, Future]) -> dict:
    """Grade the students of ``runs`` (:func:`start_autograde`) on exercise ``name`` once their
    notebooks ran. Returns {student: grading.json's entry}, the same however many ran at once."""
    release, (tasks, functions) = load(course / "release" / name / f"{name}.ipynb"), _functions(course, name)
    repaired = load(course / REPAIRS).get(name, {})
    done = {student: run.result() for student, run in runs.items()}  # (why not run, drawn, records, span)
    spans = [d[3] for d in done.values()] or [(time.monotonic(), time.monotonic())]
    judging = {student: (drawn, records) for student, (why, drawn, records, _) in done.items() if not why}
    autograded = time.monotonic()
    judged = _verdicts(judging) if judging else {}
    verdicts_done, entries = time.monotonic(), {}
    for student, (why, *_) in done.items():
        submitted = load(course / "submitted" / student / name / f"{name}.ipynb")
        flags, repairs = scan(submitted, release), repaired.get(student, [])
        if judged is None and not why:  # our failure, not the student's: no score rather than 0
            why = "not graded: the verdict process failed (its error is in the grade command's output)"
        if why:
            status = IGNORED_INTERRUPT if IGNORED_INTERRUPT in why else NOT_RUN if why.startswith(NOT_RUN) else why
            score = 0 if status == NOT_RUN else None
            per_task = {g: {"status": status, "score": score, "points": t["points"], "reason": why}
                        for g, t in tasks.items()}
            entries[student] = {"status": why, "flags": flags, "repairs": repairs, "tasks": per_task}
            continue
        verdicts = {g: judged.get(student, {}).get(g, {"status": NOT_RUN, "passed": False,
                                                         "reason": "the verdict process gave no verdict"})
                    for g in functions}
        for grade_id, task in tasks.items():
            if task["kind"] == "prediction":
                verdicts[grade_id] = grade_prediction(task, submitted, _answer_cell(release, task["name"]))
        per_task = _task_entries(tasks, verdicts, flags, repairs)
        _set_scores(course, name, student, {g: e["score"] for g, e in per_task.items()})
        entries[student] = {"status": GRADED, "flags": flags, "repairs": repairs, "tasks": per_task}
    print(f"{name}: {len(done)} notebook(s): nbgrader autograde "
          f"{max(e for _, e in spans) - min(b for b, _ in spans):.0f} s (first start to last end), "
          f"verdicts {verdicts_done - autograded:.1f} s")
    return entries


def feedback(course: Path, name: str, entries: dict) -> None:
    """nbgrader's feedback for the graded students (one run; one per student if that fails), then ours;
    then one line per student: its status, each task's status and points, its flags."""
    def run_feedback(student: str | None) -> str:
        who = [f"--student={student}"] if student else []
        logs = course / "logs" / name / (student or "")
        return run_nbgrader(course, logs / "feedback.log", "generate_feedback", name, *who, limit=600)

    graded = [s for s, e in entries.items() if e["status"] == GRADED]
    started = time.monotonic()
    if graded and run_feedback(None):
        for student in graded:
            problem = run_feedback(student)
            if problem:
                entries[student]["status"] = problem.replace("not graded:", "graded, but no feedback:")
    for student, entry in entries.items():  # after nbgrader's pages, which it may write for any student
        why = "" if student in graded else \
            f"This notebook could not be graded: {entry['status'].removeprefix('not graded: ')}."
        why = why.replace("could not be graded: tests did not run:", "scores 0, the tests did not run:")
        _feedback_page(course, name, student, entry["tasks"], why=why)
    print(f"{name}: feedback {time.monotonic() - started:.0f} s")
    for student, entry in entries.items():
        review = f"; flagged for review: {'; '.join(entry['flags'])}" if entry["flags"] else ""
        tasks = "; ".join(f"{g} {e['status']}" + ("" if e["score"] is None else f" {e['score']}/{e['points']}")
                          for g, e in entry["tasks"].items())
        print(f"{name} {student}: {entry['status']} ({tasks}){review}")
