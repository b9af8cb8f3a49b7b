"""The shared machinery of the exercise checkers: run the student's code, compare, diagnose.

A checker runs the student's function, then the library's reference, on the same fresh inputs and
prints ``correct: ...``, ``not done yet: <hint>`` or ``not quite: <hint>``; a :class:`Mistake` (a
deliberately wrong reference) is recognised when the student's output matches it. Graded mode
(``TL_GRADED=1``, read at the first import) and :func:`hidden_tests` make a failed check raise
``AssertionError``. Warnings go to stdout (nbgrader scores a cell that writes to stderr zero).
"""
from __future__ import annotations

import contextlib
import os
import warnings
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass

import torch

RTOL = 1e-5  # relative error below which two outputs count as equal
# the visible checks' sizes (distinct, so a wrong axis is an error) and the hidden tests' three shapes:
# B = 1 with H > 1, B > 1 with H = 1 (a squeeze() without its dim), both > 1 and equal (a transpose of
# two equal-size dims gives wrong values, not an error); every other size odd and unlike the visible
SIZES = {"B": 2, "H": 3, "S": 4, "K": 5, "D": 3, "D_KV": 6}
HIDDEN_SHAPES = ({"B": 1, "H": 3, "S": 5, "K": 3, "D": 5, "D_KV": 5},
                 {"B": 3, "H": 1, "S": 3, "K": 5, "D": 1, "D_KV": 3},
                 {"B": 2, "H": 2, "S": 7, "K": 3, "D": 7, "D_KV": 7})
_STATE = {"hidden": False, "shape": 0, "shift": 0}  # inside hidden_tests(): which shape, the seed shift
GRADED = os.environ.get("TL_GRADED", "0").strip().lower() not in ("", "0", "false", "no")  # read once
# a grade run (record.py): a failed visible check does not raise, so the hidden test after it still records
RECORDING = bool(os.environ.get("TL_GRADE_RECORD"))


def graded() -> bool:
    """Is graded mode on? Fixed when the kernel first imported the checkers (or inside hidden_tests)."""
    return GRADED or _STATE["hidden"]


def hidden() -> bool:
    return _STATE["hidden"]


def sizes(*names: str) -> tuple[int, ...]:
    """The sizes of the inputs ("B", "H", "S", "D" ...): the visible ones, or the hidden tests' own."""
    table = HIDDEN_SHAPES[_STATE["shape"]] if _STATE["hidden"] else SIZES
    return tuple(table[n] for n in names)


@contextlib.contextmanager
def hidden_tests(shift: int = 1000, shape: int = 0):
    """The graded edition's hidden tests: every case's seed moved by ``shift``, the sizes of
    ``HIDDEN_SHAPES[shape]``, and a failed check raises whatever the mode."""
    before = dict(_STATE)
    _STATE.update(hidden=True, shape=shape, shift=before["shift"] + shift)
    try:
        yield
    finally:
        _STATE.update(before)


@dataclass
class Result:
    """The outcome of one check. Truthy when passed; the message was already printed."""

    task: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def _ipython_display_(self):  # the checker printed the message already: show nothing twice
        pass


Case = namedtuple("Case", "description make")  # one set of inputs: make() returns fresh arguments
Mistake = namedtuple("Mistake", "hint fn")  # a typical wrong answer: fn computes it from the same arguments


def case(description: str, seed: int, make: Callable) -> Case:
    """A :class:`Case` whose arguments are ``make(g, **sizes)``: ``g`` the case's seeded generator,
    the sizes those in force (the hidden tests' own inside :func:`hidden_tests`)."""
    return Case(description, lambda: make(generator(seed), **dict(zip(SIZES, sizes(*SIZES), strict=True))))


@contextlib.contextmanager
def one_thread():
    """Run tiny tensors on one CPU thread: on a busy machine, threads wait on each other far longer
    than the work takes."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def guarded():
    """Run a check on one thread, its warnings caught and printed as notes on stdout (see the top)."""
    with one_thread(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            texts = [f"{w.category.__name__}: {(str(w.message).splitlines() or [''])[0][:160]}" for w in caught]
            for text in dict.fromkeys(texts):  # each warning once, in order
                print(f"note: your code warned ({text}); a warning costs no points")


def report(task: str, passed: bool, message: str) -> Result:
    """Print ``message`` and wrap it in a :class:`Result`; in graded mode a failure also raises an
    ``AssertionError`` naming the task and carrying the hint (nbgrader shows it to the student)."""
    print(message)
    if graded() and not passed and (hidden() or not RECORDING):
        raise AssertionError(f"{task}: {message}")
    return Result(task, passed, message)


def generator(seed: int) -> torch.Generator:
    """A seeded generator for one case (the seed moved inside :func:`hidden_tests`)."""
    return torch.Generator().manual_seed(seed + _STATE["shift"])


def rand(g: torch.Generator, *shape, low: float = -1.0, high: float = 1.0) -> torch.Tensor:
    """Uniform float64 numbers in [low, high): checks run in float64 so tolerances can be tight."""
    return low + (high - low) * torch.rand(*shape, generator=g, dtype=torch.float64)


def gates(g: torch.Generator, *shape, low: float = 0.05, high: float = 0.95) -> torch.Tensor:
    """Gate values in (low, high), one per head and token."""
    return rand(g, *shape, low=low, high=high)


def is_tensor(x) -> bool:
    """A plain torch.Tensor (not a subclass, whose methods could be anything)."""
    return type(x) is torch.Tensor


def describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {list(x.shape)}"
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)} items"
    return f"a {type(x).__name__}"


def is_bool(x) -> bool:
    """A bool, or a plain one-element bool tensor."""
    return type(x) is bool or (is_tensor(x) and x.numel() == 1 and x.dtype == torch.bool)


def difference(got, want) -> str | None:
    """None when ``got`` equals ``want`` (a tensor, or a tuple of tensors), else what differs."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"expected {describe(want)}, got {describe(got)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            problem = difference(g, w)
            if problem:
                return f"item {i} of the result: {problem}"
        return None
    if not isinstance(want, torch.Tensor):  # None: a known mistake that raised on these inputs
        return None if got == want else f"expected {want!r}, got {got!r}"
    if not is_tensor(got):
        return f"expected {describe(want)}, got {describe(got)} (return a plain torch.Tensor)"
    if tuple(got.shape) != tuple(want.shape):
        return f"wrong shape: expected {list(want.shape)}, got {list(got.shape)}"
    if not torch.isfinite(got).all():
        return "the result contains NaN or inf"
    got, want = got.detach().cpu().double(), want.detach().cpu().double()  # CPU first: no float64 on MPS
    err = (got - want).norm().item() / max(want.norm().item(), 1e-12)
    return None if err < RTOL else f"wrong values (relative error {err:.2g})"


def _clone(args: tuple) -> tuple:
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _safe(fn, args):
    try:
        return fn(*_clone(args))
    except Exception:
        return None


def first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "(no message)"


def check_function(task: str, student: Callable, reference: Callable, cases: list[Case],
                   mistakes: list[Mistake], todo: str, what: str, on_error: dict | None = None) -> Result:
    """Compare ``student`` with ``reference`` on every case; print and return a :class:`Result`.

    ``todo`` is the hint shown while the function is not written yet; ``what`` says what a
    passing check covered ("3 random cases incl. T = 1 and T = 7"); ``on_error`` maps a piece
    of an error message ("must match the size") to a hint added when the student's code raises it.
    """
    with guarded():
        if not callable(student):
            return report(task, False, "not quite: pass your function itself (no parentheses), got "
                                       + describe(student))
        for case in cases:
            args = case.make()
            try:  # the student's code runs first: nothing it could reach through frames holds the answer yet
                got = student(*_clone(args))
            except NotImplementedError:
                return report(task, False, f"not done yet: {todo}")
            except Exception as exc:
                extra = next((h for key, h in (on_error or {}).items() if key in str(exc)), None)
                return report(task, False, f"not quite: on {case.description} your function raised "
                                           f"{type(exc).__name__}: {first_line(exc)}"
                                           + (f". Hint: {extra}" if extra else ""))
            want = reference(*_clone(args))
            problem = difference(got, want)
            del want  # the next case's student call must not find this one's answer either
            if problem is None:
                continue
            hint = next((m.hint for m in mistakes if difference(got, _safe(m.fn, args)) is None), problem)
            return report(task, False, f"not quite ({case.description}): {hint}")
        return report(task, True, f"correct: {what}")
