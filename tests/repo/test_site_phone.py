"""A reader on a phone (390 x 844, touch) or a laptop (1280 px) can move around the site (issue 54).

- The site-menu and page-contents buttons open their drawers by touch, click and keyboard, focus moves
  into the drawer, and Escape, the drawer's Close button or a tap beside it closes it with focus back
  on the button (the theme bound only the first of the two toggles of each kind: docs/site/static/
  navigation.js); at 1280 px the article's menu button hides and shows the site menu.
- The landing page's learning path links every notebook of the course.
- A search result's snippet holds neither raw TeX nor a cell's output (static/search_snippets.js).
- A widget's hint matches the control the site shows (a menu of texts, not "any text, then Enter").

The touch targets, the one search box and the scroll cues of tables and figures are checked on every
page by test_site.py's test_every_page_in_the_browser (site_phone.py). Uses test_site.py's fixtures.
"""

from __future__ import annotations

import html
import json
import re

import pytest
import test_site
from test_site import ROOT, staging

pytestmark = pytest.mark.repo

site, server, browser = test_site.site, test_site.server, test_site.browser  # its fixtures, used here too
PAGES = ("index.html", "notebooks/01_running_state.html", "notebooks/exercises/02_pair_memory.html",
         "docs/paper.html")
TOGGLES = {"site menu": (".bd-header-article .primary-toggle", "pst-primary-sidebar-modal"),
           "page contents": (".bd-header-article .secondary-toggle", "pst-secondary-sidebar-modal")}

JS_DRAWER = """(id) => {
  const d = document.getElementById(id);
  const r = d.getBoundingClientRect();
  return {open: d.open, width: r.width, height: r.height, links: d.querySelectorAll('a[href]').length,
          focusInside: d.contains(document.activeElement)};
}"""
JS_FOCUSED = "(sel) => document.activeElement === document.querySelector(sel)"


def drawer_problems(tab, name: str) -> list[str]:
    """Each drawer of the page: opened by a tap, closed by Escape; opened by Enter, closed by Close;
    opened by a click, closed by a tap beside it."""
    problems = []
    for what, (selector, dialog) in TOGGLES.items():
        toggle = tab.locator(selector)
        where = f"{name} at 390 px, {what}"
        if not toggle.is_visible():
            problems.append(f"{where}: the button is not shown")
            continue
        for opening, closing in (("tap", "Escape"), ("Enter", "Close"), ("click", "tap beside")):
            if opening == "tap":
                toggle.tap()
            elif opening == "click":
                toggle.click()
            else:
                toggle.focus()
                tab.keyboard.press("Enter")
            tab.wait_for_timeout(150)
            state = tab.evaluate(JS_DRAWER, dialog)
            if not (state["open"] and state["width"] > 200 and state["height"] > 300 and state["links"]):
                problems.append(f"{where}: a {opening} does not show the drawer ({state})")
                continue
            if not state["focusInside"]:
                problems.append(f"{where}: focus stays outside the drawer after a {opening}")
            if toggle.get_attribute("aria-expanded") != "true":
                problems.append(f"{where}: the button does not say the drawer is open")
            if closing == "Escape":
                tab.keyboard.press("Escape")
            elif closing == "Close":
                tab.locator(f"#{dialog} .tl-drawer-close").tap()
            else:
                box = tab.locator(f"#{dialog}").bounding_box()  # beside the drawer: its backdrop
                tab.mouse.click(box["x"] + box["width"] + 20 if box["x"] + box["width"] < 370 else box["x"] - 20, 400)
            tab.wait_for_timeout(150)
            state = tab.evaluate(JS_DRAWER, dialog)
            if state["open"] or state["width"] > 0:
                problems.append(f"{where}: {closing} leaves the drawer open")
            elif not tab.evaluate(JS_FOCUSED, selector):
                problems.append(f"{where}: after {closing}, focus is not back on the button")
    return problems


@pytest.mark.browser
def test_the_drawers_open_and_close_by_touch_click_and_keyboard(site, server, browser):
    problems = []
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True,
                                is_mobile=True)
    laptop = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        tab = phone.new_page()
        for page in (tab, laptop):
            page.on("pageerror", lambda err: errors.append(str(err)))
        for name in PAGES:
            tab.goto(server + name, wait_until="load")
            problems += drawer_problems(tab, name)
            laptop.goto(server + name, wait_until="load")
            toggle = laptop.locator(".bd-header-article .primary-toggle")
            hidden = "() => getComputedStyle(document.getElementById('pst-primary-sidebar')).visibility"
            seen = []
            for press in (toggle.click, lambda: laptop.keyboard.press("Enter")):
                press()
                laptop.wait_for_timeout(400)  # the theme's transition
                seen.append((laptop.evaluate(hidden), toggle.get_attribute("aria-expanded")))
            if seen != [("hidden", "false"), ("visible", "true")]:
                problems.append(f"{name} at 1280 px: the menu button hides and shows the site menu: {seen}")
            if not laptop.evaluate("() => Boolean(document.querySelector('#pst-secondary-sidebar .toc-entry a'))"
                                   " && document.getElementById('pst-secondary-sidebar').offsetWidth > 150"):
                if name != "index.html":
                    problems.append(f"{name} at 1280 px: the page's contents are not shown beside it")
    finally:
        phone.close()
        laptop.close()
    assert not errors, errors
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


def test_the_landing_page_links_every_notebook_of_the_learning_path(site):
    page = (site / "index.html").read_text(encoding="utf-8")
    body = page[page.index('id="learning-path"'):]
    table = body[:body.index("</table>")]
    linked = {html.unescape(h) for h in re.findall(r'<a class="reference internal" href="([^"]+)"', table)}
    named = re.findall(r"^\| `(\d\d\w*)\.ipynb` \|", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
    assert len(named) >= 15, named
    missing = [n for n in named if f"notebooks/{n}.html" not in linked]
    assert not missing, f"the learning path does not link {missing}"
    assert all(f"notebooks/{n}.ipynb" in staging.page_list(ROOT) for n in named)


@pytest.mark.browser
def test_search_snippets_hold_no_tex_and_no_cell_output(site, server, browser):
    """The search page's text of a notebook page: its prose, formulas as symbols (no TeX command; a
    "\\n" in code stays), none of its outputs' text."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        tab.goto(server + "search.html", wait_until="load")
        tab.wait_for_function("() => typeof Search !== 'undefined' && Search.tlChromeRemoved", timeout=20_000)
        text, outputs = tab.evaluate("""async (url) => {
          const source = await (await fetch(url)).text();
          const doc = new DOMParser().parseFromString(source, 'text/html');
          const outputs = [...doc.querySelectorAll('.cell_output pre')].map(p => p.textContent.trim())
                                                                       .filter(t => t.length > 30);
          return [Search.htmlToText(source), outputs];
        }""", server + "notebooks/01_running_state.html")
        assert tab.evaluate("(tex) => Search.tlPlainMath(tex)", r"\(\lambda_t \odot q^{r}_t\)") == "λ_t ⊙ q^r_t"
    finally:
        tab.close()
    assert outputs, "notebook 01 has no printed output to look for"
    assert "running state" in text
    tex = re.findall(r".{0,40}(?:\\[A-Za-z]{2,}|\\[()\[\]]).{0,40}", text)
    assert not tex, f"raw TeX in the search text: {tex[:3]}"
    shown = [o[:60] for o in outputs if o[:60] in text]
    assert not shown, f"cell output in the search text: {shown[:3]}"


def test_a_text_box_shown_as_a_menu_has_a_menu_hint(site):
    page = (site / "notebooks" / "01_running_state.html").read_text(encoding="utf-8")
    hints = re.findall(r'<span class="widget-hint">\(([^)]*)\)</span>', page)
    assert hints and not [h for h in hints if "then Enter" in h], hints
    assert any(h.startswith("texts from this page") for h in hints), hints


@pytest.mark.browser
def test_a_widget_says_which_controls_went_back_to_a_drawn_setting(site, server, browser):
    """06a's recall widget draws some combinations only: a change of "pairs" that moves "filler" back
    says so on screen (widget_frames.js), and a move that keeps the others says nothing."""
    tab = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        tab.goto(server + "notebooks/06a_kv_recall.html", wait_until="load")
        figure = tab.locator("figure.widget-frames:has(select[data-control=pairs])")
        note = figure.locator(".widget-reset")
        assert note.inner_text() == ""
        start = figure.locator("input[data-control=filler]").input_value()
        figure.locator("input[data-control=filler]").focus()
        tab.keyboard.press("ArrowLeft")
        moved = figure.locator("input[data-control=filler]").input_value()
        figure.locator("select[data-control=pairs]").select_option(index=1)
        text = note.inner_text()
    finally:
        tab.close()
    assert moved != start, "ArrowLeft did not move the filler slider"
    assert "filler went back to" in text, text


WEIGHED = ("index.html", "notebooks/01_running_state.html", "notebooks/06a_kv_recall.html")
HOME_MOST_BYTES = 1_300_000  # the home page's first load, uncompressed (2.6 MB with the theme's icon script)


JS_ICON = """() => { const i = document.querySelector('.bd-header-article .primary-toggle [class*="fa-"]');
  return i ? [getComputedStyle(i, '::before').fontFamily, i.getBoundingClientRect().width] : null; }"""


@pytest.mark.browser
def test_page_weight_is_printed_and_the_icon_script_is_gone(site, server, browser):
    """What a first visit downloads (uncompressed, as a plain static server sends it), printed for three
    pages; the theme's 1.56 MB icon script is replaced by a stub (static/scripts/fontawesome.js) and the
    icons still show, drawn from the theme's web font."""
    rows, icons = [], None
    for name in WEIGHED:
        tab = browser.new_page(viewport={"width": 390, "height": 844})
        loaded: list[tuple[str, int]] = []
        tab.on("requestfinished", lambda req, into=loaded: into.append((req.url, req.sizes()["responseBodySize"])))
        try:
            tab.goto(server + name, wait_until="load")
            tab.wait_for_timeout(500)
            if icons is None:  # the header's menu icon is drawn (a glyph of the web font, some pixels wide)
                icons = tab.evaluate(JS_ICON)
        finally:
            tab.close()
        total = sum(size for _, size in loaded)
        script = sum(size for url, size in loaded if "fontawesome.js" in url)
        rows.append((name, len(loaded), total, script))
    print("\nfirst load at 390 px: " + "; ".join(f"{n} {k} requests {t / 1e6:.2f} MB" for n, k, t, _ in rows))
    assert all(script < 1000 for *_, script in rows), f"the icon script is served: {rows}"
    assert icons and "Font Awesome" in icons[0] and icons[1] > 8, f"the header icon is not drawn: {icons}"
    assert rows[0][2] <= HOME_MOST_BYTES, f"the home page weighs {rows[0][2] / 1e6:.2f} MB"


@pytest.mark.browser
def test_a_widget_fetches_a_controls_pictures_when_the_reader_reaches_for_it(site, server, browser):
    """00's first slider: focusing it fetches the pictures of its other settings, so a step fetches none."""
    tab = browser.new_page(viewport={"width": 390, "height": 844})
    fetched: list[str] = []
    tab.on("request", lambda req: fetched.append(req.url) if "/widget_frames/" in req.url else None)
    try:
        tab.goto(server + "notebooks/00_start_here.html", wait_until="load")
        slider = tab.locator("figure.widget-frames input[type=range]").first
        settings = len(json.loads(slider.get_attribute("data-values")))
        before = len(fetched)
        slider.focus()
        tab.wait_for_timeout(500)
        preloaded = len(fetched) - before
        tab.keyboard.press("ArrowRight")
        tab.wait_for_timeout(300)
        stepped = len(fetched) - before - preloaded
    finally:
        tab.close()
    assert preloaded >= settings - 1, f"focus fetched {preloaded} of the slider's {settings} pictures"
    assert stepped == 0, f"a step fetched {stepped} more pictures"
