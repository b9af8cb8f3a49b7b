"""One symbol, one meaning: the notebooks' math against the course's glossary.

The course promises a glossary in which every symbol has one meaning: the page
``docs/glossary.md``, of which notebook 00, section 4, shows the rows of the layer's symbols. This test
holds the notebooks to it. Its source is the table ``SYMBOLS`` below: every symbol the course
may write in math, its one meaning, the notebook that defines it, and how it may be used.
From the markdown of notebooks 00-06 (and 01b, 03b and 03c, the continuations of 01 and 03) it reads every
math span (``$...$`` and ``$$...$$``), splits it into symbols, and fails when

1. a symbol is used that the table does not list (undefined, or a new meaning nobody added);
2. a symbol of notebook 00's drawing of the layer (its section 2, what notebooks 01-03 build) is
   missing from notebook 00's glossary, or that glossary shows a symbol notebook 00 does not
   introduce (a later notebook defines its own where it first uses it), or a row of it differs from
   the page's row of the same symbol; the page ``docs/glossary.md`` must list every symbol;
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

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted([*(ROOT / "notebooks").glob("0[0-6]_*.py"), ROOT / "notebooks" / "01b_chunked_running_state.py",
                    ROOT / "notebooks" / "03b_chunked_readout.py", ROOT / "notebooks" / "03c_trained_model.py",
                    ROOT / "notebooks" / "06a_kv_recall.py"])
GLOSSARY_START = '<a id="glossary"></a>'
GLOSSARY_END = "## 5."

# --- reading math out of a notebook ------------------------------------------------------------

GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "kappa", "lambda", "mu", "nu",
         "xi", "pi", "rho", "sigma", "phi", "psi", "omega", "chi", "zeta", "Gamma", "Delta", "Lambda",
         "Phi", "Psi", "Omega", "Sigma", "Pi", "Theta", "tau"}
DECORATIONS = {"tilde", "hat", "bar"}
WORD_COMMANDS = ("text", "mathrm", "operatorname", "textbf", "mathit", "mathcal")


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
    for match in re.finditer(r"\$\$(.+?)\$\$|\$([^$]+?)\$", text, flags=re.DOTALL):
        body = match.group(1) if match.group(1) is not None else match.group(2)
        spans.append((starts[text.count("\n", 0, match.start())], body))
    return spans


def _strip_words(math: str) -> str:
    """Blank out \\text{...}-like words (they name things, they are not symbols)."""
    pattern = r"\\(?:" + "|".join(WORD_COMMANDS) + r")\s*\{[^{}]*\}"
    while True:  # innermost first: \operatorname{top\text{-}k}
        stripped = re.sub(pattern, lambda m: " " * len(m.group()), math)
        if stripped == math:
            return math
        math = stripped


def _composite_pattern(key: str) -> str:
    """Regex for a multi-character table key: W_o also matches W_{o}, W_{ql} also W_ql is not."""
    m = re.match(r"(.+?)([_^])(.+)$", key)
    if not m:  # a word-like name (pos): not inside a longer run of letters
        return r"(?<![A-Za-z\\])" + re.escape(key) + r"(?![A-Za-z])"
    base, sep, rest = m.groups()
    inner = rest[1:-1] if rest.startswith("{") and rest.endswith("}") else rest
    variants = [re.escape(base) + r"\s*" + re.escape(sep) + r"\s*\{\s*" + re.escape(inner) + r"\s*\}"]
    if re.fullmatch(r"\\[A-Za-z]+|[A-Za-z0-9]", inner):  # one token: braces optional
        variants.append(re.escape(base) + r"\s*" + re.escape(sep) + r"\s*" + re.escape(inner) + r"(?![A-Za-z])")
    return r"(?<![A-Za-z\\])(?:" + "|".join(variants) + ")"


def _index_mask(math: str) -> list[bool]:
    """True at each character that sits in a subscript, superscript or [...] (an index)."""
    mask = [False] * len(math)
    i = 0
    while i < len(math):
        ch = math[i]
        bracket = ch == "[" and i > 0 and not re.search(r"\\[A-Za-z]+\s*$", math[:i]) and math[i - 1] not in " ("
        if ch in "_^" or bracket:
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
    math = re.sub(r"\^\{([lr])\s*\\top\}", r"^\1^{\\top}", math)  # q^{l\top} -> q^l^{\top}
    found = []
    for key in composites:  # role-named subscripts first, so W_o is not read as W and o
        pattern = _composite_pattern(key)
        mask = _index_mask(math)
        for m in re.finditer(pattern, math):
            found.append((m.start(), key, "index" if mask[m.start()] else "quantity"))
        math = re.sub(pattern, lambda m: "#" * len(m.group()), math)
    math = _strip_words(math)
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
    home: int                 # the notebook that defines it (0: notebook 00)
    roles: str = "quantity"   # "quantity", "index" or "both"
    defs: str = ""            # regex every defining equation "key... = RHS" must match ("" = any)
    index_meaning: str = ""   # where a letter means something else as an index, said here
    scope: tuple = ()         # the only notebooks that may use it; () = any from ``home`` on


SYMBOLS: list[Symbol] = [
    # sizes and time (notebook 00)
    Symbol("B", "batch size", 0),
    Symbol("T", "time: the sequence length", 0, "both"),
    Symbol("H", "number of heads", 0, "both"),
    Symbol("S", "state size per head", 0, "both"),
    Symbol("d", "model width", 0, "both"),
    Symbol("V", "vocabulary size", 0),
    Symbol("t", "the current position", 0, "both"),
    Symbol("\\tau", "an earlier position, where something was written (only time)", 0, "both"),
    Symbol("u", "a position inside a product or sum over time (only time)", 1, "index"),
    Symbol("i", "an index into a vector or matrix (bound where it is used)", 2, "both"),
    Symbol("j", "an index into a vector or matrix, or (notebook 06) the position of a key-value entry", 2, "both"),
    Symbol("C", "chunk size of the fast forms", 1, "both"),
    Symbol("c", "the first position of a chunk", 1, "both", scope=(1, 3)),
    Symbol("O", "order of growth, O(...)", 1),
    # the model (notebook 00, section 3)
    Symbol("E", "embedding matrix, also the tied output head", 0),
    Symbol("e", "token embedding e_t = E[token_t]", 0, defs=r"E", scope=(0, 6)),
    Symbol("pos", "learned position vector pos_t", 0),
    Symbol("W_{pos}", "position matrix (rows pos_t)", 0),
    Symbol("x", "residual stream, the input of a layer", 0, defs=r"e_t|0"),
    Symbol("n", "LayerNormed layer input LN(x_t)", 0, defs=r"\\mathrm\{LN\}|\\operatorname\{LN\}"),
    Symbol("o", "the mixer's output, added to x_t", 0, defs=r"W_o"),
    Symbol("h", "final LayerNorm of the last block's output", 0),
    Symbol("z", "late-fusion term added to h_t", 0, defs=r"\\operatorname\{LN\}|\\mathrm\{LN\}"),
    # the triple-latent layer (notebooks 00-03)
    Symbol("a", "write into the running state", 0, defs=r"\\tanh"),
    Symbol("b", "write into the pair memory", 0, defs=r"\\tanh"),
    Symbol("q^l", "left query", 0, defs=r"\\tanh"),
    Symbol("q^r", "right query", 0, defs=r"\\tanh"),
    Symbol("W_a", "weights of a", 1), Symbol("W_b", "weights of b", 2),
    Symbol("W_{ql}", "weights of q^l", 3), Symbol("W_{qr}", "weights of q^r", 3),
    Symbol("\\lambda", "keep gate of the running state", 0, "both"),
    Symbol("\\gamma", "keep gate of the pair memory", 0, "both"),
    Symbol("W_\\lambda", "gate weights of lambda", 1), Symbol("c_\\lambda", "gate bias of lambda", 1),
    Symbol("W_\\gamma", "gate weights of gamma", 2), Symbol("c_\\gamma", "gate bias of gamma", 2),
    Symbol("\\sigma", "the sigmoid function", 0),
    Symbol("s", "running state", 0, "both"),
    Symbol("P", "pair memory (only the pair memory)", 0),
    Symbol("r", "readout (P_t^T q^l_t) * q^r_t", 0, defs=r"\\big\(P_t\^\\top|q\^r"),
    Symbol("W_o", "output projection", 0),
    Symbol("w", "weight of the write at tau inside P_t", 2),
    Symbol("W", "weight of a_tau in s_t: the running state's T x T (or C x C) matrix", 1, "both"),
    Symbol("A", "a matrix of attention scores, row t, column tau", 3, "both"),
    Symbol("H_{1/2}", "half-life of a keep gate", 1, "both"),
    Symbol("\\delta", "a unit vector: 1 at entry i, zeros elsewhere", 2, scope=(2, 4)),
    # attention and related layers (notebook 03)
    Symbol("q", "a query vector (generic attention; the key-value memory's query in 06)", 3, scope=(3, 6)),
    Symbol("k", "a key vector", 3, "both", index_meaning="the slot number (notebook 04: g_t[k], L_k, R_k)",
           scope=(3, 4, 6)),
    Symbol("v", "a value vector", 3, "both", scope=(3, 6)),
    Symbol("D", "key and value size of one attention head", 3, scope=(3, 6)),
    Symbol("M", "the fixed-size memory of linear attention (D x D)", 3, scope=(3,)),
    Symbol("\\phi", "linear attention's feature map", 3, scope=(3,)),
    Symbol("\\eta", "DeltaNet's write strength", 3, scope=(3,)),
    Symbol("\\bar k", "H3's shifted key: a short causal filter of the last keys", 3, scope=(3,)),
    Symbol("N", "number of H3's decayed states per head", 3, scope=(3,)),
    # slots (notebook 04)
    Symbol("K", "number of slots", 4, "both"),
    Symbol("g", "slot weights g_t[k]", 4, scope=(4,)),
    Symbol("W_g", "weights of the slot weights g_t", 4, scope=(4,)),
    Symbol("L", "left memory of a slot, L_k", 4, scope=(4,)),
    Symbol("R", "right memory of a slot, R_k", 4, scope=(4,)),
    Symbol("f", "the slot layer's features f_t[k]", 4, scope=(4,)),
    Symbol("\\tilde P", "the slot layer's effective pair memory, sum_k L_k R_k^T", 4, scope=(4,)),
    Symbol("\\bar s", "weighted average of the states s_{tau-1}", 4, scope=(4,)),
    Symbol("\\bar b", "weighted average of the writes b_tau", 4, scope=(4,)),
    # convolution (notebook 05)
    Symbol("\\kappa", "kernel size of the convolution", 5, "both", scope=(5,)),
    Symbol("W_{\\mathrm{conv}}", "the convolution's taps", 5),
    Symbol("c_{\\mathrm{conv}}", "the convolution's bias", 5),
    Symbol("y", "the convolution's output", 5, scope=(5,)),
    # key-value memory and late fusion (notebook 06)
    Symbol("D_{kv}", "key-value memory width (assoc_dim)", 6),
    Symbol("d_a", "the paper's name for D_kv", 6),
    Symbol("W_k", "key projection of the key-value memory", 6),
    Symbol("W_v", "value projection of the key-value memory", 6),
    Symbol("W_q", "query projection of the key-value memory", 6),
    Symbol("W_{qk}", "tied query-key projection", 6),
    Symbol("\\hat q", "normalized query", 6), Symbol("\\hat k", "normalized key", 6),
    Symbol("\\rho", "retrieval score", 6),
    Symbol("\\beta", "score scale", 6, "both"),
    Symbol("\\alpha", "retrieval weights", 6),
    Symbol("\\zeta", "GLA's decay (06b; gla.py's alpha), never alpha, the retrieval weights", 6, scope=(6,)),
    Symbol("m", "the key-value memory's read", 6, scope=(6,)),
    Symbol("g^{\\mathrm{read}}", "read gate of the key-value memory", 6, scope=(6,)),
    Symbol("w_g", "read-gate weights", 6), Symbol("b_g", "read-gate bias", 6),
    Symbol("W_{\\mathrm{gate}}", "the paper's printed gate matrix (not in its code)", 6),
    Symbol("\\epsilon", "LayerNorm's small constant", 6),
    # late fusion without a key-value memory (notebook 07b, section 1; 07-07c are not read by these checks)
    Symbol("o^{\\mathrm{side}}", "transformer_plus_triple's side layer output", 7),
    Symbol("\\mu", "a factor that multiplies the logits", 7, scope=(7,)),
]
BY_KEY = {s.key: s for s in SYMBOLS}


def composite_keys() -> list[str]:
    """Table keys read as one symbol (a role subscript or superscript), longest first."""
    return sorted((k for k in BY_KEY if len(k) > 1 and not re.fullmatch(r"\\[A-Za-z]+", k)
                   and not k.startswith(("\\tilde", "\\hat", "\\bar"))), key=len, reverse=True)


GLOSSARY_PAGE = ROOT / "docs" / "glossary.md"  # the whole glossary, every notebook's symbols
LAYER_SECTION = ("## 2.", "## 3.")  # notebook 00's drawing of the layer: its glossary lists these symbols


def _table_symbols(rows) -> set[str]:
    """The symbols in the first column of markdown table rows ('| $x$ | ... |')."""
    found = set()
    for line in rows:
        if not line.startswith("| ") or line.startswith(("|---", "| symbol")):
            continue
        first = line[2:].split(" | ")[0]
        for math in re.findall(r"\$([^$]+)\$", first):
            found.update(key for key, _ in symbols_in(math, composite_keys()))
    return found


def glossary_symbols() -> set[str]:
    """The symbols notebook 00's glossary lists: the first column of its tables."""
    path = NOTEBOOKS[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    return _table_symbols(lines[number - 1][2:] for number in glossary_lines(path))


def glossary_rows(lines) -> dict[str, str]:
    """{symbol cell: meaning cell} of the markdown table rows ('| $x$ | meaning | ... |') among lines."""
    rows = {}
    for line in lines:
        if line.startswith("| $"):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            rows[cells[0]] = cells[1]
    return rows


def layer_section_symbols() -> set[str]:
    """The symbols of notebook 00's section 2 (the drawn layer), read from its math."""
    path = NOTEBOOKS[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("# " + LAYER_SECTION[0]))
    end = next(i for i, line in enumerate(lines, 1) if i > start and line.startswith("# " + LAYER_SECTION[1]))
    return {o.key for o in occurrences(path) if start <= o.line < end}


def glossary_page_symbols() -> set[str]:
    """The symbols the page docs/glossary.md lists: the first column of its tables."""
    return _table_symbols(GLOSSARY_PAGE.read_text(encoding="utf-8").splitlines())


def _all_occurrences():
    return {path.stem.split("_")[0]: occurrences(path) for path in NOTEBOOKS}  # "03", "03b"


# --- the checks --------------------------------------------------------------------------------

def test_the_table_is_well_formed():
    assert len(BY_KEY) == len(SYMBOLS), "a symbol is listed twice in SYMBOLS: one symbol, one row"
    for sym in SYMBOLS:
        assert sym.roles in {"quantity", "index", "both"}, f"{sym.key}: roles must be quantity, index or both"
        assert 0 <= sym.home <= 7, f"{sym.key}: home must be a notebook number 0-7"


def test_every_symbol_used_is_in_the_table():
    unknown = [f"{nb}:{o.line} {o.key!r} in ${o.math[:70]}$" for nb, occ in _all_occurrences().items()
               for o in occ if o.key not in BY_KEY]
    assert not unknown, ("symbols used in the notebooks but not in the glossary table (define them in "
                         "docs/glossary.md and in SYMBOLS, or use a symbol that has this meaning already):\n"
                         + "\n".join(unknown))


def test_notebook_00s_glossary_lists_the_layers_symbols_and_only_notebook_00s():
    listed = glossary_symbols()
    layer = layer_section_symbols()
    own = {s.key for s in SYMBOLS if s.home == 0}
    assert {"s", "P", "r", "q^l", "\\lambda", "\\gamma"} <= layer, f"notebook 00's section 2 was not read: {layer}"
    missing = sorted(layer - listed)
    extra = sorted(listed - own)
    assert not missing, f"symbols of the drawn layer (notebook 00, section 2) missing from its glossary: {missing}"
    assert not extra, (f"in notebook 00's glossary but not a symbol notebook 00 introduces (home 0 in SYMBOLS): "
                       f"{extra}; a later notebook defines its symbols where it uses them, docs/glossary.md lists all")


def test_notebook_00s_glossary_rows_are_the_pages_rows():
    """One place defines a symbol: each row of notebook 00's short table says what the page's row says."""
    path = NOTEBOOKS[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    short = glossary_rows(lines[number - 1][2:] for number in glossary_lines(path))
    page = glossary_rows(GLOSSARY_PAGE.read_text(encoding="utf-8").splitlines())
    assert short, "notebook 00's glossary has no table rows"
    differ = [f"{symbol}: notebook 00 says {meaning!r}, docs/glossary.md {page.get(symbol)!r}"
              for symbol, meaning in short.items() if page.get(symbol) != meaning]
    assert not differ, "notebook 00's glossary and docs/glossary.md differ:\n" + "\n".join(differ)


def test_the_glossary_page_lists_every_symbol_and_nothing_else():
    listed = glossary_page_symbols()
    missing = sorted(set(BY_KEY) - listed)
    extra = sorted(listed - set(BY_KEY))
    assert not missing, f"in the table but missing from docs/glossary.md: {missing}"
    assert not extra, f"in docs/glossary.md but not in the table (SYMBOLS): {extra}"


def test_notebook_06_opens_with_its_own_symbols():
    path = next(p for p in NOTEBOOKS if p.name.startswith("06_"))
    lines = markdown_lines(path)
    opening = [text for number, text in lines if number < next(n for n, t in lines if t.startswith("## 1."))]
    missing = sorted({s.key for s in SYMBOLS if s.home == 6 and s.key in
                      {key for _, math in math_spans(path) for key, _ in symbols_in(math, composite_keys())}}
                     - _table_symbols(opening))
    assert not missing, f"symbols notebook 06 introduces but its opening table does not list: {missing}"


def test_each_symbol_is_used_in_its_one_role():
    wrong = []
    for nb, occ in _all_occurrences().items():
        for o in occ:
            sym = BY_KEY.get(o.key)
            if sym is None or sym.roles == "both" or sym.roles == o.role or (o.role == "index" and sym.index_meaning):
                continue
            wrong.append(f"{nb}:{o.line} {o.key!r} used as {'an' if o.role == 'index' else 'a'} {o.role} "
                         f"(it means: {sym.meaning}) in ${o.math[:70]}$")
    assert not wrong, "a symbol in a second role, usually a second meaning:\n" + "\n".join(wrong)


def test_no_symbol_is_used_before_the_notebook_that_defines_it():
    early = [f"{nb}:{o.line} {o.key!r} (defined in notebook {BY_KEY[o.key].home:02d}: {BY_KEY[o.key].meaning})"
             for nb, occ in _all_occurrences().items() for o in occ
             if o.key in BY_KEY and int(nb[:2]) < BY_KEY[o.key].home]
    assert not early, "symbols used before the notebook that defines them:\n" + "\n".join(early)


# "key = RHS" at the start of a math span or after \qquad, \quad, a comma or a semicolon
def test_symbols_stay_in_the_notebooks_where_they_mean_that():
    outside = sorted({f"{nb}: {o.key!r} (it means: {BY_KEY[o.key].meaning}; used only in notebooks "
                      f"{', '.join(f'{n:02d}' for n in BY_KEY[o.key].scope)})"
                      for nb, occ in _all_occurrences().items() for o in occ
                      if o.key in BY_KEY and BY_KEY[o.key].scope and int(nb[:2]) not in BY_KEY[o.key].scope})
    assert not outside, ("symbols used outside their notebooks, usually with a second meaning (if the meaning is "
                         "the same, add the notebook to the symbol's scope):\n" + "\n".join(outside))


DEFINITION = (r"(?:^|\\qquad|\\quad|,|;)\s*({key})(?:_\{{[^{{}}=]*\}}|_[A-Za-z0-9]|_\\[A-Za-z]+)?\s*=\s*"
              r"([^=]+?)(?:\\qquad|,\s|$)")
# phrases that reuse a reserved letter in a second meaning
FORBIDDEN = {
    r"top-\$K\$|top-\$k\$": "top-k is written `top_k` or top-k in words: K is the number of slots",
    r"\$n_t\s*=\s*t": "n_t is LN(x_t); a count of visible entries needs another name",
}


def test_defining_equations_agree_with_the_table():
    wrong = []
    for path in NOTEBOOKS:
        for line, math in math_spans(path):
            for sym in (s for s in SYMBOLS if s.defs):
                for m in re.finditer(DEFINITION.format(key=re.escape(sym.key)), math):
                    rhs = m.group(2).strip()
                    if not re.search(sym.defs, rhs) and not re.fullmatch(r"[-0-9., ]+", rhs):
                        wrong.append(f"{path.stem[:2]}:{line} {sym.key} = {rhs[:50]!r} (it means: {sym.meaning})")
        text = "\n".join(text for _, text in markdown_lines(path))
        for pattern, why in FORBIDDEN.items():
            for m in re.finditer(pattern, text):
                wrong.append(f"{path.stem[:2]}: {m.group()!r}: {why}")
    assert not wrong, "a symbol defined with a second meaning:\n" + "\n".join(wrong)
