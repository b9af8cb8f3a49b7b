"""The notebooks' Time lines and the learning paths are read from a measure, and every lesson fits a sitting.

``tl_research.notebook_time`` counts reading from the committed notebooks and takes the run time from
``docs/notebook_cost.json`` (measured by ``tl_research.notebook_cost``). These tests fail when a Time
line, notebook 00's learning path or the README's is not what the measure says, or when a lesson notebook
needs more than one sitting (60 minutes) and is not in the ratchet ``notebook_time.OVER_60``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tl_research import notebook_time

ROOT = Path(__file__).resolve().parents[2]


def test_every_time_line_and_learning_path_is_read_from_the_measure():
    stale = notebook_time.stale(ROOT)
    assert not stale, (f"stale Time lines or learning paths: {[p.relative_to(ROOT).as_posix() for p in stale]}; "
                       "run `python -m tl_research.notebook_time --write` (after remeasuring with "
                       "`python -m tl_research.notebook_cost <notebook>` if the notebook's code changed)")


def test_every_notebook_and_solution_has_a_measured_run():
    costs = notebook_time.load_costs(ROOT)
    wanted = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))]
    wanted += [p.relative_to(ROOT).as_posix()
               for p in sorted((ROOT / "notebooks" / "exercises" / "solutions").glob("*.ipynb"))]
    missing = [w for w in wanted if w not in costs]
    assert not missing, f"no measured run for {missing}"
    for name in wanted:
        cost = costs[name]
        assert cost["mode"] == "default" and cost["wall_s"] > 0 and cost["cpu_s"] > 0, (name, cost)


def test_the_lessons_over_one_sitting_are_exactly_the_ratchet():
    """Every lesson (not 08, not an **Optional.** notebook) fits 60 minutes, except those named in OVER_60.

    The set must be equal, not merely contained: a lesson that goes over fails, and so does one that was
    brought under while OVER_60 still names it (issue 35: the ratchet only shrinks).
    """
    rows = notebook_time.notebook_times(ROOT)
    over = notebook_time.over_limit(rows)
    assert set(over) == notebook_time.OVER_60, (
        f"lessons over {notebook_time.ONE_SITTING_MIN} min: {over}; OVER_60 = {sorted(notebook_time.OVER_60)}. "
        "Split a new one or move its plotting to the views; remove a fixed one from OVER_60")
    assert not notebook_time.sitting_problems(rows)


def test_optional_notebooks_are_marked_and_exempt(tmp_path):
    rows = [{"name": "01_a", "total_min": 61, "optional": False}, {"name": "02_b", "total_min": 90, "optional": True},
            {"name": "03_c", "total_min": 60, "optional": False}]
    assert notebook_time.over_limit(rows) == {"01_a": 61}
    problems = notebook_time.sitting_problems(rows)
    assert any("01_a is 61 min" in p for p in problems)  # named with its minutes
    nb = {"cells": [{"cell_type": "markdown", "source": ["# 09 A study\n", "\n", "**Optional.** Beyond the path.\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "09_study.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    assert notebook_time.is_optional(tmp_path / "09_study.ipynb")
    nb["cells"][0]["source"] = ["# 09 A lesson\n", "\n", "Not **Optional.** at a line's start.\n"]
    (tmp_path / "09_lesson.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    assert not notebook_time.is_optional(tmp_path / "09_lesson.ipynb")
    assert notebook_time.is_optional(ROOT / "notebooks" / "08_speed.ipynb")


def test_the_measure_counts_words_code_and_figures(tmp_path):
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# A title\n", "\n", "**Time.** About 90 minutes: ignored words here.\n",
                                            "\n", "six words of prose come here"]},
        {"cell_type": "code", "source": ["# a comment\n", "x = 1\n", "\n", "print(x)"],
         "outputs": [{"output_type": "display_data", "data": {"image/png": "..."}}]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "00_tiny.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    r = notebook_time.reading(path)
    assert (r["words"], r["code_lines"], r["figures"]) == (3 + 6, 2, 1)  # "# A title" + 6; the Time line not counted
    assert r["reading_min"] == round(9 / 100 + 2 / 4 + 0.5, 1)


def test_a_missing_measure_is_a_clear_error(tmp_path):
    (tmp_path / "notebooks").mkdir()
    with pytest.raises(FileNotFoundError, match="notebook_cost"):
        notebook_time.notebook_times(tmp_path)


def test_implementation_notes_are_not_counted(tmp_path):
    """Words inside a collapsed "Implementation note", and a code cell tagged as one, are asides (issue 52)."""
    note = ["<details><summary>Implementation note: float32 sums</summary>\n", "\n",
            "Many words of numerics that a first read skips, with $\\log\\lambda$ in them.\n", "\n", "</details>\n"]
    other = ["<details><summary>Show the answer</summary>\n", "\n", "four words still count\n", "\n", "</details>\n"]
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["five words before the note\n", "\n", *note, "\n", "two after"]},
        {"cell_type": "markdown", "source": other},
        {"cell_type": "code", "metadata": {"tags": ["implementation-note"]}, "source": ["x = 1\n", "y = 2"],
         "outputs": [{"output_type": "display_data", "data": {"image/png": "..."}}]},
        {"cell_type": "code", "metadata": {}, "source": ["z = 3"], "outputs": []},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "00_notes.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    r = notebook_time.reading(path)
    # another <details> (not an implementation note) counts in full, its tags included
    assert (r["words"], r["code_lines"], r["figures"]) == (5 + 2 + len("".join(other).split()), 1, 0)


def test_the_lessons_notes_are_well_formed():
    """Every implementation note of a notebook opens and closes in one Markdown cell, with the blank lines
    MyST and JupyterLab need to render the Markdown (and maths) inside it."""
    bad = []
    for ipynb in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        for number, cell in enumerate(json.loads(ipynb.read_text(encoding="utf-8"))["cells"]):
            text = "".join(cell["source"])
            if cell["cell_type"] != "markdown" or "Implementation note" not in text:
                continue
            opened = text.count("<summary>Implementation note")
            notes = notebook_time.IMPLEMENTATION_NOTE.findall(text)
            if len(notes) != opened or any(not re.match(r"<details><summary>Implementation note\b[^\n]*</summary>\n\n",
                                                        n) or not n.endswith("\n\n</details>") for n in notes):
                bad.append(f"{ipynb.name}, cell {number}")
    assert not bad, f"notes not of the form '<details><summary>Implementation note: ...</summary>', blank line, " \
                    f"text, blank line, '</details>': {bad}"
