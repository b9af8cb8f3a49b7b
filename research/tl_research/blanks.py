"""Write the self-study blank exercise notebooks and their answer key from the solutions.

A maintainer's tool: it needs the clone's solutions (``notebooks/exercises/solutions/*.py``), which
a course install does not have. After a solution is edited,

    python -m tl_research.blanks [notebooks/exercises]

rewrites ``notebooks/exercises/*.py``, their ``.ipynb`` (without outputs) and
``solutions/answer_key.json``. The course package defines both formats, and this module imports
them: the solution markers and their rules (:mod:`tl_minimal.instructor.blanks`, which nbgrader's
release applies too) and the sealed key (:func:`tl_minimal.exercises.answers.seal`, read by the
exercise checkers and the course website). One rule is this writer's own: a markdown cell tagged
``tags=["solution"]`` (a model answer to "To discuss") becomes "YOUR ANSWER HERE".
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from tl_minimal.exercises.answers import KEY_FILE, seal
from tl_minimal.instructor.blanks import blank_lines, blank_path

ANSWER_STUB = "YOUR ANSWER HERE"  # nbgrader's own text for a written answer (ClearSolutions.text_stub)
_TAGS = re.compile(r"\btags=(\[[^\]]*\])")  # a percent-format cell header's tags: # %% ... tags=[...]


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
