"""The grader's flags (tl_minimal/instructor/scan.py): what a TA is asked to read, and what is left alone."""

from __future__ import annotations

import pytest

from tl_minimal.instructor.scan import scan

SETUP = "import torch\nfrom tl_minimal import exercises as ex\nfrom tl_minimal.conv import conv_fast\n"


def _notebook(*answers: str, setup: str = SETUP) -> dict:
    cells = [{"cell_type": "code", "source": setup, "metadata": {}}]
    for number, source in enumerate(answers, 1):
        cells.append({"cell_type": "code", "source": source,
                      "metadata": {"nbgrader": {"grade_id": f"task{number}_code", "solution": True}}})
    cells.append({"cell_type": "code", "source": "ex.check_causal_pad(causal_pad)",
                  "metadata": {"nbgrader": {"grade_id": "task1_check", "locked": True, "grade": True}}})
    return {"cells": cells}


RELEASE = _notebook("raise NotImplementedError")


def test_an_honest_answer_is_not_flagged():
    honest = "def causal_pad(x, k):\n    zeros = x.new_zeros(x.shape[0], k - 1, x.shape[2])\n" \
             "    return torch.cat([zeros, x], dim=1)\n"
    assert scan(_notebook(honest), RELEASE) == []


@pytest.mark.parametrize("source, kind", [
    ("get_ipython().events.register('pre_run_cell', print)", "ipython"),
    ("%env TL_GRADED=0", "ipython"),
    ("import os\nos.environ['TL_GRADED'] = '0'", "environment"),
    ("import builtins\nbuiltins.AssertionError = Exception", "monkeypatch"),
    ("import sys\nsys.modules['tl_minimal.exercises'] = None", "monkeypatch"),
    ("torch.allclose = lambda *a, **k: True", "monkeypatch"),
    ("setattr(ex, 'check_causal_pad', print)", "monkeypatch"),
    ("ex.check_causal_pad = print", "checker"),
    ("import sys\nf = sys._getframe(1)", "frames"),
    ("def f():\n    return conv_fast", "reference"),
    ("import tl_minimal.conv as c", "reference"),
    ("from tl_minimal.exercises import conv", "checker"),
    ("import pathlib, tl_minimal\np = pathlib.Path(tl_minimal.__file__)", "key file"),
    ("open('answer_key.json')", "key file"),
    ("def f(:\n", "not python"),
    ("exec(bytes.fromhex('7061737320'))", "dynamic code"),
    ("f = eval('lambda x: x')", "dynamic code"),
    ("code = compile('x = 1', 'c', 'exec')", "dynamic code"),
    ("check = getattr(torch, 'all' + 'close')", "computed name"),
    ("globals()['e' + 'x'] = None", "computed name"),
    ("import sys\nsys.meta_path.insert(0, object())", "import system"),
    ("import importlib.util", "import system"),
    ("import subprocess\nsubprocess.Popen(['sleep', '1'])", "process"),
])
def test_each_kind_of_reach_is_flagged(source, kind):
    flags = scan(_notebook(source), RELEASE)
    assert any(f.startswith(f"task1_code: {kind}") for f in flags), flags


def test_a_changed_setup_cell_is_scanned_and_an_unchanged_one_is_not():
    assert scan(_notebook("x = 1"), RELEASE) == []  # the release's own setup imports the checker
    flags = scan(_notebook("x = 1", setup=SETUP + "import os\nos.environ['TL_GRADED'] = '0'\n"), RELEASE)
    assert any(f.startswith("cell 0: environment") for f in flags), flags


def test_a_flag_names_the_line_it_matched():
    flags = scan(_notebook("x = 1\nexec(bytes.fromhex('00'))\n"), RELEASE)
    assert any("line 2: exec(bytes.fromhex('00'))" in f for f in flags), flags
