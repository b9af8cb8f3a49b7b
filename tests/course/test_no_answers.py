"""No answer handed out: the blanks' "not implemented" texts and the checkers' "not done yet" hints
point to a task and an equation of the notebook, never to the code of the solution.

Every code line of every solution region (and the right-hand side of each assignment or return
in it) is compared with every such message, spaces removed: none may appear in one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "notebooks" / "exercises" / "solutions").glob("0*_solutions.py"))
CHECKERS = sorted((ROOT / "tl_minimal" / "exercises").glob("*.py"))


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _solution_lines(source: str) -> list[str]:
    lines, inside = [], False
    for line in source.splitlines():
        text = line.strip()
        if text in ("### BEGIN SOLUTION", "### END SOLUTION"):
            inside = text == "### BEGIN SOLUTION"
        elif inside and text and not text.startswith("#"):
            code = text.split("  #")[0].strip()
            pieces = [code]
            if code.startswith("return "):
                pieces.append(code[len("return "):])
            if "=" in code and "==" not in code:
                pieces.append(code.split("=", 1)[1])
            lines += [p for p in (_squash(p) for p in pieces) if len(p) >= 8]
    return lines


def _messages() -> list[str]:
    found = []
    for path in SOLUTIONS:
        found += re.findall(r'### BLANK: raise NotImplementedError\("([^"]*)"\)', path.read_text(encoding="utf-8"))
    for path in CHECKERS:
        text = path.read_text(encoding="utf-8")
        found += re.findall(r'todo="([^"]*)"', text)
        found += re.findall(r'"not done yet: ([^"]*)"', text)
    return [m for m in found if m not in ("{todo}", "no answer was given")]  # templates, the predictions' own


def test_there_are_messages_for_every_task():
    blanks = [m for p in SOLUTIONS
              for m in re.findall(r"### BLANK: raise NotImplementedError", p.read_text(encoding="utf-8"))]
    assert len(blanks) == 3 * len(SOLUTIONS) and len(_messages()) >= 6 * len(SOLUTIONS)


@pytest.mark.parametrize("message", _messages())
def test_no_message_holds_a_line_of_a_solution(message):
    squashed = _squash(message)
    for path in SOLUTIONS:
        for line in _solution_lines(path.read_text(encoding="utf-8")):
            assert line not in squashed, f"{path.name}: {line!r} is in the message {message!r}"
    assert re.search(r"Task \d|equation \(\d\)", message), f"points to no task or equation: {message!r}"


def test_the_old_answers_are_gone():
    """The texts a TA found: each gave its task's code away."""
    text = "\n".join(_messages())
    for leak in ("lam_t * s_prev + (1 - lam_t) * a_t", "sum_i P[i, j] q_left[i]", "log(1/2) / log(lam)",
                 "xp[:, i:i+T] @ weight[:, :, i].T", "-(g * log g)", "scores.topk(k)"):
        assert leak not in text, leak


THOUGHT = ("**Derive, then code.**", "**Find the bug, then fix it.**", "**Design a test.**")


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.name[:2])
def test_every_exercise_has_a_task_for_thought(solution):
    """At least one graded task that transcribing an equation of the page cannot do (issue 34, item 5)."""
    text = solution.read_text(encoding="utf-8")
    tasks = re.split(r"^# ## Task ", text, flags=re.M)[1:]
    assert any(lead in task for task in tasks for lead in THOUGHT), solution.name
