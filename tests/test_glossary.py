"""One symbol, one meaning: the notebooks' math against the glossary of notebook 00.

Notebook 00 promises a glossary in which every symbol of the course has one meaning. This test
holds the notebooks to it. Its source is the table ``SYMBOLS`` below: every symbol the course
may write in math, its one meaning, the notebook that defines it, and how it may be used.
From the markdown of notebooks 00-06 it reads every math span (``$...$`` and ``$$...$$``),
splits it into symbols, and fails when

1. a symbol is used that the table does not list (undefined, or a new meaning nobody added);
2. a symbol listed in the table is missing from notebook 00's glossary, or the glossary shows
   one the table does not know;
3. a symbol is used in a role its meaning does not allow: a quantity used as an index
   (``w_{t\\sigma}`` with the sigmoid's letter), or an index letter used as a quantity;
4. a symbol is used in a notebook outside its scope (where the table says it means the same
   thing) or before the notebook that defines it: the usual sign of a second meaning;
5. an equation that defines a symbol (``$n_t = t - 1$``) gives it another meaning than the
   table's, or a phrase known to reuse a reserved letter (``top-$K$``) appears.

How symbols are read: a Greek letter (``\\lambda``), a decorated letter (``\\tilde P``), a
letter with its superscript name (``q^l``), a letter with a subscript that names a role rather
than an index (``W_o``, ``c_\\lambda``; listed in the table with the subscript), or a single
Latin letter. Text inside ``\\text``, ``\\mathrm`` and ``\\operatorname`` is a word, not
symbols; inline code (backticks) is code, not math. A letter is an *index* where it sits in
a subscript, a superscript or square brackets, a *quantity* elsewhere.
What it cannot see: a symbol reused with a new meaning in the same role, in the same notebooks,
without a defining equation (only a reader finds that); order inside one notebook.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0[0-6]_*.py"))
GLOSSARY_START = '<a id="glossary"></a>'
GLOSSARY_END = "## 5."

# --- reading math out of a notebook ------------------------------------------------------------

GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "kappa", "lambda", "mu", "nu",
         "xi", "pi", "rho", "sigma", "phi", "psi", "omega", "chi", "zeta", "Gamma", "Delta", "Lambda",
         "Phi", "Psi", "Omega", "Sigma", "Pi", "Theta", "tau"}
DECORATIONS = {"tilde", "hat", "bar"}
WORD_COMMANDS = ("text", "mathrm", "operatorname", "textbf", "mathit")


@dataclass(frozen=True)
class Occurrence:
    key: str          # the symbol as the table spells it
    role: str         # "quantity" or "index"
    line: int         # line in the notebook's .py file
    math: str         # the whole math span, for messages


def markdown_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every markdown line of a jupytext percent notebook, '# ' removed."""
    out, in_markdown = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            continue
        if in_markdown and line.startswith("#"):
            out.append((number, line[2:] if line.startswith("# ") else line[1:]))
    return out


def math_spans(path: Path) -> list[tuple[int, str]]:
    """(line of its start, content) of every $...$ and $$...$$ in the notebook's markdown."""
    lines = markdown_lines(path)
    text = "\n".join(line for _, line in lines)
    starts = [number for number, _ in lines]
    text = re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group()), text)  # inline code is not math
    spans = []
    for match in re.finditer(r"\$\$(.+?)\$\$|\$([^$]+?)\$", text, flags=re.S):
        body = match.group(1) if match.group(1) is not None else match.group(2)
        spans.append((starts[text.count("\n", 0, match.start())], body))
    return spans


def _strip_words(math: str) -> str:
    """Blank out \\text{...}-like words (they name things, they are not symbols)."""
    pattern = r"\\(?:%s)\s*\{[^{}]*\}" % "|".join(WORD_COMMANDS)
    return re.sub(pattern, " ", math)


def _composite_pattern(key: str) -> str:
    """Regex for a table key with a role subscript/superscript: W_o matches W_o and W_{o}."""
    base, sep, rest = re.match(r"(.+?)([_^])(.+)", key).groups()
    rest = rest.strip("{}")
    return re.escape(base) + r"\s*" + re.escape(sep) + r"\s*(?:\{\s*" + re.escape(rest) + r"\s*\}|" + \
        re.escape(rest) + r"(?![A-Za-z]))"


def _index_mask(math: str) -> list[bool]:
    """True at each character that sits in a subscript, superscript or [...] (an index)."""
    mask = [False] * len(math)
    i = 0
    while i < len(math):
        ch = math[i]
        if ch in "_^" or ch == "[":
            j = i + 1
            while j < len(math) and math[j] == " ":
                j += 1
            if ch == "[":
                depth, k = 1, i + 1
                while k < len(math) and depth:
                    depth += {"[": 1, "]": -1}.get(math[k], 0)
                    k += 1
                end = k
            elif j < len(math) and math[j] == "{":
                depth, k = 1, j + 1
                while k < len(math) and depth:
                    depth += {"{": 1, "}": -1}.get(math[k], 0)
                    k += 1
                end = k
            elif j < len(math) and math[j] == "\\":
                m = re.match(r"\\[A-Za-z]+", math[j:])
                end = j + len(m.group())
            else:
                end = j + 1
            for k in range(i + 1, min(end, len(math))):
                mask[k] = True
            i = i + 1 if ch == "[" else end
            continue
        i += 1
    return mask


def symbols_in(math: str, composites: list[str]) -> list[tuple[str, str]]:
    """[(key, role)] of the symbols in one math span, read as the module docstring says."""
    math = re.sub(r"\^\{([lr])\s*\\top\}", r"^\1^{\\top}", _strip_words(math))  # q^{l\top} -> q^l^{\top}
    found = []
    for key in composites:  # role-named subscripts first, so W_o is not read as W and o
        pattern = _composite_pattern(key)
        for m in re.finditer(pattern, math):
            role = "index" if _index_mask(math)[m.start()] else "quantity"
            found.append((m.start(), key, role))
        math = re.sub(pattern, lambda m: "#" * len(m.group()), math)
    mask = _index_mask(math)
    for m in re.finditer(r"\\(tilde|hat|bar)\s*\{?\s*(\\[A-Za-z]+|[A-Za-z])\s*\}?|\\([A-Za-z]+)|([A-Za-z])", math):
        deco, decorated, command, letter = m.groups()
        if deco:
            key = f"\\{deco} {decorated}"
        elif command:
            if command not in GREEK:
                continue  # an operator: \sum, \top, \odot, \le, ...
            key = "\\" + command
        else:
            key = letter
        found.append((m.start(), key, "index" if mask[m.start()] else "quantity"))
    return [(key, role) for _, key, role in sorted(found)]


def occurrences(path: Path, composites: list[str] | None = None, skip_glossary: bool = True) -> list[Occurrence]:
    """Every symbol in the notebook's math; notebook 00's glossary section left out if asked."""
    composites = composite_keys() if composites is None else composites
    glossary = glossary_lines(path) if skip_glossary else range(0)
    out = []
    for line, math in math_spans(path):
        if line in glossary:
            continue
        for key, role in symbols_in(math, composites):
            # a superscript l/r on q is its name; the l or r itself is not an index symbol
            out.append(Occurrence(key, role, line, math.strip()))
    return out


def glossary_lines(path: Path) -> range:
    """Line numbers of notebook 00's glossary section (empty range for other notebooks)."""
    if not path.name.startswith("00_"):
        return range(0)
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines, 1) if GLOSSARY_START in line)
    end = next(i for i, line in enumerate(lines, 1) if i > start and line.startswith("# " + GLOSSARY_END))
    return range(start, end)


# --- the table: every symbol of the course, its one meaning ----------------------------------

@dataclass(frozen=True)
class Symbol:
    key: str                  # as written in math (a role subscript included: W_o, c_\lambda)
    meaning: str
    home: int                 # the notebook that defines it (0: the glossary or 00's text)
    roles: str = "quantity"   # "quantity", "index" or "both"
    scope: tuple = ()         # notebooks that may use it; () = any notebook from ``home`` on
    defs: str = ""            # regex an equation "key... = RHS" must match ("" = any)


SYMBOLS: list[Symbol] = [
]
BY_KEY = {s.key: s for s in SYMBOLS}


def composite_keys() -> list[str]:
    """Table keys read as one symbol (a role subscript or superscript), longest first."""
    return sorted((k for k in BY_KEY if re.search(r"[_^]", k)), key=len, reverse=True)
