"""The site's formulas are typeset when it is built (docs/site/math_render.py, issue 54, item 6).

On a small made-up site (seconds, no Sphinx build): every formula becomes MathJax's SVG with its
MathML hidden beside it for screen readers and its TeX in ``data-tex``; each page carries its own
glyphs and the stylesheet; no MathJax script is left; a formula TeX cannot read stops the build
naming its page. On the built course site: no page loads a maths renderer and every formula is
typeset, with its MathML.

Needs Node.js and the site extra (the MathJax copy of sphinx-mathjax-offline); skipped without them.
"""

from __future__ import annotations

import re
import shutil

import pytest
import test_site
from test_site import _site_module

pytestmark = [pytest.mark.repo,
              pytest.mark.skipif(not shutil.which("node"), reason="Node.js is not installed: the site's "
                                 "formulas are typeset in the browser instead (docs/site/math_render.py)")]

site = test_site.site  # its fixture, used here too
math_render = _site_module("math_render")

PAGE = """<html><head><title>t</title>
<script>window.MathJax = {"options": {}}</script>
<script defer="defer" src="../_static/mathjax/tex-svg.js?v=1"></script>
</head><body><p>A gate <span class="math notranslate nohighlight">\\(\\lambda_t &lt; 1\\)</span> keeps
<span class="math notranslate nohighlight">\\(s_{t-1}\\)</span>.</p>
<div class="math notranslate nohighlight">
\\[s_t = \\lambda_t s_{t-1} + (1 - \\lambda_t)\\, a_t\\]</div>
</body></html>"""


def mathjax():
    test_site.needs_site_extra()
    return _site_module("build").mathjax_dir()


def test_a_page_gets_svg_formulas_with_mathml_and_no_script(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "notebooks" / "a.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "plain.html").write_text("<html><head></head><body>no math</body></html>", encoding="utf-8")
    summary = math_render.typeset_pages(tmp_path, mathjax())
    assert summary.startswith("typeset 3 formulas on 1 pages"), summary
    page = (tmp_path / "notebooks" / "a.html").read_text(encoding="utf-8")
    assert "mathjax/" not in page and "window.MathJax" not in page
    assert page.count("<mjx-container") == 3 and page.count('display="true"') >= 1
    assert page.count("<mjx-assistive-mml") == 3 and "<mi>λ</mi>" in page
    assert 'data-tex="\\lambda_t &lt; 1"' in page and "\\(" not in page
    assert page.count('id="MJX-SVG-global-cache"') == 1 and '<path id="MJX-TEX-I-1D706"' in page
    assert '<link rel="stylesheet" href="../_static/math.css" />' in page
    assert "mjx-assistive-mml" in (tmp_path / "_static" / "math.css").read_text(encoding="utf-8")
    assert (tmp_path / "plain.html").read_text(encoding="utf-8").endswith("no math</body></html>")


def test_a_formula_tex_cannot_read_stops_the_build_naming_its_page(tmp_path):
    (tmp_path / "_static").mkdir()
    bad = PAGE.replace("s_{t-1}\\)", "\\frac{1}\\)")
    (tmp_path / "bad.html").write_text(bad, encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.html: \\frac\{1\}"):
        math_render.typeset_pages(tmp_path, mathjax())


@pytest.mark.slow  # a build of the whole course: minutes
def test_no_page_of_the_site_loads_a_maths_renderer(site):
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts]
    formulas = 0
    for path in pages:
        page = path.read_text(encoding="utf-8")
        name = path.relative_to(site).as_posix()
        assert not re.search(r'<script[^>]*src="[^"]*mathjax', page), f"{name} loads MathJax"
        found = len(re.findall(r'class="math notranslate nohighlight"', page))
        assert page.count("<mjx-container") == page.count("<mjx-assistive-mml") == found, name
        formulas += found
    assert not (site / "_static" / "mathjax").exists(), "the site ships MathJax that no page loads"
    assert formulas > 1000, f"only {formulas} formulas on the site"
