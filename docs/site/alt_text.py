"""Text alternatives for the pictures on the site: what a screen reader says instead of the image.

Each picture in a notebook's saved outputs gets one that opens with one sentence of what it shows
and what to notice, chosen in this order:

1. a written one for the important figures, in ``figure_alt.json`` beside this file:
   {notebook: {a piece of the code that draws it: text}}, given to the pictures of the first cell
   whose code contains that piece (code, not figure numbers: a figure added above does not shift
   the texts onto the wrong pictures); written by hand, it says the most;
2. the caption: the first sentence of the prose right after the figure (each figure of the course
   is followed by one that says what to look for), then what the picture itself holds: the alt
   text saved with the output (``metadata["image/png"]["alt"]``, written by
   ``tl_minimal.views.alt_text.describe`` from the figure's titles, axes and legends), or for a
   widget's still, its saved note ("interactive figure; controls: ...");
3. without a caption, the saved text alone, or one generated from the notebook's title and section
   and the titles and axis labels the cell's code sets.

Texts are kept per page (``alt_text.json``: {page: {picture's SHA-256: text}}), so one picture on
two pages has each page's text. ``problems`` is what fails the build: a leftover ``{name}``
placeholder, a bare "Figure with N panel(s)", a widget's internals ("widgets.interactive").
A written entry whose code no cell of its notebook contains is an error too (the build names it),
so the table cannot drift silently from the notebooks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

WRITTEN = Path(__file__).with_name("figure_alt.json")
DRAWING_CALL = re.compile(r"\b((?:plots\w*|diagrams|views|plt|sns)\.[A-Za-z_]\w*)\s*\(")  # not widgets.*
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

    def for_output(self, page: str, figure: int, context: tuple[str, str, str], meta: dict,
                   caption: str = "", note: str = "", before: str = "") -> str:
        """The alt text of picture number ``figure`` of notebook ``page``; context is the notebook's
        title, the section the picture is in and the code of its cell; caption the prose right
        after the figure (Markdown), before the prose right before it (its last sentence serves
        where no caption follows), note a widget's saved text ("[interactive figure; ...]")."""
        self.counts[page] = max(self.counts.get(page, 0), figure)
        code = context[2]
        for piece, text in self.written.get(page, {}).items():  # written by hand: the best, first
            if (piece in code and (page, piece) not in self.used) or (page, piece, code) in self.cells:
                self.used.add((page, piece))
                self.cells.add((page, piece, code))
                return text
        saved = " ".join(BARE_PANELS.sub("", str(meta.get("alt", "")).strip()).split())
        if saved.startswith("Panel 1: ") and "Panel 2" not in saved:
            saved = saved[len("Panel 1: "):]
        if note:
            held = f"A still of an {note.strip('[] ').replace('; ', ' (', 1)}), shown at its first setting."
        elif saved:
            held = saved if saved.startswith("Figure") else f"The figure: {saved}"
        else:
            held = generated(figure, *context)
        sentence = first_sentence(caption) or last_sentence(before)
        return f"{sentence} {held}" if sentence else held
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


BARE_PANELS = re.compile(r"^Figure with \d+ panel\(s\)\.\s*")  # describe()'s opening when the figure has no title
MATH = re.compile(r"\$\$?([^$]+)\$\$?")
GREEK = {"lambda": "λ", "gamma": "γ", "tau": "τ", "alpha": "\u03b1", "beta": "β", "sigma": "\u03c3", "rho": "\u03c1",
         "kappa": "κ", "mu": "μ", "delta": "δ", "eta": "η", "phi": "φ", "epsilon": "ε", "odot": "⊙",
         "top": "ᵀ", "le": "≤", "ge": "≥", "approx": "≈", "times": "×", "cdot": "·", "to": "→", "ln": "ln"}


def plain(markdown: str) -> str:
    """Markdown and TeX as a screen reader should hear them: no markup, Greek letters as letters."""
    text = MATH.sub(lambda m: re.sub(r"\\([A-Za-z]+)", lambda g: GREEK.get(g.group(1), g.group(1)),
                                     m.group(1)).replace("{", "").replace("}", "").replace("\\", ""), markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their label
    text = re.sub(r"[*`]{1,3}(?=\S)|(?<=\S)[*`]{1,3}", "", text)
    return " ".join(text.split())


def first_sentence(caption: str) -> str:
    """The first sentence of the prose right after a figure, or "" where a heading, a list or a
    table comes first (that is not a caption)."""
    text = caption.lstrip()
    if not text or text.startswith(("#", "|", "- ", "* ", "<", ":::", "```")):
        return ""
    paragraph = plain(re.split(r"\n\s*\n", text, maxsplit=1)[0])
    found = re.match(r"(.+?[.!?])(?=\s+[A-Z(]|$)", paragraph)
    return (found.group(1) if found else paragraph).strip()


def last_sentence(prose: str) -> str:
    """The last sentence of the prose right before a figure (the one that introduces it), or ""."""
    paragraphs = [p for p in re.split(r"\n\s*\n", prose.strip()) if p.strip()]
    if not paragraphs or paragraphs[-1].lstrip().startswith(("#", "|", "<", ":::", "```")):
        return ""
    sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z])", plain(paragraphs[-1]))
    last = sentences[-1].strip()
    return last[:-1] + "." if last.endswith(":") else last


PLACEHOLDER = re.compile(r"\{[A-Za-z_]\w*\}")
WIDGET_INTERNALS = re.compile(r"\b(?:ipywidgets|widgets\.\w+|interactive_output|[HV]Box)\b")


def problems(alt: str) -> list[str]:
    """What makes a text alternative unfit to publish (the build fails on any)."""
    found = []
    if PLACEHOLDER.search(alt):
        found.append(f"a leftover placeholder {PLACEHOLDER.search(alt).group(0)}")
    if re.fullmatch(r"\s*Figure with \d+ panel\(s\)\.?\s*", alt) or not alt.strip():
        found.append("no description (only 'Figure with N panel(s)')")
    if WIDGET_INTERNALS.search(alt):
        found.append(f"a widget's internals ({WIDGET_INTERNALS.search(alt).group(0)})")
    return found
