"""The one rule for numbers in prose, and its checker.

**The rule.** A measured number in the prose of a notebook or a write-up (README.md, docs/paper.md,
data/results/RECALL_STUDY.md, notebooks/*.py) is (a) printed by a cell of that notebook (a write-up: in
one of its tables), (b) a value of a result file its paragraph names, or a summary of that file's runs
over seeds, (c) a number of the paper (``PAPER``) in a sentence that says "paper", or (d) worked out in
its own sentence (``1 - 5/12 = 58.3%``, ``ln 8 = 2.08``). A setting or a definition is written as code
or maths (```lr = 3e-3```, ``$\\gamma = 0.99$``) and is no measurement.

- **In scope**: decimals with two or more significant digits (``5.119``, ``0.42``) and percentages
  (``13.4%``; a range ``13.4-15.0%`` gives both ends). Plain integers (sizes, steps, seeds, years),
  one-digit decimals (``0.5``), scientific notation, headings, table rows, inline code, ``$maths$``,
  link targets, arXiv identifiers, an interval's level ("95% interval") and references
  (``section 3.2``, ``table 3b``, ``Python >= 3.10``) are out.
- **A paragraph** is a notebook's Markdown cell, a write-up's section between two headings. It names a
  result file by its name (``recall_calibrated.json``, a glob ``recall*.json``; found anywhere under
  data/results).
- **The summaries over seeds** (:func:`file_values`), for each model (``variant``) of a named file, and
  of the named files together where their seeds do not overlap: the mean and standard deviation of its
  runs' values, the Clopper-Pearson 95% interval of its seeds that recall (value >= 95%, or ``win``),
  and the paired difference of two models (mean and 95% interval over the seeds both ran).
- **The match**: prose ``x`` with ``k`` decimals matches ``v`` when ``v`` or ``100 v`` rounds to ``x``
  at ``k`` decimals; a sign is the prose's word ("lower by 0.05"), so values match by magnitude.
- **Worked out**: a number right after ``=`` (or inside the ``(`` right after) an arithmetic expression
  of numbers (``+ - * / ^``, ``ln``, ``sqrt``, ``exp``) matches the expression's value.

    from tl_research.prose_numbers import check
    check(Path("notebooks/07_paper_reproduction.py"))  # -> [Finding, ...], empty when true
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from tl_minimal.results.paper_numbers import PAPER
from tl_research.results.intervals import clopper_pearson, t_quantile

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
WIN = 0.95  # a seed "recalls" (wins) at this accuracy

# a number: 5.119, 0.42, 2,048, 13.4 (not part of a word, a version 2.13.0 or scientific 3e-4)
NUMBER = re.compile(r"(?<![\w.,^_/\\])(?<![A-Za-z]-)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|[.,]\d)(\s?%)?")
RANGE_PERCENT = re.compile(r"(\d+(?:\.\d+)?)(\s?(?:-|\u2013|to)\s?)(\d+(?:\.\d+)?)(\s?%)")  # 13.4-15.0%
# a number right after one of these words is a reference, not a measurement
REFERENCE = re.compile(r"(?:sections?|§|tables?|figures?|notebooks?|exercises?|items?|arXiv|eqs?\.?|l\.|"
                       r"lines?|version|Python|torch|v|steps?|chapter)\s*(?:[:(\[]|>=|\u2265)?\s*$"
                       r"|sections\s+[\d.]+(?:\s*,\s*[\d.]+)*(?:\s*,)?\s+(?:and|or)\s+$"  # "sections 3.1 and 3.2"
                       r"|sections\s+[\d.]+(?:\s*,\s*[\d.]+)*\s*,\s*$", re.IGNORECASE)
# code, maths, links, arXiv identifiers, the level of an interval ("95% Clopper-Pearson interval")
NOT_PROSE = re.compile(r"`[^`]*`|\$[^$\n]+\$|\]\([^)]*\)|https?://\S+|\b\d{4}\.\d{4,5}\b|\b\d+% (?:[\w-]+ )?interval")
JSON_NAME = re.compile(r"([\w.*-]+\.json)")
PAPER_WORD = re.compile(r"paper", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6} .*$", re.MULTILINE)
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z*(_`-])|\n\s*\n|\n- ")
# the arithmetic before "= x" or "(x": numbers, + - * / ^ x, ln / sqrt / exp, brackets
WORKED = re.compile(r"((?:ln|sqrt|exp|[\d.,\s()+\-*/^\u00d7\u2212])+?)\s*(?:=|\()\s*$")


@dataclass(frozen=True)
class ProseNumber:
    """One number the prose states: its text, value, decimals, whether a percentage, its sentence."""

    text: str
    value: float
    decimals: int
    percent: bool
    sentence: str
    worked: float | None = None  # "1/16 = 6.25%": the value of the arithmetic written before it


@dataclass(frozen=True)
class Finding:
    """A prose number that nothing the rule allows rounds to."""

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


def evaluate(expression: str) -> float | None:
    """The value of ``1 - 5/12``, ``ln 8``, ``187,928 / 174,848 - 1``; None unless it is arithmetic."""
    text = re.sub(r"(\d),(\d{3})", r"\1\2", expression).replace("\u00d7", "*").replace("\u2212", "-")
    text = re.sub(r"\bln\s*(\d+(?:\.\d+)?)", r"log(\1)", text.replace("^", "**").replace("ln(", "log("))
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    ops = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__, ast.Div: float.__truediv__,
           ast.Pow: float.__pow__}

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("log", "sqrt", "exp") and node.args:
            return getattr(math, node.func.id)(value(node.args[0]))
        raise ValueError(ast.dump(node))

    if not isinstance(tree, ast.BinOp | ast.Call):
        return None  # a lone number is no arithmetic
    try:
        return value(tree)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def worked_value(before: str) -> float | None:
    """The value of the arithmetic that ends ``before`` with ``=`` or ``(``, from its longest readable tail."""
    m = WORKED.search(before[-80:])
    if not m:
        return None
    tail = m.group(1)
    for start in range(len(tail)):
        if start == 0 or not tail[start - 1].isalnum():
            v = evaluate(tail[start:])
            if v is not None:
                return v
    return None


def prose_numbers(markdown: str) -> list[ProseNumber]:
    """The numbers in scope (see the module docstring) of a Markdown text, each with its sentence."""
    lines = [ln for ln in markdown.splitlines() if not ln.lstrip().startswith("#")]  # headings
    text = RANGE_PERCENT.sub(r"\1%\2\3\4", NOT_PROSE.sub(" ", "\n".join(lines)))
    found = []
    for sentence in SENTENCE_END.split(text):
        for m in NUMBER.finditer(sentence):
            whole, frac, percent = m.group(1), m.group(2) or "", bool(m.group(3))
            if REFERENCE.search(sentence[max(0, m.start() - 40):m.start()]):
                continue
            digits = (whole.replace(",", "") + frac[1:]).lstrip("0")
            if not percent and (not frac or len(digits) < 2):
                continue  # integers and one-digit decimals (0.5, 2.0) are sizes and rates
            found.append(ProseNumber(m.group(0).strip(), float(whole.replace(",", "") + frac),
                                     len(frac) - 1 if frac else 0, percent, sentence,
                                     worked_value(sentence[:m.start()])))
    return found


def numbers_in(text: str) -> set[float]:
    """Every number written in a text (outputs): 5.119, 13.4, 1.2e-03, -0.5, 2,048 (by magnitude)."""
    out = set()
    for m in re.finditer(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", text):
        try:
            out.add(abs(float(m.group(0).replace(",", ""))))
        except ValueError:
            continue
    return out


def json_numbers(value) -> set[float]:
    """Every number in a parsed JSON document (nested lists and dicts), by magnitude."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int | float):
        return {abs(float(value))}
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*(json_numbers(v) for v in value)) if value else set()
    return numbers_in(value) if isinstance(value, str) else set()


def seeds_by_model(data) -> dict[tuple, dict]:
    """{(overrides, variant, task, state_dim, ...): {seed: value}} of a file's runs (``value``,
    ``eval_accuracy`` or ``accuracy``; a run with ``win`` scores 1 or 0; ``by_step`` gives a model per step)."""
    groups: dict[tuple, dict] = {}
    runs = data.get("runs") if isinstance(data, dict) else None
    overrides = str(data.get("protocol", {}).get("overrides")) if isinstance(data.get("protocol"), dict) else ""
    for r in runs if isinstance(runs, list) else []:
        if not isinstance(r, dict) or "seed" not in r:
            continue
        key = (overrides, *(r.get(k) for k in ("variant", "task", "state_dim", "n_pairs", "lr")))
        value = next((r[k] for k in ("value", "eval_accuracy", "accuracy") if isinstance(r.get(k), int | float)), None)
        if value is not None:
            groups.setdefault(key, {})[r["seed"]] = float(r["win"]) if isinstance(r.get("win"), bool) else value
        for step, at in (r.get("by_step") or {}).items():  # the same run evaluated at earlier steps
            if isinstance(at, dict) and isinstance(at.get("accuracy"), int | float):
                groups.setdefault((*key, step), {})[r["seed"]] = at["accuracy"]
    return groups


recall_interval = functools.cache(clopper_pearson)  # (k, n) -> its 95% bounds
t_975 = functools.cache(lambda dof: t_quantile(0.975, dof))


def summaries(groups: dict[tuple, dict]) -> set[float]:
    """Each model's mean, std and recall interval over seeds; each pair's paired difference and its 95%
    interval over shared seeds (as :func:`tl_research.results.intervals.paired_difference`)."""
    out: set[float] = set()
    for seeds in groups.values():
        values = list(seeds.values())
        out |= {statistics.fmean(values), *recall_interval(sum(v >= WIN for v in values), len(values))}
        out |= {statistics.stdev(values)} if len(values) > 1 else set()
    for a, b in itertools.combinations(groups.values(), 2):
        d = [a[s] - b[s] for s in set(a) & set(b)]
        if len(d) > 1:
            mean, half = statistics.fmean(d), t_975(len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d))
            out |= {abs(mean), abs(mean - half), abs(mean + half)}  # b - a: the same magnitudes
    return out


@functools.cache
def file_values(paths: tuple[Path, ...]) -> frozenset[float]:
    """The values of the named result files and their summaries over seeds, each file alone and pooled."""
    out: set[float] = set()
    pooled: dict[tuple, dict] = {}
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        groups = seeds_by_model(data)
        out |= json_numbers(data) | summaries(groups)
        for key, seeds in groups.items():
            if not set(seeds) & set(pooled.get(key, {})):
                pooled.setdefault(key, {}).update(seeds)
    return frozenset(out | summaries(pooled) if len(paths) > 1 else out)


def cited_results(text: str, results: Path = RESULTS) -> set[float]:
    """The values (see :func:`file_values`) of the result files a paragraph names."""
    return set(file_values(tuple(sorted({p for name in set(JSON_NAME.findall(text)) for p in results.rglob(name)}))))


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
    """The paper's printed numbers (PAPER); a per-seed tuple also gives its recall interval over seeds."""
    out: set[float] = set()
    for v in (v for table in PAPER.values() for v in table.values()):
        if isinstance(v, tuple):
            out |= {float(x) for x in v} | set(recall_interval(sum(x >= WIN for x in v), len(v)))
        out |= numbers_in(v) if isinstance(v, str) else {float(v)} if isinstance(v, int | float) else set()
    return out


def matches(number: ProseNumber, values: set[float]) -> bool:
    """Does some value ``v`` (or ``100 v``) round to the prose number at the prose's precision?"""
    tol = 0.5 * 10 ** -number.decimals + 1e-9
    extra = () if number.worked is None else (abs(number.worked),)
    return any(abs(v - number.value) <= tol or abs(100 * v - number.value) <= tol for v in (*values, *extra))


def check_blocks(name: str, blocks: list[tuple[str, set[float]]], about_paper: bool = False) -> list[Finding]:
    """Findings for a text given as (paragraph, the values it rests on); ``about_paper``: every sentence
    may quote the paper (a text of notes on the paper)."""
    paper = paper_values()
    return [Finding(name, n) for markdown, values in blocks for n in prose_numbers(markdown)
            if not matches(n, values | paper if about_paper or PAPER_WORD.search(n.sentence) else values)]


def blocks(path: Path, text: str | None = None, ipynb: Path | None = None) -> list[tuple[str, set[float]]]:
    """A text's paragraphs with the values each rests on: a notebook's Markdown cells with its committed
    outputs, a write-up's sections (tables removed) with its tables; each with the result files it names."""
    text = path.read_text(encoding="utf-8") if text is None else text
    if path.suffix == ".py":
        printed = numbers_in(notebook_outputs(ipynb or path.with_suffix(".ipynb")))
        paragraphs = markdown_cells(text)
    else:
        printed = numbers_in("\n".join(TABLE_ROW.findall(text)))
        paragraphs = [TABLE_ROW.sub("", part) for part in HEADING.split(text)]
    return [(p, printed | cited_results(p)) for p in paragraphs]


def check(path: Path, text: str | None = None, ipynb: Path | None = None, about_paper: bool = False) -> list[Finding]:
    """The findings of a notebook (its ``.py``, outputs from ``ipynb``) or a write-up (``.md``)."""
    return check_blocks(path.name, blocks(path, text, ipynb), about_paper)
