"""The exercises' "predict before you plot" questions as checks that work on the site, without a kernel.

Each exercise notebook asks one prediction (its Task 3): a Markdown cell with the question and its
lettered choices, "(a) ..." as list items or on one line, then a code cell ``my_prediction = None``
and a check cell ``ex.check_..._prediction(my_prediction)``. In a notebook the check opens the
verdict for the recorded answer from the sealed answer key (``tl_minimal/exercises/answers.py``:
each answer's verdict is stored under a hash of that answer and encrypted with a key made from
it, so the file names no answer). The site does the same in the reader's browser:

    question      the Markdown cell above ``my_prediction = None``          (the notebook's text)
    choices       its "(a) ..." items, which must be the key's letters      (the notebook's text)
    task id       ``prediction_check("01.3", ...)`` that made the library function the check cell calls
    verdicts      the sealed entry of ``notebooks/exercises/solutions/answer_key.json``, opened by
                  ``static/predictions.js`` with the reader's answer, as ``answers._open`` does

So the page holds no readable answer, the hint for a wrong letter and the explanation for the
right one are the notebook's own, and nothing is shown before the reader has chosen. A question of
a number (exercise 01) gets a number field judged on the key's tolerance grid, the same rule.

The check is a form appended to the question's Markdown cell (a cell keeps its number): a fieldset
of radio buttons with a legend (arrow keys move between choices), a "Check" button, and a verdict
line that a screen reader announces (``role="status"``). ``questions`` finds the questions;
``stage`` adds the forms and fails the build when a question has no key or its choices disagree.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

KEY_FILE = "notebooks/exercises/solutions/answer_key.json"
LIBRARY = "tl_minimal/exercises"
ANSWER_CELL = re.compile(r"^my_prediction\s*=\s*None\s*(?:#\s*(.*))?$", re.MULTILINE)
CHECK_CALL = re.compile(r"\bex\.(check_\w*prediction)\(my_prediction\)")
CHOICE = re.compile(r"(?:^|(?<=\s))\(([a-z])\)\s+")
MATH = re.compile(r"\$([^$]+)\$")


@dataclass
class Question:
    """One prediction question of a notebook: where it is and what the page's check needs."""
    cell: int            # index of the question's Markdown cell
    task: str            # the key's id, "02.3"
    choices: dict        # letter -> the choice's text (Markdown with $math$); {} for a number
    prompt: str          # the answer cell's comment: what to give ("your value of s_5, a number")


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def task_id(check: str, root: Path) -> str:
    """The key's id of the prediction that library function ``check`` (tl_minimal.exercises) checks."""
    for path in sorted((root / LIBRARY).glob("*.py")):
        found = re.search(rf"^{check} = prediction_check\(\s*\"([\w.]+)\"", path.read_text(encoding="utf-8"),
                          re.MULTILINE)
        if found:
            return found.group(1)
    raise ValueError(f"no {check} = prediction_check('NN.N', ...) in {LIBRARY}/")


def choices_of(text: str) -> dict[str, str]:
    """{letter: text} of the "(a) ..." choices of a question cell, in order (list items or one line)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        marks = list(CHOICE.finditer(line))
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(line)
            found[mark.group(1)] = line[mark.end():end].strip()
    return found


def questions(cells: list[dict], root: Path) -> list[Question]:
    """Every prediction question of a notebook: a ``my_prediction = None`` cell, the Markdown cell
    above it, and the check call in the cell after it."""
    found = []
    for number, cell in enumerate(cells):
        answer = ANSWER_CELL.search(source(cell)) if cell["cell_type"] == "code" else None
        if not answer:
            continue
        above = next((i for i in range(number - 1, -1, -1) if cells[i]["cell_type"] == "markdown"), None)
        check = next((CHECK_CALL.search(source(c)) for c in cells[number + 1:number + 2]), None)
        if above is None or check is None:
            raise ValueError(f"cell {number + 1}: a prediction (my_prediction = None) needs a question "
                             "above it and an ex.check_..._prediction(my_prediction) cell after it")
        found.append(Question(above, task_id(check.group(1), root), choices_of(source(cells[above])),
                              (answer.group(1) or "").strip()))
    return found


def label(text: str) -> str:
    """A choice's Markdown as HTML: escaped, with $math$ as MathJax's inline math."""
    parts, last = [], 0
    for m in MATH.finditer(text):
        parts += [html.escape(text[last:m.start()]),
                  f'<span class="math notranslate nohighlight">\\({html.escape(m.group(1))}\\)</span>']
        last = m.end()
    return "".join(parts) + html.escape(text[last:])


def form(question: Question, entry: dict) -> str:
    """The check's HTML: one block with no blank line (so Markdown passes it through whole)."""
    name = "prediction-" + question.task.replace(".", "-")
    sealed = html.escape(json.dumps({k: entry[k] for k in ("choices", "tolerance", "salt", "otherwise", "sealed")}))
    if question.choices:
        fields = "".join(f'<div class="prediction-choice"><input type="radio" name="{name}" id="{name}-{c}" '
                         f'value="{c}"><label for="{name}-{c}">({c}) {label(t)}</label></div>'
                         for c, t in question.choices.items())
        legend = "Your prediction: choose one, then check it"
    else:
        fields = (f'<label for="{name}-value">Your value</label> '
                  f'<input type="text" inputmode="decimal" id="{name}-value" name="{name}" autocomplete="off">')
        legend = f"Your prediction: {html.escape(question.prompt or 'a number')}"
    return (f'<form class="prediction" data-task="{question.task}" data-key="{sealed}">'
            f'<fieldset><legend>{legend}</legend>{fields}</fieldset>'
            f'<button type="submit">Check</button>'
            f'<p class="prediction-verdict" role="status" aria-live="polite"></p>'
            f'<noscript>This check needs JavaScript; in the notebook, put your answer in my_prediction.</noscript>'
            f'</form>')


def stage(cells: list[dict], page: str, root: Path) -> int:
    """Append a check to each prediction question of the notebook's cells; the number added.

    Fails when a question's task has no entry in the answer key, or its letters are not the key's."""
    found = questions(cells, root)
    if not found:
        return 0
    if not (root / KEY_FILE).is_file():
        raise ValueError(f"{page} asks {len(found)} prediction(s), but {KEY_FILE} is missing "
                         "(python -m tl_research.blanks writes it)")
    key = json.loads((root / KEY_FILE).read_text(encoding="utf-8"))
    for question in found:
        entry = key.get(question.task)
        if entry is None:
            raise ValueError(f"{page}: prediction {question.task} has no entry in {KEY_FILE} "
                             "(python -m tl_research.blanks writes it)")
        letters = "".join(question.choices)
        if (entry["choices"] or "") != letters:
            raise ValueError(f"{page}: prediction {question.task}: the question offers ({letters or 'a number'}), "
                             f"the key {entry['choices'] or 'a number'}")
        cell = cells[question.cell]
        cell["source"] = source(cell).rstrip("\n") + "\n\n" + form(question, entry) + "\n"
    return len(found)
