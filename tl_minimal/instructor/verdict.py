"""Judge the hidden tests' records in a process that never ran student code.

    python -m tl_minimal.instructor.verdict JOB.json OUT.json

JOB.json: {student: {grade_id: {"check", "seed", "nonce"}}}, the records in ``<n>/`` beside it (the
n-th student in sorted order); OUT.json: {student: {grade_id: {"status", "passed", "reason"}}}.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import torch

from tl_minimal import exercises
from tl_minimal.exercises.record import judge

from .predictions import GRADED, NOT_RUN


def judge_student(folder: Path, tasks: dict) -> dict:
    """Every function task of one student, from the records in ``folder`` (this process only)."""
    verdicts = {}
    for grade_id, task in tasks.items():
        stem = folder / task["nonce"]
        try:
            record = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
            arrays = np.load(io.BytesIO(stem.with_suffix(".npz").read_bytes()), allow_pickle=False)
        except (OSError, ValueError):
            verdicts[grade_id] = {"status": NOT_RUN, "passed": False,
                                  "reason": "no record of the hidden test: a cell before it stopped it, skipped it "
                                            "or replaced the checker"}
            continue
        if record.get("nonce") != task["nonce"] or record.get("check") != task["check"]:
            verdicts[grade_id] = {"status": NOT_RUN, "passed": False, "reason": "the record is not this test's"}
            continue
        try:
            passed, reason = judge(getattr(exercises, task["check"]), task["seed"], record, arrays)
        except Exception as exc:  # a malformed record: the kernel wrote it, not the hidden test
            passed, reason = False, f"the record could not be read ({type(exc).__name__})"
        verdicts[grade_id] = {"status": GRADED, "passed": passed, "reason": reason}
    return verdicts


def main(argv: list[str]) -> int:
    job_path, out_path = Path(argv[0]), Path(argv[1])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    torch.set_num_threads(1)
    out = {student: judge_student(job_path.parent / str(number), tasks)
           for number, (student, tasks) in enumerate(sorted(job.items()))}
    out_path.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
