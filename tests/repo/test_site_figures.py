"""Figures on a phone and a laptop: every notebook figure on the site keeps its smallest text at 9 CSS
px or more at 390 and 1280 px (issue 36, item 2; issue 54, item 2; docs/site/figure_scale.py, the zoom
rules in static/site.css, the readable widths of static/scroll_cues.js).

A notebook saves each figure at twice its pixels with its own width and its smallest text size
(``tl_minimal.views.alt_text``); the site's widget frames are drawn the same way
(``widget_frames.draw_png``). In Chromium at 390 and 1280 px this test reads, for every figure of every
notebook page, the width it is shown at, and computes the size its smallest text is shown at:
the saved text size times shown width over own width. Every figure must have a saved size and
every smallest text must reach ``MIN_TEXT_PX``. The fast tests hold the CSS rules to the classes
the build writes.

Uses the site the tests of test_site.py use (its fixtures).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
import test_site
from test_site import ROOT, _site_module

pytestmark = pytest.mark.repo

site, server, browser = test_site.site, test_site.server, test_site.browser  # its fixtures, used here too
scale = _site_module("figure_scale")
COURSE = sorted(p for p in (ROOT / "notebooks").glob("0*.ipynb"))  # the course's notebooks (the site's pages)


def test_each_zoom_class_has_its_rule_for_phones_only():
    css = (ROOT / "docs" / "site" / "static" / "site.css").read_text(encoding="utf-8")
    phone = re.search(r"@media \(max-width: (\d+)px\) \{(.*?)\n\}", css, re.S)
    assert phone and int(phone[1]) == scale.PHONE, "site.css has no phone block at figure_scale.PHONE"
    for z in scale.ZOOMS:
        assert re.search(rf"img\.fig-zoom-{z} \{{ zoom: {z / 100:g}; \}}", phone[2]), f"no rule for fig-zoom-{z}"
    assert not re.search(r"img\.fig-zoom-\d+", css.replace(phone[2], "")), "a zoom rule outside the phone block"


def test_the_zoom_is_the_smallest_tenth_that_keeps_the_text_readable():
    assert scale.zoom(9.72) == 100 and scale.zoom(12.5) == 80 and scale.zoom(18) == 50  # 7 pt, 9 pt, 13 pt at 100 dpi
    assert scale.zoom(8.33) == 110  # 6 pt text is enlarged on a phone
    for px in (6.1, 7.5, 9.0, 9.72, 11.11, 13.89, 25.0):
        z = scale.zoom(px)
        assert px * z / 100 >= scale.MIN_TEXT_PX and (z == scale.ZOOMS[0] or px * (z - 10) / 100 < scale.MIN_TEXT_PX)
    assert scale.zoom_class(None) is None
    with pytest.raises(ValueError, match="draw it larger"):
        scale.zoom(3.0)


def saved_text_sizes(site_html) -> dict[str, float]:
    """{image file name: smallest text, CSS px} for every figure of the course notebooks (the name
    MyST-NB gives it: the PNG's SHA-256) and every widget frame the build drew."""
    sizes = {}
    for path in COURSE:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                if "image/png" in output.get("data", {}):
                    raw = base64.b64decode(output["data"]["image/png"])
                    meta = output.get("metadata", {}).get("image/png", {})
                    sizes[hashlib.sha256(raw).hexdigest() + ".png"] = meta.get("font_px")
    for index in (site_html / "_static" / "widget_frames").glob("*/frames.json"):
        for frame in json.loads(index.read_text(encoding="utf-8"))["frames"]:
            sizes[f"{index.parent.name}/{frame['png']}"] = frame.get("font_px")
    return sizes


JS_FIGURES = """() => [...document.querySelectorAll('div.cell_output img, figure.widget-frames img')].map(img => ({
  src: img.getAttribute('src'), cls: img.className, own: Number(img.getAttribute('width') || 0),
  shown: img.getBoundingClientRect().width, loaded: img.complete && img.naturalWidth > 0}))"""


@pytest.mark.slow  # a build of the whole course: minutes
@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_every_figure_keeps_its_smallest_text_readable(site, server, browser, width):
    """At 390 px by the zoom rules of site.css; at 1280 px a figure that the column would shrink below
    that is shown at its readable width instead (scroll_cues.js), and its box scrolls with a cue."""
    sizes = saved_text_sizes(site)
    tab = browser.new_page(viewport={"width": width, "height": 844})
    problems, shown_sizes = [], []
    try:
        for path in COURSE:
            page = path.relative_to(ROOT).with_suffix(".html").as_posix()
            tab.goto(server + page, wait_until="load")
            tab.evaluate(test_site.JS_ALL_IMAGES)  # the lazy ones too
            for img in tab.evaluate(JS_FIGURES):
                parts = img["src"].split("/")
                name = "/".join(parts[-2:]) if "widget_frames" in parts else parts[-1]  # a frame: key/n.png
                font = sizes.get(name)
                if not (font and img["own"] and img["loaded"]):
                    problems.append(f"{page} {name}: no saved text size or own width, or not loaded ({img})")
                    continue
                px = font * img["shown"] / img["own"]
                shown_sizes.append((px, page, name))
                if px < scale.MIN_TEXT_PX - 0.05:
                    problems.append(f"{page} {name}: smallest text {px:.1f} px at {width} px ({img['cls']!r}, shown "
                                    f"{img['shown']:.0f} of {img['own']} px)")
    finally:
        tab.close()
    assert shown_sizes, "no figure found on the notebook pages"
    assert not problems, f"{len(problems)} figures:\n" + "\n".join(problems[:30])
    smallest = min(shown_sizes)
    print(f"\n{len(shown_sizes)} figures at {width} px: smallest text {smallest[0]:.1f} px ({smallest[1]})")
