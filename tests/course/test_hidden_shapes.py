"""Every shape a bug hides in, judged the way a grade run judges it (issue 53, item 3).

Each function task of every exercise runs the solution and a list of known shape bugs through
its hidden test as the grading kernel does (``hidden_check`` with a ``tasks.json`` from the
grader: outputs recorded as plain arrays), and the record is judged by ``judge``, the clean
process's comparison. The solution passes on every hidden shape; each bug loses the task:

    squeeze       ``.squeeze()`` without a dim: wrong wherever a size is 1 (B = 1, H = 1, T = 1)
    transpose     two dims of the result swapped: wrong values where the sizes are equal
    broadcast     the first entry along a dim, broadcast to its size: right only where it is 1
A bug that leaves a task's result unchanged (no dim of size 1 for squeeze, a bool result) is
skipped for that task. No nbgrader needed: seconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from tl_minimal import exercises as ex
from tl_minimal.exercises import record

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "notebooks" / "exercises" / "solutions").glob("0*_solutions.py"))
HIDDEN = re.compile(r"_ex\.hidden_check\(_ex\.(check_\w+), (\w+)\)")


def _solution_functions(path: Path) -> dict:
    """The answer cells of a solutions notebook, run: name -> the solution's function."""
    namespace = {"torch": torch, "F": torch.nn.functional, "math": __import__("math")}
    for cell in path.read_text(encoding="utf-8").split("\n# %%")[1:]:
        if '"solution": true' in cell.splitlines()[0] and "_code" in cell.splitlines()[0]:
            body = "\n".join(line for line in cell.splitlines()[1:] if not line.strip().startswith("###"))
            exec(body, namespace)
    return namespace


TASKS = [(path.stem[:2], check, fn, path) for path in SOLUTIONS
         for check, fn in HIDDEN.findall(path.read_text(encoding="utf-8"))]


def _squeeze(out):
    return out.squeeze() if isinstance(out, torch.Tensor) and 1 in out.shape else None


def _transpose(out):
    if not isinstance(out, torch.Tensor) or out.dim() < 2:
        return None
    for i in range(out.dim()):
        for j in range(i + 1, out.dim()):
            if out.shape[i] == out.shape[j] > 1 and not torch.equal(out, out.transpose(i, j)):
                return out.transpose(i, j)
    return out.transpose(0, 1)


def _broadcast(dim):
    def bug(out):
        if not isinstance(out, torch.Tensor) or out.dim() < (dim + 1 if dim >= 0 else 1):
            return None  # no such dim: the bug does not apply to this task
        if out.shape[dim] == 1:
            return out  # right here; another call or shape must expose it
        return out.narrow(dim, 0, 1).expand_as(out).clone()
    return bug


BUGS = {"squeeze": _squeeze, "transpose": _transpose, "broadcast_dim0": _broadcast(0),
        "broadcast_dim1": _broadcast(1), "broadcast_last": _broadcast(-1)}


def _graded(check, fn, tmp_path: Path, monkeypatch) -> tuple[bool, str]:
    """Record ``fn``'s hidden outputs as a grading kernel does, then judge them as the clean process does."""
    seed, nonce = 4242, "f00d"
    (tmp_path / "tasks.json").write_text(json.dumps({check.__name__: {"seed": seed, "nonce": nonce}}),
                                         encoding="utf-8")
    monkeypatch.setenv(record.RECORD_ENV, str(tmp_path))
    try:
        record.hidden_check(check, fn)
    except AssertionError:
        pass  # the kernel's own verdict; the grade is the judge's
    monkeypatch.delenv(record.RECORD_ENV)
    data = json.loads((tmp_path / f"{nonce}.json").read_text(encoding="utf-8"))
    with np.load(tmp_path / f"{nonce}.npz", allow_pickle=False) as arrays:
        return record.judge(check, seed, data, arrays)


@pytest.mark.parametrize(("number", "check", "fn", "path"), TASKS, ids=[f"{t[0]}-{t[2]}" for t in TASKS])
def test_solution_passes_and_every_shape_bug_loses_the_task(number, check, fn, path, tmp_path, monkeypatch):
    solution = _solution_functions(path)[fn]
    check = getattr(ex, check)
    passed, message = _graded(check, solution, tmp_path, monkeypatch)
    assert passed, message
    tried = 0
    for bug_name, bug in BUGS.items():
        probe = bug(_first_output(check, solution))
        if probe is None:
            continue
        tried += 1

        def buggy(*args, _bug=bug, **kwargs):
            out = solution(*args, **kwargs)
            wrong = _bug(out)
            return out if wrong is None else wrong

        folder = tmp_path / bug_name
        folder.mkdir()
        passed, message = _graded(check, buggy, folder, monkeypatch)
        assert not passed, (bug_name, message)
    if isinstance(_first_output(check, solution), torch.Tensor):
        assert tried >= 2


def _first_output(check, solution):
    seen = []

    def spy(*args, **kwargs):
        seen.append(solution(*args, **kwargs))
        return seen[-1]

    with ex.hidden_tests(shape=0):
        try:
            check(spy)
        except AssertionError:
            pass
    return seen[0]



@pytest.mark.parametrize("answer", ["a string", np.zeros(3)], ids=["str", "ndarray"])
def test_a_wrong_type_is_named_alike_in_the_kernel_and_by_the_judge(answer, tmp_path, monkeypatch):
    """The clean process names a returned value that is no tensor by its type, as the kernel did."""
    with ex.hidden_tests(shift=4242, shape=0), pytest.raises(AssertionError) as kernel:
        ex.check_running_state_step(lambda *args: answer)
    passed, message = _graded(ex.check_running_state_step, lambda *args: answer, tmp_path, monkeypatch)
    assert not passed and f"got a {type(answer).__name__} (return" in message
    assert message.endswith(str(kernel.value)), (message, str(kernel.value))
