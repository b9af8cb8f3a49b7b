"""The site's formulas typeset when it is built, not in the reader's browser (issue 54, item 6).

Sphinx writes each formula as its TeX (``<span class="math ...">\\(\\lambda_t\\)</span>``, a display
formula in a ``<div>``) and a script tag for MathJax, which typesets them in the browser: 2.1 MB of
JavaScript on every page with a formula, and seconds of a phone's CPU. When Node.js is found, the
build instead runs MathJax 3 once over every page (``math_render.js``, with the MathJax copy the
``sphinx-mathjax-offline`` package ships, so nothing is fetched) and writes into each page:

- each formula as MathJax's SVG output with its MathML hidden beside it for screen readers (what
  the browser made before), its TeX kept in ``data-tex`` (the search page writes snippets from it);
- the page's glyphs once (MathJax's "global" font cache) and MathJax's stylesheet
  (``_static/math.css``, only on pages with a formula);
- no MathJax script or configuration.

A formula TeX cannot read fails the build, naming the page and the formula. Without Node.js the
pages keep the browser's MathJax (``use_browser``: the build copies it and says the pages are
heavier); a build to publish requires Node.js.

    node()                      -> the Node.js executable, or None
    typeset_pages(html, mathjax) -> "typeset 1983 formulas on 30 pages in 9 s"
"""

from __future__ import annotations

import html as html_text
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

SCRIPT = Path(__file__).with_name("math_render.js")
STYLESHEET = "math.css"  # under the site's _static
FORMULA = re.compile(r'<(span|div) class="math notranslate nohighlight"( id="[^"]*")?>(.*?)</\1>', re.DOTALL)
DELIMITED = re.compile(r"^\s*(\\\(|\\\[)(.*)(\\\)|\\\])\s*$", re.DOTALL)
# Sphinx's MathJax configuration and loader (conf.py: mathjax3_config, mathjax_path)
MATHJAX_TAGS = re.compile(r'\s*<script>window\.MathJax = .*?</script>'
                          r'|\s*<script [^>]*src="[^"]*mathjax/[^"]*"></script>', re.DOTALL)


def node() -> str | None:
    return shutil.which("node")


def formulas(page: str) -> list[dict]:
    """Every formula of a built page: its TeX without delimiters and whether it is a display."""
    found = []
    for match in FORMULA.finditer(page):
        raw = html_text.unescape(match[3])
        delimited = DELIMITED.match(raw)
        if not delimited:
            raise ValueError(f"a formula without \\( \\) or \\[ \\] delimiters: {raw[:80]!r}")
        found.append({"tex": delimited[2], "display": delimited[1] == "\\["})
    return found


def rewrite(page: str, rendered: list[str], cache: str, up: str) -> str:
    """The page with its formulas typeset, its glyphs and stylesheet added, MathJax's scripts removed."""
    pieces = iter(rendered)

    def typeset(match: re.Match) -> str:
        tex = DELIMITED.match(html_text.unescape(match[3]))[2]
        return (f'<{match[1]} class="math notranslate nohighlight"{match[2] or ""} '
                f'data-tex="{html_text.escape(tex)}">{next(pieces)}</{match[1]}>')

    page = MATHJAX_TAGS.sub("", FORMULA.sub(typeset, page))
    page = page.replace("</head>", f'<link rel="stylesheet" href="{up}_static/{STYLESHEET}" />\n</head>', 1)
    return page.replace("</body>", cache + "\n</body>", 1)


def typeset_pages(site: Path, mathjax: Path) -> str:
    """Typeset every page of the built ``site`` with MathJax from ``mathjax`` (see the module's docstring)."""
    started = time.perf_counter()
    pages = {p: p.read_text(encoding="utf-8") for p in sorted(site.rglob("*.html")) if "_static" not in p.parts}
    with_math = {p: formulas(text) for p, text in pages.items()}
    with_math = {p: f for p, f in with_math.items() if f}
    request = {"mathjax": str(mathjax), "pages": list(with_math.values())}
    result = subprocess.run([node(), str(SCRIPT)], input=json.dumps(request), capture_output=True, text=True,
                            encoding="utf-8", check=False)
    if result.returncode != 0:
        raise RuntimeError(f"typesetting the formulas failed: {result.stderr[-3000:]}")
    answer = json.loads(result.stdout)
    errors = [f"{p.relative_to(site).as_posix()}: {e}" for p, done in zip(with_math, answer["pages"], strict=True)
              for e in done["errors"]]
    if errors:
        raise ValueError("formulas TeX cannot read:\n" + "\n".join(errors))
    (site / "_static" / STYLESHEET).write_text(answer["css"], encoding="utf-8")
    for path, done in zip(with_math, answer["pages"], strict=True):
        up = "../" * (len(path.relative_to(site).parts) - 1)
        path.write_text(rewrite(pages[path], done["math"], done["cache"], up), encoding="utf-8")
    count = sum(len(f) for f in with_math.values())
    return f"typeset {count} formulas on {len(with_math)} pages in {time.perf_counter() - started:.0f} s"
