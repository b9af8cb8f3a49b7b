"""Results a student can read (issue 52, item 2): at most one interval-bearing comparison per paragraph of a
required lesson. A paragraph is a block between blank lines, and each list item is one; an interval is a
bracketed pair ("[-0.079, -0.047]", "[0.42, 1.00]") or a written range ("95% interval 0-52%"). The full tables
with every interval live in the optional companions (07b, 07c) and ``data/results/RECALL_STUDY.md``.
Implementation notes (collapsed ``<details>``) and maths are not counted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tl_research.notebook_time import is_optional

ROOT = Path(__file__).resolve().parents[2]
LESSONS = [p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")) if not is_optional(p)]
NUMBER = r"[-\u2212+]?\d[\d.,]*\s*%?"
INTERVAL = re.compile(rf"\[\s*{NUMBER}\s*,\s*{NUMBER}\s*\]|interval {NUMBER}\s*-\s*{NUMBER}")
PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.) )")  # a blank line, or a list item's start


def crowded(markdown: str) -> list[str]:
    """The paragraphs of ``markdown`` with more than one interval (maths and collapsed notes left out)."""
    text = re.sub(r"<details>.*?</details>|\$\$.*?\$\$|\$[^$\n]+\$", " ", markdown, flags=re.DOTALL)
    return [p.strip() for p in PARAGRAPH.split(text) if len(INTERVAL.findall(p)) > 1]


def test_the_rule_counts_brackets_and_written_ranges():
    assert crowded("A gap of -0.063 [-0.079, -0.047].\n\nAnother, +0.024 [+0.008, +0.041].") == []
    assert len(crowded("-0.063 [-0.079, -0.047] and 0 of 5 seeds (95% interval 0-52%).")) == 1
    assert crowded("- one [0.1, 0.2]\n- two [0.3, 0.4]") == []  # each list item is a paragraph


def test_required_lessons_are_covered():
    names = {p.stem.split("_")[0] for p in LESSONS}
    assert {"00", "06a", "06b", "07"} <= names and not names & {"07b", "07c", "08"}


@pytest.mark.parametrize("ipynb", LESSONS, ids=lambda p: p.stem)
def test_at_most_one_interval_per_paragraph(ipynb):
    cells = json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
    found = [p for c in cells if c["cell_type"] == "markdown" for p in crowded("".join(c["source"]))]
    assert not found, f"{ipynb.name}: paragraphs with more than one interval (keep one; move the rest to " \
                      f"RECALL_STUDY.md or an optional companion): {[p[:120] for p in found]}"
