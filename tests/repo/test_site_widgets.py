"""The site's widgets move without a kernel (docs/site/widget_frames.py, static/widget_frames.js).

Every widget of the course's notebooks 00-06 is found from the committed notebooks; on the built
site each one is a figure with a real control (a slider or a menu) per setting it was drawn at:
every widget moves (``NOT_MOVING`` is empty; a widget put there keeps its saved picture with a
caption that says why). A moving widget's frames are files of the site, all different pictures,
a frame's text alternative describes its own picture (the widget's own text at the starting setting
only, elsewhere what the frame's titles, axes and legends say: issue 54, item 5), notebook 00's
slider reaches the 0.995 its text asks for, notebook 05's text box is a menu of the
texts its Markdown suggests, and 06a's ask menu offers, for each pairs text, the keys among them.
In Chromium each control is moved to every setting: the picture, its full-size link, its text
alternative and the value shown change, and every frame loads; notebook 00's slider also moves by
keyboard to 0.995. Without a site: the settings of a text box and of a following menu, and a
widget drawn by running its (small, made-up) notebook's cells, cached by their code.

Uses the site the tests of test_site.py use (its fixtures: TL_SITE_BUILT=build/site/html reads a
site built already, else the pages workflow's build is run).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from pathlib import Path

import pytest
import test_site
from test_site import ROOT, _site_module

pytestmark = pytest.mark.repo

site, server, browser = test_site.site, test_site.server, test_site.browser  # its fixtures, used here too
NEEDS_SITE = pytest.mark.skipif(not test_site._site_extra_installed(),
                                reason='the site needs the site extra: pip install -e ".[site]"')

# widgets that keep their saved picture on the site, and the words of the reason their caption gives: none
NOT_MOVING: dict[tuple[str, str], str] = {}
FIGURE = re.compile(r"<figure class=\"widget-frames\" id=\"([\w-]+)\" data-frames='([^']*)'>(.*?)</figure>", re.S)


def committed_widgets() -> list[tuple[str, str]]:
    """(page, widget function) of every widget cell of notebooks 00-06, read from the committed files."""
    frames = _site_module("widget_frames")
    found = []
    for path in sorted((ROOT / "notebooks").glob("0[0-6]*.ipynb")):
        page = path.relative_to(ROOT).as_posix()
        nb = json.loads(path.read_text(encoding="utf-8"))
        found += [(page, frames.CALL.match(call)[1]) for _, call in frames.widget_cells(nb)]
    return found


def site_figures(site: Path, page: str) -> list[tuple[str, list[dict], str]]:
    text = (site / page.replace(".ipynb", ".html")).read_text(encoding="utf-8")
    return [(ident, json.loads(html.unescape(data)), body) for ident, data, body in FIGURE.findall(text)]


@pytest.mark.slow
def test_frames_span_each_control_and_come_from_the_cache_the_second_time(tmp_path):
    """Notebook 00's widget: the slider's frames span its range on its step grid, include its start
    (0.9) and the 0.995 the text names; a second preparation reads them from the cache, drawing nothing."""
    frames = _site_module("widget_frames")
    page = "notebooks/00_start_here.ipynb"
    first = frames.prepare(ROOT, [page], cache=tmp_path)[page][0]
    lam = first.controls["lam"]["values"]
    assert lam[0] == 0.05 and lam[-1] == 0.995 and 0.9 in lam, lam
    assert len(lam) >= frames.FRAMES_PER_SLIDER and all(abs(round(v / 0.005) * 0.005 - v) < 1e-9 for v in lam)
    assert first.seconds > 0 and len(first.frames) == len(lam)
    again = frames.prepare(ROOT, [page], cache=tmp_path)[page][0]
    assert again.seconds == 0 and [f.values for f in again.frames] == [f.values for f in first.frames]
    assert (frames.prepare(ROOT, ["notebooks/03_readout.ipynb"], cache=tmp_path) == {}), "03 has no widget"


def test_a_text_box_becomes_a_menu_of_the_texts_the_prose_suggests_and_a_menu_follows_it():
    """Suggested texts come from a paragraph that says try; a following menu gets its options per text,
    and a leader with its followers moves as one control when the combinations are too many."""
    from tl_minimal.views import widgets

    frames = _site_module("widget_frames")

    def words(text):
        return [(w.upper(), w) for w in text.split()]

    controls = {"text": widgets.Text("a", "text"), "n": widgets.Slider(1, 0, 7, 1, "n"),
                "word": widgets.Choice("a", (("A", "a"),), "word", follows="text", options_for=words)}
    prose = 'Try `b c` and "d e f".\n\nAn aside with `code` and "quotes", which suggests nothing.'
    shown, todo = frames.settings(controls, prose)
    assert list(shown) == ["text", "n", "word"] and shown["text"]["typed"]
    assert shown["text"]["values"] == ["a", "b c", "d e f"]
    assert shown["word"]["follows"] == "text" and shown["word"]["options"] == [
        [["A", "a"]], [["B", "b"], ["C", "c"]], [["D", "d"], ["E", "e"], ["F", "f"]]]
    drawn = {(t["text"], t["word"]) for t in todo}
    assert drawn == {("a", "a"), ("b c", "b"), ("b c", "c"), ("d e f", "d"), ("d e f", "e"), ("d e f", "f")}
    n = len(shown["n"]["values"])
    assert 6 * n > frames.MOST_FRAMES and len(todo) == 6 + n - 1, "one control (text with word, or n) at a time"
    assert all(t["n"] == 1 for t in todo if t["text"] != "a" or t["word"] != "a")
    shown, todo = frames.settings(controls, "Nothing suggested here.")
    assert "text" not in shown and "follows" not in shown["word"] and shown["word"]["values"] == ["a"]
    assert len(todo) == n


MADE_UP = """%matplotlib inline
import os

import matplotlib.pyplot as plt
from tl_minimal.views import widgets

assert os.environ.get("TL_SMOKE") is None and os.environ.get("TL_DEVICE") == "cpu", "not full mode on the CPU"
SIZE = (2.0, 1.0)


def draw(text):
    fig, ax = plt.subplots(figsize=SIZE)
    ax.set_title(text)
    return fig


print("a cell's output")
plt.plot([0, 1])
plt.show()
"""


def made_up_notebook(code: str) -> dict:
    frames = _site_module("widget_frames")
    view = {"output_type": "display_data", "metadata": {}, "data": {frames.WIDGET_VIEW: {}}}
    return {"cells": [{"cell_type": "code", "source": code, "outputs": []},
                      {"cell_type": "markdown", "source": "Words worth trying: `one` and `two`."},
                      {"cell_type": "code", "source": 'widgets.interactive(draw, text=widgets.Text("zero", "word"))',
                       "outputs": [view]}]}


def test_a_widget_whose_inputs_its_notebook_makes_is_drawn_after_running_the_cells_above(tmp_path, monkeypatch,
                                                                                       capsys):
    """Its cells run in full mode on the CPU (magics skipped, stdout kept back, the environment
    restored); its text box is a menu; its frames differ; the cache key follows the code run."""
    frames = _site_module("widget_frames")
    monkeypatch.setenv("TL_SMOKE", "1")
    page = "notebooks/05_made_up.ipynb"
    nb = made_up_notebook(MADE_UP)
    [(cell, call)] = frames.widget_cells(nb)
    widget = frames.prepare_widget(page, nb, cell, call, ROOT, tmp_path)
    assert "a cell's output" not in capsys.readouterr().out and os.environ["TL_SMOKE"] == "1"
    assert widget.controls["text"]["values"] == ["zero", "one", "two"] and not widget.undrawn
    assert 0 < widget.run_seconds <= widget.seconds and "05_made_up" in frames.summary({page: [widget]}, 1)
    pictures = {hashlib.sha256((tmp_path / widget.key / f.png).read_bytes()).digest() for f in widget.frames}
    assert [f.values for f in widget.frames] == [{"text": t} for t in ("zero", "one", "two")] and len(pictures) == 3
    again = frames.prepare_widget(page, nb, cell, call, ROOT, tmp_path)
    assert again.seconds == 0 and again.key == widget.key and len(again.frames) == 3, "not read from the cache"
    edited = made_up_notebook(MADE_UP.replace("(2.0, 1.0)", "(2.0, 1.5)"))
    assert frames.prepare_widget(page, edited, cell, call, ROOT, tmp_path).key != widget.key
    with pytest.raises(RuntimeError, match=r"05_made_up.ipynb: running its cell 1, above the widget .*ZeroDivision"):
        frames.prepare_widget(page, made_up_notebook("print('before')\n1 / 0"), cell, call, ROOT, tmp_path)


@pytest.mark.slow  # a build of the whole course: minutes
@NEEDS_SITE
def test_every_widget_of_00_to_06_moves_or_says_why_not(site):
    widgets = committed_widgets()
    assert len(widgets) >= 8, f"only {len(widgets)} widgets found in notebooks 00-06: {widgets}"
    pages = sorted({page for page, _ in widgets})
    moving = {page: site_figures(site, page) for page in pages}
    expected = {page: sum(1 for p, name in widgets if p == page and (p, name) not in NOT_MOVING) for page in pages}
    assert {p: len(f) for p, f in moving.items()} == expected, "moving widgets per page differ from the notebooks'"
    total = 0
    for page, figures in moving.items():
        for ident, frames, body in figures:
            controls = re.findall(r'<(input type="range"|select) id="([\w-]+)"', body)
            assert controls, f"{page} {ident}: no slider or menu"
            for _, cid in controls:
                assert f'<label for="{cid}"' in body, f"{page} {ident}: control {cid} has no label"
            assert len(frames) >= 2, f"{page} {ident}: {len(frames)} frame(s)"
            pictures = set()
            starting = [f["alt"] for f in frames if "Shown here:" in f["alt"]]  # the widget's own text
            assert len(starting) == 1, f"{page} {ident}: {len(starting)} frames carry the starting picture's text"
            opening = starting[0].split(". ")[0]
            for frame in frames:
                file = (site / page).parent / frame["src"]
                assert file.is_file(), f"{page} {ident}: frame {frame['src']} is not on the site"
                pictures.add(hashlib.sha256(file.read_bytes()).hexdigest())
                assert frame["alt"].count(".") >= 2, frame["alt"]
                if frame["alt"] != starting[0]:  # another setting: its own picture's titles, not the start's text
                    assert frame["alt"].startswith("The interactive figure at ") and opening not in frame["alt"] \
                        and "Figure" in frame["alt"], frame["alt"]
            assert len(pictures) == len(frames), f"{page} {ident}: two settings drew the same picture"
            total += len(frames)
    for (page, name), reason in NOT_MOVING.items():
        text = (site / page.replace(".ipynb", ".html")).read_text(encoding="utf-8")
        assert "On this site it does not move" in text and reason in text, f"{page} ({name}): no caption says why"
    lam = json.loads(html.unescape(re.search(r"data-values='([^']*)'",
                                             moving["notebooks/00_start_here.ipynb"][0][2])[1]))
    assert 0.995 in lam and 0.9 in lam, f"notebook 00's slider does not reach the 0.995 its text asks for: {lam}"
    print(f"\n{sum(len(f) for f in moving.values())} moving widgets, {total} frames")


@pytest.mark.slow  # a build of the whole course: minutes
@NEEDS_SITE
def test_text_boxes_are_menus_of_the_suggested_texts_and_the_ask_menu_follows_the_pairs(site):
    """05: the menu lists the notebook's sentence and every `text` its Markdown before the widget
    suggests, each drawn; 06a: each pairs text its Markdown after the widget suggests is drawn with
    every key among its pairs in the ask menu, and no other key; both captions say how to type."""
    frames = _site_module("widget_frames")
    page = "notebooks/05_convolution.ipynb"
    nb = json.loads((ROOT / page).read_text(encoding="utf-8"))
    [(cell, _)] = frames.widget_cells(nb)
    suggested = re.findall(r"`([^`]+)`", frames.cell_text(nb["cells"][cell - 1]))
    [(_, drawn, body)] = site_figures(site, page)
    options = [html.unescape(o) for o in re.findall(r"<option[^>]*>([^<]*)</option>", body)]
    assert len(suggested) >= 3 and options == [frames.literals_above(nb, cell)["sentence"], *suggested], options
    assert sorted(f["values"]["text"] for f in drawn) == sorted(options)
    assert "menu of the texts the notebook suggests; in a running notebook you type your own" in body
    page = "notebooks/06a_kv_recall.ipynb"
    nb = json.loads((ROOT / page).read_text(encoding="utf-8"))
    [(cell, call)] = frames.widget_cells(nb)
    suggested = re.findall(r"`([^`]+)`", frames.cell_text(nb["cells"][cell + 1]))
    start = re.search(r'pairs="([^"]+)"', call)[1]
    [(_, drawn, body)] = site_figures(site, page)
    for pairs in (start, *suggested):
        keys = sorted(int(k) for k in re.findall(r"k(\d+)=", pairs))
        asked = sorted({f["values"]["ask"] for f in drawn if f["values"]["pairs"] == pairs})
        assert asked == keys, f"06a: for pairs {pairs!r} the ask menu was drawn at {asked}, its keys are {keys}"
    assert len(suggested) >= 1 and 'data-follows="pairs"' in body and "type your own" in body


JS_MOVE_ALL = """async () => {
  const seen = [];
  for (const figure of document.querySelectorAll('figure.widget-frames')) {
    const img = figure.querySelector('img');
    for (const control of figure.querySelectorAll('[data-control]')) {
      const n = JSON.parse(control.dataset.values).length;
      for (let i = 0; i < n; i++) {
        control.value = String(i);
        control.dispatchEvent(new Event('input', {bubbles: true}));
        await img.decode().catch(() => null);
        const out = figure.querySelector(`output[for="${control.id}"]`);
        seen.push({widget: figure.id, control: control.id, index: i, src: img.getAttribute('src'),
                   href: img.closest('a').getAttribute('href'), alt: img.alt,
                   shown: out ? out.textContent : control.selectedOptions[0].textContent,
                   loaded: img.complete && img.naturalWidth > 0});
      }
    }
  }
  return seen;
}"""


@pytest.mark.slow  # a build of the whole course: minutes
@NEEDS_SITE
@pytest.mark.browser
def test_moving_each_control_changes_the_picture(site, server, browser):
    pages = sorted({page for page, name in committed_widgets() if (page, name) not in NOT_MOVING})
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    tab.on("pageerror", lambda err: errors.append(str(err)))
    problems, moves = [], 0
    try:
        for page in pages:
            tab.goto(server + page.replace(".ipynb", ".html"), wait_until="load")
            seen = tab.evaluate(JS_MOVE_ALL)
            assert seen, f"{page}: no control to move"
            for control in sorted({s["control"] for s in seen}):
                steps = [s for s in seen if s["control"] == control]
                moves += len(steps)
                where = f"{page} {control}"
                if len({s["src"] for s in steps}) != len(steps):
                    problems.append(f"{where}: the picture did not change at every setting")
                if len({s["alt"] for s in steps}) != len(steps) or len({s["shown"] for s in steps}) != len(steps):
                    problems.append(f"{where}: the text alternative or the value shown did not follow")
                problems += [f"{where} at setting {s['index']}: {s['src']} did not load"
                             for s in steps if not s["loaded"]]
                problems += [f"{where}: the full-size link stayed behind" for s in steps if s["href"] != s["src"]]
        # by keyboard, as notebook 00's text asks: "try 0.995" (the slider's last setting)
        tab.goto(server + "notebooks/00_start_here.html", wait_until="load")
        slider = tab.locator("figure.widget-frames input[type=range]").first
        before = tab.locator("figure.widget-frames img").first.get_attribute("src")
        slider.focus()
        tab.keyboard.press("End")
        shown = tab.locator("figure.widget-frames output").first.text_content()
        after = tab.locator("figure.widget-frames img").first.get_attribute("src")
        if shown != "0.995" or after == before:
            problems.append(f"notebook 00 by keyboard (End): shows {shown!r}, picture {before} -> {after}")
    finally:
        tab.close()
    problems += [f"script error: {e}" for e in errors]
    assert not problems, "\n".join(problems)
    print(f"\n{moves} moves over {len(pages)} pages: each changed the picture")
