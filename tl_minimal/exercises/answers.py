"""Prediction questions: judged from an answer key that the installed package does not contain.

The key lives only in the solutions' hidden test, ``ex.mark_prediction(my_prediction, task=...,
correct=<the answer>, hints=..., ...)``. For self-study, ``python -m tl_research.blanks``
seals it into notebooks/exercises/solutions/answer_key.json (:func:`seal`: each verdict stored under
a hash of its answer, encrypted with a key made from it), which the visible check finds beside the
running notebook or below the kernel's folder (or at ``TL_ANSWER_KEY``). A number is correct when
it rounds to the key's step on the tolerance's grid, or a step either side.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .harness import Result, graded, report

KEY_FILE = "answer_key.json"
KEY_PLACES = ("solutions", ".", "exercises/solutions", "notebooks/exercises/solutions")  # below a folder
NO_KEY_HINT = ("working on your own? The verdict comes at once when the kernel can find the clone's "
               "notebooks/exercises/solutions/answer_key.json: open this notebook from notebooks/exercises/, "
               "or set TL_ANSWER_KEY to that file")


def _running_notebook() -> Path | None:
    """The running notebook's path where the front end tells the kernel (JupyterLab, Notebook 7, VS Code)."""
    name = os.environ.get("JPY_SESSION_NAME", "").strip()
    if not name:
        try:
            from IPython import get_ipython

            shell = get_ipython()
            name = str(shell.user_ns.get("__vsc_ipynb_file__", "")) if shell is not None else ""
        except ImportError:
            name = ""
    return Path(name) if name.endswith(".ipynb") else None


def find_key() -> dict:
    """The sealed answer key (the module docstring says where it is looked for), or {} if none."""
    explicit = os.environ.get("TL_ANSWER_KEY", "").strip()
    candidates = [Path(explicit).expanduser()] if explicit else []
    notebook, start = _running_notebook(), Path.cwd()
    folders = ([notebook.parent] if notebook else []) + [start, *list(start.parents)[:3]]
    candidates += [folder / place / KEY_FILE for folder in folders for place in KEY_PLACES]
    for path in candidates:
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    return {}


def letter(answer) -> str:
    """A letter answer as the key stores it: "(B) " -> "b"."""
    return str(answer).strip().lower().strip("()")


def normal(answer, tolerance) -> str:
    """The answer as the key stores it: a letter, or a number's step on the tolerance's grid."""
    return letter(answer) if tolerance is None else str(round(float(answer) / tolerance))


def _hash(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()


def _xor(data: bytes, secret: str) -> bytes:
    stream = b"".join(hashlib.sha256(f"{secret}|{i}".encode()).digest() for i in range(len(data) // 32 + 1))
    return bytes(a ^ b for a, b in zip(data, stream[:len(data)], strict=True))


def seal(task_id: str, key: dict) -> dict:
    """One prediction's key (``mark_prediction``'s arguments) as stored in the self-study file."""
    tolerance, salt = key.get("tolerance"), _hash(task_id, key["task"])[:16]
    hints = key.get("hints", {})
    if tolerance is None:
        verdicts = {c: _verdict(c, key["correct"], None, hints, key["explanation"])[1]
                    for c in key.get("choices") or "abcd"}
    else:
        step = round(float(key["correct"]) / tolerance)
        verdicts = {str(n): f"correct: {key['explanation']}" for n in (step - 1, step, step + 1)}
    sealed = {_hash(salt, task_id, answer):
              _xor(text.encode("utf-8"), _hash("open", salt, task_id, answer)).hex()
              for answer, text in sorted(verdicts.items(), key=lambda kv: _hash(salt, task_id, kv[0]))}
    return {"task": key["task"], "choices": key.get("choices"), "tolerance": tolerance, "salt": salt,
            "otherwise": f"not quite: {hints.get('number', 'not this one: read the question again')}",
            "sealed": sealed}


def _open(task_id: str, entry: dict, answer) -> tuple[bool, str]:
    """The verdict the sealed key holds for ``answer`` (opened with that answer only)."""
    given, salt = normal(answer, entry["tolerance"]), entry["salt"]
    box = entry["sealed"].get(_hash(salt, task_id, given))
    if box is None:
        return False, entry["otherwise"]
    text = _xor(bytes.fromhex(box), _hash("open", salt, task_id, given)).decode("utf-8")
    return text.startswith("correct"), text


def _unanswered(task: str, answer, todo: str, choices: str | None) -> Result | None:
    """The failed report when ``answer`` is missing or not of the form asked for (``choices``: the
    allowed letters, or None for a number), else None."""
    if answer is None or answer is Ellipsis:
        return report(task, False, f"not done yet: {todo}")
    if choices is None:
        try:
            float(answer)
        except (TypeError, ValueError):
            return report(task, False, f"not quite: the answer should be a number, got {answer!r}")
    elif letter(answer) not in choices:
        return report(task, False, f"not quite: answer with one letter ({', '.join(choices)}), got {answer!r}")
    return None


def _verdict(answer, correct, tolerance, hints: dict, explanation: str) -> tuple[bool, str]:
    if tolerance is not None:
        if abs(float(answer) - float(correct)) <= tolerance:
            return True, f"correct: {explanation}"
        return False, f"not quite: {hints.get('number', 'recompute it, step by step')}"
    choice = letter(answer)
    if choice == correct:
        return True, f"correct: {explanation}"
    return False, f"not quite: {hints.get(choice, 'not this one: read the question again')}"


def prediction_check(task_id: str, todo: str, choices: str | None = None, doc: str = ""):
    """The visible check of one exercise's prediction; ``choices`` is the string of allowed letters
    ("abcd"), or None for a number. It judges only with the sealed key, and never in graded mode."""
    def check(answer) -> Result:
        early = _unanswered(f"{task_id} prediction", answer, todo, choices)
        if early is not None:
            return early
        recorded = f"answered: {answer!r} is recorded; it is marked when your notebook is graded"
        entry = None if graded() else find_key().get(task_id)
        if not entry:
            return report(f"{task_id} prediction", True, recorded + ("" if graded() else f" ({NO_KEY_HINT})"))
        passed, message = _open(task_id, entry, answer)
        return report(entry["task"], passed, message)

    check.__doc__ = doc
    return check


def mark_prediction(answer, task: str, correct, explanation: str, hints: dict | None = None,
                    tolerance: float | None = None, choices: str | None = None) -> Result:
    """The hidden test of a prediction: judge ``answer`` against the key given here (``correct`` a
    letter, or a number with ``tolerance``; ``hints``: wrong letter or "number" -> what it gets wrong)."""
    early = _unanswered(task, answer, "no answer was given", None if tolerance is not None else (choices or "abcd"))
    if early is not None:
        return early
    passed, message = _verdict(answer, correct, tolerance, hints or {}, explanation)
    return report(task, passed, message)
