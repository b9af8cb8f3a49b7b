"""A text alternative for every figure a notebook shows, and a picture sharp enough for a phone.

In a Jupyter kernel, ``install()`` makes every displayed figure carry ``describe(fig)`` in its
output's metadata (``{"image/png": {"alt": ...}}``, the course's website uses it), draws the PNG at
twice its pixels (IPython's "retina" PNG, shown at its usual size) and records the smallest text
drawn, in CSS pixels at that size (``font_px``: the site keeps tick labels at least 9 px tall).
"""

from __future__ import annotations

import importlib

import matplotlib
from matplotlib.figure import Figure
from matplotlib.text import Text

from ..jupyter import in_jupyter_kernel

MAX_ITEMS = 6  # legend entries named per panel


def _panel(ax, number: int) -> str:
    titles = [t for t in (ax.get_title(loc) for loc in ("left", "center", "right")) if t.strip()]
    parts = [f"Panel {number}" + (f": {' / '.join(titles)}" if titles else "")]
    for name, label in (("x axis", ax.get_xlabel()), ("y axis", ax.get_ylabel())):
        if label.strip():
            parts.append(f"{name}: {label}")
    legend = ax.get_legend()
    if legend is not None:
        entries = [t.get_text() for t in legend.get_texts() if t.get_text().strip()]
        more = f" and {len(entries) - MAX_ITEMS} more" if len(entries) > MAX_ITEMS else ""
        if entries:
            parts.append("legend: " + ", ".join(entries[:MAX_ITEMS]) + more)
    return "; ".join(parts)


def describe(fig) -> str:
    """"Figure: <title>. Panel 1: <title>; x axis: ...; y axis: ...; legend: a, b." from the figure's title and
    its panels' (colour bars and switched-off panels skipped; a figure with no text says so)."""
    title = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""  # matplotlib >= 3.8
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison and ax.get_label() != "<colorbar>"]
    text_panels = [ax for ax in fig.axes if not ax.axison and ax.get_title().strip()]
    described = [_panel(ax, i) for i, ax in enumerate(panels + text_panels, start=1)]
    head = f"Figure: {title}." if title.strip() else f"Figure with {len(described) or 'no'} panel(s)."
    return " ".join([head] + [d + "." for d in described])


def smallest_text_px(fig, drawn: bool = False) -> float | None:
    """The smallest font of any text shown, in CSS pixels at the picture's own size (points x dpi / 72; a 7 pt
    tick label at 100 dpi is 9.72); None: no text. Unless ``drawn`` (its PNG was just made), the figure is
    laid out first: matplotlib makes tick labels only then. Text in a switched-off panel is not drawn."""
    if not drawn:
        fig.draw_without_rendering()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
             and (t.axes is None or t.axes.get_visible())]
    return round(min(sizes) * fig.dpi / 72, 2) if sizes else None


def install() -> bool:
    """Make the kernel's PNG of every matplotlib figure carry ``describe(fig)`` as its alt text (idempotent).
    The inline backend (which registers the PNG formatter wrapped here) is loaded first; if the formatter is
    still missing, the hook is installed after the cell that runs now. Returns True when installed now."""
    if not in_jupyter_kernel():
        return False
    from IPython import get_ipython

    backend = matplotlib.get_backend()
    if backend.startswith("module://"):
        importlib.import_module(backend[len("module://"):])
    shell = get_ipython()
    if _wrap(shell):
        return True

    def later(*_):
        _wrap(shell)
        shell.events.unregister("post_run_cell", later)

    shell.events.register("post_run_cell", later)
    return False


def _wrap(shell) -> bool:
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        draw_png = formatter.lookup_by_type(Figure)
    except KeyError:
        return False
    if getattr(draw_png, "tl_alt_text", False):
        return True

    from IPython.core.pylabtools import retina_figure

    def png_with_alt(fig):
        # twice the pixels; metadata {"width", "height"} keeps the figure's own size on the page
        drawn = retina_figure(fig, bbox_inches="tight")  # the inline backend's own crop
        if drawn is None:  # an empty figure: nothing to show, as the inline backend does
            return None
        data, meta = drawn
        return data, {**meta, "alt": describe(fig), "font_px": smallest_text_px(fig, drawn=True)}

    png_with_alt.tl_alt_text = True
    formatter.for_type(Figure, png_with_alt)
    return True
