"""A widget on the site: its controls, its picture and the script that swaps the frames.

``widget_frames.py`` draws a widget's frames at build time; this module writes what the page shows
for it (staging calls ``PageWidgets.restage`` on each widget's saved output):

- a moving widget: per control a ``<label>``, a real control (``<input type="range">`` over the
  drawn settings, its value in an ``<output>`` and in ``aria-valuetext``; a ``<select>`` for a
  menu, and for a text box that the prose suggests texts for; a menu that follows another control
  carries its options for each of the leader's settings in ``data-options``), the picture as a
  link to its full-size file, the saved note said for the page as the caption, and
  ``static/widget_frames.js``, which swaps picture, link and text alternative (and a following
  menu's options);
- a widget that cannot move: its saved picture stays, and a caption under it gives its saved note
  and the reason (``widget_frames.UNDRAWN``).

The text alternative of a frame describes the picture it shows (issue 54, item 5): at the widget's
starting setting, the widget's own (from ``alt_text.py``: it describes that picture), without the
sentence that calls it a still, and the setting ("Shown here: λ = 0.9."); at any other setting, the
setting, then what that frame's own titles, axes and legends say (``alt_text.describe``, saved when
the frame was drawn: "... Figure: gated_hybrid_repaired answers v13: RIGHT (target v13). Panel 1: ...").
"""

from __future__ import annotations

import html
import json
import re

from alt_text import problems
from figure_scale import zoom_class
from widget_frames import CALL, NOTEBOOK_MADE, SETUPS, STATIC_DIR, Widget

STILL = re.compile(r"\s*A still of an interactive figure \(.*?\), shown at its first setting\.")



TYPED = "any text, then Enter"  # a text box's hint in the notebook


def shown_hint(control: dict) -> str:
    """The hint beside a control: a text box the site shows as a menu of suggested texts says so,
    not how to type (issue 54, item 4: the hint matches the control shown)."""
    hint = control.get("hint") or ""
    if control.get("typed") and hint.startswith(TYPED):
        return "texts from this page; in the notebook, any text" + hint[len(TYPED):]
    return hint

def shown_value(control: dict, value) -> str:
    if control["kind"] == "menu":
        return control["labels"][control["values"].index(value)]
    return f"{value:.{control['places']}f}" if control["places"] else str(value)


def setting_text(widget: Widget, values: dict) -> str:
    return "; ".join(f"{c['label']} = {shown_value(c, values[n])}" for n, c in widget.controls.items())


def caption_text(widget: Widget) -> str:
    """The saved note, said for the page: the controls, how many settings were drawn, what stays fixed."""
    moving = ", ".join(f"{c['label']} ({len(c['values'])} settings)" for c in widget.controls.values())
    kinds = {c["kind"] for c in widget.controls.values()}
    how = " or ".join(v for k, v in (("slider", "move the slider"), ("menu", "pick from the menu")) if k in kinds)
    name = CALL.match(widget.call)[1]
    model = (" and the shipped model" if SETUPS.get(name) else
             " (its code cells above it, run in full when the site was built, training included)"
             if name in NOTEBOOK_MADE else "")
    typed = ""
    if any(c.get("typed") for c in widget.controls.values()):
        typed = (" On this site the text box is a menu of the texts the notebook suggests; in a running notebook "
                 "you type your own.")
    elif widget.text_boxes:
        typed = " The notebook's text box keeps its starting text here."
    if any(c.get("follows") for c in widget.controls.values()):
        typed += " A menu that follows another one offers the choices for its setting."
    return (f"Interactive figure; controls: {moving}, drawn beforehand from the notebook's code{model}: "
            f"{how} to change the picture; run the notebook for any other setting.{typed}")


def frame_alt(widget: Widget, frame, alt: str, start: dict) -> str:
    """What the picture of ``frame`` shows (see the module's docstring); ``alt``: the widget's own text,
    which describes its starting picture."""
    setting = setting_text(widget, frame.values)
    if frame.values == {**frame.values, **start}:
        return f"{STILL.sub('', alt).strip()} Shown here: {setting}."  # it moves here: no longer a still
    return f"The interactive figure at {setting}. {frame.described}"


def page_html(widget: Widget, number: int, page: str, alt: str) -> str:
    """The widget on the page: a label, control and value per control, the picture (a link to itself),
    the caption, and the script that swaps the frames. ``alt``: the widget's text alternative."""
    up = "../" * page.count("/")
    base = f"{up}_static/{STATIC_DIR}/{widget.key}/"
    ident = f"wf-{re.sub(r'[^a-z0-9]+', '-', page.rsplit('/', 1)[-1][:-6].lower())}-{number}"
    start = {n: c["start"] for n, c in widget.controls.items()}
    frames = [{"values": f.values, "src": base + f.png, "alt": frame_alt(widget, f, alt, start)}
              for f in widget.frames]
    bad = [(f["values"], problems(f["alt"])) for f in frames if problems(f["alt"])]
    if bad:
        raise ValueError(f"{page}: widget {number}'s text alternatives: {bad[:3]}")
    # its own width (the PNGs have twice the pixels) and, for phones, the zoom of its smallest text
    fonts = [f.font_px for f in widget.frames if f.font_px]
    zoom = zoom_class(min(fonts)) if fonts else None
    size = ((f' width="{widget.frames[0].width}"' if widget.frames[0].width else "")
            + (f' class="{zoom}"' if zoom else ""))
    first = next((f for f in frames if f["values"] == {**f["values"], **start}), frames[0])
    rows = []
    for name, c in widget.controls.items():
        cid = f"{ident}-{name}"
        value = shown_value(c, c["start"])
        if c["kind"] == "slider":
            at = c["values"].index(c["start"])
            control = (f'<input type="range" id="{cid}" data-control="{html.escape(name)}" min="0" '
                       f'max="{len(c["values"]) - 1}" step="1" value="{at}" data-places="{c["places"]}" '
                       f'aria-valuetext="{html.escape(value)}" data-values=\'{html.escape(json.dumps(c["values"]))}\'>'
                       f'<output for="{cid}" aria-live="polite" style="margin: 0 0.6em">{html.escape(value)}</output>')
        else:
            pairs, follows = list(zip(c["labels"], c["values"], strict=True)), ""
            if c.get("follows"):  # the options drawn for the leader's starting setting; the script swaps them
                leader = widget.controls[c["follows"]]
                pairs = c["options"][leader["values"].index(leader["start"])]
                follows = (f' data-follows="{html.escape(c["follows"])}" '
                           f'data-options=\'{html.escape(json.dumps(c["options"]))}\'')
            options = "".join(f'<option value="{i}"{" selected" if v == c["start"] else ""}>{html.escape(lab)}</option>'
                              for i, (lab, v) in enumerate(pairs))
            control = (f'<select id="{cid}" data-control="{html.escape(name)}"{follows} '
                       f'data-values=\'{html.escape(json.dumps([v for _, v in pairs]))}\'>{options}</select>')
        hint = shown_hint(c)
        hint = f' <span class="widget-hint">({html.escape(hint)})</span>' if hint else ""
        rows.append(f'<div class="widget-control" style="margin-bottom: 0.4em"><label for="{cid}" '
                    f'style="margin-right: 0.5em">{html.escape(c["label"])}</label> '
                    f'{control}{hint}</div>')
    caption = caption_text(widget)
    return (f'<figure class="widget-frames" id="{ident}" data-frames=\'{html.escape(json.dumps(frames))}\'>'
            f'{"".join(rows)}'
            f'<a class="full-size" href="{first["src"]}">'
            f'<img src="{first["src"]}"{size} alt="{html.escape(first["alt"])}">'
            f'</a><figcaption>{html.escape(caption)}</figcaption></figure>'
            f'<script src="{up}_static/widget_frames.js"></script>\n')


def undrawn_note(widget: Widget, note: str) -> str:
    """The caption of a widget that keeps its saved picture: its saved note and why it does not move."""
    saved = note.strip().strip("[]")
    return f"*{saved[:1].upper() + saved[1:]}. On this site it does not move: {widget.undrawn}.*"


class PageWidgets:
    """Staging's hook: the widgets of one page by cell; ``restage`` turns a widget's saved output into
    the moving figure (or adds the caption of one that does not move)."""

    def __init__(self, page: str, widgets: list[Widget]):
        self.page, self.by_cell, self.number = page, {w.cell: w for w in widgets}, 0

    def restage(self, cell: int, output: dict, alt: str, note: str) -> dict | None:
        """Rewrite ``output`` (a widget view's saved picture) in place; returns an output to add after it."""
        widget = self.by_cell.get(cell)
        if widget is None:
            return None
        self.number += 1
        if widget.frames:
            output["data"] = {"text/html": page_html(widget, self.number, self.page, alt), "text/plain": note}
            output["metadata"] = {}
            return None
        return {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": undrawn_note(widget, note)}}
