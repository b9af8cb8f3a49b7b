"""Make the blank exercise notebooks from the solutions, so the two can never drift apart.

The solutions (``notebooks/exercises/solutions/*.py``, jupytext percent format) are the single
source of the self-study blanks made here and of nbgrader's release (same rules,
:func:`blank_cell`). The markers are comments, so a solutions file is an ordinary notebook:

    ### BEGIN SOLUTION          these lines, through
    ### END SOLUTION            this one, are removed (nbgrader's solution region)
    ### BLANK: <code>           becomes "<code>" (same indentation) in the blank
    ### BEGIN HIDDEN TESTS      these lines, through
    ### END HIDDEN TESTS        this one, are removed (nbgrader's hidden tests: the graded checks)
    ... <!-- solutions only --> a (markdown) line ending so is removed
    tags=["solution"]           on a markdown cell: a model answer to "To discuss"; its text
                                becomes "YOUR ANSWER HERE" (nbgrader grades the cell by hand)

``python -m tl_minimal.instructor.blanks`` rewrites ``notebooks/exercises/*.py``, their ``.ipynb``
(without outputs) and ``solutions/answer_key.json`` (the predictions' sealed verdicts, answers.seal).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from tl_minimal.exercises.answers import KEY_FILE, seal

BEGIN, END, BLANK, ONLY = "### BEGIN SOLUTION", "### END SOLUTION", "### BLANK:", "<!-- solutions only -->"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
ANSWER_STUB = "YOUR ANSWER HERE"  # nbgrader's own text for a written answer (ClearSolutions.text_stub)
_TAGS = re.compile(r"\btags=(\[[^\]]*\])")  # a percent-format cell header's tags: # %% ... tags=[...]


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


def make_blank(source: str) -> str:
    """The blank version of one solutions notebook's percent-format text."""
    out, cell = [], []

    def flush():
        header, body = (cell[0], cell[1:]) if cell and cell[0].startswith("# %%") else (None, cell)
        tags = _TAGS.search(header or "")
        if tags and "solution" in json.loads(tags.group(1)):  # a model answer: its text becomes ANSWER_STUB
            trailing = len(body) - len("\n".join(body).rstrip("\n").split("\n"))
            body = [f"# {ANSWER_STUB}"] + [""] * trailing
        else:
            body = blank_lines(body)[0]
        out.extend(([header] if header is not None else []) + body)

    for line in source.splitlines():
        if line.startswith("# %%") and cell:
            flush()
            cell.clear()
        cell.append(line)
    flush()
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + "\n"


def answer_key(source: str) -> dict:
    """task id ("01.3") -> the keyword arguments of the solutions' ``ex.mark_prediction`` call."""
    key = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "mark_prediction":
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            key[kwargs["task"].split()[0]] = kwargs
    return key


def blank_path(solution: Path) -> Path:
    """notebooks/exercises/solutions/01_x_solutions.py -> notebooks/exercises/01_x.py"""
    return solution.parent.parent / re.sub(r"_solutions(?=\.py$)", "", solution.name)


def write_blanks(folder: Path) -> list[Path]:
    """Rewrite every blank notebook under ``folder`` (notebooks/exercises) from its solutions, and the
    answer key of the predictions (needs jupytext)."""
    import jupytext

    written, key = [], {}
    for solution in sorted((folder / "solutions").glob("*_solutions.py")):
        source = solution.read_text(encoding="utf-8")
        target = blank_path(solution)
        target.write_text(make_blank(source), encoding="utf-8")
        notebook = jupytext.read(target)  # its .ipynb pair, with no outputs and no execution counts
        for number, cell in enumerate(notebook.cells):
            cell.id = f"{target.stem}-{number:02d}"  # stable ids: regenerating changes no line it need not
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        jupytext.write(notebook, target.with_suffix(".ipynb"))
        written += [target, target.with_suffix(".ipynb")]
        key.update(answer_key(source))
    if key:
        sealed = {task_id: seal(task_id, entry) for task_id, entry in key.items()}
        target = folder / "solutions" / KEY_FILE
        target.write_text(json.dumps(sealed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("notebooks/exercises")
    for path in write_blanks(root):
        print("wrote", path)
