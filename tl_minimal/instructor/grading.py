"""The instructor's ``grade`` step: nbgrader runs each notebook, the course decides each task's points.

Per student: scan.py's flags; a fresh folder with ``tasks.json`` (a seed and a nonce per function
task, drawn with ``secrets``) that the hidden tests record into (``tl_minimal.exercises.record``),
read into memory as soon as the notebook is done and removed; then one verdict.py process per
exercise, which never ran student code, judges the records, and predictions are read from the
submitted text (predictions.py). Those verdicts replace nbgrader's scores, and a table of them is
added to nbgrader's feedback. docs/instructors.md, section 5, gives the statuses and their points.
"""

from __future__ import annotations

import html
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from concurrent.futures import Executor, Future
from pathlib import Path

from nbgrader.api import Gradebook

from tl_minimal.exercises.record import RECORD_ENV

from .predictions import GRADED, NOT_RUN, grade_prediction, load, plan
from .scan import scan

FLAGGED, RESTORED, IGNORED = "flagged", "test cells changed and restored", "kernel ignored the interrupt"
REPAIRS = "repairs.json"  # collect's record: exercise -> student -> [what was restored]
DB_WAIT_S = 120  # how long a gradebook write waits for another process's (SQLite's default is 5 s)
# notebooks ``grade`` autogrades at once unless told: one. Notebooks graded side by side run as the same user,
# so one student's code could reach the folder of another graded beside it; ``--jobs N`` trades that isolation
# for time (a kernel's start-up and a timeout's wait overlap)
DEFAULT_JOBS = 1


def gradebook_url(course: Path) -> str:
    """The course's gradebook (nbgrader's default place, course/gradebook.db) as a database URL whose
    connections wait up to ``DB_WAIT_S`` for a lock another process holds, where SQLite's default
    5 s would fail a write with "database is locked" while another autograde writes (grade --jobs)."""
    path = urllib.parse.quote(str(course.resolve() / "gradebook.db"))  # SQLAlchemy unquotes it: % and ? stay
    return f"sqlite:///{path}?timeout={DB_WAIT_S}"


def _task_of(label: str) -> str:
    return label.split("_")[0] if label.startswith("task") else ""


def _answer_cell(release: dict, name: str) -> str:
    return next((c["metadata"]["nbgrader"]["grade_id"] for c in release["cells"]
                 if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c["cell_type"] == "code"
                 and f"{name} =" in "".join(c["source"])), "")


def _verdicts(jobs: dict, log) -> dict | None:
    """Run verdict.py once for every student of ``jobs`` ({student: (tasks, {nonce: (json, npz)})})."""
    with tempfile.TemporaryDirectory(prefix="tl-verdict-") as tmp:
        folder = Path(tmp)
        job = {}
        for number, student in enumerate(sorted(jobs)):
            tasks, records = jobs[student]
            job[student] = tasks
            (folder / str(number)).mkdir()
            for nonce, (text, data) in records.items():
                (folder / str(number) / f"{nonce}.json").write_bytes(text)
                (folder / str(number) / f"{nonce}.npz").write_bytes(data)
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in (RECORD_ENV, "TL_GRADED", "PYTHONSTARTUP")}
        done = subprocess.run([sys.executable, "-m", "tl_minimal.instructor.verdict", "job.json", "out.json"],
                              cwd=folder, env=env, capture_output=True, text=True, encoding="utf-8", check=False)
        if done.returncode != 0:
            log(f"the verdict process failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
            return None
        return json.loads((folder / "out.json").read_text(encoding="utf-8"))


def _take_records(folder: Path, tasks: dict) -> dict:
    records = {}
    for task in tasks.values():
        text, data = folder / f"{task['nonce']}.json", folder / f"{task['nonce']}.npz"
        if text.is_file() and data.is_file():
            records[task["nonce"]] = (text.read_bytes(), data.read_bytes())
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


def start_autograde(course: Path, name: str, students: list[str], why_not, pool: Executor) -> dict[str, Future]:
    """Queue each student's notebook of exercise ``name`` on ``pool`` (its workers are the notebooks
    graded at once); ``why_not(student, env)`` runs nbgrader's autograde with ``env`` added and
    returns "" or why it failed. Returns {student: the run's future}, for :func:`grade_exercise`."""
    functions = _functions(course, name)[1]

    def autograde(student: str) -> tuple:
        """One notebook: its own folder of seeds and nonces, nbgrader's run, the records taken at once."""
        began = time.monotonic()
        folder = Path(tempfile.mkdtemp(prefix="tl-grade-"))
        drawn = {g: {"check": t["check"], "seed": secrets.randbelow(10**8), "nonce": secrets.token_hex(16)}
                 for g, t in functions.items()}
        tasks_json = {t["check"]: {"seed": t["seed"], "nonce": t["nonce"]} for t in drawn.values()}
        (folder / "tasks.json").write_text(json.dumps(tasks_json), encoding="utf-8")
        why = why_not(student, {RECORD_ENV: str(folder)})
        return why, drawn, _take_records(folder, drawn), (began, time.monotonic())

    return {student: pool.submit(autograde, student) for student in students}


def grade_exercise(course: Path, name: str, runs: dict[str, Future], log=print) -> dict:
    """Grade the students of ``runs`` (:func:`start_autograde`) on exercise ``name`` once their
    notebooks ran. Returns {student: grading.json's entry}, the same however many ran at once."""
    release = json.loads((course / "release" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
    tasks, functions = _functions(course, name)
    repaired = load(course / REPAIRS).get(name, {})
    students, done = list(runs), {student: run.result() for student, run in runs.items()}
    spans = [d[3] for d in done.values()] or [(time.monotonic(), time.monotonic())]
    ran, judging = {}, {}
    for student in students:
        submitted = json.loads((course / "submitted" / student / name / f"{name}.ipynb").read_text(encoding="utf-8"))
        why, drawn, records, _ = done[student]
        ran[student] = (submitted, scan(submitted, release), why)
        if not why:
            judging[student] = (drawn, records)
    autograded = time.monotonic()
    judged = _verdicts(judging, log) if judging else {}
    verdicts_done, entries = time.monotonic(), {}
    for student in students:
        submitted, flags, why = ran[student]
        repairs = repaired.get(student, [])
        if judged is None and not why:  # our failure, not the student's: no score rather than 0
            why = "not graded: the verdict process failed (its error is in the grade command's output)"
        if why:
            status = IGNORED if IGNORED in why else NOT_RUN if why.startswith(NOT_RUN) else why
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
    log(f"{name}: {len(students)} notebook(s): nbgrader autograde "
        f"{max(e for _, e in spans) - min(b for b, _ in spans):.0f} s (first start to last end), "
        f"verdicts {verdicts_done - autograded:.1f} s")
    return entries


def feedback(course: Path, name: str, entries: dict, run_feedback, log=print) -> None:
    """nbgrader's feedback for the graded students (one run; one per student if that fails), then ours;
    then one line per student: its status, each task's status and points, its flags."""
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
    log(f"{name}: feedback {time.monotonic() - started:.0f} s")
    for student, entry in entries.items():
        review = f"; flagged for review: {'; '.join(entry['flags'])}" if entry["flags"] else ""
        tasks = "; ".join(f"{g} {e['status']}" + ("" if e["score"] is None else f" {e['score']}/{e['points']}")
                          for g, e in entry["tasks"].items())
        log(f"{name} {student}: {entry['status']} ({tasks}){review}")
