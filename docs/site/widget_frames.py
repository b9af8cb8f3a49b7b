"""Widgets that move without a kernel: each widget of notebooks 00-06, pre-drawn at its controls' settings.

A notebook's widget (``tl_minimal.views.widgets``) redraws its picture in a live kernel; a site has
no kernel, so the build draws the pictures beforehand and a small script (``static/widget_frames.js``)
swaps them as the reader moves a real slider (or picks from a real menu).

How a widget is found and drawn:

1. the widget cell: a code cell of a course notebook 00-06 whose output is a widget view and whose
   last line is a call ``widgets.NAME(...)``; that line is the committed notebook's own code;
2. its inputs: the literal assignments of the cells above it (``sentence = "..."``), plus, for the
   widgets that read a trained model, the shipped checkpoint the notebook loads itself
   (``shipped_or_retrained``, no training) and what the notebook derives from it (``SETUPS``);
   or, for a widget whose inputs only its notebook makes (a model trained there, a function defined
   there: ``NOTEBOOK_MADE``), the committed notebook's own code cells above it, run in full mode on
   the CPU (``widget_run.py``: minutes, once per cache key);
3. its drawing function: the call runs with ``widgets.interactive`` replaced by a recorder, which
   keeps ``draw`` and the control specs (``Slider``, ``Choice``, ``Text``) instead of drawing;
4. the settings (``widget_settings.py``): ``FRAMES_PER_SLIDER`` values spanning a slider's range
   on its step grid, its starting value, and any in-range number the text around the widget names
   (notebook 00's "try 0.995"); every option of a menu; a text box becomes a menu of its starting
   text and the texts the prose around it suggests (`backticked` or "quoted" in a paragraph that
   says try), since no picture exists for text a reader has not typed (without suggestions it
   keeps its starting text); a menu that follows another control (``Choice(follows=...)``: 06a's
   ask menu offers the keys among the pairs) gets the options for each of its leader's values.
   Several controls: every combination when that is at most ``MOST_FRAMES``, else one control at
   a time from the starting values (a leader together with its followers counts as one control);
5. the cache: frames are saved as PNG under ``build/widget_frames/<key>/``, where the key hashes the
   call, its inputs' recipe (for ``NOTEBOOK_MADE``, the code of the cells run), the prose around
   it, the library version, the source of ``tl_minimal/views`` and of the drawing code here; a
   rebuild with the same key draws nothing.

Every widget of notebooks 00-06 moves this way. One that cannot (no recipe for its inputs, or no
control but a text box whose prose suggests nothing) keeps its saved picture, and its caption says
why (``UNDRAWN``). What the page shows for a widget (controls, picture, caption) is written by
``widget_page.py``.

Names: widget -> ``Widget`` (page, number on the page, call, controls, frames); frame -> one
setting of every control and its PNG file (``Frame``).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import io
import json
import re
import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import widget_run
import widget_settings
from widget_settings import FRAMES_PER_SLIDER, MOST_FRAMES, settings

__all__ = ["FRAMES_PER_SLIDER", "MOST_FRAMES", "NOTEBOOK_MADE", "UNDRAWN", "Widget", "prepare", "summary"]

WIDGET_PAGES = re.compile(r"^notebooks/0[0-6][a-z]?_[^/]+\.ipynb$")  # the course's notebooks 00-06 (not exercises)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CALL = re.compile(r"^(?:widgets|plots_\w+)\.(\w+)\(.*\)\s*$", re.DOTALL)  # widgets.x(...), plots_slots.x(...)
STATIC_DIR = "widget_frames"  # under the site's _static
CACHE = Path("build") / "widget_frames"
CACHE_FORMAT = 4              # what frames.json holds; part of the cache key

# why a widget keeps its saved picture: the caption the page shows under it
UNDRAWN = {
    "text only": ("its only control is a text box, and the text around it suggests no other text to draw: type "
                  "your own in a running notebook"),
    "no recipe": "the site's build does not know how to make its inputs yet (widget_frames.SETUPS)",
}
# widgets whose inputs only their notebook makes: the build runs the notebook's code cells above them
NOTEBOOK_MADE = {"interactive": "05's draw_guesses and its two models, trained in the notebook",
                 "recall_widget": "06a's gated_hybrid_repaired, trained in the notebook (no checkpoint is shipped)"}


@dataclass
class Frame:
    values: dict                 # {control: value}
    png: str                     # file name inside the widget's folder (twice the figure's pixels)
    width: int = 0               # the figure's own width, CSS px (half the PNG's)
    font_px: float | None = None  # its smallest text at that width (alt_text.smallest_text_px)
    described: str = ""          # what the picture itself says: titles, axes, legends (alt_text.describe)


@dataclass
class Widget:
    page: str                    # notebooks/00_start_here.ipynb
    cell: int                    # 0-based cell index in the committed notebook
    call: str                    # the widget's line of code
    key: str = ""                # the cache key (folder name)
    controls: dict = field(default_factory=dict)   # {name: {"label", "hint", "kind", "values", "start"}}
    frames: list = field(default_factory=list)     # [Frame]
    text_boxes: int = 0          # text boxes, which keep the notebook's text on the site
    undrawn: str = ""            # why it keeps its saved picture ("" when it moves)
    seconds: float = 0.0         # drawing time (0 when read from the cache), notebook run included
    run_seconds: float = 0.0     # of which running the notebook's cells above it (NOTEBOOK_MADE)


def cell_text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def widget_cells(nb: dict) -> list[tuple[int, str]]:
    """(cell index, the widget call) of every cell whose saved output is a widget view."""
    found = []
    for number, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or not any(WIDGET_VIEW in o.get("data", {}) for o in cell.get("outputs", [])):
            continue
        code = [line for line in cell_text(cell).splitlines() if line.strip() and not line.lstrip().startswith("#")]
        call = code[-1].strip() if code else ""
        if not CALL.match(call):
            raise ValueError(f"{nb.get('_page', '?')} cell {number + 1}: a widget view whose last line is not a "
                             f"widgets.NAME(...) call: {call!r}")
        found.append((number, call))
    return found


def literals_above(nb: dict, cell: int) -> dict:
    """Names the code cells above ``cell`` assign a literal (``sentence = "..."``): the latest wins."""
    names = {}
    for c in nb["cells"][:cell]:
        if c["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(cell_text(c))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    names[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return names


# --- what a widget needs that a literal cannot give: the shipped models, and what the notebook derives ---

def _shipped(variant: str):
    def setup(ns: dict) -> None:
        """long_model, long_record, LONG: the shipped 2,000-step model the notebook loads (no training)."""
        from tl_minimal.course.shipped import shipped_or_retrained

        ns["long_model"], ns["long_record"] = shipped_or_retrained(variant, False, None, "cpu")
        ns["LONG"] = ns["long_record"]["steps"]
    return setup


_shipped_lm = _shipped("triple_latent")


def _lm_protocol(ns: dict) -> None:
    """P: the lm protocol (notebook 04 reads its sequence length, P.seq_len)."""
    from tl_minimal.training.protocols import protocol

    ns["P"] = protocol("lm")


def _sentence_tokens(ns: dict) -> None:
    """tokens, labels of the notebook's ``sentence``, as notebook 02 makes them (lm protocol's length)."""
    from tl_minimal.training.protocols import protocol

    ns["tokens"] = ns["widgets"].byte_prompt(ns["sentence"], protocol("lm").seq_len)  # [T]
    ns["labels"] = ns["plots"].token_labels(ns["tokens"])


def _pair_snapshots(ns: dict) -> None:
    """snaps[LONG]: P_t of every layer at every position of the sentence (notebook 02, section on rank)."""
    positions = list(range(len(ns["tokens"])))
    ns["snaps"] = {ns["LONG"]: ns["plots"].model_pair_memories(ns["long_model"], ns["tokens"], positions)}


SETUPS = {"pulse_memory_widget": (), "gate_widget": (_shipped_lm,),
          "pair_memory_widget": (_shipped_lm, _sentence_tokens, _pair_snapshots),
          "slot_widget": (_shipped("triple_slot"), _lm_protocol)}


def cache_key(page: str, call: str, inputs: list[str], root: Path) -> str:
    """``inputs``: the literals above the widget, the prose around it and (NOTEBOOK_MADE) the code run."""
    import tl_minimal

    views = sorted((root / "tl_minimal" / "views").glob("*.py"))
    digest = hashlib.sha256()
    drawing = [inspect.getsource(f) for f in (*SETUPS.get(CALL.match(call)[1], ()), widget_settings, draw_png,
                                              capture, widget_run)]  # the page's HTML is not in the key
    records = sorted((root / "data" / "checkpoints").glob("*.json"))  # a remade checkpoint has a new record
    sources = [p.read_text(encoding="utf-8") for p in (*views, *records)]
    for part in (str(CACHE_FORMAT), page, call, *inputs, tl_minimal.__version__, *sources, *drawing):
        digest.update(part.encode("utf-8"))
    return digest.hexdigest()[:16]


def capture(call: str, ns: dict):
    """Run the widget call with ``widgets.interactive`` recording (draw, controls) instead of drawing."""
    from tl_minimal.views import widgets

    seen = {}

    def record(draw, static=None, **controls):
        seen["draw"], seen["controls"] = draw, controls

    original = widgets.interactive
    widgets.interactive = record
    try:
        eval(compile(call, "<widget call>", "eval"), ns)  # the notebook's own line of code
    finally:
        widgets.interactive = original
    if "draw" not in seen:
        raise ValueError(f"{call!r} made no interactive figure")
    return seen["draw"], seen["controls"]


def draw_png(draw, values: dict) -> tuple[bytes, int, float | None, str]:
    """(PNG at twice the pixels, the figure's own width in CSS px, its smallest text in CSS px, the text
    its titles, axes and legends give), as a notebook saves a figure (``tl_minimal.views.alt_text``)."""
    import matplotlib.pyplot as plt
    from PIL import Image

    from tl_minimal.views.alt_text import describe, smallest_text_px

    before = set(plt.get_fignums())
    try:
        fig = draw(**values)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches="tight", dpi=2 * fig.dpi)  # the inline backend's crop, 2x
        width = Image.open(io.BytesIO(buffer.getvalue())).width // 2
        return buffer.getvalue(), width, smallest_text_px(fig, drawn=True), describe(fig)
    finally:
        for number in set(plt.get_fignums()) - before:
            plt.close(number)


def prose_around(nb: dict, cell: int) -> str:
    """The Markdown cells just before and after a widget cell (where a notebook says "try 0.995")."""
    near = [nb["cells"][i] for i in (cell - 1, cell + 1) if 0 <= i < len(nb["cells"])]
    return "\n".join(cell_text(c) for c in near if c["cell_type"] == "markdown")


def widget_inputs(page: str, nb: dict, cell: int, name: str, ns: dict, stack: ExitStack) -> float:
    """Fill ``ns`` with what the widget call needs; returns the seconds spent running its notebook."""
    if name in NOTEBOOK_MADE:  # the notebook's own cells, run inside ``stack`` (its matplotlib settings)
        run, seconds = stack.enter_context(widget_run.notebook_run(page, nb, cell))
        ns.update(run)
        return seconds
    for setup in SETUPS[name]:
        setup(ns)
    return 0.0


def prepare_widget(page: str, nb: dict, cell: int, call: str, root: Path, cache: Path) -> Widget:
    """Draw (or read from the cache) every frame of one widget."""
    name = CALL.match(call)[1]
    widget = Widget(page, cell, call)
    if name not in SETUPS and name not in NOTEBOOK_MADE:
        widget.undrawn = UNDRAWN.get(name, UNDRAWN["no recipe"])
        return widget
    literals, prose = literals_above(nb, cell), prose_around(nb, cell)
    code = [c for _, c in widget_run.code_above(nb, cell)] if name in NOTEBOOK_MADE else []
    widget.key = cache_key(page, call, [repr(sorted(literals.items())), prose, *code], root)
    folder = cache / widget.key
    index = folder / "frames.json"
    if not index.is_file():
        draw_widget(widget, nb, literals, prose, folder)
    saved = json.loads(index.read_text(encoding="utf-8"))
    widget.controls, widget.frames = saved["controls"], [Frame(**f) for f in saved["frames"]]
    widget.text_boxes = saved["text_boxes"]
    widget.undrawn = "" if widget.frames else UNDRAWN["text only"]
    return widget


def draw_widget(widget: Widget, nb: dict, literals: dict, prose: str, folder: Path) -> None:
    """Make the widget's inputs, capture its call, draw every setting into ``folder`` (frames.json last)."""
    import matplotlib

    matplotlib.use("Agg")
    from tl_minimal.views import plots, plots_slots, widgets

    page, cell, call = widget.page, widget.cell, widget.call
    started = time.perf_counter()
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with ExitStack() as stack:
        ns = {"widgets": widgets, "plots": plots, "plots_slots": plots_slots, **literals}
        widget.run_seconds = widget_inputs(page, nb, cell, CALL.match(call)[1], ns, stack)
        try:
            draw, controls = capture(call, ns)
        except NameError as err:
            raise ValueError(f"{page} cell {cell + 1}: the widget call {call!r} needs {err}; give "
                             f"widget_frames.SETUPS a recipe for it") from err
        shown, todo = settings(controls, prose)
        frames = []
        for number, values in enumerate(todo):
            try:
                png, width, font_px, described = draw_png(draw, values)
            except ValueError as err:
                raise ValueError(f"{page} cell {cell + 1}: drawing {values} failed (a text the prose suggests?): "
                                 f"{err}") from err
            (tmp / f"{number}.png").write_bytes(png)
            frames.append({"values": values, "png": f"{number}.png", "width": width, "font_px": font_px,
                           "described": described})
    saved = {"controls": shown, "frames": frames,
             "text_boxes": sum(isinstance(spec, widgets.Text) for spec in controls.values())}
    (tmp / "frames.json").write_text(json.dumps(saved, indent=1), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    widget.seconds = time.perf_counter() - started


def prepare(root: Path, pages: list[str], cache: Path | None = None) -> dict[str, list[Widget]]:
    """{page: its widgets in order} for the notebooks 00-06 among ``pages``; frames drawn or cached."""
    cache = cache or root / CACHE
    found = {}
    for page in pages:
        if not WIDGET_PAGES.match(page):
            continue
        nb = json.loads((root / page).read_text(encoding="utf-8"))
        nb["_page"] = page
        widgets = [prepare_widget(page, nb, cell, call, root, cache) for cell, call in widget_cells(nb)]
        if widgets:
            found[page] = widgets
    return found


def copy_frames(found: dict[str, list[Widget]], static: Path, root: Path, cache: Path | None = None) -> int:
    """The frames of every moving widget into the site's _static; returns how many."""
    cache = cache or root / CACHE
    count = 0
    for widgets in found.values():
        for widget in widgets:
            if widget.frames:
                shutil.copytree(cache / widget.key, static / STATIC_DIR / widget.key, dirs_exist_ok=True)
                count += len(widget.frames)
    return count


def summary(found: dict[str, list[Widget]], seconds: float) -> str:
    """One line for the build's log: what moves, how many frames, how long the drawing took."""
    every = [w for widgets in found.values() for w in widgets]
    moving = [w for w in every if w.frames]
    drawn = [w for w in moving if w.seconds]
    ran = [f"{w.page.rsplit('/', 1)[-1][:-6]} {w.run_seconds:.0f} s" for w in drawn if w.run_seconds]
    run = f"; notebooks run for their widgets' inputs: {', '.join(ran)}" if ran else ""
    return (f"widgets: {len(moving)} of {len(every)} move ({sum(len(w.frames) for w in moving)} frames; "
            f"{len(drawn)} drawn in {sum(w.seconds for w in drawn):.0f} s, {len(moving) - len(drawn)} from the cache "
            f"{CACHE.as_posix()}{run}); prepared in {seconds:.0f} s")
