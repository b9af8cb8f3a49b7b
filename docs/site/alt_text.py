"""Text alternatives for the pictures on the site: what a screen reader says instead of the image.

Each picture in a notebook's saved outputs gets one, chosen in this order:

1. a written one for the important figures, in ``figure_alt.json`` beside this file:
   {notebook: {a piece of the code that draws it: text}}, given to the pictures of the first cell
   whose code contains that piece (code, not figure numbers: a figure added above does not shift
   the texts onto the wrong pictures); written by hand, it says more than the two below;
2. the one saved with the output itself (``metadata["image/png"]["alt"]``): a notebook executed
   with the library saves one for every figure it shows, written from the figure's title, axes
   and legends by ``tl_minimal.views.alt_text.describe``;
3. a generated one: the notebook's title and section, the titles and axis labels the cell's code
   sets, and the drawing functions it calls.

A written entry whose code no cell of its notebook contains is an error (the build names it), so
the table cannot drift silently from the notebooks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

WRITTEN = Path(__file__).with_name("figure_alt.json")
DRAWING_CALL = re.compile(r"\b((?:plots\w*|diagrams|widgets|views|plt|sns)\.[A-Za-z_]\w*)\s*\(")
QUOTED = r"""(?:f?"([^"\n]+)"|f?'([^'\n]+)')"""
TITLE = re.compile(r"(?:set_title|suptitle|title)\s*[(=]\s*" + QUOTED)
XLABEL = re.compile(r"(?:set_xlabel|xlabel)\s*[(=]\s*" + QUOTED)
YLABEL = re.compile(r"(?:set_ylabel|ylabel)\s*[(=]\s*" + QUOTED)


def _strings(pattern: re.Pattern, code: str) -> list[str]:
    return [a or b for a, b in pattern.findall(code)]


class AltTexts:
    """Chooses every picture's text alternative and remembers which written ones were used."""

    def __init__(self, written: Path = WRITTEN):
        self.written: dict[str, dict[str, str]] = (json.loads(written.read_text(encoding="utf-8"))
                                                   if written.is_file() else {})
        self.used: set[tuple[str, str]] = set()
        self.cells: set[tuple[str, str, str]] = set()  # (notebook, piece, the cell's code) matched
        self.counts: dict[str, int] = {}

    def for_output(self, page: str, figure: int, context: tuple[str, str, str], meta: dict) -> str:
        """The alt text of picture number ``figure`` of notebook ``page``; context is the notebook's
        title, the section the picture is in and the code of its cell."""
        self.counts[page] = max(self.counts.get(page, 0), figure)
        code = context[2]
        for piece, text in self.written.get(page, {}).items():  # written by hand: the best, first
            if (piece in code and (page, piece) not in self.used) or (page, piece, code) in self.cells:
                self.used.add((page, piece))
                self.cells.add((page, piece, code))
                return text
        if str(meta.get("alt", "")).strip():  # saved by the kernel from the figure's title and axes
            return str(meta["alt"]).strip()
        return generated(figure, *context)

    def unused(self, pages: set[str]) -> list[str]:
        """Written entries, for notebooks among ``pages``, whose code no cell of the notebook contains
        (a notebook that is not on the site, as in a partial build, is not checked)."""
        return [f"{page}: no picture drawn by code containing {piece!r}"
                for page, entries in self.written.items() if page in pages
                for piece in entries if (page, piece) not in self.used]


def generated(figure: int, title: str, section: str, code: str) -> str:
    """An alt text made from what the cell's code says about its picture."""
    parts = [f"Figure {figure} of the notebook \u201c{title}\u201d"]
    if section:
        parts[0] += f", section \u201c{section}\u201d"
    titles = _strings(TITLE, code)
    if titles:
        parts.append("titled " + "; ".join(f"\u201c{t}\u201d" for t in titles[:3]))
    xs, ys = _strings(XLABEL, code), _strings(YLABEL, code)
    if xs or ys:
        parts.append("axes: " + ", ".join(filter(None, [f"x {xs[0]}" if xs else "", f"y {ys[0]}" if ys else ""])))
    calls = list(dict.fromkeys(c for c in DRAWING_CALL.findall(code) if not c.startswith("plt.show")))
    if calls:
        parts.append("drawn by " + ", ".join(calls[:4]))
    return "; ".join(parts) + "."
