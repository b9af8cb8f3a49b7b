"""What the grade reads without running anything: the tasks of an exercise (:func:`plan`) and the
predictions, from the submitted text (:func:`grade_prediction`)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from tl_minimal.exercises.answers import normal

HIDDEN = re.compile(r"_ex\.hidden_check\(\s*_ex\.(check_\w+)\s*,")
GRADED, NOT_RUN = "graded", "tests did not run"


def cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def grade_cells(notebook: dict) -> dict:
    """grade id -> cell, for the cells that carry nbgrader's metadata with a grade id."""
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in notebook.get("cells", [])
            if isinstance(c.get("metadata", {}).get("nbgrader"), dict) and c["metadata"]["nbgrader"].get("grade_id")}


def load(path: Path) -> dict:
    """The JSON file at ``path``, or {} when there is none."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def plan(source: dict) -> dict:
    """{grade_id: {"kind": "function", "check", "points"} | {"kind": "prediction", "name", "correct",
    "choices", "tolerance", "hints", "points"}}: the tasks, from the source notebook's grade cells."""
    tasks = {}
    for cell in source.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("grade") or cell.get("cell_type") != "code":
            continue
        text, points = cell_text(cell), meta.get("points", 0)
        found = HIDDEN.search(text)
        if found:
            tasks[meta["grade_id"]] = {"kind": "function", "check": found.group(1), "points": points}
            continue
        call = next((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)
                     and getattr(n.func, "attr", getattr(n.func, "id", "")) == "mark_prediction"), None)
        if call is not None:
            keys = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            tasks[meta["grade_id"]] = {"kind": "prediction", "name": call.args[0].id, "points": points,
                                       **{k: keys.get(k) for k in ("correct", "choices", "tolerance", "hints")}}
    return tasks


def _assignments(tree: ast.AST, name: str) -> list[ast.AST]:
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b if abs(b) <= 64 else None}


def _written(node):
    """The value of an answer written in the cell: a literal, or arithmetic on numbers ("0.9 ** 5 * 0.1");
    None for anything computed from names or calls."""
    if isinstance(node, ast.Constant) and type(node.value) in (str, int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _written(node.operand)
        return None if not isinstance(value, (int, float)) else -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _written(node.left), _written(node.right)
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            try:
                return _OPS[type(node.op)](left, right)
            except (ZeroDivisionError, OverflowError):
                return None
    return None


def grade_prediction(task: dict, submission: dict, answer_cell: str) -> dict:
    """{"status", "passed", "reason"} for a prediction, from the submitted notebook's text only: the first
    literal (or arithmetic on numbers) the answer cell assigns; a later change is noted, not scored."""
    name, first, later = task["name"], None, 0
    for cell in submission.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(cell_text(cell))
        except SyntaxError:
            continue
        is_answer = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer_cell
        for node in _assignments(tree, name):
            value = getattr(node, "value", None)
            if is_answer and first is None:
                if isinstance(value, ast.Constant) and value.value is None:
                    continue  # the release's placeholder, left above the answer
                first = value
            else:
                later += 1
    note = f"; {later} later change(s) of {name} recorded, not scored" if later else ""
    if first is None:
        return {"status": GRADED, "passed": False, "reason": f"no answer: {name} is still None{note}"}
    answer, tolerance = _written(first), task.get("tolerance")
    if answer is None:
        return {"status": GRADED, "passed": False,
                "reason": f"the answer must be written in the cell as a letter or number, not computed{note}"}
    try:
        got, want = normal(answer, tolerance), normal(task["correct"], tolerance)
    except (TypeError, ValueError):
        return {"status": GRADED, "passed": False, "reason": f"answered {answer!r}: not a number{note}"}
    close = got == want if tolerance is None else abs(int(got) - int(want)) <= 1
    if close:
        return {"status": GRADED, "passed": True, "reason": f"answered {answer!r}: correct{note}"}
    hint = (task.get("hints") or {}).get(got if tolerance is None else "number", "")
    reason = f"answered {answer!r}: not quite" + (f": {hint}" if hint else "") + note
    return {"status": GRADED, "passed": False, "reason": reason}
