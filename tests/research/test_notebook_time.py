"""The notebooks' Time lines and the learning paths are read from a measure, and every lesson fits a sitting.

``tl_minimal.experiments.notebook_time`` counts reading from the committed notebooks and takes the run time from
``docs/notebook_cost.json`` (measured by ``tl_minimal.experiments.notebook_cost``). These tests fail when a Time
line, notebook 00's learning path or the README's is not what the measure says, or when a notebook
00-06 needs more than one sitting.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tl_minimal.experiments import notebook_time

ROOT = Path(__file__).resolve().parents[2]


def test_every_time_line_and_learning_path_is_read_from_the_measure():
    stale = notebook_time.stale(ROOT)
    assert not stale, (f"stale Time lines or learning paths: {[p.relative_to(ROOT).as_posix() for p in stale]}; "
                       "run `python -m tl_minimal.experiments.notebook_time --write` (after remeasuring with "
                       "`python -m tl_minimal.experiments.notebook_cost <notebook>` if the notebook's code changed)")


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


@pytest.mark.parametrize("row", [r for r in notebook_time.notebook_times(ROOT) if r["name"][:2] <= "06"
                                 and "total_min" in r], ids=lambda r: r["name"])
def test_each_concept_notebook_fits_one_sitting(row):
    assert row["total_min"] <= notebook_time.ONE_SITTING_MIN, (
        f"{row['name']}: {row['total_min']} min by the measure ({row['reading_min']} reading + "
        f"{row['run_s']} s run); split it or move a part to its exercise")


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
    assert r["reading_min"] == round(9 / 150 + 2 / 10 + 0.5, 1)


def test_a_missing_measure_is_a_clear_error(tmp_path):
    (tmp_path / "notebooks").mkdir()
    with pytest.raises(FileNotFoundError, match="notebook_cost"):
        notebook_time.notebook_times(tmp_path)
