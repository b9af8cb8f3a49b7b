"""Judge the hidden tests' records in a process that never ran student code.

    python -m tl_minimal.instructor.verdict JOB.json OUT.json

JOB.json: {student: {"tasks": {grade_id: {"check", "seed", "nonce"}}, "records": {nonce: [json, npz]}}}, the
record files in base64; OUT.json: {student: {grade_id: {"status", "passed", "reason"}}}.
"""

from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path

import numpy as np
import torch

from tl_minimal import exercises
from tl_minimal.exercises.record import judge

from .predictions import GRADED, NOT_RUN


def judge_student(tasks: dict, records: dict) -> dict:
    """Every function task of one student, from its records ({nonce: [json, npz] in base64})."""
    verdicts = {}
    for grade_id, task in tasks.items():
        try:
            text, data = (base64.b64decode(part) for part in records[task["nonce"]])
            record, arrays = json.loads(text), np.load(io.BytesIO(data), allow_pickle=False)
        except (KeyError, EOFError, OSError, ValueError):
            verdicts[grade_id] = {"status": NOT_RUN, "passed": False,
                                  "reason": "no record of the hidden test: a cell before it stopped it, skipped it "
                                            "or replaced the checker"}
            continue
        if not isinstance(record, dict) or (record.get("nonce"), record.get("check")) != (task["nonce"], task["check"]):
            verdicts[grade_id] = {"status": NOT_RUN, "passed": False, "reason": "the record is not this test's"}
            continue
        try:
            passed, reason = judge(getattr(exercises, task["check"]), task["seed"], record, arrays)
        except Exception as exc:  # a malformed record: the kernel wrote it, not the hidden test
            passed, reason = False, f"the record could not be read ({type(exc).__name__})"
        verdicts[grade_id] = {"status": GRADED, "passed": passed, "reason": reason}
    return verdicts


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    torch.set_num_threads(1)
    out = {student: judge_student(entry["tasks"], entry["records"]) for student, entry in job.items()}
    Path(argv[1]).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
