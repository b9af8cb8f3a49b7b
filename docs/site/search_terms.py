"""Search entries: the words a reader types, and the page the site's search shows first for them.

Sphinx's search ranks a page by where a word occurs (in its title 15, in its text 5), so a word
that many pages use ("top-k", "instructor") lists them in alphabetical order, and the page that
teaches it may be the tenth. An index entry ranks above all of those (up to 100, by how much of the
entry the query covers). The site gives index entries to two kinds of pages, nowhere else:

1. ``PAGES``: the page that teaches a term or is written for a reader (the instructors' guide for
   "instructor", notebook 06, which teaches the top-k read, for "top-k");
2. the glossary, for each word of its table "Words readers type" (``docs/glossary.md``): words
   other texts use for the course's ideas ("decay gate") with the course's word beside them ("keep
   gate"). Only those: a word the course itself uses for its idea is found on the pages using it.

``entries`` returns {Sphinx document name: [entry, ...]}; staging writes it beside the pages
(``search_terms.json``) and ``conf.py`` adds the entries to each page's document, without a line
in the committed Markdown (which the code host shows as it is). A page named here that is not on
the site is an error (in a partial build of a few notebooks, as the tests make, it is left out), so
the list cannot drift from the pages.
"""

from __future__ import annotations

import re
from pathlib import Path

PAGES = {
    "docs/instructors.md": ["instructor", "instructors", "instructors' guide", "nbgrader", "teaching"],
    "notebooks/06_kv_gated_fusion.ipynb": ["top-k", "top-k read"],
}
GLOSSARY = "docs/glossary.md"
SYNONYMS_HEADING = "**Words readers type**"  # the glossary's table: typed words | the course's word | where


def glossary_synonyms(text: str) -> list[str]:
    """The first-column words of the glossary's "Words readers type" table (comma-separated)."""
    start = text.find(SYNONYMS_HEADING)
    if start < 0:
        raise ValueError(f"{GLOSSARY} has no {SYNONYMS_HEADING} table (the words readers type, with the "
                         "course's word for each)")
    words = []
    for line in text[start:].splitlines()[1:]:
        if not line.strip() and words:
            break
        row = re.match(r"^\|\s*([^|]+?)\s*\|", line)
        if row and not re.fullmatch(r"[-: ]+", row.group(1)) and row.group(1) != "you may type":
            words += [w.strip().lower() for w in row.group(1).split(",") if w.strip()]
    if not words:
        raise ValueError(f"{GLOSSARY}: the {SYNONYMS_HEADING} table is empty")
    return words


def entries(root: Path, site_pages: set[str]) -> dict[str, list[str]]:
    """{document name (the page without its suffix): its index entries}."""
    missing = [page for page in [*PAGES, GLOSSARY] if page not in site_pages]
    if GLOSSARY in missing or (missing and len([p for p in site_pages if p.endswith(".ipynb")]) > 5):
        raise ValueError("docs/site/search_terms.py names pages that are not on the site: " + ", ".join(missing))
    found = {page.rsplit(".", 1)[0]: list(terms) for page, terms in PAGES.items() if page in site_pages}
    found[GLOSSARY.rsplit(".", 1)[0]] = glossary_synonyms((root / GLOSSARY).read_text(encoding="utf-8"))
    return found
