"""Reading the committed result files: one results file (:func:`load`), or one report (:func:`report`).

A results file holds the runs of one suite (``protocol`` and ``runs``). A report is what a required
lesson shows from many of them (a table, the points of a plot): the research package computes each one
from the results files and writes them all into ``data/results/course_reports.json``.

    rows = report("family_80")["rows"]     # notebook 06b's family table, one dict per variant
"""

from __future__ import annotations

import json
from pathlib import Path

from ..course.files import results_dir

REPORTS = "course_reports.json"
RENDER = "python -m tl_research.results render"  # the command that rewrites the reports from the results files


def load(path) -> dict:
    """One results file as a dict; a clear error when it is missing or not a results file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no results file {path}: run the command in data/results/run_all.sh")
    data = json.loads(path.read_text(encoding="utf-8"))
    if "runs" not in data or "protocol" not in data:
        raise ValueError(f"{path} is not an experiments results file (needs 'protocol' and 'runs')")
    return data


def report(name: str):
    """The report ``name`` of ``course_reports.json``; a clear error naming the file and ``RENDER``."""
    path = results_dir() / REPORTS
    if not path.is_file():
        raise FileNotFoundError(f"no report file {path}: write it with `{RENDER}`")
    reports = json.loads(path.read_text(encoding="utf-8")).get("reports")
    if not isinstance(reports, dict):
        raise ValueError(f"{path} has no 'reports' object (an old shape?): rewrite it with `{RENDER}`")
    if name not in reports:
        raise KeyError(f"{path} has no report {name!r} (it has {sorted(reports)}): rewrite it with `{RENDER}`")
    return reports[name]
