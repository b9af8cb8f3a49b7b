"""Every number in the prose is true: each measured number a text states is found in what it reads.

A notebook's Markdown says "a constant guess scores 13.4-15.0%"; the cell below it prints the
numbers. This module finds every *measured-looking* number in the prose and checks that some value
the text can rest on rounds to it at the precision the prose writes:

- **which numbers** (the scope): decimals with at least two significant digits (``5.119``,
  ``0.42``, ``2.5``) and percentages (``13.4%``, ``25%``; in a range ``13.4-15.0%`` both ends).
  Plain integers (sizes, steps, seeds, counts, years) are definitions far more often than
  measurements and are left out, as are numbers inside inline code (identifiers such as
  ``lm_d60_S16.json``), links, headings, versions (``2.13.0``), scientific notation (``3e-4``) and
  references (``section 3.2``, ``table 3b``, ``l.387``) and arXiv identifiers (``2606.05175``).
- **what they rest on** (the sources), per *block* (a notebook's Markdown cell, a document's
  section between two headings):

  - a notebook: every number in its committed outputs (streams, plain-text and Markdown displays
    of the ``.ipynb``); a document (``docs/paper.md``, ``RECALL_STUDY.md``): every number in its
    own tables, which are its printed results (the tables themselves are not checked here: their
    rows are summaries over seeds that the results code computes, not values of a file), and every
    number the lesson notebooks print (the documents quote the course's tables: "table 3b");
  - every number in the result files the block names (``lm_d60_S16.json``, a glob
    ``recall*.json``; looked up anywhere under ``data/results``), and for a file of runs each
    row's mean and standard deviation over seeds, as the tables print them;
  - in a sentence that mentions the paper, the paper's own numbers
    (:data:`~tl_minimal.results.paper_numbers.PAPER`);
  - a number written as the value of a fraction in the sentence itself (``1/16 = 6.25%``,
    ``1/8 (12.5%)``): the fraction.
- **the match**: prose ``x`` written with ``k`` decimals matches a value ``v`` when ``v`` rounds
  to ``x`` at ``k`` decimals (``|v - x| <= 0.5 * 10**-k``), or ``100 v`` does (a fraction quoted
  as a percentage: 0.134 as 13.4%).

What is left unmatched is a finding, unless the allow-list (``tests/course/test_prose_numbers.py``)
names it with the reason: a definition (a rate, a size) or a number derived in the sentence.

    from tl_research.prose_numbers import check_notebook
    check_notebook(Path("notebooks/07_paper_reproduction.py"))  # -> [Finding, ...], empty when true
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tl_minimal.results.files import load_runs
from tl_minimal.results.intervals import clopper_pearson
from tl_minimal.results.paper_numbers import PAPER
from tl_minimal.results.tables import summarize

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"

# a number: 5.119, 0.42, 2,048, 13.4 (not part of a word, a version 2.13.0 or scientific 3e-4)
NUMBER = re.compile(r"(?<![\w.,^_/\\])(?<![A-Za-z]-)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|[.,]\d)(\s?%)?")
RANGE_PERCENT = re.compile(r"(\d+(?:\.\d+)?)(\s?(?:-|\u2013|to)\s?)(\d+(?:\.\d+)?)(\s?%)")  # 13.4-15.0%
# a number right after one of these words is a reference, not a measurement
REFERENCE = re.compile(r"(?:sections?|§|tables?|figures?|notebooks?|exercises?|items?|arXiv|eqs?\.?|l\.|"
                       r"lines?|version|Python|torch|v|steps?|chapter)\s*[:(\[]?\s*$"
                       # the later numbers of a list of sections: "sections 3.1 and 3.2", "sections 2, 3 and 4"
                       r"|sections\s+\d+(?:\.\d+)*(?:\s*,\s*\d+(?:\.\d+)*)*(?:\s*,)?\s+(?:and|or)\s+$"
                       r"|sections\s+\d+(?:\.\d+)*(?:\s*,\s*\d+(?:\.\d+)*)*\s*,\s*$", re.IGNORECASE)
INLINE_CODE = re.compile(r"`[^`]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)|https?://\S+")
JSON_NAME = re.compile(r"([\w.*-]+\.json)")
PAPER_WORD = re.compile(r"paper", re.IGNORECASE)
FRACTION = re.compile(r"(\d+)\s*/\s*(\d+)\s*(?:=|\()\s*$")  # "1/16 = " or "1/8 (" before a number
HEADING = re.compile(r"^#{1,6} .*$", re.MULTILINE)  # a heading line (its numbers are section numbers)
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)
ARXIV_ID = re.compile(r"\b\d{4}\.\d{4,5}\b")  # 2606.05175: an identifier, not a measurement
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z*(_`-])|\n\s*\n|\n- ")


@dataclass(frozen=True)
class ProseNumber:
    """One number the prose states: its text, value, decimals, whether a percentage, its sentence."""

    text: str
    value: float
    decimals: int
    percent: bool
    sentence: str
    fraction: float | None = None  # "1/16 = 6.25%": the value the sentence derives it from


@dataclass(frozen=True)
class Finding:
    """A prose number that no source value rounds to."""

    file: str
    number: ProseNumber

    def __str__(self) -> str:
        return f"{self.file}: {self.number.text} in: {' '.join(self.number.sentence.split())[:200]}"


def markdown_cells(py_text: str) -> list[str]:
    """The Markdown cells of a jupytext percent-format notebook, comment marks removed."""
    cells, current = [], None
    for line in py_text.splitlines():
        if line.startswith("# %%"):
            if current is not None:
                cells.append("\n".join(current))
            current = [] if "[markdown]" in line else None
        elif current is not None:
            current.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
    if current is not None:
        cells.append("\n".join(current))
    return cells


def prose_numbers(markdown: str) -> list[ProseNumber]:
    """The numbers in scope (see the module docstring) of a Markdown text, each with its sentence."""
    lines = [ln for ln in markdown.splitlines() if not ln.lstrip().startswith("#")]  # headings
    text = ARXIV_ID.sub(" ", LINK_TARGET.sub(" ", INLINE_CODE.sub(" ", "\n".join(lines))))
    text = RANGE_PERCENT.sub(r"\1%\2\3\4", text)
    found = []
    for sentence in SENTENCE_END.split(text):
        for m in NUMBER.finditer(sentence):
            whole, frac, percent = m.group(1), m.group(2) or "", bool(m.group(3))
            if REFERENCE.search(sentence[max(0, m.start() - 40):m.start()]):
                continue
            digits = (whole.replace(",", "") + frac[1:]).lstrip("0")
            if not percent and (not frac or len(digits) < 2):
                continue  # integers and one-digit decimals (0.5, 2.0) are sizes and rates
            ratio = FRACTION.search(sentence[max(0, m.start() - 16):m.start()])
            found.append(ProseNumber(m.group(0).strip(), float(whole.replace(",", "") + frac),
                                     len(frac) - 1 if frac else 0, percent, sentence,
                                     int(ratio.group(1)) / int(ratio.group(2)) if ratio else None))
    return found


def numbers_in(text: str) -> set[float]:
    """Every number written in a text (outputs): 5.119, 13.4, 1.2e-03, -0.5, 2,048."""
    out = set()
    for m in re.finditer(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", text):
        try:
            out.add(abs(float(m.group(0).replace(",", ""))))  # a sign is prose's word ("lower by 0.2")
        except ValueError:
            continue
    return out


def json_numbers(value) -> set[float]:
    """Every number in a parsed JSON document (nested lists and dicts)."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int | float):
        return {abs(float(value))}  # as in outputs: a sign is prose's word ("lower by 0.079")
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*(json_numbers(v) for v in value)) if value else set()
    return numbers_in(value) if isinstance(value, str) else set()


def cited_results(text: str, results: Path = RESULTS) -> set[float]:
    """The numbers of the result files a text names (``recall.json``, ``recall*.json``)."""
    out: set[float] = set()
    for name in set(JSON_NAME.findall(text)):
        for path in results.rglob(name):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                out |= json_numbers(data) | run_summaries(path) | win_interval(data)
            except (OSError, ValueError):
                continue
    return out


def win_interval(data) -> set[float]:
    """A file whose runs say ``win`` (true/false): the 95% Clopper-Pearson bounds of its win rate, k of n."""
    runs = data.get("runs") if isinstance(data, dict) else None
    wins = [r["win"] for r in runs or () if isinstance(r, dict) and isinstance(r.get("win"), bool)]
    return set(clopper_pearson(sum(wins), len(wins))) if wins else set()


def run_summaries(path: Path) -> set[float]:
    """A runs file's rows as its tables print them: each row's mean and std over seeds."""
    try:
        rows = summarize(load_runs(path))
    except (KeyError, TypeError, ValueError):
        return set()  # not a file of runs (a probe, a diagnosis)
    return {v for r in rows for v in (r.mean, r.std) if v is not None}


def notebook_outputs(ipynb: Path) -> str:
    """The text of a committed notebook's outputs (streams, plain-text and Markdown displays)."""
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            for kind in ("text/plain", "text/markdown"):
                parts.append("".join(out.get("data", {}).get(kind, "")))
    return "\n".join(parts)


def paper_values() -> set[float]:
    """The paper's printed numbers (PAPER), as floats (a per-seed tuple gives each of its values)."""
    out: set[float] = set()
    for table in PAPER.values():
        for v in table.values():
            out |= {float(x) for x in (v if isinstance(v, tuple) else (v,)) if isinstance(x, int | float)}
            if isinstance(v, str):
                out |= numbers_in(v)
    return out


def matches(number: ProseNumber, values: set[float]) -> bool:
    """Does some value ``v`` (or ``100 v``) round to the prose number at the prose's precision?"""
    tol = 0.5 * 10 ** -number.decimals + 1e-9
    extra = () if number.fraction is None else (number.fraction,)
    return any(abs(v - number.value) <= tol or abs(100 * v - number.value) <= tol for v in (*values, *extra))


def check_blocks(name: str, blocks: list[tuple[str, set[float]]], allowed=frozenset(),
                 about_paper: bool = False) -> list[Finding]:
    """Findings for a text given as (block, the values it rests on); ``allowed``: number texts to skip;
    ``about_paper``: every sentence may quote the paper (a text of notes on the paper)."""
    paper = paper_values()
    findings = []
    for markdown, values in blocks:
        for n in prose_numbers(markdown):
            if n.text in allowed or n.text.rstrip("%").strip() in allowed:
                continue
            pool = values | paper if about_paper or PAPER_WORD.search(n.sentence) else values
            if not matches(n, pool):
                findings.append(Finding(name, n))
    return findings


def check_notebook(py: Path, allowed=frozenset(), ipynb: Path | None = None) -> list[Finding]:
    """A notebook's Markdown cells against its committed outputs and the result files each cell names."""
    outputs = numbers_in(notebook_outputs(ipynb or py.with_suffix(".ipynb")))
    cells = markdown_cells(py.read_text(encoding="utf-8"))
    return check_blocks(py.name, [(cell, outputs | cited_results(cell)) for cell in cells], allowed)


def course_outputs(notebooks: Path = ROOT / "notebooks") -> set[float]:
    """Every number the lesson notebooks print (the tables a document quotes: "table 1", "table 3b")."""
    return set().union(*(numbers_in(notebook_outputs(nb)) for nb in sorted(notebooks.glob("[0-9]*.ipynb"))))


def check_document(md: Path, allowed=frozenset(), text: str | None = None, about_paper: bool = False) -> list[Finding]:
    """A Markdown document's prose (not its tables) against its tables, the course's printed tables
    and the files each section names."""
    text = md.read_text(encoding="utf-8") if text is None else text
    tables = numbers_in("\n".join(TABLE_ROW.findall(text))) | course_outputs()
    sections = [TABLE_ROW.sub("", part) for part in HEADING.split(text)]
    return check_blocks(md.name, [(s, tables | cited_results(s)) for s in sections], allowed, about_paper)
