"""The instructor's flow end to end, in a temporary course directory, without JupyterHub.

release -> the student notebook reads exactly like the self-study blank and holds no answer;
collect -> bad submissions are named, good ones filed; grade (nbgrader autograde, graded mode,
smoke mode) -> the solution gets full marks, the untouched blank zero, typical mistakes the
expected partial marks, code that raises or never ends loses only its cells; export -> CSV.

nbgrader executes every submission, so this test runs one exercise (01, whose tasks build on
each other, so a broken task 1 also shows what happens to task 2): four graded submissions and
two refused ones. Measured: 118 s in a full CI run on a quiet 2-core machine (2026-12-04), 5 min
37 s on one shared with other work (load about 10; each submission 43-45 s, plus 60 s for the cell
that never ends). Skipped without nbgrader (the ``course`` extra).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason='the course extra is missing: pip install -e ".[course]"')

from tl_minimal.instructor import course

pytestmark = pytest.mark.slow  # nbgrader executes every submission: minutes (measured above)
ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "exercises" / "solutions"
NAME = "01_running_state"
POINTS = {"task1_check": 2, "task2_check": 2, "task3_check": 1, "task4_check": 2}  # + 2 by hand (discussion1)


def _cells_by_id(notebook: dict) -> dict:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in notebook["cells"] if "nbgrader" in c["metadata"]}


def _submission(release: dict, source: dict, **answers: str) -> dict:
    """The release with every answer cell solved (from the source), then ``answers`` (grade_id -> code)."""
    notebook = json.loads(json.dumps(release))
    solved = _cells_by_id(source)
    for grade_id, cell in _cells_by_id(notebook).items():
        if cell["metadata"]["nbgrader"].get("solution"):
            cell["source"] = answers.get(grade_id, "".join(solved[grade_id]["source"]))
    return notebook


def _write(folder: Path, student: str, notebook) -> None:
    path = folder / student / f"{NAME}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(notebook if isinstance(notebook, str) else json.dumps(notebook), encoding="utf-8")


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("TL_SMOKE", "TL_CELL_TIMEOUT")}
    os.environ.update(TL_SMOKE="1", TL_CELL_TIMEOUT="60")  # the course command's nbgrader runs inherit them
    root = tmp_path_factory.mktemp("course")
    course_dir = root / "course dir é"  # a space and non-ASCII on the way
    assert course.main(["release", str(course_dir), "--exercise", NAME, "--solutions", str(SOLUTIONS)]) == 0
    release = json.loads((course_dir / "release" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    source = json.loads((course_dir / "source" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    inbox = root / "inbox"
    _write(inbox, "solution", _submission(release, source))
    _write(inbox, "blank", release)
    _write(inbox, "mistakes", _submission(release, source, task3_answer="my_prediction = 0.8 ** 5",
                                          task4_code="def half_life(lam):\n    return 1 / (1 - lam)\n"))
    _write(inbox, "broken", _submission(release, source,
                                        task1_code="def running_state_step(a_t, lam_t, s_prev):\n    return 1 / 0\n",
                                        task2_code="def running_state_loop(a, lam, s0=None):\n    while True:\n"
                                                   "        pass\n"))
    _write(inbox, "not_a_notebook", "these are my answers: 0.0655, c, c, c")
    deleted = _submission(release, source)
    deleted["cells"] = [c for c in deleted["cells"]
                        if c["metadata"].get("nbgrader", {}).get("grade_id") != "task2_check"]
    _write(inbox, "deleted_cell", deleted)
    written, problems, _ = course.collect(course_dir, inbox)
    assert course.main(["grade", str(course_dir)]) == 0
    csv_path = root / "grades.csv"
    assert course.main(["export", str(course_dir), "--to", str(csv_path)]) == 0
    yield {"dir": course_dir, "written": written, "problems": problems, "csv": csv_path, "release": release,
           "inbox": inbox}
    for key, value in saved.items():
        os.environ.pop(key) if value is None else os.environ.update({key: value})


def test_release_reads_like_the_self_study_blank(graded_course):
    blank = json.loads((ROOT / "notebooks" / "exercises" / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    release = graded_course["release"]
    assert ["".join(c["source"]) for c in release["cells"]] == ["".join(c["source"]) for c in blank["cells"]]
    text = json.dumps(release)
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "mark_prediction", "0.065536", "Model answer"):
        assert secret not in text
    assert all(not c.get("outputs") for c in release["cells"] if c["cell_type"] == "code")
    assert (graded_course["dir"] / "zips" / f"{NAME}.zip").is_file()


def test_collect_names_bad_submissions_and_files_the_rest(graded_course):
    problems = "\n".join(graded_course["problems"])
    assert "not_a_notebook" in problems and "not a notebook" in problems
    assert "deleted_cell" in problems and "task2_check" in problems
    assert sorted(p.parts[-3] for p in graded_course["written"]) == ["blank", "broken", "mistakes", "solution"]


def test_grades_in_the_csv(graded_course):
    with graded_course["csv"].open(encoding="utf-8", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    auto = sum(POINTS.values())
    expected = {"solution": auto, "blank": 0, "mistakes": POINTS["task1_check"] + POINTS["task2_check"],
                "broken": POINTS["task3_check"] + POINTS["task4_check"]}  # task 1 raises, task 2 never ends
    assert {s: float(rows[s]["raw_score"]) for s in expected} == pytest.approx(expected)
    assert all(float(rows[s]["max_score"]) == auto + 2 for s in expected)  # the discussion is graded by hand


def test_feedback_carries_the_hints_and_errors(graded_course):
    feedback = graded_course["dir"] / "feedback"
    mistakes = (next(feedback.glob(f"mistakes/{NAME}/*.html"))).read_text(encoding="utf-8")
    assert "mean memory length" in mistakes and "AssertionError" in mistakes  # the checker's hint, raised
    assert "work out s_0" in mistakes  # the hidden test's hint for the wrong prediction
    broken = (next(feedback.glob(f"broken/{NAME}/*.html"))).read_text(encoding="utf-8")
    assert "ZeroDivisionError" in broken and "CellTimeoutError" in broken


def test_bad_input_says_which_and_exits_non_zero(tmp_path, graded_course, capsys):
    assert course.main(["grade", str(tmp_path / "missing")]) == 2
    assert "not a course directory" in capsys.readouterr().err
    assert course.main(["grade", str(graded_course["dir"]), "--exercise", "09_nothing"]) == 2
    assert "unknown exercise 09_nothing" in capsys.readouterr().err
    assert course.main(["collect", str(graded_course["dir"]), str(tmp_path / "nowhere")]) == 2
    assert "no submissions" in capsys.readouterr().err
    assert course.main(["collect", str(graded_course["dir"]), str(graded_course["inbox"])]) == 1  # files the rest
    err = capsys.readouterr().err
    assert "not_a_notebook" in err and "not a notebook" in err and "task2_check" in err
