"""Terms at first use: every term of the glossary's recall table is defined where a reader meets it.

``docs/glossary.md`` holds a table, "Terms of the recall experiments", of words the course uses
for its experiments (MQAR, the Clopper-Pearson interval, fan-in init, ...). This test reads the
*markdown* of the required notebooks in the order of the learning path (``REQUIRED``; the
optional 07b, 07c and 08 are exempt; code cells never count) and fails when a term of that table
is used before the notebook, or an earlier one, defines it.

What "defines" means, checkably: a sentence defines a term when, in that sentence,

1. the term is written in bold, ``**MQAR**``; or
2. the term is followed at once by a definition: an opening parenthesis after it
   (``MQAR (multi-query associative recall)``), or a colon after it where the term opens the
   sentence, a heading, a parenthesis, a table cell or a list item (``(xPos: queries and keys rotated
   ...)``; not ``no warm-up: ...``); bold, italics or code marks around the term are allowed; or
3. the term is the parenthesised short name of what was just spelled out, ``(MQAR)``; or
4. the sentence links the glossary (any link whose target contains ``glossary.md``).

A sentence is a run of prose ending in ``.``, ``!`` or ``?`` before a capital or a mark, a list
item, a table row or a heading, inside one markdown cell. Once a sentence defines a term, every
later use (in that notebook and the ones after it) is fine. Each term has the patterns a reader
would see (``TERMS``); a term the glossary table lists without patterns here fails the test, so
the table and the test stay in step. A phrase that only looks like a term is not one: "does a
gradient reach the pairs" (a verb) is not the measured *gradient reach*.

A definition inside a collapsed implementation note (``<details><summary>Implementation note: ...``
up to ``</details>``, which a first read skips and the time measure does not count) holds only inside
that note: a term the note defines must be defined again outside it before the lesson uses it.

``ALLOWED_UNDEFINED`` lists (notebook, term) pairs where the term is first used in notebooks
06-07 and not yet defined there; each entry is a known gap for those notebooks' rewrite. Keep it
short: an entry that is no longer needed fails the test, so it cannot outlive its fix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "docs" / "glossary.md"
TABLE_TITLE = "**Terms of the recall experiments**"
REQUIRED = ["00_start_here", "01_running_state", "01b_chunked_running_state", "02_pair_memory",
            "03_readout", "03b_chunked_readout", "03c_trained_model", "04_slots", "05_convolution",
            "06_kv_gated_fusion", "06a_kv_recall", "06b_family", "07_paper_reproduction"]

# the glossary's term -> regular expressions (case-insensitive) for the ways a notebook writes it
TERMS = {
    "MQAR": [r"\bMQAR\b", r"multi-query associative recall"],
    "gate start": [r"\bgate start\b"],
    "half-life": [r"\bhalf-li(?:fe|ves)\b"],
    "gradient reach": [r"\bgradient reach\b(?!\s+(?:the|a|its|them|back)\b)"],  # not the verb
    "fan-in init": [r"\bfan-in\b"],
    "warm-up and cosine": [r"\bwarm-?up\b", r"\bcosine\s+(?:learning-rate\s+)?(?:schedule|decay)\b"],
    "Clopper-Pearson interval": [r"\bClopper[- ]Pearson\b"],
    "the ladder": [r"\b(?:the\s+)?ladder\b"],
    "SSD": [r"\bSSD\b"],
    "exp(Δ A)": [r"\\?exp\s*\(\s*(?:Δ|\\Delta)\s*(?:_\{?t\}?)?\s*A\s*\)"],
    "xPos": [r"\bxPos\b"],
}

# (notebook, term): first used in 06-07 without a definition; the lead's rewrite of 06-07 defines
# them (docs/glossary.md has the entries). Remove an entry once that notebook defines the term.
ALLOWED_UNDEFINED: set[tuple[str, str]] = set()  # empty: 00-05 define every term 06-07 use

MARK = r"[*_`]*"  # bold, italics or code marks around a term


def glossary_terms() -> list[str]:
    """The term column of the glossary's recall table."""
    text = GLOSSARY.read_text(encoding="utf-8")
    assert TABLE_TITLE in text, f"docs/glossary.md has no table {TABLE_TITLE}"
    rows = text.split(TABLE_TITLE, 1)[1].split("\n\n", 2)[1]  # the block after the title line
    terms = []
    for row in rows.splitlines()[2:]:  # skip the header and the |---| line
        if row.startswith("|"):
            terms.append(row.strip("|").split("|")[0].strip())
    return terms


def markdown_cells(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each markdown cell of a jupytext percent notebook, '# ' removed."""
    cells: list[tuple[int, list[str]]] = []
    in_markdown = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            if in_markdown:
                cells.append((number + 1, []))
            continue
        if in_markdown and line.startswith("#"):
            cells[-1][1].append(line[2:] if line.startswith("# ") else line[1:])
    return [(start, "\n".join(lines)) for start, lines in cells]


def sentences(cell: str) -> list[tuple[int, str]]:
    """(line offset in the cell, sentence) of a markdown cell: table rows, list items, headings
    and blank lines end a block; inside a block, a '.', '!' or '?' before a capital ends a sentence."""
    blocks: list[tuple[int, list[str]]] = []
    for offset, line in enumerate(cell.splitlines()):
        starts_block = (not blocks or not line.strip() or line.lstrip().startswith(("|", "#", "- ", "* "))
                        or re.match(r"\s*\d+\. ", line) or not blocks[-1][1])
        if starts_block:
            blocks.append((offset, []))
        if line.strip():
            blocks[-1][1].append(line.strip())
        if line.lstrip().startswith(("|", "#")):
            blocks.append((offset + 1, []))  # a table row or a heading is a block of its own
    out = []
    for offset, lines in blocks:
        text = " ".join(lines)
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*`$(\[])", text):
            if sentence:
                out.append((offset, sentence))
    return out


def note_lines(cell: str) -> set[int]:
    """Line offsets of a markdown cell that lie inside an implementation note, its first and last line included."""
    inside, opened = set(), None
    for offset, line in enumerate(cell.splitlines()):
        if "<summary>Implementation note" in line:
            opened = offset
        if opened is not None:
            inside.add(offset)
            if "</details>" in line:
                opened = None
    return inside


def uses(term: str, sentence: str) -> list[re.Match]:
    return [m for pattern in TERMS[term] for m in re.finditer(pattern, sentence, flags=re.IGNORECASE)]


def defines(term: str, sentence: str) -> bool:
    """True when the sentence defines the term by one of the module docstring's four rules."""
    if re.search(r"\]\([^)]*glossary\.md[^)]*\)", sentence) or re.search(r"`[^`]*glossary\.md[^`]*`", sentence):
        return True  # rule 4: a link (or a named path) to the glossary
    for match in uses(term, sentence):
        before, after = sentence[:match.start()], sentence[match.end():]
        if before.count("**") % 2 == 1 and "**" in after:
            return True  # rule 1: inside **...**
        if re.match(MARK + r"\s*\(", after):
            return True  # rule 2: followed by '('
        if re.match(MARK + r"\s*:", after) and re.search(r"(?:^|[(|]|^[-*] |^#+ )\s*" + MARK + r"$", before):
            return True  # rule 2: 'TERM: ...' opening a sentence, heading, parenthesis, cell or item
        if re.search(r"\(" + MARK + r"$", before) and re.match(MARK + r"\)", after):
            return True  # rule 3: '(TERM)' after its spelled-out form
    return False


def first_use_problems(texts: dict[str, str] | None = None) -> list[str]:
    """'notebook:line: term used before it is defined' for every undefined first use; ``texts``
    replaces a notebook's .py text by name (for the tests below)."""
    problems, defined = [], set()
    for name in REQUIRED:
        path = ROOT / "notebooks" / f"{name}.py"
        text = (texts or {}).get(name) or path.read_text(encoding="utf-8")
        for start, cell in markdown_cells(text):
            in_note, note_defined = note_lines(cell), set()  # a note's definitions hold inside that note only
            for offset, sentence in sentences(cell):
                if offset not in in_note:
                    note_defined = set()
                for term in TERMS:
                    if not uses(term, sentence) or term in defined or term in note_defined:
                        continue
                    if defines(term, sentence):
                        (note_defined if offset in in_note else defined).add(term)
                    elif (name, term) not in ALLOWED_UNDEFINED:
                        problems.append(f"{name}.py:{start + offset}: {term!r} used before any notebook "
                                        f"defines it: {sentence[:160]}")
    return problems


def test_every_glossary_term_has_patterns():
    terms = glossary_terms()
    assert set(terms) == set(TERMS), (f"docs/glossary.md's recall table and TERMS differ: "
                                      f"only in the table {sorted(set(terms) - set(TERMS))}, "
                                      f"only here {sorted(set(TERMS) - set(terms))}")


def test_terms_are_defined_at_first_use():
    problems = first_use_problems()
    assert not problems, "\n".join(problems)


def test_allowed_undefined_entries_are_still_needed():
    """An allowed gap that a notebook has since closed must leave the list."""
    stale = []
    for name, term in sorted(ALLOWED_UNDEFINED):
        assert name in REQUIRED[REQUIRED.index("06_kv_gated_fusion"):], f"{name}: only 06-07 may be allowed"
        saved = set(ALLOWED_UNDEFINED)
        ALLOWED_UNDEFINED.discard((name, term))
        try:
            if not any(f"{name}.py:" in p and repr(term) in p for p in first_use_problems()):
                stale.append((name, term))
        finally:
            ALLOWED_UNDEFINED.clear()
            ALLOWED_UNDEFINED.update(saved)
    assert not stale, f"no longer needed, remove from ALLOWED_UNDEFINED: {stale}"


@pytest.mark.parametrize("sentence, term, expected", [
    ("The **MQAR** task asks every key.", "MQAR", True),
    ("MQAR (multi-query associative recall) asks every key.", "MQAR", True),
    ("Multi-query associative recall (MQAR) asks every key.", "MQAR", True),
    ("See [MQAR](../docs/glossary.md#terms) for the task.", "MQAR", True),
    ("(`exp(Δ A)`: the decay.)", "exp(Δ A)", True),
    ("constant lr, no warm-up: the recipe is fixed.", "warm-up and cosine", False),
    ("The MQAR runs of notebook 07 fail.", "MQAR", False),
    ("**Bold first.** A half-life of about **one token**.", "half-life", False),
    ("Does a gradient reach the pairs? The **gradient reach** is measured.", "gradient reach", True),
    ("a 95% Clopper-Pearson interval [0.00, 0.14]", "Clopper-Pearson interval", False),
])
def test_rule_on_single_sentences(sentence, term, expected):
    assert defines(term, sentence) is expected


def test_sentences_split_cells_and_keep_rows_apart():
    cell = "Intro text. Second one uses MQAR.\n\n| a | b |\n|---|---|\n| MQAR | x |\n- item one\n  continued."
    parts = [s for _, s in sentences(cell)]
    assert parts[:2] == ["Intro text.", "Second one uses MQAR."]
    assert "| MQAR | x |" in parts and "- item one continued." in parts


def test_catches_a_definition_taken_away():
    """Without 00's sentence that defines MQAR, its use there fails (the weakened sentence only names it)."""
    text = (ROOT / "notebooks" / "00_start_here.py").read_text(encoding="utf-8")
    assert "**MQAR** (multi-query" in text
    problems = first_use_problems({"00_start_here": text.replace("**MQAR** (multi-query", "MQAR, multi-query")})
    assert problems and all("'MQAR'" in p for p in problems)
    assert problems[0].startswith("00_start_here.py:")  # the weakened sentence only names it


def test_a_definition_inside_an_implementation_note_holds_only_there():
    """00's definition of MQAR moved into a collapsed note: the use after the note fails, the note's own does not."""
    text = (ROOT / "notebooks" / "00_start_here.py").read_text(encoding="utf-8")
    at = text.index("**MQAR** (multi-query")
    paragraph = text.rindex("\n#\n", 0, at) + 3  # the start of the paragraph that defines it
    noted = (text[:paragraph] + "# <details><summary>Implementation note: a name</summary>\n#\n"
             + "# **MQAR** (multi-query associative recall) is a task. The MQAR task again.\n#\n# </details>\n#\n"
             + text[paragraph:].replace("**MQAR** (multi-query", "MQAR, multi-query", 1))
    problems = first_use_problems({"00_start_here": noted})
    assert problems and all("'MQAR'" in p for p in problems)
    assert not any("The MQAR task again" in p for p in problems)  # used inside the note that defines it: fine
