"""A course directory's nbgrader_config.py keeps the instructor's lines through every release.

The fast tests call the writer directly; the slow one runs the docs' per-week sequence (release,
add ``course_id`` and ``Exchange.root``, ``nbgrader release_assignment``, release the next week's
exercise, ``nbgrader release_assignment`` again) in a temporary course.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason='the course extra is missing: pip install -e ".[course]"')

from tl_minimal.instructor import course, grading

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "exercises" / "solutions"
MINE = 'c.CourseDirectory.course_id = "tlm-2027"\n'


def test_a_new_config_has_our_two_lines(tmp_path):
    path = tmp_path / "nbgrader_config.py"
    course.write_config(path)
    text = path.read_text(encoding="utf-8")
    assert course.OURS in text and "configure(get_config())" in text


def test_the_instructors_lines_stay_and_ours_are_not_added_twice(tmp_path):
    path = tmp_path / "nbgrader_config.py"
    path.write_text("c = get_config()  # noqa: F821\n" + MINE, encoding="utf-8")
    course.write_config(path)
    course.write_config(path)
    text = path.read_text(encoding="utf-8")
    assert text.count(course.OURS) == 1 and text.endswith(MINE)
    assert text.index(course.OURS) < text.index(MINE)  # ours first: the instructor's settings win


def test_a_course_made_before_the_move_is_pointed_at_the_new_module(tmp_path):
    path = tmp_path / "nbgrader_config.py"
    path.write_text("from tl_minimal.exercises.nbgrader_config import configure\n\nconfigure(get_config())\n"
                    + MINE, encoding="utf-8")
    course.write_config(path)
    text = path.read_text(encoding="utf-8")
    assert "tl_minimal.exercises" not in text and course.OURS in text and MINE in text


@pytest.mark.slow
def test_two_weeks_of_releases_keep_the_course_id(tmp_path):
    course_dir, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    assert course.main(["release", str(course_dir), "--exercise", "01_running_state",
                        "--solutions", str(SOLUTIONS)]) == 0
    config = course_dir / "nbgrader_config.py"
    config.write_text(config.read_text(encoding="utf-8") + MINE + f"c.Exchange.root = {str(exchange)!r}\n",
                      encoding="utf-8")

    def hand_out(name):
        return subprocess.run([sys.executable, "-m", "nbgrader", "release_assignment", name], cwd=course_dir,
                              env=grading.nbgrader_env(), capture_output=True, text=True, encoding="utf-8", check=False)

    week1 = hand_out("01_running_state")
    assert week1.returncode == 0, week1.stdout + week1.stderr
    assert course.main(["release", str(course_dir), "--exercise", "02_pair_memory",
                        "--solutions", str(SOLUTIONS)]) == 0
    assert MINE in config.read_text(encoding="utf-8")
    week2 = hand_out("02_pair_memory")
    assert week2.returncode == 0, week2.stdout + week2.stderr
    assert (exchange / "tlm-2027" / "outbound" / "02_pair_memory").is_dir()
