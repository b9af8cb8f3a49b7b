"""A widget's inputs made by its own notebook: run the committed notebook's code cells above it.

Notebook 05's ``draw_guesses`` and its two models, and notebook 06a's ``gated_hybrid_repaired``, are defined
and trained in the notebooks' own cells; no checkpoint is shipped. ``widget_frames.py`` draws such a
widget (``widget_frames.NOTEBOOK_MADE``) after running, as a kernel would, every code cell of the
committed notebook from the top up to the widget cell, in one namespace:

- full mode (``TL_SMOKE`` unset) on the CPU (``TL_DEVICE=cpu``): the frames must be what the
  notebook shows, and the notebooks seed themselves, so a rerun draws the same pictures;
- matplotlib's Agg backend, ``plt.show`` a no-op and every figure closed after its cell;
- IPython magics and shell lines (``%``, ``!``) skipped; stdout captured (its end is quoted when a
  cell fails);
- matplotlib's settings restored afterwards (a notebook's ``use_course_style`` stays in its widget).

The code of the cells run is part of the widget's cache key (``code_above``): change a cell above a
widget and its frames are drawn again.
"""

from __future__ import annotations

import contextlib
import io
import os
import time

SKIPPED = ("%", "!")  # IPython magics and shell lines: no meaning outside a kernel


def code_above(nb: dict, cell: int) -> list[tuple[int, str]]:
    """(cell index, code) of the code cells above ``cell``, in order, without magic and shell lines."""
    from widget_frames import cell_text

    return [(i, "\n".join(line for line in cell_text(c).splitlines() if not line.lstrip().startswith(SKIPPED)))
            for i, c in enumerate(nb["cells"][:cell]) if c["cell_type"] == "code"]


@contextlib.contextmanager
def _environment(**values):
    """Environment variables set (None: unset) for the block, then restored."""
    before = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


@contextlib.contextmanager
def notebook_run(page: str, nb: dict, cell: int):
    """Yield ``(namespace, seconds)`` after running the code cells above ``cell``; matplotlib's settings
    and the environment are restored when the block ends (the widget is drawn inside it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = {"__name__": "__main__"}
    out = io.StringIO()
    show = plt.show
    started = time.perf_counter()
    with matplotlib.rc_context(), _environment(TL_SMOKE=None, TL_DEVICE="cpu"):
        plt.show = lambda *args, **kwargs: None
        try:
            for number, code in code_above(nb, cell):
                try:
                    with contextlib.redirect_stdout(out):
                        exec(compile(code, f"<{page} cell {number + 1}>", "exec"), ns)  # the notebook's own code
                except Exception as err:
                    said = out.getvalue()[-1500:]
                    raise RuntimeError(f"{page}: running its cell {number + 1}, above the widget (cell "
                                       f"{cell + 1}) failed: {err!r}; its output ended:\n{said}") from err
                finally:
                    plt.close("all")
            yield ns, time.perf_counter() - started
        finally:
            plt.show = show
