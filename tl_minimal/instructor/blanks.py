"""The solution markers: what a solutions notebook hides from students, and how.

The solutions (``notebooks/exercises/solutions/*.py``, jupytext percent format) are the single
source of nbgrader's release (:func:`blank_cell`) and of the committed self-study blanks (written by
the maintainers' ``python -m tl_research.blanks``, with these same rules). The markers are comments,
so a solutions file is an ordinary notebook:

    ### BEGIN SOLUTION          these lines, through
    ### END SOLUTION            this one, are removed (nbgrader's solution region)
    ### BLANK: <code>           becomes "<code>" (same indentation) in the blank
    ### BEGIN HIDDEN TESTS      these lines, through
    ### END HIDDEN TESTS        this one, are removed (nbgrader's hidden tests: the graded checks)
    ... <!-- solutions only --> a (markdown) line ending so is removed
"""

from __future__ import annotations

import re
from pathlib import Path

BEGIN, END, BLANK, ONLY = "### BEGIN SOLUTION", "### END SOLUTION", "### BLANK:", "<!-- solutions only -->"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def blank_lines(lines: list[str], empty: str = "#", keep_hidden: bool = False) -> tuple[list[str], bool]:
    """Apply the markers to the lines of one cell; return (blank lines, whether a solution region was found).

    ``empty`` is an empty markdown line as written in these lines: "#" in a percent script,
    "" in a notebook cell's own source. ``keep_hidden`` leaves hidden-test regions in place (for
    nbgrader, which must record them before its own ClearHiddenTests step removes them).
    """
    out, inside, hidden, found = [], False, False, False
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if keep_hidden and (hidden or text == BEGIN_HIDDEN) and not inside:
            hidden = text != END_HIDDEN and (hidden or text == BEGIN_HIDDEN)
            out.append(line)
        elif text == BEGIN or text == BEGIN_HIDDEN:
            if inside or hidden:
                raise ValueError(f"line {number}: {text} inside another marked region")
            inside, hidden, found = text == BEGIN, text == BEGIN_HIDDEN, found or text == BEGIN
        elif text == END or text == END_HIDDEN:
            if not (inside if text == END else hidden):
                raise ValueError(f"line {number}: {text} without its BEGIN line")
            inside = hidden = False
        elif inside or hidden:
            continue
        elif line.rstrip().endswith(ONLY):
            if out and out[-1] == empty and number < len(lines) and lines[number] == empty:
                out.pop()  # do not leave two empty markdown lines where the note was
        elif text.startswith(BLANK):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + text[len(BLANK):].strip())
        else:
            out.append(line)
    if inside or hidden:
        raise ValueError(f"{BEGIN if inside else BEGIN_HIDDEN} without its END line")
    return out, found


def blank_cell(source: str, keep_hidden: bool = False) -> tuple[str, bool]:
    """One notebook cell's source, blanked (the nbgrader release's preprocessor calls this)."""
    lines, found = blank_lines(source.split("\n"), empty="", keep_hidden=keep_hidden)
    return "\n".join(lines), found


def blank_path(solution: Path) -> Path:
    """notebooks/exercises/solutions/01_x_solutions.py -> notebooks/exercises/01_x.py"""
    return solution.parent.parent / re.sub(r"_solutions(?=\.py$)", "", solution.name)
