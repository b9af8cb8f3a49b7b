"""A text alternative for every figure a notebook shows: what a screen reader says instead.

``describe(fig)`` writes one from what the figure itself says: its title, each panel's title,
axis labels and legend entries. In a Jupyter kernel, importing ``tl_minimal.views`` calls
``install()``, which makes every displayed figure carry that text in its output's metadata
(``{"image/png": {"alt": ...}}``), so a notebook executed with the library saves an alt text beside
each picture; the course's website uses it. Important figures get a written one instead (the site
keeps those). Outside a kernel, ``install`` does nothing.

    describe(fig)   -> "Figure: <title>. Panel 1: <title>; x axis: ...; y axis: ...; lines: a, b."
    install()       display hook for matplotlib figures (a kernel only; idempotent)
"""

from __future__ import annotations

import importlib

import matplotlib
from matplotlib.figure import Figure

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
    """An alt text generated from the figure's title and its panels' titles, axes and legends.

    Colour bars and empty (switched off) panels are skipped; a figure with nothing written on it
    says so, rather than returning an empty string."""
    title = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""  # matplotlib >= 3.8
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison and ax.get_label() != "<colorbar>"]
    text_panels = [ax for ax in fig.axes if not ax.axison and ax.get_title().strip()]
    described = [_panel(ax, i) for i, ax in enumerate(panels + text_panels, start=1)]
    head = f"Figure: {title}." if title.strip() else f"Figure with {len(described) or 'no'} panel(s)."
    return " ".join([head] + [d + "." for d in described])


def install() -> bool:
    """Make the kernel's PNG of every matplotlib figure carry ``describe(fig)`` as its alt text.

    matplotlib loads its inline backend (which registers the PNG formatter wrapped here) only when
    first used, so it is loaded first; if the formatter is still missing, the hook is installed
    after the cell that runs now. Returns True when installed now."""
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

    def png_with_alt(fig):
        data = draw_png(fig)
        return None if data is None else (data, {"alt": describe(fig)})

    png_with_alt.tl_alt_text = True
    formatter.for_type(Figure, png_with_alt)
    return True
