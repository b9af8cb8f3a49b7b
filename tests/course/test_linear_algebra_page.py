"""docs/linear_algebra.md: every Python code block of the page runs, and its assertions hold."""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "linear_algebra.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)


def test_the_page_has_a_check_for_each_of_its_five_sections():
    assert len(BLOCKS) == 5, f"expected one code block per section (5), found {len(BLOCKS)}"


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_code_block_runs(number):
    code = BLOCKS[number]
    assert "assert" in code, f"block {number + 1} checks nothing"
    assert len(code.strip().splitlines()) <= 3, f"block {number + 1} is more than three lines"
    exec(compile(code, f"{PAGE.name}, block {number + 1}", "exec"), {})  # the page's own code
