"""``course_reports.json`` is what the research package computes from the committed results files now:
the tables and plot points notebooks 06b and 07 show cannot drift from the files they come from."""

from __future__ import annotations

import json

from tl_minimal import results
from tl_research.results import render
from tl_research.results.__main__ import main


def test_the_committed_reports_equal_a_fresh_render():
    committed = (results.results_dir() / results.files.REPORTS).read_text(encoding="utf-8")
    assert committed == render.render(), "course_reports.json is stale: run python -m tl_research.results render"
    assert main(["render", "--check"]) == 0


def test_the_reports_hold_the_tables_and_points_the_lessons_read():
    reports = json.loads(render.render())["reports"]
    assert reports["tables"]["lm_matched_width"]["markdown"].startswith("| model |")
    family = reports["family_80"]
    assert len(family["markdown"].splitlines()) == 2 + len(family["rows"]) and len(family["seeds"]) >= 5
    for row in family["rows"]:  # every variant against both yardsticks, none against itself
        assert {y for y, d in row["vs"].items() if d is None} <= {row["variant"]}
        assert all(len(d["differences"]) == len(family["seeds"]) for d in row["vs"].values() if d)
    assert {p["variant"] for p in reports["mqar"]["points"]} >= set(reports["mqar"]["order"])
