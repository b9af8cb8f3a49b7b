"""Make the blank exercise notebooks from the solutions, so the two can never drift apart.

The solutions (``notebooks/exercises/solutions/*.py``, jupytext percent format) are the source.
Three markers, all comments, so a solutions file is an ordinary notebook:

    ### BEGIN SOLUTION          these lines, through
    ### END SOLUTION            this one, are removed from the blank notebook
    ### BLANK: <code>           becomes "<code>" (same indentation) in the blank notebook
    ... <!-- solutions only --> a (markdown) line ending so is removed from the blank notebook

Run ``python -m tl_minimal.exercises.blanks`` to rewrite ``notebooks/exercises/*.py`` from the
solutions (then ``make sync``, or jupytext, for the .ipynb). tests/test_exercises.py checks that
the committed blanks are exactly what this produces.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

BEGIN, END, BLANK, ONLY = "### BEGIN SOLUTION", "### END SOLUTION", "### BLANK:", "<!-- solutions only -->"


def make_blank(source: str) -> str:
    """The blank version of one solutions notebook's percent-format text."""
    out, inside = [], False
    lines = source.splitlines()
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if text == BEGIN:
            if inside:
                raise ValueError(f"line {number}: {BEGIN} inside another solution block")
            inside = True
        elif text == END:
            if not inside:
                raise ValueError(f"line {number}: {END} without {BEGIN}")
            inside = False
        elif inside:
            continue
        elif line.rstrip().endswith(ONLY):
            if out and out[-1] == "#" and number < len(lines) and lines[number] == "#":
                out.pop()  # do not leave two empty markdown lines where the note was
            continue
        elif text.startswith(BLANK):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + text[len(BLANK):].strip())
        else:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} without {END}")
    return "\n".join(out) + "\n"


def blank_path(solution: Path) -> Path:
    """notebooks/exercises/solutions/01_x_solutions.py -> notebooks/exercises/01_x.py"""
    return solution.parent.parent / re.sub(r"_solutions(?=\.py$)", "", solution.name)


def write_blanks(folder: Path) -> list[Path]:
    """Rewrite every blank notebook script under ``folder`` (notebooks/exercises) from its solutions."""
    written = []
    for solution in sorted((folder / "solutions").glob("*_solutions.py")):
        target = blank_path(solution)
        target.write_text(make_blank(solution.read_text()))
        written.append(target)
    return written


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("notebooks/exercises")
    for path in write_blanks(root):
        print("wrote", path)
