"""Colour-blind-safe pictures: one palette, set once; nothing told apart by red and green alone.

How "red and green alone" is judged: two artists of one axes (lines, bars, boxes, shaded spans)
that differ in colour but not in marker, line style or hatch are told apart by colour alone; their
two colours must not be a red and a green (by hue) that a reader with deuteranopia or protanopia
sees as one: the test simulates both (the linear-RGB projections of Viénot, Brettel and Mollon
1999) and asks for a difference of at least MIN_DISTANCE (sRGB, 0..1, the largest channel) after
the simulation. The check is first shown to
catch matplotlib's old default pair (tab:red against tab:green).
"""

from __future__ import annotations

import base64
import itertools
import re
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.colors import rgb_to_hsv, to_rgb

from tl_minimal import views
from tl_minimal.conv import conv_fast
from tl_minimal.data import recall as data_recall
from tl_minimal.views import alt_text, diagrams, palette, plots, plots_conv, plots_retrieval

views.use_course_style()  # the notebooks' one call: every figure below uses the course's palette

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ROOT / "tl_minimal" / "views"
MIN_DISTANCE = 0.2
# linear RGB -> the colour a deuteranope / protanope sees (Viénot, Brettel and Mollon 1999)
SIMULATE = {
    "deuteranopia": np.array([[0.29275, 0.70725, 0.0], [0.29275, 0.70725, 0.0], [-0.02234, 0.02234, 1.0]]),
    "protanopia": np.array([[0.11238, 0.88762, 0.0], [0.11238, 0.88762, 0.0], [0.00401, -0.00401, 1.0]]),
}


def _linear(c):
    c = np.asarray(c, float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _srgb(c):
    c = np.clip(c, 0, 1)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def hue_class(colour) -> str | None:
    """"red" (hues 330-40 degrees), "green" (70-170) or None (other hues, greys, pale or dark)."""
    h, sat, val = rgb_to_hsv(to_rgb(colour))
    if sat < 0.25 or val < 0.2:
        return None
    degrees = 360 * h
    return "red" if degrees < 40 or degrees >= 330 else "green" if 70 <= degrees <= 170 else None


def confusable(a, b) -> bool:
    """True when a is a red and b a green (or the reverse) that a deuteranope or a protanope
    sees as nearly the same colour."""
    if {hue_class(a), hue_class(b)} != {"red", "green"}:
        return False
    a, b = _linear(to_rgb(a)), _linear(to_rgb(b))
    return any(np.abs(_srgb(m @ a) - _srgb(m @ b)).max() < MIN_DISTANCE for m in SIMULATE.values())


def colour_only_pairs(fig) -> list[tuple]:
    """Pairs of artists of one axes that differ only in colour, and whose colours are confusable."""
    found = []
    for ax in fig.axes:
        styled = []
        for line in ax.get_lines():
            drawn = line.get_linestyle() not in ("None", "") or line.get_marker() not in ("None", "")
            if line.get_visible() and drawn:
                styled.append((("line", line.get_linestyle(), str(line.get_marker())), line.get_color()))
        for patch in ax.patches:
            if patch.get_visible() and patch.get_fill():
                styled.append((("patch", patch.get_hatch() or ""), patch.get_facecolor()[:3]))
        for (style_a, colour_a), (style_b, colour_b) in itertools.combinations(styled, 2):
            if style_a == style_b and confusable(colour_a, colour_b):
                found.append((ax.get_title(), style_a, colour_a, colour_b))
    return found


def test_the_palette_is_okabe_ito_and_the_colour_cycle():
    assert sorted(palette.CATEGORICAL) == sorted(palette.OKABE_ITO.values())
    assert len(set(palette.CATEGORICAL)) == 8
    cycle = [c.upper() for c in matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]]
    assert cycle == [c.upper() for c in palette.CATEGORICAL]  # views.use_course_style() set it
    fig, ax = plt.subplots()
    lines = [ax.plot([0, 1], [i, i])[0] for i in range(3)]
    assert [to_rgb(line.get_color()) for line in lines] == [to_rgb(c) for c in palette.CATEGORICAL[:3]]
    plt.close(fig)


def test_no_view_writes_a_colour_outside_the_palette():
    """Outside palette.py a view may name greys, black and white, never a hue of its own."""
    hex_code = re.compile(r"""["'](#[0-9a-fA-F]{6})["']""")
    named = re.compile(r"""\b(?:colou?r|fc|ec|facecolor|edgecolor|c)\s*=\s*["']([a-z]+|tab:[a-z]+|C\d)["']""")
    offenders = []
    for path in sorted(VIEWS.glob("*.py")):
        if path.name == "palette.py":
            continue
        text = path.read_text(encoding="utf-8")
        for code in hex_code.findall(text):
            rgb = np.array(to_rgb(code))
            if rgb.max() - rgb.min() > 0.13:  # not a grey
                offenders.append(f"{path.name}: {code}")
        offenders += [f"{path.name}: {name}" for name in named.findall(text)
                      if name not in ("black", "white", "none", "k", "w", "grey", "gray")]
    assert not offenders, f"colours outside views/palette.py: {offenders}"


def test_the_check_catches_red_against_green():
    assert confusable("tab:red", "tab:green")
    assert confusable("#c62828", "#2e7d32")  # the right / wrong colours before the palette
    assert not confusable(palette.BLUE, palette.ORANGE)
    fig, ax = plt.subplots()
    ax.plot([0, 1], color="tab:red")
    ax.plot([1, 0], color="tab:green")
    assert colour_only_pairs(fig)
    plt.close(fig)


def test_palette_colours_differ_for_colour_blind_readers():
    close = [(a, b) for a, b in itertools.combinations(palette.CATEGORICAL, 2) if confusable(a, b)]
    assert not close, f"palette colours a colour-blind reader may confuse: {close}"
    assert not confusable(palette.RIGHT.colour, palette.WRONG.colour)
    assert palette.RIGHT.hatch != palette.WRONG.hatch


def _recall_grid():
    x, y = data_recall.recall_batch(1, seq_len=20, generator=torch.Generator().manual_seed(0))
    panel = {"values": torch.rand(20), "marks": plots_retrieval.recall_marks(x[0], y[0])}
    return plots_retrieval.retrieval_grid({"model": [dict(panel, verdict=True), dict(panel, verdict=False)]})


def _influence_maps():
    W, c = torch.randn(3, 3, 5), torch.randn(3)
    maps = {name: plots_conv.conv_influence(lambda t, causal=causal: conv_fast(t, W, c, causal=causal), T=8, d=3)
            for name, causal in (("causal", True), ("leaky", False))}
    return plots_conv.influence_maps(maps)


# the library's categorical pictures, drawn on small inputs
FIGURES = {
    "prediction_strips": lambda: plots_retrieval.prediction_strips(
        torch.tensor([257, 72, 105, 33, 72, 105]),
        {"a": torch.tensor([72, 105, 33, 10, 105, 1]), "b": torch.tensor([1, 105, 2, 72, 3, 4])}),
    "loss_curves": lambda: plots.loss_curves({f"run {i}": [3.0 - 0.1 * i - 0.01 * s for s in range(20)]
                                              for i in range(6)}),
    "pulse_memory": lambda: plots.pulse_memory((0.5, 0.8, 0.9, 0.95)),
    "recall_strip": lambda: plots.recall_strip(*(t[0] for t in data_recall.recall_batch(
        1, seq_len=20, generator=torch.Generator().manual_seed(0)))),
    "retrieval_grid": _recall_grid,
    "influence_maps": _influence_maps,
    "tap_norms": lambda: plots_conv.tap_norms({"causal": (torch.randn(2, 2, 5), True),
                                               "leaky": (torch.randn(2, 2, 5), False)}),
    "metric_bars": lambda: plots.metric_bars({"a": 1.0, "b": 2.0}, {"a": 1.1}),
    "layer_diagram": diagrams.layer_diagram,
    "model_diagram": diagrams.model_diagram,
    "chunk_diagram": lambda: diagrams.chunk_diagram(T=32, C=8),
}


@pytest.mark.parametrize("name", FIGURES)
def test_no_figure_tells_things_apart_by_red_and_green_alone(name):
    fig = FIGURES[name]()
    try:
        assert not colour_only_pairs(fig), colour_only_pairs(fig)[:5]
    finally:
        plt.close("all")


def test_right_guesses_are_hatched_and_named():
    tokens = torch.tensor([257, 72, 105, 33])
    fig = plots_retrieval.prediction_strips(tokens, {"model": torch.tensor([72, 105, 33, 10])})
    boxes = [p for p in fig.axes[1].patches if p.get_hatch()]
    assert len(boxes) == 3 and all(p.get_hatch() == palette.RIGHT.hatch for p in boxes)  # 3 right guesses
    assert "right" in fig.axes[1].get_title() and "hatched" in fig.axes[1].get_title()
    plt.close(fig)


# --- text alternatives --------------------------------------------------------------------


def test_describe_reads_the_titles_axes_and_legend():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([0, 1], label="transformer")
    left.plot([1, 0], label="triple_latent")
    left.legend()
    left.set(title="training loss", xlabel="step", ylabel="bits per byte")
    right.set_title("RIGHT", loc="left")
    fig.suptitle("two models")
    text = alt_text.describe(fig)
    for part in ("two models", "training loss", "x axis: step", "y axis: bits per byte",
                 "transformer, triple_latent", "Panel 2: RIGHT"):
        assert part in text, (part, text)
    plt.close(fig)
    blank = plt.figure()
    assert alt_text.describe(blank).strip()  # never empty
    plt.close(blank)


def test_importing_the_views_changes_no_global_state():
    code = ("import matplotlib, IPython.core.formatters as f; before = matplotlib.rcParams['axes.prop_cycle']; "
            "import tl_minimal.views, tl_minimal.views.plots, tl_minimal.views.widgets; "
            "assert matplotlib.rcParams['axes.prop_cycle'] == before; print('unchanged')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8",
                         cwd=ROOT, check=False)
    assert out.returncode == 0 and "unchanged" in out.stdout, out.stderr


def test_the_alt_text_hook_needs_a_kernel():
    assert alt_text.install() is False  # pytest is no Jupyter kernel: nothing to wrap


@pytest.mark.slow
def test_a_notebook_figure_carries_its_alt_text(tmp_path):
    """Executed in a real kernel: a figure shown after views.use_course_style() has an alt text."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    code = ("import matplotlib.pyplot as plt\nfrom tl_minimal import views\nviews.use_course_style()\n"
            "fig, ax = plt.subplots()\nax.plot([1, 2], label='a')\nax.legend()\n"
            "ax.set(title='a line', xlabel='step', ylabel='loss')\nax.tick_params(labelsize=7)\n"
            "print(fig.dpi)\nplt.show()")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nbclient.NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(ROOT)}}).execute()
    images = [o for o in nb.cells[0].outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1
    meta = images[0]["metadata"]["image/png"]
    alt = meta["alt"]
    assert "a line" in alt and "x axis: step" in alt and "y axis: loss" in alt, alt
    # twice the pixels, its own size in the metadata, and its smallest text (the 7 pt ticks) in CSS px
    dpi = float(next(o["text"] for o in nb.cells[0].outputs if o.get("name") == "stdout"))
    raw = base64.b64decode(images[0]["data"]["image/png"])
    assert abs(int.from_bytes(raw[16:20], "big") - 2 * meta["width"]) <= 1, (meta, raw[16:24])
    assert meta["font_px"] == round(7 * dpi / 72, 2), (meta, dpi)


def test_smallest_text_px_reads_the_smallest_text_drawn():
    fig, (left, hidden) = plt.subplots(1, 2, dpi=100)
    left.plot([0, 1])
    left.set_title("a title", fontsize=12)
    left.tick_params(labelsize=8)
    hidden.set_title("tiny but hidden", fontsize=3)
    hidden.set_visible(False)
    assert alt_text.smallest_text_px(fig) == round(8 * 100 / 72, 2)  # 11.11: the ticks, not the hidden panel
    left.annotate("note", (0.5, 0.5), fontsize=6)
    assert alt_text.smallest_text_px(fig) == round(6 * 100 / 72, 2)
    plt.close(fig)
    empty = plt.figure()
    assert alt_text.smallest_text_px(empty) is None
    plt.close(empty)
