"""Predictions graded from the submitted text (tl_minimal/instructor/predictions.py): the first answer
written counts, a later change is noted, a computed value scores 0, the kernel is never asked."""

from __future__ import annotations

import pytest

from tl_minimal.instructor.predictions import grade_prediction, plan

LETTER = {"kind": "prediction", "name": "my_prediction", "correct": "b", "choices": "abcd", "tolerance": None,
          "hints": {"c": "which state pairs with b_1?"}, "points": 1}
NUMBER = {**LETTER, "correct": 0.05905, "choices": None, "tolerance": 1e-3, "hints": {"number": "count the lam"}}


def _notebook(answer: str, *later: str) -> dict:
    cells = [{"cell_type": "code", "source": answer, "metadata": {"nbgrader": {"grade_id": "task3_answer"}}}]
    cells += [{"cell_type": "code", "source": text, "metadata": {}} for text in later]
    return {"cells": cells}


@pytest.mark.parametrize(("answer", "passed", "words"), [
    ('my_prediction = "b"', True, "correct"),
    ('my_prediction = "(B)"', True, "correct"),
    ('my_prediction = None\nmy_prediction = "b"', True, "correct"),  # the placeholder left above
    ('my_prediction = "c"', False, "which state pairs"),
    ('my_prediction = "c"\nmy_prediction = "b"', False, "later change"),  # four tries open nothing
    ("my_prediction = None", False, "no answer"),
    ("import json\nmy_prediction = json.load(open('k'))['03.3']", False, "not computed"),
    ("my_prediction = 'ab'[1]", False, "not computed"),
])
def test_a_letter_is_read_from_the_text(answer, passed, words):
    verdict = grade_prediction(LETTER, _notebook(answer), "task3_answer")
    assert verdict["passed"] is passed and words in verdict["reason"], verdict


def test_a_later_cell_changes_nothing_and_is_noted():
    verdict = grade_prediction(LETTER, _notebook('my_prediction = "c"', 'my_prediction = "b"'), "task3_answer")
    assert not verdict["passed"] and "1 later change" in verdict["reason"]


@pytest.mark.parametrize(("answer", "passed"), [
    ("my_prediction = 0.059", True), ("my_prediction = 0.9 ** 5 * 0.1", True),
    ("my_prediction = 0.5", False), ("my_prediction = 'x'", False),
])
def test_a_number_may_be_written_as_arithmetic(answer, passed):
    assert grade_prediction(NUMBER, _notebook(answer), "task3_answer")["passed"] is passed


def test_the_plan_reads_the_key_from_the_source_notebooks_hidden_test():
    check = ("ex.check_x(my_prediction)\n### BEGIN HIDDEN TESTS\n_ex.mark_prediction(my_prediction, task='03.3 r_1', "
             "correct='b', choices='abcd', hints={'a': 'no'}, explanation='because')\n### END HIDDEN TESTS")
    function = "ex.check_readout_step(readout_step)\n_ex.hidden_check(_ex.check_readout_step, readout_step)"
    cells = [{"cell_type": "code", "source": s, "metadata": {"nbgrader": {"grade": True, "grade_id": g, "points": p}}}
             for s, g, p in ((function, "task1_check", 2), (check, "task3_check", 1))]
    tasks = plan({"cells": cells})
    assert tasks["task1_check"] == {"kind": "function", "check": "check_readout_step", "points": 2}
    assert tasks["task3_check"]["correct"] == "b" and tasks["task3_check"]["name"] == "my_prediction"


def test_a_missing_or_foreign_record_is_a_test_that_did_not_run():
    import base64
    import io
    import json

    import numpy as np

    from tl_minimal.instructor.predictions import NOT_RUN
    from tl_minimal.instructor.verdict import judge_student

    tasks = {"task1_check": {"check": "check_readout_step", "seed": 1, "nonce": "aa"},
             "task2_check": {"check": "check_readout_loop", "seed": 1, "nonce": "bb"},
             "task4_check": {"check": "check_readout_loop", "seed": 1, "nonce": "dd"}}
    record = {"nonce": "cc", "check": "check_readout_loop", "shapes": [[], [], []]}  # another test's nonce
    arrays = io.BytesIO()
    np.savez(arrays)
    records = {nonce: [base64.b64encode(f).decode() for f in (json.dumps(text).encode(), arrays.getvalue())]
               for nonce, text in (("bb", record), ("dd", []))}  # no record of aa; one of dd that is not a dict
    verdicts = judge_student(tasks, records)
    assert {v["status"] for v in verdicts.values()} == {NOT_RUN}
    assert not any(v["passed"] for v in verdicts.values())
