"""Grading that a cheat cannot pass and one bad notebook cannot stop (issue 34's "Done when").

Three exercises (02, 03, 05) are released into one course and graded through the instructor's
command, each with a perfect submission, an untouched one, one with a subtle bug in every task
(a hidden-test-only bug where one exists: ``.squeeze()`` without its dim, a leak only at t >= 4),
and one with the cheats a TA found (graded mode switched off from a cell, the checks replaced by
no-ops, the expected value read from the checker's frame, the answer key read through
``tl_minimal.__file__``, the library's reference returned). One perfect submission also had a check
cell's metadata edited (collect restores it and names the student), and one notebook of exercise
05 runs a loop that swallows the interrupt: it is marked "not graded" with its reason, and
everyone else is graded with feedback.

nbgrader executes every notebook (3 releases, 13 submissions, each graded and given feedback on its
own). Measured: 15 min 51 s on a 2-core machine shared with three other sessions' work, so the test
is marked ``slow``; run it with ``--basetemp`` outside /tmp/pytest-of-<user> when other pytest runs
share the machine (they rotate that folder away). ``TL_TEST_EXERCISES=05_convolution`` runs one
exercise. Skipped without nbgrader (the ``course`` extra).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason='the course extra is missing: pip install -e ".[course]"')

from tl_minimal.instructor import course

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "exercises" / "solutions"
POINTS = {"task1_check": 2, "task2_check": 2, "task3_check": 1, "task4_check": 2}
EXERCISES = os.environ.get("TL_TEST_EXERCISES", "02_pair_memory,03_readout,05_convolution").split(",")

# one subtle bug per task: (text in the solution's answer cell, what replaces it)
BUGS = {
    "02_pair_memory": {
        "task1_code": ("return gam_t * P_prev + (1 - gam_t) * outer",
                       "return gam_t * P_prev + (1 - gam_t) * outer.transpose(-1, -2)"),
        "task2_code": ("torch.cat([torch.zeros_like(s[:, :1]), s[:, :-1]], dim=1)", "s"),
        "task3_answer": ('my_prediction = "c"', 'my_prediction = "b"'),
        "task4_code": ("torch.prod(gam[tau + 1 : t + 1])", "torch.prod(gam[tau : t + 1])"),
    },
    "03_readout": {  # task 1: right on the visible sizes, wrong when B = H = 1 (the hidden tests)
        "task1_code": ('return torch.einsum("bhij,bhi->bhj", P, q_left) * q_right',
                       'return (torch.einsum("bhij,bhi->bhj", P, q_left) * q_right).unsqueeze(-2).squeeze()'),
        "task2_code": ("        P = g * P + (1 - g) * s_prev[:, t].unsqueeze(-1) * b[:, t].unsqueeze(-2)  # write P_t\n"
                       "        out.append(readout_step(P, q_left[:, t], q_right[:, t]))  # then read it\n",
                       "        out.append(readout_step(P, q_left[:, t], q_right[:, t]))  # read first: off by one\n"
                       "        P = g * P + (1 - g) * s_prev[:, t].unsqueeze(-1) * b[:, t].unsqueeze(-2)\n"),
        "task3_answer": ('my_prediction = "b"', 'my_prediction = "c"'),
        "task4_code": ("for tau in range(t + 1):", "for tau in range(T):"),
    },
    "05_convolution": {  # task 1: d hard-coded to the visible checks' 3; task 4 stops before a late leak
        "task1_code": ("x.new_zeros(x.shape[0], k - 1, x.shape[2])", "x.new_zeros(x.shape[0], k - 1, 3)"),
        "task2_code": ("return F.gelu(pre)", 'return F.gelu(pre, approximate="tanh")'),
        "task3_answer": ('my_prediction = "c"', 'my_prediction = "b"'),
        "task4_code": ("for t in range(T - 1):", "for t in range(min(T - 1, 3)):"),
    },
}

# the cheats: task 1 switches graded mode off and replaces the checks (its own code is wrong),
# task 2 returns the expected value read from the checker's frame, task 3 reads the answer key
# through tl_minimal.__file__, task 4 returns the library's reference
CHEAT_1 = ('import os\nos.environ["TL_GRADED"] = "0"\n'
           "for _n in dir(ex):\n    if _n.startswith('check_') or _n == 'mark_prediction':\n"
           "        setattr(ex, _n, lambda *a, **k: None)\n")
FRAME = ("import inspect\n\n\ndef {name}(*args, **kwargs):\n"
         "    frame = inspect.currentframe().f_back\n    return frame.f_locals.get('want')\n")
KEY = ("import json, pathlib, tl_minimal\n"
       "_key = pathlib.Path(tl_minimal.__file__).parents[1] / 'notebooks' / 'exercises' / 'answer_key.json'\n"
       "my_prediction = json.loads(_key.read_text())['{task}']['correct'] if _key.is_file() else 'a'\n")
FUNCTIONS = {"02_pair_memory": ("pair_memory_step", "pair_memory_from_states", "unrolled_weights_row"),
             "03_readout": ("readout_step", "readout_loop", "readout_scores"),
             "05_convolution": ("causal_pad", "causal_conv", "leaks_future")}
REFERENCE = {
    "02_pair_memory": "from tl_minimal.pair_memory import unrolled_weights\n\n\ndef unrolled_weights_row(gam, t):\n"
                      "    w, _ = unrolled_weights(gam[None, :, None])\n    return w[0, t, :, 0]\n",
    "03_readout": "from tl_minimal.exercises.readout import scores_reference as readout_scores\n",
    "05_convolution": "from tl_minimal.exercises.conv import LEAKS\n\n\ndef leaks_future(fn, T, d):\n"
                      "    return True\n",
}


def _cells(notebook: dict) -> dict:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in notebook["cells"] if "nbgrader" in c["metadata"]}


def _text(cell) -> str:
    return "".join(cell["source"])


def _submission(release: dict, source: dict, **answers: str) -> dict:
    notebook = json.loads(json.dumps(release))
    solved = _cells(source)
    for grade_id, cell in _cells(notebook).items():
        if cell["metadata"]["nbgrader"].get("solution") and cell["cell_type"] == "code":
            cell["source"] = answers.get(grade_id, _text(solved[grade_id]))
    return notebook


def _bugged(release, source, name):
    solved = _cells(source)
    answers = {}
    for grade_id, (old, new) in BUGS[name].items():
        assert old in _text(solved[grade_id]), (name, grade_id, old)
        answers[grade_id] = _text(solved[grade_id]).replace(old, new)
    return _submission(release, source, **answers)


def _cheats(release, source, name):
    step = FUNCTIONS[name][0]
    wrong = f"def {step}(*args):\n    return args[0]\n"
    return _submission(release, source, task1_code=CHEAT_1 + "\n\n" + wrong,
                       task2_code=FRAME.format(name=FUNCTIONS[name][1]),
                       task3_answer=KEY.replace("{task}", name[:2] + ".3"), task4_code=REFERENCE[name])


def _write(folder: Path, student: str, name: str, notebook: dict) -> None:
    path = folder / student / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook), encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("TL_SMOKE", "TL_CELL_TIMEOUT", "TL_INTERRUPT_GRACE")}
    os.environ.update(TL_SMOKE="1", TL_CELL_TIMEOUT="40", TL_INTERRUPT_GRACE="5")
    root = tmp_path_factory.mktemp("grading")
    course_dir = root / "course"
    args = ["release", str(course_dir), "--solutions", str(SOLUTIONS)]
    assert course.main([*args, *(a for n in EXERCISES for a in ("--exercise", n))]) == 0
    inbox, releases = root / "inbox", {}
    for name in EXERCISES:
        release = json.loads((course_dir / "release" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
        source = json.loads((course_dir / "source" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
        releases[name] = release
        perfect = _submission(release, source)
        if name == EXERCISES[0]:  # a check cell marked as an answer cell: collect restores it
            _cells(perfect)["task2_check"]["metadata"]["nbgrader"]["solution"] = True
        _write(inbox, "perfect", name, perfect)
        _write(inbox, "untouched", name, release)
        _write(inbox, "bugs", name, _bugged(release, source, name))
        _write(inbox, "cheats", name, _cheats(release, source, name))
    if "05_convolution" in EXERCISES:  # a loop that swallows the interrupt
        stuck = ("while True:\n    try:\n        while True:\n            pass\n"
                 "    except:  # noqa: E722\n        pass\n")
        name = "05_convolution"
        source = json.loads((course_dir / "source" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
        _write(inbox, "stuck", name, _submission(releases[name], source, task2_code=stuck))
    _, problems, repairs = course.collect(course_dir, inbox)
    lines = []
    done = course.grade(course_dir, log=lines.append)
    csv_path = root / "grades.csv"
    assert course.main(["export", str(course_dir), "--to", str(csv_path)]) == 0
    with csv_path.open(encoding="utf-8", newline="") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    yield {"dir": course_dir, "problems": problems, "repairs": repairs, "done": done, "rows": rows, "log": lines}
    for key, value in saved.items():
        os.environ.pop(key) if value is None else os.environ.update({key: value})


def _score(rows, name, student):
    return float(rows[(name, student)]["raw_score"])


def _cell_scores(course_dir: Path, name: str, student: str) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(name, name, student)
        return {g.name: g.score for g in notebook.grades if g.name in POINTS}


def test_collect_restores_edited_grade_cells_and_names_the_student(graded):
    assert not graded["problems"]
    assert len(graded["repairs"]) == 1 and graded["repairs"][0].startswith(f"perfect ({EXERCISES[0]})")
    assert "task2_check: metadata" in graded["repairs"][0]


@pytest.mark.parametrize("name", EXERCISES)
def test_perfect_full_untouched_zero_bugs_lose_each_task(graded, name):
    rows, auto = graded["rows"], sum(POINTS.values())
    assert _score(rows, name, "perfect") == auto and not rows[(name, "perfect")]["flags"]
    assert _score(rows, name, "untouched") == 0
    assert _cell_scores(graded["dir"], name, "bugs") == dict.fromkeys(POINTS, 0)  # each task loses its points
    assert rows[(name, "bugs")]["status"] == "graded" and not rows[(name, "bugs")]["flags"]


@pytest.mark.parametrize("name", EXERCISES)
def test_every_cheat_scores_zero_or_is_flagged(graded, name):
    rows = graded["rows"]
    scores = _cell_scores(graded["dir"], name, "cheats")
    assert scores["task1_check"] == 0 and scores["task2_check"] == 0  # graded mode and the checks survive
    flags = rows[(name, "cheats")]["flags"]
    for kind in ("task1_code: environment", "task1_code: monkeypatch", "task1_code: checker",
                 "task2_code: frames", "task3_answer: key file", "task4_code: "):
        assert kind in flags, (kind, flags)
    assert "task4_code: checker" in flags or "task4_code: reference" in flags
    assert any(name in line and "cheats" in line and "flagged" in line for line in graded["log"])


def test_a_stuck_notebook_is_not_graded_and_stops_no_one(graded):
    if "05_convolution" not in EXERCISES:
        pytest.skip("exercise 05 not in this run")
    rows, course_dir = graded["rows"], graded["dir"]
    stuck = rows[("05_convolution", "stuck")]
    assert stuck["status"] == "not graded: kernel ignored the interrupt" and stuck["raw_score"] == ""
    for name in EXERCISES:
        for student in ("perfect", "untouched", "bugs", "cheats"):
            assert rows[(name, student)]["status"] == "graded", (name, student)
            assert list((course_dir / "feedback" / student / name).glob("*.html")), (name, student)
    assert rows[("02_pair_memory", "stuck")]["status"] == "not submitted" if "02_pair_memory" in EXERCISES else True


def test_feedback_shows_earned_hints_not_the_hidden_tests(graded):
    name = EXERCISES[-1]
    html = next((graded["dir"] / "feedback" / "bugs" / name).glob("*.html")).read_text(encoding="utf-8")
    assert "hidden tests: their verdicts" in html and "not quite" in html
    for secret in ("mark_prediction", "correct=", "hidden_tests()", "explanation="):
        assert secret not in html, secret
