"""Grades computed where a student's code cannot reach (issues 34 and 53, their "Done when").

Three exercises (03, 05, 06) are released into one course and graded through the instructor's
command. Each has a perfect submission, an untouched one, one with a subtle bug in every task
(hidden-shape bugs where one exists: ``.squeeze()`` without its dim, d hard-coded, a leak only
at t >= 4; its task 4 test cell also edited, which collect restores) and three that cheat:

    cheats        graded mode switched off and the checks replaced by no-ops, a method of
                  torch.Tensor patched (``type.__setattr__``) so the kernel's comparison passes,
                  every error silenced (``set_custom_exc``), all with wrong code; the expected value
                  read from the checker's frame; the answer key read through ``tl_minimal.__file__``;
                  the library's reference returned
    finder        a finder first on ``sys.meta_path`` serves a fake ``tl_minimal.exercises`` to the
                  hidden cells' fresh import, and ``globals()["e" + "x"]`` rebinds the checker
    transformer   an input transformer makes every later cell ``pass`` (plain in 03, hidden in
                  ``exec(bytes.fromhex(...))`` in 05 and 06)

One perfect submission also had a check cell's metadata edited, one notebook of exercise 06 ends
its kernel (``os._exit``: "tests did not run", 0), and one of exercise 05 runs a loop that
swallows the interrupt: "kernel ignored the interrupt", no score, a feedback page saying so, and
everyone else graded. Tampering scores 0 on every task it touches; fetching
a reference answer scores 0 or is flagged with the matched line; every student gets feedback.

nbgrader executes every notebook (20 submissions, smoke mode), so the test is marked ``slow``;
the grade step's time is printed (``-s``). Measured 2026-12-06 on a 2-core machine shared with
other sessions (load about 4): grade step 263 s for the 20 notebooks (autograde 240 s, the three
verdict processes 5 s, feedback 17 s), the whole test 288 s and 247 s of CPU; the test before
issue 53 (13 notebooks of 02, 03, 05) right after it: 263 s and 229 s of CPU. Run it with
``--basetemp`` outside /tmp/pytest-of-<user> when other pytest runs share the machine.
``TL_TEST_EXERCISES=05_convolution`` runs one exercise. Skipped without nbgrader (the ``course`` extra).
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
EXERCISES = os.environ.get("TL_TEST_EXERCISES", "03_readout,05_convolution,06_kv_gated_fusion").split(",")

# one subtle bug per task: (text in the solution's answer cell, what replaces it)
BUGS = {
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
    "06_kv_gated_fusion": {  # task 1: a squeeze() without its dim; tasks 2 and 4: batch 0 for every batch
        "task1_code": ("return q @ keys.transpose(1, 2)", "return (q @ keys.transpose(1, 2)).squeeze()"),
        "task2_code": ("batch = torch.arange(values.shape[0])[:, None, None]", "batch = 0"),
        "task3_answer": ('my_prediction = "c"', 'my_prediction = "a"'),
        "task4_code": ("position = index.gather(-1, best).squeeze(-1)",
                       "position = index[:1].gather(-1, best[:1]).squeeze(-1)"),
    },
}

# the cheats: task 1 switches graded mode off, replaces the checks, patches a torch.Tensor method the
# kernel's comparison goes through and silences every error (its own code is wrong), task 2 returns the
# expected value read from the checker's frame, task 3 reads the answer key through tl_minimal.__file__,
# task 4 returns the library's reference
CHEAT_1 = ('import os\nimport torch\nos.environ["TL_GRADED"] = "0"\n'
           "for _n in dir(ex):\n    if _n.startswith('check_') or _n == 'mark_prediction':\n"
           "        setattr(ex, _n, lambda *a, **k: None)\n"
           "type.__setattr__(torch.Tensor, 'norm', lambda self, *a, **k: torch.zeros((), dtype=torch.float64))\n"
           "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n")
FRAME = ("import inspect\n\n\ndef {name}(*args, **kwargs):\n"
         "    frame = inspect.currentframe().f_back\n    return frame.f_locals.get('want')\n")
KEY = ("import json, pathlib, tl_minimal\n"
       "_key = pathlib.Path(tl_minimal.__file__).parents[1] / 'notebooks' / 'exercises' / 'answer_key.json'\n"
       "my_prediction = json.loads(_key.read_text())['{task}']['correct'] if _key.is_file() else 'a'\n")
FUNCTIONS = {"03_readout": ("readout_step", "readout_loop", "readout_scores"),
             "05_convolution": ("causal_pad", "causal_conv", "leaks_future"),
             "06_kv_gated_fusion": ("cosine_scores", "topk_read", "top_entry")}
REFERENCE = {
    "03_readout": "from tl_minimal.exercises.readout import scores_reference as readout_scores\n",
    "05_convolution": "from tl_minimal.exercises.conv import LEAKS\n\n\ndef leaks_future(fn, T, d):\n"
                      "    return True\n",
    "06_kv_gated_fusion": "from tl_minimal.exercises.kv_fusion import top_entry\n",
}
# a finder first on sys.meta_path serves a fake checker module to the hidden cells' fresh import
FINDER = r"""import importlib.machinery
import sys
import types


class _Fake:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("tl_minimal.exercises"):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr: (lambda *a, **k: None)
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Fake())
globals()["e" + "x"] = types.SimpleNamespace(**{n: (lambda *a, **k: None) for n in dir(ex) if n.startswith("check")})
"""
# an input transformer: every later cell becomes `pass` (the hidden tests never run)
TRANSFORMER = "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n"


def _transformer(name: str) -> str:
    if name == "03_readout":
        return TRANSFORMER
    return f"exec(bytes.fromhex({TRANSFORMER.encode().hex()!r}))\n"


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
    notebook = _submission(release, source, **answers)
    _cells(notebook)["task4_check"]["source"] = "pass  # the test, edited away\n"  # collect restores it
    return notebook


def _cheats(release, source, name):
    step = FUNCTIONS[name][0]
    wrong = f"def {step}(*args):\n    return args[0]\n"
    return _submission(release, source, task1_code=CHEAT_1 + "\n\n" + wrong,
                       task2_code=FRAME.format(name=FUNCTIONS[name][1]),
                       task3_answer=KEY.replace("{task}", name[:2] + ".3"), task4_code=REFERENCE[name])


def _tampering(release, cheat: str) -> dict:
    """The release with ``cheat`` as the first answer: nothing else written."""
    notebook = json.loads(json.dumps(release))
    _cells(notebook)["task1_code"]["source"] = cheat + "\n\n" + _text(_cells(notebook)["task1_code"])
    return notebook


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
        _write(inbox, "finder", name, _tampering(release, FINDER))
        _write(inbox, "transformer", name, _tampering(release, _transformer(name)))
    exits = _tampering(releases[EXERCISES[-1]], "import os\nos._exit(0)\n")  # a cell that ends the kernel
    _write(inbox, "exits", EXERCISES[-1], exits)
    if "05_convolution" in EXERCISES:  # a loop that swallows the interrupt
        stuck = ("while True:\n    try:\n        while True:\n            pass\n"
                 "    except:  # noqa: E722\n        pass\n")
        name = "05_convolution"
        source = json.loads((course_dir / "source" / name / f"{name}.ipynb").read_text(encoding="utf-8"))
        _write(inbox, "stuck", name, _submission(releases[name], source, task2_code=stuck))
    _, problems, repairs = course.collect(course_dir, inbox)
    lines = []
    done = course.grade(course_dir, log=lines.append)
    print("\n".join(line for line in lines if "s for" in line or "autograde" in line or "feedback" in line))
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


def _tasks(rows, name, student) -> dict:
    """test cell -> its status in the CSV ("<status> (<score>/<points>): <why>")."""
    return {g: rows[(name, student)][g] for g in POINTS}


def test_collect_restores_edited_grade_cells_and_names_the_student(graded):
    assert not graded["problems"]
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
