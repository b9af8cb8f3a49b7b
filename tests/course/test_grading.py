"""The instructor's flow end to end in one grading run: release, collect, grade, export (issues 34 and 53).

One course directory (its path has a space and a non-ASCII letter) gets four exercises, released through
the instructor's command and graded by it (``python -m tl_minimal.instructor grade``), without JupyterHub.
The submissions (tests/course/grading_submissions.py):

- exercise 01 (its tasks build on each other, so a broken task 1 also shows what happens to task 2): the
  release reads exactly like the self-study blank and holds no answer; the solution gets full marks, the
  untouched blank zero, typical mistakes the expected partial marks, code that raises or never ends loses
  only its cells; a file that is not a notebook and a notebook with a deleted test cell are named by
  collect, the rest filed;
- exercises 03, 05 and 06: a perfect submission, an untouched one, one with a subtle bug in every task
  (hidden-shape bugs where one exists: ``.squeeze()`` without its dim, d hard-coded, a leak only at
  t >= 4; its task 4 test cell also edited, which collect restores) and three that cheat:

    cheats        graded mode switched off and the checks replaced by no-ops, a method of
                  torch.Tensor patched (``type.__setattr__``) so the kernel's comparison passes,
                  every error silenced (``set_custom_exc``), all with wrong code; the expected value
                  read from the checker's frame; the answer key read through ``tl_minimal.__file__``;
                  the library's reference returned
    finder        a finder first on ``sys.meta_path`` serves a fake ``tl_minimal.exercises`` to the
                  hidden cells' fresh import, and ``globals()["e" + "x"]`` rebinds the checker
    transformer   an input transformer makes every later cell ``pass`` (plain in 03, hidden in
                  ``exec(bytes.fromhex(...))`` in 05 and 06)

  One perfect submission also had a check cell's metadata edited, one notebook of exercise 06 ends its
  kernel (``os._exit``: "tests did not run", 0), and one of exercise 05 runs a loop that swallows the
  interrupt: "kernel ignored the interrupt", no score, a feedback page saying so, and everyone else
  graded. Tampering scores 0 on every task it touches; fetching a reference answer scores 0 or is
  flagged with the matched line; every student gets feedback.

nbgrader executes every notebook (24 submissions, smoke mode), so the test is marked ``slow``; the grade
step's time is printed (``-s``). Until issue 51 exercise 01 had a grading run of its own (test_course.py:
release, grade and export again, and its never-ending cell waited out a 60 s timeout); one run proves both.
The grade command autogrades ``JOBS`` = 2 notebooks at once (``--jobs``; its default is 1, one at a time,
for isolation); the scores are those of one at a time (the same CSV but for the relative errors quoted, whose hidden
inputs are drawn afresh). Measured 2026-12-06 on a 2-core machine running two trainings of another session
beside the tests (the runs got 0.9 to 1.2 cores of CPU time): the fixture took 425 s one at a time (grade
step 399 s: autograde 361 s, verdicts 8 s, feedback 29 s) and 299 s with ``--jobs 2`` (grade step 265 s),
every exercise's notebooks queued at once, so the endless cells' timeouts overlap with other notebooks.
Run it with ``--basetemp`` outside /tmp/pytest-of-<user> when other pytest runs share the machine.
``TL_TEST_EXERCISES=05_convolution`` runs one exercise besides 01. Skipped without nbgrader (the ``course`` extra).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason='the course extra is missing: pip install -e ".[course]"')

from grading_submissions import write_01, write_others

from tl_minimal.instructor import course

pytestmark = pytest.mark.slow  # nbgrader executes every submission: minutes (measured above)

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "exercises" / "solutions"
POINTS = {"task1_check": 2, "task2_check": 2, "task3_check": 1, "task4_check": 2}  # + 2 by hand (discussion1)
NAME = "01_running_state"  # the exercise graded by the instructor's plain flow
JOBS = 2  # notebooks autograded at once (grade --jobs): the scores below are those of one at a time
EXERCISES = os.environ.get("TL_TEST_EXERCISES", "03_readout,05_convolution,06_kv_gated_fusion").split(",")


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The one grading run: release, collect, grade (the command, JOBS notebooks at once, its printed
    lines kept), export."""
    saved = {k: os.environ.get(k) for k in ("TL_SMOKE", "TL_CELL_TIMEOUT", "TL_INTERRUPT_GRACE")}
    os.environ.update(TL_SMOKE="1", TL_CELL_TIMEOUT="40", TL_INTERRUPT_GRACE="5")  # nbgrader's runs inherit them
    root = tmp_path_factory.mktemp("grading")
    course_dir = root / "course dir é"  # a space and non-ASCII on the way
    args = ["release", str(course_dir), "--solutions", str(SOLUTIONS)]
    assert course.main([*args, *(a for n in [NAME, *EXERCISES] for a in ("--exercise", n))]) == 0
    releases = {n: _read(course_dir / "release" / n / f"{n}.ipynb") for n in [NAME, *EXERCISES]}
    sources = {n: _read(course_dir / "source" / n / f"{n}.ipynb") for n in [NAME, *EXERCISES]}
    inbox = root / "inbox"
    write_01(inbox, releases[NAME], sources[NAME])
    write_others(inbox, EXERCISES, releases, sources)
    written, problems, repairs = course.collect(course_dir, inbox)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # grade's log goes to print: keep it for the tests
        assert course.main(["grade", str(course_dir), "--jobs", str(JOBS)]) == 0
    lines = printed.getvalue().splitlines()
    print("\n".join(line for line in lines if "s for" in line or "autograde" in line or "feedback" in line))
    csv_path = root / "grades.csv"
    assert course.main(["export", str(course_dir), "--to", str(csv_path)]) == 0
    with csv_path.open(encoding="utf-8", newline="") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    yield {"dir": course_dir, "written": written, "problems": problems, "repairs": repairs, "rows": rows,
           "log": lines, "csv": csv_path, "release": releases[NAME], "inbox": inbox}
    for key, value in saved.items():
        os.environ.pop(key) if value is None else os.environ.update({key: value})


def _score(rows, name, student):
    return float(rows[(name, student)]["raw_score"])


def _cell_scores(course_dir: Path, name: str, student: str) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(name, name, student)
        return {g.name: g.score for g in notebook.grades if g.name in POINTS}


def _tasks(rows, name, student) -> dict:
    """test cell -> its status in the CSV ("<status> (<score>/<points>): <why>")."""
    return {g: rows[(name, student)][g] for g in POINTS}


def test_collect_restores_edited_grade_cells_and_names_the_student(graded):
    problems = graded["problems"]  # only the two of 01 that collect refuses (test_collect_names_bad_submissions...)
    assert len(problems) == 2 and all("not_a_notebook" in p or "deleted_cell" in p for p in problems), problems
    restored = [r for r in graded["repairs"] if r.startswith(f"perfect ({EXERCISES[0]})")]
    assert len(restored) == 1 and "task2_check: metadata" in restored[0]
    for name in EXERCISES:
        assert any(r.startswith(f"bugs ({name})") and "task4_check: text" in r for r in graded["repairs"]), name
    restored = _tasks(graded["rows"], EXERCISES[0], "perfect")["task2_check"]
    assert restored.startswith("test cells changed and restored (2/2)"), restored


@pytest.mark.parametrize("name", EXERCISES)
def test_perfect_full_untouched_zero_bugs_lose_each_task(graded, name):
    rows, auto = graded["rows"], sum(POINTS.values())
    assert _score(rows, name, "perfect") == auto and not rows[(name, "perfect")]["flags"]
    assert _score(rows, name, "untouched") == 0
    assert all(s.startswith("graded (0/") for s in _tasks(rows, name, "untouched").values())  # the tests ran
    assert _cell_scores(graded["dir"], name, "bugs") == dict.fromkeys(POINTS, 0)  # each task loses its points
    assert rows[(name, "bugs")]["status"] == "graded" and not rows[(name, "bugs")]["flags"]
    assert _tasks(rows, name, "bugs")["task4_check"].startswith("test cells changed and restored (0/2)")


@pytest.mark.parametrize("name", EXERCISES)
def test_every_cheat_scores_zero_or_is_flagged(graded, name):
    rows = graded["rows"]
    scores = _cell_scores(graded["dir"], name, "cheats")
    assert scores["task1_check"] == scores["task2_check"] == scores["task3_check"] == 0, scores
    tasks = _tasks(rows, name, "cheats")
    assert scores["task4_check"] == 0 or tasks["task4_check"].startswith("flagged"), tasks
    assert "line " in tasks["task4_check"] or scores["task4_check"] == 0
    flags = rows[(name, "cheats")]["flags"]
    for kind in ("task1_code: environment", "task1_code: monkeypatch", "task1_code: checker",
                 "task2_code: frames", "task3_answer: key file", "task4_code: "):
        assert kind in flags, (kind, flags)
    assert any(name in line and "cheats" in line and "flagged" in line for line in graded["log"])


@pytest.mark.parametrize("name", EXERCISES)
@pytest.mark.parametrize("student", ["finder", "transformer"])
def test_tampering_with_the_kernel_scores_zero_and_says_the_tests_did_not_run(graded, name, student):
    rows = graded["rows"]
    assert _score(rows, name, student) == 0
    tasks = _tasks(rows, name, student)
    for grade_id in ("task1_check", "task2_check", "task4_check"):
        assert tasks[grade_id].startswith("tests did not run (0/2)"), tasks
    kind = "import system" if student == "finder" else "dynamic code" if name != "03_readout" else "ipython"
    assert f"task1_code: {kind}" in rows[(name, student)]["flags"]


def test_a_kernel_that_exits_scores_zero_and_says_the_tests_did_not_run(graded):
    row = graded["rows"][(EXERCISES[-1], "exits")]
    assert row["status"].startswith("tests did not run: the kernel exited") and float(row["raw_score"]) == 0
    assert all(row[g].startswith("tests did not run (0/") for g in POINTS), row
    page = next((graded["dir"] / "feedback" / "exits" / EXERCISES[-1]).glob("*.html")).read_text(encoding="utf-8")
    assert "the tests did not run" in page


def test_a_stuck_notebook_is_not_graded_and_stops_no_one(graded):
    if "05_convolution" not in EXERCISES:
        pytest.skip("exercise 05 not in this run")
    rows, course_dir = graded["rows"], graded["dir"]
    stuck = rows[("05_convolution", "stuck")]
    assert stuck["status"] == "not graded: kernel ignored the interrupt" and stuck["raw_score"] == ""
    assert stuck["task1_check"].startswith("kernel ignored the interrupt")
    page = (course_dir / "feedback" / "stuck" / "05_convolution" / "05_convolution.html").read_text(encoding="utf-8")
    assert "could not be graded" in page
    for name in EXERCISES:
        for student in ("perfect", "untouched", "bugs", "cheats", "finder", "transformer"):
            assert rows[(name, student)]["status"] == "graded", (name, student)
            assert list((course_dir / "feedback" / student / name).glob("*.html")), (name, student)
    other = [n for n in EXERCISES if n != "05_convolution"]
    assert all(rows[(n, "stuck")]["status"] == "not submitted" for n in other)


def test_feedback_shows_earned_hints_and_verdicts_not_the_hidden_tests(graded):
    name = EXERCISES[-1]
    html = next((graded["dir"] / "feedback" / "bugs" / name).glob("*.html")).read_text(encoding="utf-8")
    assert "hidden tests: their verdicts" in html and "not quite" in html and "tl-verdicts" in html
    for secret in ("mark_prediction", "correct=", "hidden_check(", "explanation="):
        assert secret not in html, secret
    page = next((graded["dir"] / "feedback" / "transformer" / name).glob("*.html")).read_text(encoding="utf-8")
    assert "tests did not run" in page


def test_the_grade_step_prints_its_time(graded):
    assert any(line.startswith("grade step: ") and " s for " in line for line in graded["log"])


def test_no_key_or_solution_in_the_release_or_the_package(graded):
    release = graded["dir"] / "release"
    for folder in (release, ROOT / "tl_minimal"):
        found = [p for p in folder.rglob("*") if "answer_key" in p.name or "solutions" in p.name]
        assert not found, found
    for path in release.rglob("*.ipynb"):
        text = path.read_text(encoding="utf-8")
        for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN", "mark_prediction", "hidden_check", "correct="):
            assert secret not in text, (path, secret)


# exercise 01: the plain flow
def test_release_reads_like_the_self_study_blank(graded):
    blank = json.loads((ROOT / "notebooks" / "exercises" / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    release = graded["release"]
    assert ["".join(c["source"]) for c in release["cells"]] == ["".join(c["source"]) for c in blank["cells"]]
    text = json.dumps(release)
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "mark_prediction", "0.065536", "Model answer"):
        assert secret not in text
    assert all(not c.get("outputs") for c in release["cells"] if c["cell_type"] == "code")
    assert (graded["dir"] / "zips" / f"{NAME}.zip").is_file()


def test_collect_names_bad_submissions_and_files_the_rest(graded):
    problems = "\n".join(graded["problems"])
    assert "not_a_notebook" in problems and "not a notebook" in problems
    assert "deleted_cell" in problems and "task2_check" in problems
    filed = sorted(p.parts[-3] for p in graded["written"] if p.parts[-2] == NAME)
    assert filed == ["blank", "broken", "mistakes", "solution"]


def test_grades_in_the_csv(graded):
    with graded["csv"].open(encoding="utf-8", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f) if row["assignment"] == NAME}
    auto = sum(POINTS.values())
    expected = {"solution": auto, "blank": 0, "mistakes": POINTS["task1_check"] + POINTS["task2_check"],
                "broken": POINTS["task3_check"] + POINTS["task4_check"]}  # task 1 raises, task 2 never ends
    assert {s: float(rows[s]["raw_score"]) for s in expected} == pytest.approx(expected)
    assert all(float(rows[s]["max_score"]) == auto + 2 for s in expected)  # the discussion is graded by hand


def test_feedback_carries_the_hints_and_errors(graded):
    feedback = graded["dir"] / "feedback"
    mistakes = (next(feedback.glob(f"mistakes/{NAME}/*.html"))).read_text(encoding="utf-8")
    assert "mean memory length" in mistakes and "AssertionError" in mistakes  # the checker's hint, raised
    assert "work out s_0" in mistakes  # the hidden test's hint for the wrong prediction
    broken = (next(feedback.glob(f"broken/{NAME}/*.html"))).read_text(encoding="utf-8")
    assert "ZeroDivisionError" in broken and "CellTimeoutError" in broken


def test_bad_input_says_which_and_exits_non_zero(tmp_path, graded, capsys):
    assert course.main(["grade", str(tmp_path / "missing")]) == 2
    assert "not a course directory" in capsys.readouterr().err
    assert course.main(["grade", str(graded["dir"]), "--exercise", "09_nothing"]) == 2
    assert "unknown exercise 09_nothing" in capsys.readouterr().err
    assert course.main(["collect", str(graded["dir"]), str(tmp_path / "nowhere")]) == 2
    assert "no submissions" in capsys.readouterr().err
    assert course.main(["collect", str(graded["dir"]), str(graded["inbox"])]) == 1  # files the rest
    err = capsys.readouterr().err
    assert "not_a_notebook" in err and "not a notebook" in err and "task2_check" in err
