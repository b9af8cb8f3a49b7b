"""The hidden tests' two halves: the student's kernel records outputs, a clean process judges them.

A graded edition's hidden test cell is ``hidden_check(check_readout_step, readout_step)``. Under the
instructor's ``grade``, ``TL_GRADE_RECORD`` names a folder whose ``tasks.json`` gives each check a
seed and a nonce; the student's outputs are saved as plain arrays and JSON (``<nonce>.npz``,
``<nonce>.json``), and verdict.py, which never runs student code, replays them (:func:`judge`).

Glossary
    record   {"nonce", "check", "shapes": [[call, ...] per shape]}, a call {"value": plain} or
             {"raised": exception name, "message": text}; arrays in the .npz under "a<number>"
    plain    {"tensor": "a3"} | {"bool": b} | {"int": i} | {"float": x} | {"none": true}
             | {"seq": [plain, ...], "tuple": bool} | {"other": type name}
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import numpy as np
import torch

from .harness import HIDDEN_SHAPES, hidden_tests

RECORD_ENV = "TL_GRADE_RECORD"  # the folder of tasks.json and the records, set by the instructor's grade
SHAPE_STEP = 1000  # the seed shift moves by this much from one hidden shape to the next


def _plain(value, arrays: dict):
    if type(value) is torch.Tensor:  # a plain tensor, never a subclass
        key = f"a{len(arrays)}"
        data = value.detach().cpu()
        arrays[key] = (data if data.dtype in (torch.bool, torch.int64, torch.float64)
                       else data.to(torch.float64 if data.is_floating_point() else torch.int64)).numpy()
        return {"tensor": key}
    if type(value) in (bool, int, float):  # exactly these types, never a subclass
        return {type(value).__name__: value}
    if value is None:
        return {"none": True}
    if type(value) in (tuple, list):
        return {"seq": [_plain(v, arrays) for v in value], "tuple": type(value) is tuple}
    return {"other": type(value).__name__}


def _value(plain: dict, arrays):
    if "tensor" in plain:
        return torch.from_numpy(np.array(arrays[plain["tensor"]]))
    for kind in ("bool", "int", "float"):
        if kind in plain:
            return {"bool": bool, "int": int, "float": float}[kind](plain[kind])
    if "seq" in plain:
        items = [_value(p, arrays) for p in plain["seq"]]
        return tuple(items) if plain.get("tuple") else items
    if "none" in plain:
        return None
    name = str(plain.get("other", "object"))  # a stand-in of the type's name: the checks describe it as before
    return type(name, (), {"__repr__": lambda self: f"<a {name}>"})()


def recorder(fn, calls: list, arrays: dict):
    """The student's function, recording what each call returned or raised into ``calls``."""
    def recorded(*args, **kwargs):
        try:
            out = fn(*args, **kwargs)
        except Exception as exc:
            calls.append({"raised": type(exc).__name__, "message": str(exc).splitlines()[0][:200]
                          if str(exc).strip() else ""})
            raise
        calls.append({"value": _plain(out, arrays)})
        return out
    return recorded


def replay(calls: list, arrays):
    """Stands in for the student's function in the clean process: returns the recorded calls in order."""
    pending = list(calls)

    def replayed(*args, **kwargs):
        if not pending:
            raise RuntimeError("no recorded output for this input (the hidden test stopped early)")
        call = pending.pop(0)
        if "raised" in call:
            kind = NotImplementedError if call["raised"] == "NotImplementedError" else RuntimeError
            raise kind(f"{call['raised']}: {call['message']}" if kind is RuntimeError else call["message"])
        return _value(call["value"], arrays)
    return replayed


def hidden_check(check, student, seed: int = 1000) -> None:
    """The hidden test of one task: ``check`` on every hidden shape; raises on a failure.

    In a grade run (see the top) the seed and the nonce come from the grader and every output is
    recorded for the clean process that grades it."""
    name, folder = getattr(check, "__name__", str(check)), os.environ.get(RECORD_ENV)
    folder = Path(folder) if folder else None
    task = json.loads((folder / "tasks.json").read_text(encoding="utf-8")).get(name) if folder else None
    shapes, arrays, failures = [], {}, []
    try:
        for shape in range(len(HIDDEN_SHAPES)):
            calls = []
            shapes.append(calls)
            fn = recorder(student, calls, arrays) if task else student
            with hidden_tests(shift=(task["seed"] if task else seed) + SHAPE_STEP * shape, shape=shape):
                try:
                    check(fn)
                except AssertionError as exc:
                    failures.append(str(exc))
    finally:
        if task:
            np.savez(folder / f"{task['nonce']}.npz", **arrays)
            record = {"nonce": task["nonce"], "check": name, "shapes": shapes}
            (folder / f"{task['nonce']}.json").write_text(json.dumps(record), encoding="utf-8")
    if failures:
        raise AssertionError(failures[0])


def judge(check, seed: int, record: dict, arrays) -> tuple[bool, str]:
    """(passed, message): ``check`` on every hidden shape, the student's outputs replayed from ``record``."""
    for shape, calls in enumerate(record["shapes"][:len(HIDDEN_SHAPES)]):
        sizes = ", ".join(f"{k} = {v}" for k, v in HIDDEN_SHAPES[shape].items())
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), hidden_tests(shift=seed + SHAPE_STEP * shape, shape=shape):
            try:
                passed = bool(check(replay(calls, arrays)))
            except AssertionError as exc:
                passed, printed = False, io.StringIO(str(exc))
        if not passed:
            return False, f"hidden inputs with {sizes}: {printed.getvalue().strip()}"
    if len(record["shapes"]) < len(HIDDEN_SHAPES):
        return False, "the hidden test stopped before every shape ran"
    return True, f"correct on the hidden inputs of all {len(HIDDEN_SHAPES)} shapes"
