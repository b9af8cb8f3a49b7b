"""Make the blank exercise notebooks from the solutions, so the two can never drift apart.

The solutions (``notebooks/exercises/solutions/*.py``, jupytext percent format) are the source.
Four markers, all comments, so a solutions file is an ordinary notebook:

    ### BEGIN SOLUTION          these lines, through
    ### END SOLUTION            this one, are removed from the blank notebook
    ### BLANK: <code>           becomes "<code>" (same indentation) in the blank notebook
    ... <!-- solutions only --> a (markdown) line ending so is removed from the blank notebook
    # %% [markdown] tags=["solution"]
                                a whole cell tagged "solution" (the model answers to the "To
                                discuss" prompts) is removed from the blank notebook

Run ``python -m tl_minimal.exercises.blanks`` to rewrite ``notebooks/exercises/*.py`` from the
solutions, and with each its ``.ipynb`` **without outputs**, as a student receives it (``make
sync`` afterwards leaves them so: it keeps the outputs an .ipynb already has, and these have
none). tests/test_exercises.py checks that the committed blanks are exactly what this produces
and that their notebooks carry no outputs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

BEGIN, END, BLANK, ONLY = "### BEGIN SOLUTION", "### END SOLUTION", "### BLANK:", "<!-- solutions only -->"
SOLUTION_TAG = "solution"  # cells tagged so are dropped whole
_TAGS = re.compile(r"\btags=(\[[^\]]*\])")


def is_solution_cell(header: str) -> bool:
    """Is this percent-format cell header (``# %% ... tags=[...]``) a cell tagged "solution"?"""
    found = _TAGS.search(header)
    return bool(found) and SOLUTION_TAG in json.loads(found.group(1))


def make_blank(source: str) -> str:
    """The blank version of one solutions notebook's percent-format text."""
    out, inside, dropping = [], False, False
    lines = source.splitlines()
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if line.startswith("# %%"):
            dropping = is_solution_cell(line)
            if dropping:
                if inside:
                    raise ValueError(f"line {number}: a solution cell starts inside {BEGIN}")
                while out and not out[-1].strip():
                    out.pop()  # the blank lines that separated the dropped cell
                out.append("")
                continue
        if dropping:
            continue
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
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + "\n"


def blank_path(solution: Path) -> Path:
    """notebooks/exercises/solutions/01_x_solutions.py -> notebooks/exercises/01_x.py"""
    return solution.parent.parent / re.sub(r"_solutions(?=\.py$)", "", solution.name)


def write_notebook(script: Path) -> Path:
    """Write ``script``'s .ipynb pair with no outputs and no execution counts (needs jupytext)."""
    import jupytext

    notebook = jupytext.read(script)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"{script.stem}-{number:02d}"  # stable ids: regenerating a blank changes no line it need not
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    target = script.with_suffix(".ipynb")
    jupytext.write(notebook, target)
    return target


def write_blanks(folder: Path, notebooks: bool = True) -> list[Path]:
    """Rewrite every blank notebook script under ``folder`` (notebooks/exercises) from its solutions,
    and (``notebooks=True``) its .ipynb without outputs."""
    written = []
    for solution in sorted((folder / "solutions").glob("*_solutions.py")):
        target = blank_path(solution)
        target.write_text(make_blank(solution.read_text()))
        written.append(target)
        if notebooks:
            written.append(write_notebook(target))
    return written


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("notebooks/exercises")
    for path in write_blanks(root):
        print("wrote", path)
