"""Sphinx configuration of the course's website (built by ``python docs/site/build.py``).

Sphinx + MyST-NB + the book theme: one ``pip install``, nothing fetched while building; reads the
committed notebooks without executing them, and its own search index, previous/next links and sidebar
work from static files. The formulas are typeset once the pages are written (``math_render.py``,
MathJax under Node.js, the copy the ``sphinx-mathjax-offline`` package ships); without Node.js the
pages load that copy from the site itself, so a page calls no other host either way.
``templates/layout.html`` keeps the theme's search tools on the search page only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from staging import launch_buttons, repo_url

project = "tl-minimal"
author = "the tl-minimal authors"
copyright = "the tl-minimal authors, MIT licence"

extensions = ["myst_nb"]
nb_execution_mode = "off"          # the committed outputs are the pages' outputs
nb_ipywidgets_js = {}              # no widget JavaScript from a CDN: widgets show their saved picture
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 6           # GitHub-style #anchors, as the Markdown files link them
myst_dmath_double_inline = True

# every missing reference, image or heading is a warning, and build.py runs with -W --keep-going
nitpicky = True
exclude_patterns = ["_static", "alt_text.json", "figure_zoom.json", "search_terms.json"]
master_doc = "index"
templates_path = ["templates"]     # the theme's layout without the search index on every page

html_theme = "sphinx_book_theme"
html_title = "tl-minimal: the triple-latent course"
html_static_path: list[str] = []   # the staged tree's _static (site.css, MathJax), added below
html_css_files = ["site.css", "predictions.css",  # predictions: the exercises' checks
                  "phone.css"]  # touch targets, one search box, tables and scroll cues (issue 54)
html_js_files = ["search_snippets.js",  # theme chrome out of the search results' snippets
                 "math_scroll.js",      # a display formula that scrolls is a Tab stop
                 "predictions.js",      # the exercises' prediction checks, without a kernel (predictions.py)
                 "landmarks.js",        # the sidebar is a landmark (axe's "region" rule at desktop width)
                 "navigation.js",       # the menu and contents drawers open on a phone (the theme binds one toggle)
                 "scroll_cues.js"]      # a table or figure that scrolls sideways shows that it does
html_favicon = "static/favicon.svg"  # (without one a browser asks for /favicon.ico and logs a 404)
html_theme_options = {
    # read at build time (staging.repository); a local build has none and shows no source button
    "repository_url": repo_url() or "",
    "repository_branch": "main",
    "path_to_docs": "",            # the site mirrors the repository: page notebooks/x is notebooks/x.ipynb
    "use_repository_button": bool(repo_url()),
    # the theme's launch menu on every notebook page (none on a local build: nothing to launch from)
    "launch_buttons": launch_buttons(),
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "search_as_you_type": False,   # the search box opens search.html (templates/layout.html relies on it)
}
html_show_sourcelink = False
# Without Node.js at build time (math_render.py), MathJax 3 typesets in the browser: SVG output (no web
# fonts to fetch), from the copy the sphinx-mathjax-offline package ships
mathjax_path = "mathjax/tex-svg.js"
# its menu stays (right click), but a formula is no keyboard stop: a page of math is not hundreds of Tabs
mathjax3_config = {"options": {"menuOptions": {"settings": {"inTabOrder": False}}}}
# follow the reader's light/dark preference (an explicit mode: an empty one logs a console error)
html_context = {"default_mode": "auto"}

def _set_alt(app, doctree) -> None:
    """Give each notebook picture the text alternative staging chose for it on this page (by its
    SHA-256, the name MyST-NB gives the image file); any picture still without one gets its page's
    title, and the browser test checks that none is empty. A picture saved with its text size also
    gets its zoom class for phones (``figure_zoom.json``, figure_scale.py)."""
    from docutils import nodes
    alt = json.loads((Path(app.srcdir) / "alt_text.json").read_text(encoding="utf-8")).get(app.env.docname, {})
    zoom = json.loads((Path(app.srcdir) / "figure_zoom.json").read_text(encoding="utf-8")).get(app.env.docname, {})
    for image in doctree.findall(nodes.image):
        image["loading"] = "lazy"  # a figure far down the page is fetched when the reader nears it (issue 54)
        key = Path(image.get("uri", "")).stem
        if key in zoom:  # its size on a phone (figure_scale.py)
            image["classes"].append(zoom[key])
        if key in alt:
            image["alt"] = alt[key]
        elif not image.get("alt"):
            title = next(iter(doctree.findall(nodes.title)), None)
            image["alt"] = f"Picture on the page \u201c{title.astext() if title else app.env.docname}\u201d"


def _index_entries(app, doctree) -> None:
    """The page's search entries (search_terms.py) as main index entries under its title: the search
    ranks a page with an entry the query matches above pages that only mention the words."""
    from docutils import nodes
    from sphinx import addnodes
    terms = json.loads((Path(app.srcdir) / "search_terms.json").read_text(encoding="utf-8")).get(app.env.docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    if terms and section is not None:
        section.insert(1, addnodes.index(entries=[("single", term, "", "main", None) for term in terms],
                                         inline=False))


def _full_size_links(app, doctree, docname) -> None:
    """Every picture opens full-size when tapped: it becomes a link to its own file (as Sphinx does
    for a scaled image), unless it is a link already."""
    from docutils import nodes
    from sphinx.util.osutil import relative_uri
    if app.builder.format != "html":
        return
    for image in list(doctree.findall(nodes.image)):
        uri = image.get("candidates", {}).get("*", image["uri"])
        if isinstance(image.parent, nodes.reference) or uri not in app.env.images or "://" in uri:
            continue
        target = f"{app.builder.imagedir}/{app.env.images[uri][1]}"
        link = nodes.reference("", "", internal=True, classes=["full-size"],
                               refuri=relative_uri(app.builder.get_target_uri(docname), target))
        image.replace_self(link)
        link.append(image)


def _static_from_source(app, config) -> None:
    config.html_static_path.append(str(Path(app.srcdir) / "_static"))


def setup(app):
    app.connect("config-inited", _static_from_source)
    app.connect("doctree-read", _set_alt)
    app.connect("doctree-read", _index_entries)
    app.connect("doctree-resolved", _full_size_links)
