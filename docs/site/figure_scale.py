"""Figures on a phone: every tick label at least 9 CSS px tall at 390 px.

A notebook figure is saved at twice its pixels with its own width and the size of its smallest text
in CSS px at that width (``tl_minimal.views.alt_text``: metadata ``width`` and ``font_px``). A
desktop page shrinks a wide figure to its column; a phone would shrink a 950 px figure to 358 px and
its 7 pt tick labels (9.7 px) to 3.7 px. So on a narrow screen (``PHONE``) a figure is shown at the
smallest zoom of its own size that keeps its smallest text at ``MIN_TEXT_PX`` or more, in steps of a
tenth (the class ``fig-zoom-NN``, one CSS rule each in ``static/site.css``), and its output box
scrolls sideways with a shadow at the edge that has more to show (as wide formulas do); tapping it
opens the full-size file.

    zoom_class(9.72)  -> "fig-zoom-100"   (no room to shrink: shown at its own size)
    zoom_class(12.5)  -> "fig-zoom-80"    (0.72 would do; the next tenth up)
    zoom_class(None)  -> None             (no saved text size: the theme's default shrinking)
"""

from __future__ import annotations

import math

MIN_TEXT_PX = 9.0   # the smallest tick label a phone reader gets, CSS px
PHONE = 600         # CSS px: narrower screens use the zoom classes
ZOOMS = range(50, 151, 10)  # the classes site.css defines: fig-zoom-50 ... fig-zoom-150


def zoom(font_px: float) -> int:
    """The smallest zoom, in percent of the figure's own size and on ``ZOOMS``'s grid, that keeps
    text of ``font_px`` CSS px at ``MIN_TEXT_PX`` or more (over 100: text smaller than that is enlarged)."""
    if font_px <= 0:
        raise ValueError(f"font_px must be a positive size in CSS px, got {font_px}")
    needed = math.ceil(round(100 * MIN_TEXT_PX / font_px, 6) / 10) * 10  # the next tenth up
    if needed > ZOOMS[-1]:
        raise ValueError(f"text of {font_px} px needs a zoom of {needed}%, more than the site's {ZOOMS[-1]}%: "
                         f"draw it larger")
    return max(needed, ZOOMS[0])


def zoom_class(font_px: float | None) -> str | None:
    """The figure's class on a phone, or None when its saved output has no text size."""
    return None if font_px is None else f"fig-zoom-{zoom(font_px)}"
