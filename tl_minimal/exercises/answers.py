"""Prediction questions: judged from an answer key that the installed package does not contain.

Each exercise has one "predict before you plot" question: a number (exercise 01) or a letter.
Its answer, the hint for each wrong letter and the explanation live in one place only: the
hidden test of the solutions notebook, a call

    ex.mark_prediction(my_prediction, task="01.3 impulse prediction", correct=<the answer>,
                       tolerance=1e-3, hints={"number": "..."}, explanation="...")

between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``. So the answer is readable
neither from the package's source nor from the students' release (nbgrader removes hidden
tests), and a wrong letter's hint cannot give the answer away by elimination before grading.

Self-study keeps its immediate verdict: ``python -m tl_minimal.instructor.blanks`` copies those
keys into ``notebooks/exercises/answer_key.json`` beside the blank notebooks (a self-study clone
has the solutions anyway). The visible check (``ex.check_impulse_prediction(my_prediction)``)
looks for that file in the notebook's folder or the one above it:

    self-study, key found      correct / not quite + the wrong letter's hint (as before)
    self-study, no key         "answered: ..." (a course release: marked after submission)
    graded mode (TL_GRADED=1)  only the form is checked (a number, one of the letters); the
                               hidden test marks it, and its hint reaches the feedback
"""

from __future__ import annotations

import json
from pathlib import Path

from .harness import Result, graded, report

KEY_FILE = "answer_key.json"


def find_key(start: Path | None = None) -> dict:
    """The answer key beside the running notebook (its folder or the one above), or {} if none."""
    start = Path.cwd() if start is None else Path(start)
    for folder in (start, start.parent):
        path = folder / KEY_FILE
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    return {}


def _form_problem(answer, choices: str | None) -> str | None:
    """None when ``answer`` has the form the question asks for, else what is wrong with it."""
    if choices is None:
        try:
            float(answer)
        except (TypeError, ValueError):
            return f"the answer should be a number, got {answer!r}"
        return None
    if str(answer).strip().lower().strip("()") not in choices:
        return f"answer with one letter ({', '.join(choices)}), got {answer!r}"
    return None


def _verdict(answer, correct, tolerance, hints: dict, explanation: str) -> tuple[bool, str]:
    if tolerance is not None:
        if abs(float(answer) - float(correct)) <= tolerance:
            return True, f"correct: {explanation}"
        return False, f"not quite: {hints.get('number', 'recompute it, step by step')}"
    choice = str(answer).strip().lower().strip("()")
    if choice == correct:
        return True, f"correct: {explanation}"
    return False, f"not quite: {hints.get(choice, 'not this one: read the question again')}"


def check_prediction(task_id: str, answer, todo: str, choices: str | None = None) -> Result:
    """The visible check of a prediction (see the module docstring for what it says when).

    ``choices`` is the string of allowed letters ("abcd"), or None for a number.
    """
    task = f"{task_id} prediction"
    if answer is None or answer is Ellipsis:
        return report(task, False, f"not done yet: {todo}")
    problem = _form_problem(answer, choices)
    if problem:
        return report(task, False, f"not quite: {problem}")
    key = {} if graded() else find_key().get(task_id)
    if not key:
        return report(task, True, f"answered: {answer!r} is recorded; it is marked when your notebook is graded")
    passed, message = _verdict(answer, key["correct"], key.get("tolerance"), key.get("hints", {}), key["explanation"])
    return report(key["task"], passed, message)


def mark_prediction(answer, task: str, correct, explanation: str, hints: dict | None = None,
                    tolerance: float | None = None, choices: str | None = None) -> Result:
    """The hidden test of a prediction: judge ``answer`` against the key given here.

    ``correct`` is a letter, or a number with ``tolerance``; ``hints`` maps wrong letters (or
    "number") to what they get wrong. Raises in graded mode when wrong, like every checker.
    """
    if answer is None or answer is Ellipsis:
        return report(task, False, "not done yet: no answer was given")
    problem = _form_problem(answer, None if tolerance is not None else (choices or "abcd"))
    if problem:
        return report(task, False, f"not quite: {problem}")
    passed, message = _verdict(answer, correct, tolerance, hints or {}, explanation)
    return report(task, passed, message)
