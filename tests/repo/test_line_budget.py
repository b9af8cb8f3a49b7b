"""The library a student reads stays short: tests/repo/line_budget.py's budgets (issue 31, item 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import line_budget
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_script_prints_every_group_and_fails_when_one_is_over():
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "repo" / "line_budget.py")], capture_output=True,
                         text=True, encoding="utf-8", check=False)
    rows = line_budget.groups()
    assert all(group in out.stdout for group, _, _ in rows)
    assert out.returncode == (1 if any(n > budget for _, n, budget in rows) else 0)


@pytest.mark.parametrize("group", [group for group, _, _ in line_budget.groups()])
def test_each_group_is_within_its_budget(group):
    n, budget = next((n, b) for g, n, b in line_budget.groups() if g == group)
    assert n <= budget, f"{group}: {n} lines, budget {budget} (python tests/repo/line_budget.py)"
