"""Checks of one site page as a phone or laptop reader meets it (issue 54), run by test_site.py's
test_every_page_in_the_browser on every page it visits at 390 and 1280 px, so they cost no page load
of their own:

- every control and header button is a touch target of at least 44 x 44 CSS px at 390 px (WCAG 2.5.5;
  a radio button counts with its label, a link in running text is not a control);
- one search button or field shows (the theme put one in the top bar and one in the site menu);
- a table or figure box that scrolls sideways shows a cue at the edge with more to show (the class
  scroll_cues.js sets, and the mask phone.css paints above the content, so an opaque picture cannot
  hide it), and no table box is wider than the text column;
- on a phone a wide table keeps its first column in place while the rest scrolls.
"""

from __future__ import annotations

TARGET_PX = 44
PHONE = 390

JS_TARGETS = """(least) => {
  const small = [];
  const controls = 'button, select, input, summary, [role="button"], .bd-header-article a.btn, .prev-next-area a';
  for (const el of document.querySelectorAll(controls)) {
    if (el.closest('dialog:not([open]), .dropdown-menu:not(.show), .onlyprint, [hidden]')) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    let r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (el.matches('input[type="radio"], input[type="checkbox"]') && el.labels && el.labels[0]) {
      const l = el.labels[0].getBoundingClientRect();  // the label is part of the target
      r = {width: Math.max(r.width, l.width), height: Math.max(r.height, l.height)};
    }
    if (r.width < least - 0.5 || r.height < least - 0.5) {
      const name = (el.getAttribute('aria-label') || el.getAttribute('title') || el.textContent || '').trim();
      const size = `${Math.round(r.width)} x ${Math.round(r.height)}`;
      small.push(`${el.tagName.toLowerCase()}.${el.className} "${name.slice(0, 30)}" ${size}`);
    }
  }
  return small;
}"""

JS_SEARCHES = """() => [...document.querySelectorAll('.search-button__button')].filter(el => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'
         && !el.closest('dialog:not([open])');
}).map(el => el.className)"""

# every box of a table or figure that scrolls sideways: its cue, its width against the text column,
# and (scrolled by the test) whether a table's first column stays in place
JS_SCROLL_BOXES = """async () => {
  const found = [];
  const article = document.querySelector('article.bd-article');
  if (!article) return found;
  const column = article.getBoundingClientRect();
  const boxes = document.querySelectorAll('.bd-article .pst-scrollable-table-container, .bd-article div.cell_output, '
                                          + '.bd-article div.cell_output > .output, .bd-article figure.widget-frames');
  for (const box of boxes) {
    const r = box.getBoundingClientRect();
    const more = box.scrollWidth - box.clientWidth;
    const style = getComputedStyle(box);
    const scrolls = more > 1 && style.overflowX !== 'visible' && r.width > 0;
    const table = box.classList.contains('pst-scrollable-table-container');
    if (!scrolls && !(table && r.right > column.right + 1)) continue;
    const mask = style.maskImage || style.webkitMaskImage || 'none';
    const item = {kind: table ? 'table' : 'figure', id: (box.closest('section[id]') || {}).id || '',
                  width: Math.round(box.scrollWidth), shown: Math.round(r.width), wider: r.right - column.right,
                  cue: box.classList.contains('tl-more-right') && mask !== 'none', sticky: null};
    if (table && scrolls) {
      const first = box.querySelector('tbody tr td:first-child, tr td:first-child');
      const before = first ? first.getBoundingClientRect().left : 0;
      box.scrollLeft = Math.min(120, more);
      await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
      item.sticky = first ? Math.abs(first.getBoundingClientRect().left - before) < 2 : false;
      item.cueLeft = box.classList.contains('tl-scrolled-left');
      box.scrollLeft = 0;
    }
    found.push(item);
  }
  return found;
}"""


def page_problems(tab, width: int, where: str) -> list[str]:
    """What a reader at this width meets on the page the tab shows (see the module's docstring)."""
    problems = []
    if width <= PHONE:
        problems += [f"{where}: a target under {TARGET_PX} px: {s}" for s in tab.evaluate(JS_TARGETS, TARGET_PX)]
    searches = tab.evaluate(JS_SEARCHES)
    if len(searches) != 1:
        problems.append(f"{where}: {len(searches)} search buttons shown ({searches})")
    for box in tab.evaluate(JS_SCROLL_BOXES):
        name = f"{where}: a {box['kind']} in #{box['id']} ({box['width']} px in {box['shown']} px)"
        if box["wider"] > 1:
            problems.append(f"{name} is {box['wider']:.0f} px wider than the text column")
        if not box["cue"]:
            problems.append(f"{name} scrolls with no cue at its edge")
        if box["kind"] == "table" and width <= PHONE and box["sticky"] is False:
            problems.append(f"{name}: the first column scrolls away")
        if box["kind"] == "table" and width <= PHONE and box.get("cueLeft") is False:
            problems.append(f"{name}: no shadow at the fixed column once scrolled")
    return problems
