"""The shared machinery of the exercise checkers: run the student's code, compare, diagnose.

A checker runs the student's function and the library's reference on the same fresh inputs
(several random cases, including T = 1 and odd lengths) and prints ``correct: <what was
checked>``, ``not done yet: <the task's hint>`` (the function still raises NotImplementedError)
or ``not quite: <a specific hint>``. A known mistake is recognised by running a deliberately wrong
reference (a :class:`Mistake`) on the same inputs: if the student's output matches it, its hint is
printed. In self-study a checker never raises; in graded mode (``TL_GRADED=1``, read once when the
kernel first imports this module, so a cell writing ``os.environ`` later changes nothing) a failed
check raises ``AssertionError`` with the same hint. :func:`hidden_tests` raises in any mode.

The student's function always runs **before** the reference computes the expected value, so no
frame the student's code can inspect holds the answer; a result must be a plain ``torch.Tensor``
(or a plain number), not an object that compares itself. Warnings inside a check are printed on
stdout: a warning on stderr would make nbgrader score a correct test cell zero.

Glossary
    Case       one set of inputs: a description ("T = 7, with s0") and a function making fresh args
    Mistake    a wrong reference variant and the hint printed when the student's output matches it
    Result     what a checker returns: ``passed`` (bool) and ``message`` (the printed text)
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

RTOL = 1e-5  # relative error below which two outputs count as equal
GRADED_ENV = "TL_GRADED"  # "1": failed checks raise (nbgrader's autograder); unset or "0": they only print
_SEED_SHIFT = [0]  # added to every case's seed; more_cases() changes it for the hidden tests
_HIDDEN = [False]  # inside hidden_tests(): other shapes, and failures raise in any mode

# the sizes of the visible checks (distinct, so a wrong axis is an error) and the hidden tests' three
# shapes, each run in turn: B = 1 with H > 1, B > 1 with H = 1 (a squeeze() without its dim, a
# broadcast that only works at size 1), both > 1 and equal (a transposed pair of equal-size dims
# gives wrong values, not an error); every other size odd and unlike the visible ones
SIZES = {"B": 2, "H": 3, "S": 4, "K": 5, "D": 3, "D_KV": 6}
HIDDEN_SHAPES = ({"B": 1, "H": 3, "S": 5, "K": 3, "D": 5, "D_KV": 5},
                 {"B": 3, "H": 1, "S": 3, "K": 5, "D": 1, "D_KV": 3},
                 {"B": 2, "H": 2, "S": 7, "K": 3, "D": 7, "D_KV": 7})
_SHAPE = [0]  # which of HIDDEN_SHAPES the hidden tests use now

# read once, at the first import: a cell writing os.environ later changes nothing
GRADED = os.environ.get(GRADED_ENV, "0").strip().lower() not in ("", "0", "false", "no")
# a grade run that records the hidden tests' outputs (record.py): a visible check that fails does not
# raise, so the hidden test after it in the same cell still runs and records; the hidden test raises
RECORDING = bool(os.environ.get("TL_GRADE_RECORD"))


def graded() -> bool:
    """Is graded mode on? Fixed when the kernel first imported the checkers (or inside hidden_tests)."""
    return GRADED or _HIDDEN[0]


def hidden() -> bool:
    """Inside :func:`hidden_tests`?"""
    return _HIDDEN[0]


def sizes(*names: str) -> tuple[int, ...]:
    """The sizes of the inputs ("B", "H", "S", "D" ...): the visible ones, or the hidden tests' own."""
    table = HIDDEN_SHAPES[_SHAPE[0]] if _HIDDEN[0] else SIZES
    return tuple(table[n] for n in names)


@contextlib.contextmanager
def more_cases(shift: int = 1000):
    """Run the checks inside on other random inputs (every case's seed moves by ``shift``), so code
    fitted to the visible cases' numbers does not pass: ``with ex.more_cases(): ex.check_...(f)``."""
    _SEED_SHIFT[0] += shift
    try:
        yield
    finally:
        _SEED_SHIFT[0] -= shift


@contextlib.contextmanager
def hidden_tests(shift: int = 1000, shape: int = 0):
    """The graded edition's hidden tests: other random inputs, the sizes of ``HIDDEN_SHAPES[shape]``,
    and a failed check raises whatever the mode (``record.hidden_check`` runs every shape in turn)."""
    before = _HIDDEN[0], _SHAPE[0]
    _HIDDEN[0], _SHAPE[0] = True, shape
    try:
        with more_cases(shift):
            yield
    finally:
        _HIDDEN[0], _SHAPE[0] = before


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


@dataclass
class Case:
    """Inputs for one comparison: ``make()`` returns a fresh tuple of arguments every call."""

    description: str
    make: Callable[[], tuple]


@dataclass
class Mistake:
    """A typical wrong answer: ``fn`` computes it from the same arguments as the reference."""

    hint: str
    fn: Callable


def case(description: str, seed: int, make: Callable) -> Case:
    """A :class:`Case` whose arguments are ``make(g, **sizes)``: ``g`` the case's seeded generator,
    the sizes those in force (the hidden tests' own inside :func:`hidden_tests`)."""
    return Case(description, lambda: make(generator(seed), **dict(zip(SIZES, sizes(*SIZES), strict=True))))


@contextlib.contextmanager
def warnings_to_stdout():
    """Catch the warnings raised inside a check and print them as notes on stdout (see the top)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            seen = []
            for w in caught:
                text = f"{w.category.__name__}: {str(w.message).splitlines()[0][:160] if str(w.message) else ''}"
                if text not in seen:
                    seen.append(text)
            for text in seen:
                print(f"note: your code warned ({text}); a warning costs no points")


@contextlib.contextmanager
def one_thread():
    """Run tiny tensors on one CPU thread: on a busy machine, several threads wait on each other
    far longer than the work takes (a 50 ms training step became 4 s on a loaded 2-core CPU)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def report(task: str, passed: bool, message: str) -> Result:
    """Print ``message`` and wrap it in a :class:`Result`; in graded mode a failure also raises an
    ``AssertionError`` naming the task and carrying the hint (nbgrader shows it to the student)."""
    print(message)
    if graded() and not passed and (hidden() or not RECORDING):
        raise AssertionError(f"{task}: {message}")
    return Result(task, passed, message)


def generator(seed: int) -> torch.Generator:
    """A seeded generator for one case (the seed moved by :func:`more_cases` when inside it)."""
    return torch.Generator().manual_seed(seed + _SEED_SHIFT[0])


def rand(g: torch.Generator, *shape, low: float = -1.0, high: float = 1.0) -> torch.Tensor:
    """Uniform float64 numbers in [low, high): checks run in float64 so tolerances can be tight."""
    return low + (high - low) * torch.rand(*shape, generator=g, dtype=torch.float64)


def gates(g: torch.Generator, *shape, low: float = 0.05, high: float = 0.95) -> torch.Tensor:
    """Gate values in (low, high), one per head and token."""
    return rand(g, *shape, low=low, high=high)


# --- comparing outputs ------------------------------------------------------------------------

def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    got, want = got.detach().cpu().double(), want.detach().cpu().double()  # CPU first: no float64 on MPS
    return (got - want).norm().item() / max(want.norm().item(), 1e-12)


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
    """None when ``got`` equals ``want`` (tensors, tuples of tensors, numbers), else what differs."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"expected {describe(want)}, got {describe(got)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            problem = difference(g, w)
            if problem:
                return f"item {i} of the result: {problem}"
        return None
    if isinstance(want, torch.Tensor):
        if not is_tensor(got):
            return f"expected {describe(want)}, got {describe(got)} (return a plain torch.Tensor)"
        if tuple(got.shape) != tuple(want.shape):
            return f"wrong shape: expected {list(want.shape)}, got {list(got.shape)}"
        if not torch.isfinite(got).all():
            return "the result contains NaN or inf"
        err = relative_error(got, want)
        return None if err < RTOL else f"wrong values (relative error {err:.2g})"
    if isinstance(want, bool):
        if not is_bool(got):
            return f"expected {want} (a bool), got {describe(got)}"
        return None if bool(got) == want else f"expected {want}, got {bool(got)}"
    if isinstance(want, (int, float)):
        if type(got) not in (int, float) and not (is_tensor(got) and got.numel() == 1):
            return f"expected a number, got {describe(got)}"
        got = float(got)
        return None if abs(got - want) <= RTOL * max(1.0, abs(want)) else f"expected {want:.4g}, got {got:.4g}"
    return None if got == want else f"expected {want!r}, got {got!r}"


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


# --- the check --------------------------------------------------------------------------------

def check_function(task: str, student: Callable, reference: Callable, cases: list[Case],
                   mistakes: list[Mistake], todo: str, what: str, on_error: dict | None = None) -> Result:
    """Compare ``student`` with ``reference`` on every case; print and return a :class:`Result`.

    ``todo`` is the hint shown while the function is not written yet; ``what`` says what a
    passing check covered ("3 random cases incl. T = 1 and T = 7"); ``on_error`` maps a piece
    of an error message ("must match the size") to a hint added when the student's code raises it.
    """
    with one_thread(), warnings_to_stdout():
        return _check_function(task, student, reference, cases, mistakes, todo, what, on_error)


def _check_function(task, student, reference, cases, mistakes, todo, what, on_error):
    if not callable(student):
        return report(task, False, f"not quite: pass your function itself (no parentheses), got {describe(student)}")
    for case in cases:
        args = case.make()
        try:  # the student's code runs first: nothing it could reach through frames holds the answer yet
            got = student(*_clone(args))
        except NotImplementedError:
            return report(task, False, f"not done yet: {todo}")
        except Exception as exc:
            extra = next((h for key, h in (on_error or {}).items() if key in str(exc)), None)
            hint = f". Hint: {extra}" if extra else ""
            return report(task, False, f"not quite: on {case.description} your function raised "
                                       f"{type(exc).__name__}: {first_line(exc)}" + hint)
        want = reference(*_clone(args))
        problem = difference(got, want)
        del want  # the next case's student call must not find this one's answer either
        if problem is None:
            continue
        for mistake in mistakes:
            if difference(got, _safe(mistake.fn, args)) is None:
                return report(task, False, f"not quite ({case.description}): {mistake.hint}")
        return report(task, False, f"not quite ({case.description}): {problem}")
    return report(task, True, f"correct: {what}")
