"""Cross-references that resolve: every "notebook NN, section M" points at a heading numbered M.

A reader who follows "notebook 07, section 6" or "`RECALL_STUDY.md` section 12" must land on a
section that exists. This test reads the notebooks (the required 00-07 and the optional ones,
their jupytext ``.py`` sources, Markdown and comments alike), the README,
``data/results/RECALL_STUDY.md`` and ``docs/*.md``, finds every reference that names its target
and a section, and checks that the target has a heading numbered M. A link with an anchor,
``[glossary](00_start_here.ipynb#glossary)``, must land on an ``<a id="glossary">`` or on a
heading whose GitHub slug is the anchor.

The forms recognised (case-insensitive; a reference may wrap across lines):

- ``notebook 07, section 6``, ``Notebook 07 (section 6``, ``notebook 07c section 4``,
  ``notebooks 07 (section 6) and 07b (section 2)``, ``[notebook 00](00_start_here.ipynb) (section 4``;
- in a table or a list of places, a notebook's id alone: ``06b, section 5`` (after ``;``, ``|``,
  ``(`` or ``and``);
- ``06_kv_gated_fusion.ipynb, section 3``;
- a document: ``RECALL_STUDY.md section 12``, ``` `docs/paper.md` section 6.5 ```.

``sections 1-3`` checks 1, 2 and 3; ``sections 4 and 5`` both. A heading is numbered M when it
reads ``## M. Title`` or ``### M Title`` (``### 7.1 Byte-level``); ``## 4-5. Title`` numbers 4 and 5.
``notebook 03's linear attention (section 3.2)`` names 03 too. A reference that names no target
("the toy of section 2") points into its own file and is checked there; "its section 2" (whose
"its" the test cannot resolve) is skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.py"))  # the required 00-07 and the optional 07b, 07c, 08
DOCUMENTS = {"RECALL_STUDY.md": ROOT / "data" / "results" / "RECALL_STUDY.md",
             **{p.name: p for p in sorted((ROOT / "docs").glob("*.md"))}}
SOURCES = [*LESSONS, ROOT / "README.md", DOCUMENTS["RECALL_STUDY.md"], *sorted((ROOT / "docs").glob("*.md"))]

PARAGRAPH = "\x00"
NUMBER = r"\d+(?:\.\d+)*"
# "section 3", "sections 1-3", "sections 4 and 5", "sections 2, 3 and 4"
SECTIONS = rf"sections?\s+(?P<sections>{NUMBER}(?:\s*-\s*{NUMBER})?(?:(?:\s*,\s*|\s+and\s+){NUMBER}(?![\d.]*\s*%))*)"
LINK = r"(?:\]\([^)]*\))?"  # the "](target)" of a Markdown link around the name
JOIN = rf"{LINK}`?(?:,\s*|\s+\(\s*|\s+)"  # between a target and its section: ", " or " (" or " "
NOTEBOOK_ID = r"(?P<notebook>\d\d[a-z]?)"
PATTERNS = [
    # notebook 07, section 6 / notebooks 07 (section 6) and 07b (section 2): the second found by the next one
    re.compile(rf"\bnotebooks?\s+{NOTEBOOK_ID}{JOIN}{SECTIONS}", re.IGNORECASE),
    re.compile(rf"(?:[;|(]|\band)\s*{NOTEBOOK_ID}{JOIN}{SECTIONS}", re.IGNORECASE),
    # notebook 03's linear attention (section 3.2)
    re.compile(rf"\bnotebook\s+{NOTEBOOK_ID}'s\s[^()\x00]{{0,80}}?\(\s*{SECTIONS}", re.IGNORECASE),
    re.compile(rf"\b{NOTEBOOK_ID}_\w+\.(?:ipynb|py){JOIN}{SECTIONS}", re.IGNORECASE),
    re.compile(rf"(?P<document>\b[A-Za-z_]+\.md){JOIN}{SECTIONS}", re.IGNORECASE),
]
HEADING = re.compile(rf"^(?:# )?#{{1,6}}\s+(?P<first>{NUMBER})(?:-(?P<last>\d+))?\.?\s", re.MULTILINE)


def flat(path: Path) -> str:
    """The file's text, a paragraph a line: a jupytext ``# `` prefix dropped, whitespace collapsed.

    A reference never runs across an empty line ("... notebook 03b" ending a heading, "Section 2 ..."
    opening the next paragraph is no reference); paragraphs are joined with PARAGRAPH, which no
    pattern's whitespace matches.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".py":
        lines = [re.sub(r"^#\s?", "", ln) for ln in lines]
    paragraphs = re.split(r"\n\s*\n", "\n".join(lines))
    return PARAGRAPH.join(" ".join(par.split()) for par in paragraphs)


def headings(path: Path) -> set[str]:
    """The section numbers of a notebook or document: {"1", "2", "7.1", ...}; "## 4-5." gives 4 and 5."""
    numbers = set()
    for m in HEADING.finditer(path.read_text(encoding="utf-8")):
        numbers.add(m["first"])
        if m["last"]:
            numbers.update(str(n) for n in range(int(m["first"]), int(m["last"]) + 1))
    return numbers


def section_numbers(text: str) -> list[str]:
    """'1-3' -> ['1', '2', '3']; '4 and 5' -> ['4', '5']; '3.1' -> ['3.1']."""
    out = []
    for part in re.split(r"\s*,\s*|\s+and\s+", text):
        if "-" in part:
            first, last = (s.strip() for s in part.split("-"))
            if "." in first or "." in last:
                out += [first, last]
            else:
                out += [str(n) for n in range(int(first), int(last) + 1)]
        else:
            out.append(part.strip())
    return out


def target_of(match: re.Match) -> Path | None:
    """The file a reference points at, or None when the name is no notebook or document of the course."""
    if match.groupdict().get("document"):
        return DOCUMENTS.get(match["document"].split("/")[-1])
    found = sorted(NOTEBOOKS.glob(f"{match['notebook']}_*.py"))
    return found[0] if len(found) == 1 else None


def references(path: Path) -> list[tuple[str, Path | None, list[str]]]:
    """(the reference as written, its target or None, the section numbers it names) of one source file."""
    text, out, seen = flat(path), [], set()
    for pattern in PATTERNS:
        for m in pattern.finditer(text):
            if m.span("sections") in seen:  # found by an earlier pattern
                continue
            seen.add(m.span("sections"))
            if not m.groupdict().get("document") and target_of(m) is None and "notebook" not in m[0].lower():
                continue  # "(12, section" is no notebook id: only "notebook NN" must name one
            if m.groupdict().get("document") and m["document"] not in DOCUMENTS:
                continue  # a document outside the course's notes (SPEED.md has no numbered sections)
            out.append((m.start(), m[0], target_of(m), section_numbers(m["sections"])))
    return [found[1:] for found in sorted(out, key=lambda f: f[0])]  # in the order of the text


def test_the_sources_hold_references():
    """The reader finds the references it is meant to: 06b sends to 07 and RECALL_STUDY.md sends to 07c."""
    found = {path.name: references(path) for path in SOURCES}
    assert sum(len(v) for v in found.values()) > 50
    assert any(t is not None and t.stem == "07_paper_reproduction" for _, t, _ in found["06b_family.py"])
    assert any(t is not None and t.stem == "07c_recall_breaks" for _, t, _ in found["RECALL_STUDY.md"])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_reference_lands_on_a_numbered_heading(path: Path):
    broken = []
    for written, target, numbers in references(path):
        if target is None:
            broken.append(f"{written!r}: no such notebook or document")
            continue
        missing = [n for n in numbers if n not in headings(target)]
        if missing:
            broken.append(f"{written!r}: {target.name} has no section {', '.join(missing)} "
                          f"(its sections: {', '.join(sorted(headings(target), key=_order))})")
    assert not broken, f"{path.relative_to(ROOT).as_posix()}: references that lead nowhere:\n" + "\n".join(broken)


BARE = re.compile(rf"(?<!\bits\s)\b{SECTIONS}", re.IGNORECASE)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_reference_within_a_file_lands_on_its_own_heading(path: Path):
    """"section 3.1" with no notebook or document named points into the file that says it."""
    text, named = flat(path), set()
    for pattern in PATTERNS:
        named.update(m.span("sections") for m in pattern.finditer(text))
    broken = []
    for m in BARE.finditer(text):
        missing = [n for n in section_numbers(m["sections"]) if n not in headings(path)]
        if m.span("sections") not in named and missing:
            context = text[max(0, m.start() - 60):m.end()].replace(PARAGRAPH, " ")
            broken.append(f"...{context!r}: no section {', '.join(missing)} here")
    assert not broken, f"{path.relative_to(ROOT).as_posix()}: references that lead nowhere:\n" + "\n".join(broken)


def _order(number: str) -> list[int]:
    return [int(p) for p in number.split(".")]


def test_the_reader_of_references(tmp_path):
    """The parser on made-up text: each form, a range, a list, a wrapped line and a missing section."""
    text = ("# See notebook 03, section 3.1 and Notebook 07 (section\n# 6). Also notebooks 01 (section 2) and 02\n"
            "# (section 4); places: 3b-3c; 06b, sections 4-5 | 07b, section 3 |\n"
            "# and `RECALL_STUDY.md` sections 8 and 12; 06_kv_gated_fusion.ipynb, section 2.\n"
            "# As notebook 03's attention (section 3.1) showed.\n"
            "# Not a reference: table 12, section 5 of the paper; 40 sections 3.\n")
    path = tmp_path / "x.py"
    path.write_text(text, encoding="utf-8")
    found = [(w.split()[0], n) for w, _, n in references(path)]
    assert found == [("notebook", ["3.1"]), ("Notebook", ["6"]), ("notebooks", ["2"]), ("and", ["4"]),
                     (";", ["4", "5"]), ("|", ["3"]), ("RECALL_STUDY.md`", ["8", "12"]),
                     ("06_kv_gated_fusion.ipynb,", ["2"]), ("notebook", ["3.1"])], found
    assert section_numbers("1-3") == ["1", "2", "3"] and section_numbers("2, 3 and 4") == ["2", "3", "4"]
    heads = tmp_path / "h.md"
    heads.write_text("# T\n## 1. A\n### 1.1 B\n## 4-5. C\n### Unnumbered\n", encoding="utf-8")
    assert headings(heads) == {"1", "1.1", "4", "5"}


ANCHOR_LINK = re.compile(r"\]\((?P<file>[^)#\s]+\.(?:ipynb|md))#(?P<anchor>[^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    found = set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    prefix = r"^(?:# )?#{1,6}\s+" if path.suffix == ".py" else r"^#{1,6}\s+"
    return found | {slug(h) for h in re.findall(prefix + r"(.+)$", text, re.MULTILINE)}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_anchor_lands_on_a_heading(path: Path):
    broken = []
    for m in ANCHOR_LINK.finditer(path.read_text(encoding="utf-8")):
        file = m["file"]
        target = (path.parent / file)
        if file.endswith(".ipynb"):
            target = target.with_suffix(".py")
        if not target.exists():
            broken.append(f"{m[0]}: no file {file} beside {path.name}")
        elif m["anchor"] not in anchors(target):
            broken.append(f"{m[0]}: {target.name} has no anchor {m['anchor']!r}")
    assert not broken, "\n".join(broken)


def test_a_slug_is_githubs():
    assert slug("Step-matched, time-matched and 2,000 steps (tables 3a, 3b; byte-level BPB)") == \
        "step-matched-time-matched-and-2000-steps-tables-3a-3b-byte-level-bpb"
