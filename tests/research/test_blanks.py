"""The blank-notebook writer (``python -m tl_research.blanks``): the committed self-study blanks and
answer key are exactly what it makes from the solutions, and its two rules of its own hold.

The markers' rules themselves (tl_minimal.instructor.blanks, shared with nbgrader's release) and the
blanks' behaviour for a student are tested in tests/course/test_exercises.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tl_minimal.exercises.answers import KEY_FILE, seal
from tl_minimal.instructor.blanks import blank_path
from tl_research.blanks import ANSWER_STUB, answer_key, make_blank, write_blanks

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "notebooks" / "exercises"
SOLUTIONS = sorted((FOLDER / "solutions").glob("*_solutions.py"))


def _stem(solution: Path) -> str:
    return solution.name.removesuffix("_solutions.py")


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_blank_notebook_is_the_stripped_solution(solution):
    blank = blank_path(solution)
    assert blank.exists(), f"missing {blank.name}: run python -m tl_research.blanks"
    assert blank.read_text(encoding="utf-8") == make_blank(solution.read_text(encoding="utf-8")), (
        f"{blank.name} is out of date: run python -m tl_research.blanks, then python run.py sync")
    for marker in ("BEGIN SOLUTION", "BLANK:", "HIDDEN TESTS", "mark_prediction", "Model answer"):
        assert marker not in blank.read_text(encoding="utf-8")


def test_committed_answer_key_is_the_solutions_sealed():
    assert len(SOLUTIONS) == 6
    committed = json.loads((FOLDER / "solutions" / KEY_FILE).read_text(encoding="utf-8"))
    produced = {k: seal(k, v) for s in SOLUTIONS for k, v in answer_key(s.read_text(encoding="utf-8")).items()}
    assert committed == produced, "answer_key.json is out of date: run python -m tl_research.blanks"


def test_make_blank_turns_model_answers_into_answer_cells():
    source = ("# %% [markdown]\n# Question?\n\n# %% [markdown] tags=[\"solution\"]\n# **Model answer.** 42\n# more\n\n"
              "# %%\nx = 1\n### BEGIN HIDDEN TESTS\nassert x == 1\n### END HIDDEN TESTS\n\n"
              "# %% [markdown] tags=[\"solution\"]\n# last answer\n")
    assert make_blank(source) == ("# %% [markdown]\n# Question?\n\n# %% [markdown] tags=[\"solution\"]\n"
                                  f"# {ANSWER_STUB}\n\n# %%\nx = 1\n\n"
                                  f"# %% [markdown] tags=[\"solution\"]\n# {ANSWER_STUB}\n")


def test_write_blanks_writes_notebooks_without_outputs(tmp_path):
    pytest.importorskip("jupytext")
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "09_toy_solutions.py").write_text(
        "# %%\n### BLANK: answer = None\n### BEGIN SOLUTION\nanswer = 3\n### END SOLUTION\nprint(answer)\n\n"
        "# %% [markdown] tags=[\"solution\"]\n# **Model answer.** three\n", encoding="utf-8")
    written = write_blanks(tmp_path)
    assert [p.name for p in written] == ["09_toy.py", "09_toy.ipynb"]  # no prediction: no answer key
    assert (tmp_path / "09_toy.py").read_text(encoding="utf-8") == (
        f"# %%\nanswer = None\nprint(answer)\n\n# %% [markdown] tags=[\"solution\"]\n# {ANSWER_STUB}\n")
    cells = json.loads((tmp_path / "09_toy.ipynb").read_text(encoding="utf-8"))["cells"]
    assert ["".join(c["source"]) for c in cells] == ["answer = None\nprint(answer)", ANSWER_STUB]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None


def _without_sync_metadata(path: Path) -> dict:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["metadata"].pop("jupytext", None)  # the filters `jupytext --sync` adds when it rewrites a pair
    return notebook


def test_the_command_regenerates_the_committed_files(tmp_path):
    """The whole regeneration, as a maintainer runs it, on a copy: the blanks and the answer key come
    out byte for byte as committed, their notebooks cell for cell (ids, sources, no outputs), metadata
    too but the block a later `jupytext --sync` may add."""
    pytest.importorskip("jupytext")
    copy = tmp_path / "exercises"
    (copy / "solutions").mkdir(parents=True)
    for solution in SOLUTIONS:
        (copy / "solutions" / solution.name).write_bytes(solution.read_bytes())
    written = write_blanks(copy)
    assert len(written) == 2 * len(SOLUTIONS) + 1
    for path in written:
        committed = FOLDER / path.relative_to(copy)
        if path.suffix == ".ipynb":
            assert _without_sync_metadata(path) == _without_sync_metadata(committed), committed.name
        else:
            assert path.read_bytes() == committed.read_bytes(), f"{committed.name}: run python -m tl_research.blanks"
