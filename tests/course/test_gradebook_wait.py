"""Autograding several notebooks at once (``grade --jobs``) cannot fail on a locked gradebook (issue 51).

nbgrader keeps its gradebook in SQLite through SQLAlchemy (``nbgrader.api.Gradebook``:
``create_engine(db_url)``, no timeout of its own), so a write that finds another process's write
lock waits SQLite's default 5 s, then fails with "database is locked". Every write nbgrader makes
is short (a commit per grade cell), but on a busy machine the process holding the lock can be
descheduled for longer. The grade command hands its nbgrader processes and its own writes
``grading.gradebook_url``, whose connections wait up to ``grading.DB_WAIT_S`` seconds.

Here one process holds the write lock for 6.5 s while two others write a student as nbgrader
does: with nbgrader's default URL the write fails, with ours it waits and succeeds. The path has a
space, a ``%`` and a non-ASCII letter (the URL quotes them). tests/course/test_grading.py grades
24 notebooks two at a time and gets the scores one at a time gives. Skipped without nbgrader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason='the course extra is missing: pip install -e ".[course]"')

from tl_minimal.instructor.grading import gradebook_url

HOLD_S = 6.5  # longer than SQLite's default busy timeout (5 s)

HOLDER = """
import pathlib, sqlite3, sys, time
db, ready, hold = sys.argv[1], [pathlib.Path(p) for p in sys.argv[2:4]], float(sys.argv[4])
con = sqlite3.connect(db, isolation_level=None)
con.execute("BEGIN IMMEDIATE")  # the write lock, as a process in the middle of a commit holds it
con.execute("UPDATE student SET first_name = 'held' WHERE id = 'first'")
print("held", flush=True)
while not all(p.exists() for p in ready):
    time.sleep(0.05)
time.sleep(hold)
con.execute("COMMIT")
"""

WRITER = """
import json, pathlib, sys, time
from nbgrader.api import Gradebook
url, ready, student = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
with Gradebook(url) as gb:
    ready.touch()
    started = time.monotonic()
    try:
        gb.update_or_create_student(student, first_name="x")  # nbgrader autograde's first write
        error = ""
    except Exception as problem:
        error = str(problem)
print(json.dumps({"error": error, "waited": time.monotonic() - started}))
"""


def _env() -> dict:
    # Gradebook() of a new file runs the `alembic` script of this environment
    return dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def test_a_write_waits_for_another_processs_lock_where_nbgraders_default_fails(tmp_path, monkeypatch):
    course = tmp_path / "course 50% é"
    course.mkdir()
    monkeypatch.setenv("PATH", _env()["PATH"])
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(course)) as gb:  # makes course/gradebook.db, as nbgrader's release does
        gb.add_student("first")
    db = course / "gradebook.db"
    assert db.is_file(), "gradebook_url does not name course/gradebook.db"
    ready = [tmp_path / "default.ready", tmp_path / "ours.ready"]
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), *map(str, ready), str(HOLD_S)],
                              stdout=subprocess.PIPE, text=True, encoding="utf-8")
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        writers = {name: subprocess.Popen([sys.executable, "-c", WRITER, url, str(flag), f"student_{name}"],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          encoding="utf-8", env=_env())
                   for name, url, flag in (("default", f"sqlite:///{db}", ready[0]),
                                           ("ours", gradebook_url(course), ready[1]))}
        results = {}
        for name, writer in writers.items():
            out, err = writer.communicate(timeout=120)
            assert writer.returncode == 0, err[-2000:]
            results[name] = json.loads(out.strip().splitlines()[-1])
        assert holder.wait(timeout=120) == 0
    finally:
        holder.kill()
    print(f"\nwrites while another process held the lock {HOLD_S} s: {results} "
          f"({time.monotonic() - started:.1f} s in all)")
    assert "database is locked" in results["default"]["error"], results  # what grade --jobs must not meet
    assert not results["ours"]["error"] and results["ours"]["waited"] > 1, results
    with Gradebook(gradebook_url(course)) as gb:
        assert {s.id for s in gb.students} == {"first", "student_ours"}
        assert gb.find_student("first").first_name == "held"
