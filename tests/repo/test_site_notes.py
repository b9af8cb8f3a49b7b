"""Implementation notes render on the site as a closed box, with their Markdown and maths intact.

An aside of a lesson (float32 numerics, a device quirk) sits in ``<details><summary>Implementation
note: ...</summary>`` ... ``</details>`` in a Markdown cell, and a code cell that belongs to it is
tagged ``implementation-note`` (``tl_research.notebook_time``, which does not count them).
MyST passes the two tags through as raw HTML and parses what lies between them as Markdown only when
a blank line follows the summary and precedes ``</details>``. Without a full site build (slow:
``test_site.py``), this stages the notebooks that have notes as the build does and renders each
note with MyST's docutils parser and the site's own extensions: the box must hold rendered
paragraphs and typeset maths, not Markdown source, and the note's code cells must be collapsed
(MyST-NB's ``hide-cell``). Needs the site extra (``pip install -e ".[site]"``); skipped without it.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import pytest

from tl_research.notebook_time import IMPLEMENTATION_NOTE, NOTE_TAG

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "docs" / "site"


def _site_module(name: str):
    """docs/site/<name>.py, with docs/site on sys.path only while it imports (as in test_site.py)."""
    sys.path.insert(0, str(SITE))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SITE))


def pages_with_notes() -> list[str]:
    pages = []
    for ipynb in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        cells = json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
        if any(IMPLEMENTATION_NOTE.search("".join(c["source"])) for c in cells if c["cell_type"] == "markdown"):
            pages.append(ipynb.relative_to(ROOT).as_posix())
    return pages


def render(markdown: str, extensions: list[str]) -> str:
    """The HTML MyST's docutils parser makes of a piece of Markdown (warnings are errors)."""
    from docutils.core import publish_string
    from myst_parser.docutils_ import Parser
    settings = {"myst_enable_extensions": extensions, "output_encoding": "unicode", "report_level": 2,
                "halt_level": 2, "embed_stylesheet": False, "myst_dmath_double_inline": True}
    return publish_string(markdown, parser=Parser(), writer="html5", settings_overrides=settings)


def test_the_lessons_have_notes():
    assert "notebooks/01b_chunked_running_state.ipynb" in pages_with_notes()


@pytest.mark.parametrize("page", pages_with_notes())
def test_a_note_renders_closed_with_its_markdown_and_maths(page, tmp_path):
    pytest.importorskip("myst_parser", reason="the site extra: pip install -e '.[site]'")
    staging, alt_text = _site_module("staging"), _site_module("alt_text")
    extensions = _site_module("conf").myst_enable_extensions
    staging.stage_notebook(page, ROOT, tmp_path, set(staging.page_list(ROOT)), staging.Staged(), alt_text.AltTexts())
    cells = json.loads((tmp_path / page).read_text(encoding="utf-8"))["cells"]
    notes = 0
    for number, cell in enumerate(cells):
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and NOTE_TAG in cell["metadata"].get("tags", []):
            assert "hide-cell" in cell["metadata"]["tags"], f"{page}, cell {number}: a note's code is not collapsed"
        if cell["cell_type"] != "markdown" or not IMPLEMENTATION_NOTE.search(text):
            continue
        for note in IMPLEMENTATION_NOTE.findall(text):  # each on its own: a cell's H2 alone is a warning
            notes += 1
            html = render(note, extensions)
            summary = re.search(r"<summary>(.*?)</summary>", note).group(1)
            box = re.search(r"<details><summary>" + re.escape(summary) + r"</summary>(.*?)</details>", html, re.DOTALL)
            assert box, f"{page}, cell {number}: no <details> box around the note {summary!r}"
            inside = box.group(1)
            assert "<p>" in inside, f"{page}, cell {number}: the note's Markdown was not rendered: {inside[:300]}"
            assert "$" not in inside, f"{page}, cell {number}: maths left as source in the note: {inside[:300]}"
            assert "`" not in inside and "**" not in inside, f"{page}, cell {number}: Markdown left as source"
            if "$" in note:
                assert "<math" in inside, f"{page}, cell {number}: the note's maths is not typeset"
    assert notes, f"{page}: no note found after staging"


def test_a_note_without_its_blank_lines_stays_source():
    """Why the blank lines matter: without the one after the summary, MyST keeps the text as raw HTML."""
    pytest.importorskip("myst_parser", reason="the site extra: pip install -e '.[site]'")
    extensions = _site_module("conf").myst_enable_extensions
    good = "<details><summary>Implementation note: x</summary>\n\nA **bold** $a_t$.\n\n</details>\n"
    assert "<strong>" in render(good, extensions) and "<math" in render(good, extensions)
    cramped = good.replace("</summary>\n\n", "</summary>\n")
    assert "**bold**" in render(cramped, extensions)  # left as source: what the lessons' check rules out
