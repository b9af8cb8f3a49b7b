"""The course's website: built from the committed files, then read in a real browser.

The build (``python docs/site/build.py``, Sphinx with -W), run as .github/workflows/pages.yml runs
it and read from the folder that workflow uploads, must finish without a warning, and a broken link
or a missing picture in a notebook must fail it naming the file and the line. Then a private HTTP
server serves the built pages to Chromium (Playwright, the system browser, as in test_browser.py),
which checks, page after page: no console error; every internal link leads to a page (and an #anchor
to an element) that exists; every picture loads and has a non-empty text alternative; math is
typeset; each notebook page that saved figures shows them; no page scrolls sideways at 1280 px or
390 px (a wide code block or table scrolls inside itself); axe-core's rules (wcag2a, wcag2aa,
wcag21aa and best practice) find nothing at 1280 px or 390 px, when the npm package is there (``npm
install --prefix build/axe axe-core@4.14.1``, as .ci/run does); the search page finds a term of
notebook 03 and one of docs/paper.md, and puts the page that teaches a word first ("instructor",
"nbgrader", "top-k", "decay gate"). A Chromium with scrollbars shown finds no scrollbar around
inline math and no word broken in a table cell. Without the browser: every notebook page has the
launch menu (Colab, Binder, a JupyterHub) for this repository and a local build has none; the run
note is the first thing under the title, in at most 40 words; exercises point to the instructors'
guide, not to solutions; every figure's alt text opens with a sentence and passes the build's checks
(which a bad one fails), and the figure links to its full-size file. Every prediction question of
the notebooks has a check on its page that holds no readable answer; in the browser a wrong answer
shows the notebook's hint for it and a right one (given with the keyboard) its explanation.
Screenshots of the home page and two notebook pages at both widths land in build/site-test/
(override with TL_SITE_REPORT=dir). TL_SITE_BUILT=build/site/html tests a site built already instead
of building one.

Needs the site extra (``pip install -e ".[site]"``); the browser part also the browser extra and
Chromium (skipped with a message without them, failed under TL_BROWSER as in test_browser.py).
"""

from __future__ import annotations

import functools
import html
import html.parser
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import site_phone
from browser_support import system_chromium, with_scrollbars

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "docs" / "site" / "build.py"


def _site_module(name: str):
    """docs/site/<name>.py, imported with docs/site on sys.path only while it imports: that folder also
    holds build.py, which must not shadow the ``build`` front end for later tests (test_wheel.py)."""
    sys.path.insert(0, str(BUILD.parent))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BUILD.parent))


staging = _site_module("staging")  # the site's page list and its notebook copy

REPORT_DIR = Path(os.environ.get("TL_SITE_REPORT", ROOT / "build" / "site-test"))
WIDTHS = (1280, 390)
SHOTS = ("index.html", "notebooks/01_running_state.html", "notebooks/06_kv_gated_fusion.html")
# term -> (the page the search must find, whether it must be the first result)
SEARCHES = {"gated linear attention": ("notebooks/03_readout.html", False),
            "printed score": ("docs/paper.html", False),
            "nbgrader": ("docs/instructors.html", True), "instructor": ("docs/instructors.html", True),
            "top-k": ("notebooks/06_kv_gated_fusion.html", True), "decay gate": ("docs/glossary.html", True)}



def _site_extra_installed() -> bool:
    try:
        importlib.metadata.distribution("sphinx-mathjax-offline")
    except importlib.metadata.PackageNotFoundError:
        return False
    return all(importlib.util.find_spec(m) for m in ("sphinx", "myst_nb", "sphinx_book_theme"))


SITE_EXTRA_MISSING = 'the site needs the site extra: pip install -e ".[site]"'
pytestmark = [pytest.mark.slow, pytest.mark.repo,  # a Sphinx build of the whole course: minutes
              pytest.mark.skipif(not _site_extra_installed(), reason=SITE_EXTRA_MISSING)]


def needs_site_extra() -> None:
    """Skip (not error) a test whose fixture builds the site when the extra is missing: the modules
    that borrow the fixtures below (test_site_figures.py, test_site_nav.py, ...) carry no module mark."""
    if not _site_extra_installed():
        pytest.skip(SITE_EXTRA_MISSING)


# what GitHub Actions sets in the pages workflow (the site links to this repository)
PUBLISHED_REPO = "tl-minimal-test/tl-minimal"
PUBLISHED_HUB = "https://hub.example.org"  # a course's JupyterHub (the pages workflow's TL_SITE_JUPYTERHUB)


def run_build(root: Path, out: Path, *extra: str, repo: str | None = None) -> subprocess.CompletedProcess:
    """build.py as a command; repo: the repository address it reads (None: a local build)."""
    env = {k: v for k, v in os.environ.items() if k not in staging.REPO_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if repo:
        env["GITHUB_REPOSITORY"] = repo
        env[staging.JUPYTERHUB_VARIABLE] = PUBLISHED_HUB
    return subprocess.run([sys.executable, str(BUILD), "--root", str(root), "--out", str(out), *extra],
                          capture_output=True, text=True, encoding="utf-8", env=env, timeout=900, check=False)


def published() -> tuple[list[str], Path, Path]:
    """What .github/workflows/pages.yml does: (the build command's arguments after build.py, its
    --out folder, the folder it uploads), both folders relative to the clone."""
    import yaml

    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))["jobs"]["build"]
    command = next(shlex.split(s["run"]) for s in steps["steps"] if "docs/site/build.py" in s.get("run", ""))
    assert command[:2] == ["python", "docs/site/build.py"], command
    upload = next(s for s in steps["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    out = Path(command[command.index("--out") + 1])
    args = [a for i, a in enumerate(command[2:], 2) if "--out" not in (a, command[i - 1])]
    return args, out, Path(upload["with"]["path"])


_BUILT: dict[str, Path] = {}  # the published build, made once per session (test_site_widgets.py reuses it)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site the pages workflow publishes: its build command, into a temporary folder, and the
    folder it uploads (so the tests below read what the workflow would deploy)."""
    needs_site_extra()
    if os.environ.get("TL_SITE_BUILT"):  # a site built already (python docs/site/build.py): its html folder
        return Path(os.environ["TL_SITE_BUILT"])
    if "html" in _BUILT:  # another module of this session built it (pytest's temporary folders outlive modules)
        return _BUILT["html"]
    args, out, upload = published()
    where = tmp_path_factory.mktemp("site")
    started = time.perf_counter()
    result = run_build(ROOT, where / out, *args, repo=PUBLISHED_REPO)
    assert result.returncode == 0, f"the site build failed:\n{result.stdout}\n{result.stderr[-6000:]}"
    print(f"\nsite built in {time.perf_counter() - started:.0f} s")
    assert (where / upload / "index.html").is_file(), f"pages.yml uploads {upload}, where the build wrote no site"
    assert not list((where / upload).rglob("*.map")), "the site ships source maps"
    _BUILT["html"] = where / upload
    return where / upload


def test_a_broken_link_or_missing_image_fails_the_build_with_file_and_line(tmp_path):
    """On a small copy (the documents and one notebook): a link to nothing and a missing picture."""
    root = tmp_path / "repo with spaces"
    for path in ["README.md", *staging.DOCUMENTS, "notebooks/03_readout.py"]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, root / path)
    nb = json.loads((ROOT / "notebooks" / "03_readout.ipynb").read_text(encoding="utf-8"))
    cell = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown" and i > 2)
    nb["cells"][cell]["source"] = "".join(nb["cells"][cell]["source"]) + (
        "\n\nSee [the lost notebook](09_lost.ipynb).\n\n![a plot](no_such_plot.png)\n")
    (root / "notebooks" / "03_readout.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    result = run_build(root, tmp_path / "out", "--no-figures")
    assert result.returncode != 0, "a broken link passed the build"
    lines = [line for line in result.stderr.splitlines() if line.startswith("site: notebooks/03_readout.ipynb")]
    assert any("09_lost" in line for line in lines), result.stderr[-4000:]
    assert any("no_such_plot.png" in line for line in lines), result.stderr[-4000:]
    assert all(f"cell {cell + 1}" in line for line in lines if "09_lost" in line or "no_such_plot" in line)


def test_every_page_has_a_run_note_and_no_solution_is_published(site):
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    notebooks = [p for p in pages if p.startswith("notebooks/")]
    expected = sorted(p.replace(".ipynb", ".html") for p in staging.page_list(ROOT) if p.endswith(".ipynb"))
    assert notebooks == expected, "the site's notebook pages are not the committed learning path and exercises"
    assert len([p for p in notebooks if "exercises" not in p]) >= 9 and len(notebooks) >= 15, notebooks
    assert not [p for p in pages if "solution" in p], "solutions are on the site"
    for page in notebooks:
        text = re.sub(r"<[^>]+>", "", (site / page).read_text(encoding="utf-8"))
        assert "Run it yourself" in text and "python run.py lab" in text, page
    for doc in ("docs/linear_algebra.html", "docs/glossary.html", "docs/paper.html", "docs/devices.html",
                "data/results/README.html", "data/results/RECALL_STUDY.html", "data/results/SPEED.html",
                "docs/instructors.html", "CHANGELOG.html", "figures.html"):
        assert (site / doc).is_file(), doc
    assert not list(site.rglob("*solutions*.ipynb"))


def test_the_published_site_links_to_its_repository_and_never_to_the_placeholder(site):
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts]
    placeholder = [p.relative_to(site).as_posix() for p in pages
                   if "github.com/OWNER" in p.read_text(encoding="utf-8")]
    assert not placeholder, f"pages linking to the placeholder address: {placeholder[:5]}"
    if os.environ.get("TL_SITE_BUILT"):
        return  # a site built elsewhere: its address is whatever that build read
    page = (site / "notebooks" / "03_readout.html").read_text(encoding="utf-8")
    assert f"https://github.com/{PUBLISHED_REPO}/blob/main/notebooks/03_readout.py" in page
    assert "local build" not in (site / "index.html").read_text(encoding="utf-8")


def test_a_local_build_links_nowhere_and_a_placeholder_refuses_to_publish(tmp_path, monkeypatch):
    """Without a repository address the staged pages link to no file on the code host and the home
    page says the build is local; --publish fails, without an address or with the OWNER placeholder."""
    for variable in staging.REPO_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    site_pages = set(staging.page_list(ROOT))
    AltTexts = _site_module("alt_text").AltTexts
    staging.stage_notebook("notebooks/03_readout.ipynb", ROOT, tmp_path, site_pages, staging.Staged(), AltTexts())
    staging.stage_markdown("docs/paper.md", ROOT, tmp_path, site_pages, staging.Staged())
    staging.stage_home(ROOT, tmp_path, site_pages, staging.Staged(), "")
    staged = {p: (tmp_path / p).read_text(encoding="utf-8")
              for p in ("notebooks/03_readout.ipynb", "docs/paper.md", "index.md")}
    for page, text in staged.items():
        assert not re.search(r"github\.com/[\w.-]+/tl-minimal", text), f"{page} links to the code host"
    assert "local build" in staged["index.md"]
    assert "Read it as a website" not in staged["index.md"], "the home page tells a reader of the site to read the site"
    monkeypatch.setenv("TL_SITE_REPO", "someone/tl-minimal")
    assert staging.source_url("tl_minimal/readout.py") == "https://github.com/someone/tl-minimal/blob/main/tl_minimal/readout.py"
    for repo in (None, "OWNER/tl-minimal"):
        result = run_build(ROOT, tmp_path / "out", "--no-figures", "--publish", repo=repo)
        assert result.returncode != 0 and "refusing to publish" in result.stderr, (repo, result.stderr[-2000:])
        assert not (tmp_path / "out" / "html").exists()


LAUNCH_HOSTS = ("https://colab.research.google.com/", "https://mybinder.org/", PUBLISHED_HUB + "/")
LOCAL_PAGES = ("notebooks/03_readout.ipynb", "notebooks/exercises/03_readout.ipynb")


@pytest.fixture(scope="module")
def local_site(tmp_path_factory) -> Path:
    """A local build (no repository address) of a small copy: the documents, one lesson and one
    exercise. Links to the pages left out warn, so the build fails, but its pages are written."""
    needs_site_extra()
    root = tmp_path_factory.mktemp("local") / "repo"
    # the exercise's prediction check reads the answer key and the library's check (predictions.py)
    predicting = ["notebooks/exercises/solutions/answer_key.json", "tl_minimal/exercises/readout.py"]
    for path in ["README.md", *staging.DOCUMENTS, *LOCAL_PAGES, *(p.replace(".ipynb", ".py") for p in LOCAL_PAGES),
                 *predicting]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, root / path)
    out = root.parent / "out"
    result = run_build(root, out, "--no-figures")
    assert (out / "html" / "notebooks" / "03_readout.html").is_file(), result.stderr[-4000:]
    return out / "html"


def _hrefs(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]+)"', page)]


def test_every_notebook_page_has_the_launch_menu_and_only_those(site):
    """Colab, Binder and the course's JupyterHub (through nbgitpuller), each opening this notebook of
    this repository; no other page has a launch link."""
    for path in sorted(site.rglob("*.html")):
        name = path.relative_to(site).as_posix()
        if "_static" in path.parts:
            continue
        hrefs = [h for h in _hrefs(path.read_text(encoding="utf-8")) if h.startswith(LAUNCH_HOSTS)]
        if not name.startswith("notebooks/"):
            assert not hrefs, f"{name} (not a notebook) has launch links: {hrefs}"
            continue
        notebook = name.replace(".html", ".ipynb")
        colab, binder, hub = (sorted({h for h in hrefs if h.startswith(host)}) for host in LAUNCH_HOSTS)
        assert len(colab) == len(binder) == 1, (name, hrefs)
        repo = re.match(r"https://colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/blob/main/(.+)$", colab[0])
        assert repo and repo.group(2) == notebook, colab
        if os.environ.get("TL_SITE_BUILT"):
            continue  # a site built elsewhere: its repository and hub are whatever that build read
        assert repo.group(1) == PUBLISHED_REPO, colab
        assert binder[0] == f"https://mybinder.org/v2/gh/{PUBLISHED_REPO}/main?urlpath=lab/tree/{notebook}"
        assert len(hub) == 1 and hub[0].startswith(f"{PUBLISHED_HUB}/hub/user-redirect/git-pull?"), (name, hrefs)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(hub[0]).query)
        assert query["repo"] == [f"https://github.com/{PUBLISHED_REPO}"] and query["branch"] == ["main"], query
        assert query["urlpath"] == [f"lab/tree/{PUBLISHED_REPO.split('/')[1]}/{notebook}"], query


RUN_NOTE = re.compile(r'<h1>[^<]*<a class="headerlink"[^>]*>#</a></h1>\s*<div class="[^"]*\brun-note\b[^"]*">'
                      r"(.*?)</div>", re.DOTALL)


def run_note_words(page: str) -> list[str] | None:
    """The words of the run note when it is the first thing under the page's title, else None."""
    found = RUN_NOTE.search(page)
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split() if found else None


def test_the_run_note_sits_under_the_title_in_at_most_40_words(site, local_site):
    """Study time, run time, and how to run it: the launch menu or a clone of this repository (a
    published site), a clone (a local build, which launches nothing)."""
    counts = {}
    for path in sorted((site / "notebooks").rglob("*.html")):
        name = path.relative_to(site).as_posix()
        words = run_note_words(path.read_text(encoding="utf-8"))
        assert words is not None, f"{name}: the run note is not directly under the title"
        text = " ".join(words)
        counts[name] = len(words)
        assert len(words) <= staging.RUN_NOTE_WORDS == 40, f"{name}: the run note has {len(words)} words: {text}"
        assert re.search(r"About \d+ min of (study|work); .* runs in \d+ (s|min)\b", text), text
        assert "Launch from the rocket button" in text and "python run.py lab" in text, text
        if not os.environ.get("TL_SITE_BUILT"):
            assert f"github.com/{PUBLISHED_REPO}" in text, text
    print(f"\nrun note: {min(counts.values())}-{max(counts.values())} words on {len(counts)} pages")
    for page in LOCAL_PAGES:
        built = (local_site / page.replace(".ipynb", ".html")).read_text(encoding="utf-8")
        text = " ".join(run_note_words(built) or [])
        assert "Clone the repository" in text and "Launch" not in text and len(text.split()) <= 40, (page, text)
        assert not [h for h in _hrefs(built) if h.startswith(LAUNCH_HOSTS)], f"{page}: a local build launches"
    assert "local build" in (local_site / "index.html").read_text(encoding="utf-8")


def test_exercise_pages_send_instructors_to_the_guide_not_to_solutions(site, local_site):
    """The solutions are not on the site: an exercise says where they come from (the instructors'
    guide: nbgrader releases them), and that target exists."""
    guide = ids_of(site / "docs" / "instructors.html")
    for built in (site, local_site):
        for path in sorted((built / "notebooks" / "exercises").glob("*.html")):
            page = path.read_text(encoding="utf-8")
            text = re.sub(r"<[^>]+>", "", page)
            assert "solutions/" not in text.replace("notebooks/exercises/solutions/", ""), path
            links = [h for h in _hrefs(page) if h.startswith("../../docs/instructors.html#")]
            assert links, f"{path}: no link to the instructors' guide"
            assert all(h.split("#")[1] in guide for h in links), links


class _Pictures(html.parser.HTMLParser):
    """Every <img> of a page's notebook outputs: (alt, src, href of the link around it or None)."""

    def __init__(self):
        super().__init__()
        self.links: list[str | None] = []
        self.depth, self.output_at = 0, []
        self.found: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a":
            self.links.append(attrs.get("href"))
        if tag == "div":
            self.depth += 1
            if "cell_output" in (attrs.get("class") or "").split():
                self.output_at.append(self.depth)
        if tag == "img" and self.output_at:
            self.found.append((attrs.get("alt") or "", attrs.get("src") or "", self.links[-1] if self.links else None))

    def handle_endtag(self, tag):
        if tag == "a" and self.links:
            self.links.pop()
        if tag == "div":
            if self.output_at and self.output_at[-1] == self.depth:
                self.output_at.pop()
            self.depth -= 1


def test_every_figure_says_what_to_notice_and_opens_full_size(site):
    """Each notebook figure's alt text opens with a sentence (what it shows and what to notice) and
    passes the build's checks; the image is a link to its own file."""
    alt_text = _site_module("alt_text")
    pictures, openings = 0, set()
    for path in sorted((site / "notebooks").rglob("*.html")):
        parser = _Pictures()
        parser.feed(path.read_text(encoding="utf-8"))
        for alt, src, href in parser.found:
            pictures += 1
            where = f"{path.relative_to(site)}: {src}"
            assert not alt_text.problems(alt), (where, alt_text.problems(alt), alt)
            assert re.match(r"\S.{20,}?[.:!?](\s|$)", alt), f"{where}: no opening sentence: {alt[:200]!r}"
            assert "of the notebook" not in alt or path.stem in alt or "\u201c" + path.stem[:2] in alt, (where, alt)
            assert href == src, f"{where}: the picture is not a link to itself (link: {href})"
            openings.add(alt.split(". ")[0])
    assert pictures >= 50, f"only {pictures} figures found in the notebook pages"
    assert len(openings) >= 0.9 * pictures, "figures share opening sentences: texts keyed by image, not page?"


def test_the_build_refuses_an_alt_text_with_a_placeholder_panels_only_or_widget_internals(tmp_path):
    """On the staged copy of notebook 02: each bad saved alt text stops the build naming the page."""
    alt_text = _site_module("alt_text")
    page = "notebooks/02_pair_memory.ipynb"
    site_pages = set(staging.page_list(ROOT))
    for bad in ("Panel 1: recall at length {LONG}", "Figure with 2 panel(s).",
                "drawn by widgets.interactive, widgets.Text"):
        assert alt_text.problems(bad), bad
        nb = json.loads((ROOT / page).read_text(encoding="utf-8"))
        cell = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and any(
            "image/png" in o.get("data", {}) for o in c.get("outputs", []))
            and not any(piece in "".join(c["source"]) for piece in alt_text.AltTexts().written.get(page, {})))
        for output in nb["cells"][cell]["outputs"]:
            if "image/png" in output.get("data", {}):
                output.setdefault("metadata", {})["image/png"] = {"alt": bad}
        root = tmp_path / "root"
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text(json.dumps(nb), encoding="utf-8")
        with pytest.raises(ValueError, match=r"02_pair_memory.ipynb, figure \d+ \(cell \d+\)"):
            staging.stage_notebook(page, root, tmp_path / "out", site_pages, staging.Staged(), alt_text.AltTexts())


def _css_rules(css: str) -> dict[str, str]:
    """selector -> declarations of a plain stylesheet (no nesting), comments removed."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    return {" ".join(sel.split()): " ".join(body.split()) for sel, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css)}


def test_the_css_breaks_no_word_and_lets_the_theme_scroll_tables(site):
    """The stylesheet the site serves: no word breaking anywhere (a table column squeezed to a letter
    read "sym/bol"), no rule on the table itself (the theme's focusable wrapper scrolls it), no
    scrollbar around inline math, display math still scrolls; formulas are out of the tab order and
    the page follows the reader's light/dark preference."""
    css = (site / "_static" / "site.css").read_text(encoding="utf-8")
    rules = _css_rules(css)
    declarations = " ".join(rules.values())
    assert "anywhere" not in declarations and "pre-wrap" not in declarations, "a rule breaks words anywhere"
    assert not [sel for sel in rules if re.search(r"(^|[\s,])table[.\w]*\s*(,|$)", sel)], \
        "a rule styles the table itself: the theme's wrapper is what scrolls"
    inline = [body for sel, body in rules.items()
              if "mjx-container" in sel and ('display="true"' not in sel or ':not([display="true"])' in sel)]
    assert inline and not any("overflow" in body for body in inline), inline
    display = [body for sel, body in rules.items() if 'mjx-container[display="true"]' in sel]
    assert any("overflow-x: auto" in body for body in display), display
    page = (site / "notebooks" / "03_readout.html").read_text(encoding="utf-8")
    tables = page.count("<table")
    assert tables and page.count('class="pst-scrollable-table-container"') >= tables - page.count("dataframe")
    config = re.search(r"window\.MathJax = (\{.*?\})\s*</script>", page, re.DOTALL)
    if config:  # typeset in the browser (a build without Node.js): a formula is no Tab stop
        assert json.loads(config.group(1))["options"]["menuOptions"]["settings"]["inTabOrder"] is False
    else:  # typeset at build time (test_site_math.py)
        assert "<mjx-container" in page and not re.search(r"<mjx-container[^>]*tabindex", page)
    assert re.search(r'dataset\.mode = localStorage\.getItem\("mode"\) \|\| "auto"', page), \
        "the page does not follow the reader's light/dark preference"


_TABLE_HEAD = re.compile(r"^[ \t>#]*\|(.*)\|[ \t]*\n[ \t>#]*\|?[ \t]*:?-{3,}", re.MULTILINE)


def test_no_markdown_table_has_an_empty_first_header_cell():
    """A header cell is what a screen reader announces for its column (axe: empty-table-header)."""
    empty = []
    for page in ["README.md", *staging.page_list(ROOT)]:
        if page.endswith(".ipynb"):
            cells = json.loads((ROOT / page).read_text(encoding="utf-8"))["cells"]
            texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        else:
            texts = [(ROOT / page).read_text(encoding="utf-8")]
        for text in texts:
            for match in _TABLE_HEAD.finditer(text):
                if not match.group(1).split("|")[0].strip():
                    empty.append(f"{page}: {match.group(0).splitlines()[0].strip()}")
    assert not empty, "tables with an empty first header cell:\n" + "\n".join(empty)


def test_the_site_copy_of_a_notebook_has_no_test_harness_comments(tmp_path):
    """# NBVAL_IGNORE_OUTPUT stays in the committed notebook (nbval reads it), not on the page."""
    page = "notebooks/00_start_here.ipynb"
    committed = json.loads((ROOT / page).read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in committed["cells"] if c["cell_type"] == "code"]
    assert any(re.search(r"^\s*# NBVAL_", c, re.MULTILINE) for c in code), "the committed notebook has none"
    site_pages = set(staging.page_list(ROOT))
    AltTexts = _site_module("alt_text").AltTexts
    staging.stage_notebook(page, ROOT, tmp_path, site_pages, staging.Staged(), AltTexts())
    copied = json.loads((tmp_path / page).read_text(encoding="utf-8"))
    shown = ["".join(c["source"]) for c in copied["cells"] if c["cell_type"] == "code"]
    assert len(shown) == len(code)
    assert not [c for c in shown if re.search(r"^\s*# NBVAL_", c, re.MULTILINE)]
    prose = ["".join(c["source"]) for c in copied["cells"] if c["cell_type"] == "markdown"]
    assert any("NBVAL_IGNORE_OUTPUT" in p for p in prose), "the prose that explains the marker lost it too"


# --- in the browser -----------------------------------------------------------------------


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


@functools.cache
def ids_of(path: Path) -> frozenset:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # one line per request would bury the test's own output
        pass


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    """The system Chromium, headless (browser_support.system_chromium)."""
    yield from system_chromium()


@pytest.fixture(scope="module")
def scrollbar_browser(browser):
    """Chromium with scrollbars shown (classic ones that take room, as on Windows and most Linux desktops)."""
    chromium = with_scrollbars(browser)
    yield chromium
    chromium.close()


# What one page shows: links, pictures (loaded? alt?), typeset math, and the widest element that
# makes the page scroll sideways (inside a code block, a table or a math display is allowed).
JS_PAGE = """() => {
  const inside = el => el.closest(
    'pre, .highlight, table, .table-wrapper, .math, mjx-container, .cell_output, .output');
  const wide = [...document.querySelectorAll('body *')].filter(el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.right > document.documentElement.clientWidth + 1 && !inside(el)
           && getComputedStyle(el).position !== 'fixed';
  }).map(el => el.tagName + '.' + el.className).slice(0, 5);
  return {
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    images: [...document.querySelectorAll('img')].map(i => ({src: i.currentSrc || i.src,
                                                             alt: (i.getAttribute('alt') || '').trim(),
                                                             loaded: i.complete && i.naturalWidth > 0,
                                                             output: Boolean(i.closest('.cell_output'))})),
    raw_math: document.querySelectorAll('span.math, div.math').length,
    typeset: document.querySelectorAll('mjx-container').length,
    math_errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
    scroll: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    wide: wide,
  };
}"""
# every picture fetched now, lazy ones too (the site marks figures loading="lazy": a reader gets them
# on scrolling near), then every one loaded or failed
JS_ALL_IMAGES = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach(img => { img.loading = 'eager'; });
  await Promise.all([...document.images].map(img => img.complete ? null
    : new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
  return true;
}"""
# MathJax 3 has typeset the page in the browser (or the build typeset it: no MathJax script; or no math)
JS_MATH_DONE = """async () => {
  if (!document.querySelector('span.math, div.math') || !document.querySelector('script[src*="mathjax/"]')) return true;
  for (let i = 0; i < 300 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 100));
  await MathJax.startup.promise;
  return true;
}"""


class Tab:
    """One browser page of a fixed width, reused for every visit; the errors of the last visit."""

    def __init__(self, browser, width: int):
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        self.page.on("pageerror", lambda err: self.errors.append(f"uncaught: {err}"))
        self.page.on("requestfailed", lambda req: self.errors.append(f"request failed: {req.url}"))
        self.page.on("response", lambda r: self.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    def visit(self, url: str) -> dict:
        self.errors.clear()
        self.page.goto(url, wait_until="load")
        self.page.evaluate(JS_ALL_IMAGES)
        self.page.evaluate(JS_MATH_DONE)
        return self.page.evaluate(JS_PAGE)


def local(url: str, server: str, site: Path) -> tuple[Path, str] | None:
    """The built file and #anchor an internal link points to (None for an outside link)."""
    if not url.startswith(server):
        return None
    parsed = urllib.parse.urlsplit(url)
    path = site / urllib.parse.unquote(parsed.path.lstrip("/"))
    if path.is_dir():
        path = path / "index.html"
    return path, parsed.fragment


def page_problems(info: dict, name: str, where: str, site: Path, server: str) -> list[str]:
    """What is wrong with one page at full width: pictures, math, figures, links and anchors."""
    problems = []
    for image in info["images"]:
        if not image["loaded"]:
            problems.append(f"{where}: picture does not load: {image['src']}")
        if not image["alt"]:
            problems.append(f"{where}: picture without a text alternative: {image['src']}")
    if info["raw_math"] and (not info["typeset"] or info["math_errors"]):
        problems.append(f"{where}: math not typeset ({info['typeset']} typeset, {info['math_errors']} errors)")
    committed = ROOT / name.replace(".html", ".ipynb")
    saved_figures = committed.is_file() and '"image/png"' in committed.read_text(encoding="utf-8")
    if saved_figures and not any(i["output"] and i["loaded"] for i in info["images"]):
        problems.append(f"{where}: the notebook's figures are not shown")
    for link in info["links"]:
        target = local(link, server, site)
        if target is None:
            continue
        path, anchor = target
        if not path.is_file():
            problems.append(f"{where}: broken link {link}")
        elif anchor and path.suffix == ".html" and anchor not in ids_of(path):
            problems.append(f"{where}: link to a missing anchor {link}")
    return problems


AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"]
AXE_WIDTH = 390  # the phone width, where tables and formulas scroll (the prediction test's)
AXE_WIDTHS = WIDTHS  # every page is checked at both widths (the bar: 0 violations at 1280 and 390 px)
AXE_VERSION = "4.14.1"  # the version the pages were checked with; .ci/run and the README pin the same
AXE_INSTALL = f"npm install --prefix build/axe axe-core@{AXE_VERSION}"


def find_axe() -> Path | None:
    """axe-core's browser script, from the npm package: TL_AXE (a path to axe.min.js; .ci/run sets it,
    so a missing file fails instead of skipping), else where ``npm install --prefix build/axe axe-core``
    or ``npm install axe-core`` in the clone puts it."""
    named = os.environ.get("TL_AXE")
    if named:
        if not Path(named).is_file():
            pytest.fail(f"TL_AXE={named} is not a file: {AXE_INSTALL} puts axe-core's script in "
                        "build/axe/node_modules/axe-core/axe.min.js")
        return Path(named)
    for candidate in (ROOT / "build" / "axe" / "node_modules" / "axe-core" / "axe.min.js",
                      ROOT / "node_modules" / "axe-core" / "axe.min.js"):
        if candidate.is_file():
            return candidate
    return None


JS_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return result.violations.map(v => `${v.id} (${v.impact}): ${v.nodes.length} element(s), e.g. `
                                    + v.nodes[0].target.join(' '));
}"""


def test_axe_core_is_installed():
    """The accessibility rules run inside test_every_page_in_the_browser when axe-core is there."""
    if find_axe() is None:
        pytest.skip(f"axe-core not found: {AXE_INSTALL} (or TL_AXE=path/to/axe.min.js); the browser test "
                    "then also runs axe-core's rules on every page")


def test_ci_and_readme_install_the_same_axe_core():
    """CI installs the pinned axe-core where this test looks, and names it in TL_AXE (so it cannot skip);
    the README's test instructions give the same command."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"AXE_VERSION={AXE_VERSION}" in ci and '"axe-core@$AXE_VERSION"' in ci, "the pin in .ci/run"
    assert "npm install --prefix build/axe" in ci
    assert 'export TL_AXE="$PWD/build/axe/node_modules/axe-core/axe.min.js"' in ci
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert AXE_INSTALL in readme, f"the README's test instructions should say `{AXE_INSTALL}`"


# the exercises' "predict before you plot" questions, each a check on its page (docs/site/predictions.py)
ANSWER_KEY = ROOT / "notebooks" / "exercises" / "solutions" / "answer_key.json"


def prediction_pages() -> dict[str, str]:
    """{site page: the answer key's task id} for every committed notebook that asks a prediction (a
    ``my_prediction = None`` cell), read from the jupytext sources: the check cell's library function
    names the task (``prediction_check("01.3", ...)``)."""
    found = {}
    for path in sorted([*ROOT.glob("notebooks/[0-9]*.py"), *ROOT.glob("notebooks/exercises/[0-9]*.py")]):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^my_prediction = None\b", text, re.MULTILINE):
            check = re.search(r"ex\.(check_\w+)\(my_prediction\)", text).group(1)
            library = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tl_minimal" / "exercises").glob("*.py"))
            task = re.search(rf"^{check} = prediction_check\(\s*\"([\w.]+)\"", library, re.MULTILINE).group(1)
            found[path.relative_to(ROOT).with_suffix(".html").as_posix()] = task
    return found


def test_every_prediction_question_has_its_check_on_the_page(site):
    """One form per question, holding the task's sealed key (so no answer is readable on the page),
    one radio button per letter the key knows (a number field for a number), a Check button and a
    verdict line a screen reader announces, empty until the reader answers."""
    key = json.loads(ANSWER_KEY.read_text(encoding="utf-8"))
    pages = prediction_pages()
    assert len(pages) >= 6, f"the six exercises each ask a prediction; found {pages}"
    for page, task in pages.items():
        text = (site / page).read_text(encoding="utf-8")
        forms = re.findall(r'<form class="prediction" data-task="([\w.]+)" data-key="([^"]*)">(.*?)</form>',
                           text, re.DOTALL)
        assert [f[0] for f in forms] == [task], f"{page}: prediction checks {[f[0] for f in forms]}, expected [{task}]"
        _, sealed, body = forms[0]
        assert json.loads(html.unescape(sealed))["sealed"] == key[task]["sealed"], f"{page}: not the key's entry"
        radios = re.findall(r'<input type="radio" name="[\w-]+" id="[\w-]+" value="([a-z])">', body)
        assert "".join(radios) == (key[task]["choices"] or ""), f"{page}: choices {radios}, key {key[task]['choices']}"
        assert radios or 'type="text"' in body, f"{page}: a number question needs a field"
        assert "<legend>" in body and '<button type="submit">Check</button>' in body and 'role="status"' in body
        assert re.search(r'class="prediction-verdict"[^>]*></p>', body), f"{page}: a verdict is shown before a choice"
        from tl_minimal.exercises import answers

        opened = [answers._open(task, key[task], a)[1] for a in (key[task]["choices"] or [])]
        opened += [answers._open(task, key[task], prediction_answers(task, key[task])[0])[1]]
        readable = [v for v in opened if v.split(": ", 1)[1][:60] in html.unescape(text)]
        assert not readable, f"{page}: a verdict is readable in the page: {readable}"


def prediction_answers(task: str, entry: dict) -> tuple[str, str]:
    """(a right answer, a wrong one) of a prediction, found with the library's own check (answers._open):
    each letter is tried; a number's right value is its solution's hidden test (``correct=...``)."""
    from tl_minimal.exercises import answers

    if entry["choices"]:
        right = [c for c in entry["choices"] if answers._open(task, entry, c)[0]]
        return right[0], next(c for c in entry["choices"] if c not in right)
    solutions = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "notebooks/exercises/solutions").glob("*.py"))
    value = re.search(rf"task='{re.escape(entry['task'])}',\s*correct=([-\d.e]+)", solutions).group(1)
    return value, repr(float(value) * 5 + 1)


@pytest.mark.browser
def test_prediction_checks_answer_in_the_browser(site, server, browser):
    """On each exercise page: nothing shows before a choice; a wrong answer (chosen with the mouse)
    gets the notebook's hint for it, a right one (chosen with the keyboard: Space, Tab, Enter) the
    notebook's explanation, each the very text the notebook's check prints; and axe-core, when
    installed, finds nothing on the page with a verdict shown."""
    from tl_minimal.exercises import answers

    key = json.loads(ANSWER_KEY.read_text(encoding="utf-8"))
    axe = find_axe()
    page = browser.new_page(viewport={"width": AXE_WIDTH, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    checked = []
    try:
        for name, task in prediction_pages().items():
            entry = key[task]
            right, wrong = prediction_answers(task, entry)
            page.goto(server + name, wait_until="load")
            form = page.locator(f'form.prediction[data-task="{task}"]')
            verdict = form.locator(".prediction-verdict")
            form.scroll_into_view_if_needed()
            assert verdict.inner_text() == "", f"{name}: a verdict before any choice"
            seen = {}
            for answer, how in ((wrong, "mouse"), (right, "keyboard")):
                field = (form.locator(f'input[value="{answer}"]') if entry["choices"]
                         else form.locator('input[type="text"]'))
                if how == "mouse":
                    (form.locator(f'label[for="{field.get_attribute("id")}"]').click() if entry["choices"]
                     else field.fill(answer))
                    form.get_by_role("button", name="Check").click()
                else:
                    field.focus()
                    if entry["choices"]:
                        page.keyboard.press("Space")
                    else:
                        page.keyboard.press("Control+A")
                        page.keyboard.type(answer)
                    page.keyboard.press("Tab")
                    assert page.evaluate("() => document.activeElement.textContent") == "Check", f"{name}: Tab"
                    page.keyboard.press("Enter")
                page.wait_for_function("(el) => el.textContent.length > 0", arg=verdict.element_handle(),
                                       timeout=10_000)
                passed, text = answers._open(task, entry, answer)
                seen[answer] = verdict.inner_text()
                assert seen[answer] == text[0].upper() + text[1:], f"{name}: {answer!r} shows {seen[answer]!r}"
                assert passed == (answer == right) and ("prediction-right" in verdict.get_attribute("class")) == passed
            if axe:
                page.add_script_tag(content=axe.read_text(encoding="utf-8"))
                found = page.evaluate(JS_AXE, AXE_TAGS)
                assert not found, f"{name} with a verdict shown: axe: {found}"
            checked.append(f"{task}: wrong {wrong!r} -> {seen[wrong][:40]!r}..., right {right!r}")
    finally:
        page.close()
    print("\n" + "\n".join(checked))
    assert not errors, errors
    assert len(checked) == len(prediction_pages())


@pytest.mark.browser
def test_every_page_in_the_browser(site, server, browser):
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "_static" not in p.parts)
    problems, shots = [], []
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    tabs = {width: Tab(browser, width) for width in WIDTHS}
    axe = find_axe()
    axe_script = axe.read_text(encoding="utf-8") if axe else None
    started = time.perf_counter()
    for name in pages:
        for width in WIDTHS:
            info = tabs[width].visit(server + name)
            where = f"{name} at {width} px"
            problems += [f"{where}: console: {e}" for e in tabs[width].errors]
            if info["scroll"] > 1:
                problems.append(f"{where}: scrolls sideways by {info['scroll']} px ({info['wide']})")
            problems += site_phone.page_problems(tabs[width].page, width, where)  # targets, search, scroll cues
            if name in SHOTS:
                shot = REPORT_DIR / f"{name.replace('/', '_').replace('.html', '')}-{width}.png"
                tabs[width].page.screenshot(path=str(shot))
                shots.append(shot)
            if width == WIDTHS[0]:
                problems += page_problems(info, name, where, site, server)
            if axe_script and width in AXE_WIDTHS:  # axe-core's rules, best practice included
                tabs[width].page.add_script_tag(content=axe_script)
                problems += [f"{where}: axe: {v}" for v in tabs[width].page.evaluate(JS_AXE, AXE_TAGS)]
    for tab in tabs.values():
        tab.page.close()
    rules = f"axe-core ({', '.join(AXE_TAGS)}) at {AXE_WIDTHS} px" if axe else "without axe-core"
    print(f"\n{len(pages)} pages at {WIDTHS} px read in {time.perf_counter() - started:.0f} s, {rules}; "
          f"screenshots in {REPORT_DIR}")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:60])
    assert len(shots) == len(SHOTS) * len(WIDTHS) and all(s.is_file() for s in shots)


@pytest.mark.browser
@pytest.mark.parametrize("term", SEARCHES)
def test_search_finds(term, site, server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(server + "search.html?q=" + urllib.parse.quote(term), wait_until="load")
        # Sphinx adds the results one by one, then writes "Search finished, found N page(s)"
        page.wait_for_function("() => /search finished|found \\d+ page|did not match/i.test("
                               "(document.querySelector('.search-summary, #search-results') || {}).innerText || '')",
                               timeout=60_000)
        found = page.evaluate("() => [...document.querySelectorAll('#search-results li a, ul.search li a')]"
                              ".map(a => a.getAttribute('href'))")
        page.wait_for_timeout(1500)  # the snippets arrive after the links, one page fetch each
        snippets = page.evaluate("() => [...document.querySelectorAll('#search-results p.context, "
                                 "ul.search p.context')].map(p => p.innerText)")
    finally:
        page.close()
    expected, first = SEARCHES[term]
    pages = [h.split("#")[0].split("?")[0] for h in found if h]
    print(f"\nsearch {term!r}: {len(pages)} results, first {pages[:2]}")
    assert any(p.endswith(expected) for p in pages), (term, found[:20])
    if first:
        assert pages[0].endswith(expected), f"{term!r}: first result {pages[0]}, not {expected} (then {pages[1:4]})"
    chrome = [s for s in snippets if re.search(r"System Settings|Light Dark", s)]
    assert not chrome, f"theme button text in the search snippets: {chrome[:3]}"
    tex = [s for s in snippets if re.search(r"\\[A-Za-z]{2,}|\\[()\[\]]", s)]
    assert not tex, f"raw TeX in the search snippets: {tex[:3]}"


# every word (split at spaces and hyphens, where a line may end) of every table cell that lies on two lines
JS_SPLIT_WORDS = """() => {
  const split = [];
  for (const cell of document.querySelectorAll('article table td, article table th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode());) {
      for (const m of node.data.matchAll(/[^\\s\\-\u2010-\u2014]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) split.push(m[0]);
      }
    }
    for (const piece of cell.querySelectorAll('code, mjx-container')) {  // a code name or formula: one line
      const tops = new Set([...piece.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) split.push(piece.textContent.trim().slice(0, 40));
    }
  }
  return split;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("chromium", ["browser", "scrollbar_browser"])
def test_no_word_is_broken_inside_a_table_cell(site, server, chromium, request):
    """The pages whose tables read "sym/bol" and "projectio/ns" when the CSS broke words anywhere;
    in the headless browser and again with scrollbars shown (they take room from a scrolling table)."""
    browser = request.getfixturevalue(chromium)
    pages = ["index.html", "notebooks/03_readout.html", "notebooks/06b_family.html", "docs/paper.html",
             *sorted(p.relative_to(site).as_posix() for p in (site / "notebooks" / "exercises").glob("02_*.html"))]
    broken = []
    for width in WIDTHS:
        tab = browser.new_page(viewport={"width": width, "height": 900})
        try:
            for name in pages:
                tab.goto(server + name, wait_until="load")
                tab.evaluate(JS_MATH_DONE)
                broken += [f"{name} at {width} px: {word}" for word in tab.evaluate(JS_SPLIT_WORDS)]
        finally:
            tab.close()
    assert not broken, "words broken across lines in table cells:\n" + "\n".join(broken[:40])


# every element from an inline formula up to its paragraph that shows a scrollbar (one takes room:
# offset size above client size on a box whose overflow scrolls)
JS_MATH_SCROLLBARS = """() => {
  const found = [];
  for (const math of document.querySelectorAll('article mjx-container:not([display="true"])')) {
    for (let el = math; el && !el.matches('p, li, td, th, article'); el = el.parentElement) {
      const style = getComputedStyle(el);
      const scrolls = ['auto', 'scroll'].includes(style.overflowX) || ['auto', 'scroll'].includes(style.overflowY);
      if (scrolls && (el.offsetHeight - el.clientHeight > 1 || el.offsetWidth - el.clientWidth > 1))
        found.push((math.textContent || math.getAttribute('aria-label') || '').slice(0, 40));
    }
  }
  return found;
}"""
# the browser really shows scrollbars: a box that overflows sideways gets one that takes room
JS_SCROLLBARS_SHOWN = """() => {
  const box = document.createElement('div');
  box.style.cssText = 'width: 60px; overflow-x: scroll';
  box.innerHTML = '<div style="width: 600px; height: 10px"></div>';
  document.body.appendChild(box);
  const room = box.offsetHeight - box.clientHeight;
  box.remove();
  return room;
}"""


@pytest.mark.browser
def test_no_scrollbar_around_inline_math_where_scrollbars_show(site, server, scrollbar_browser):
    """Where scrollbars are always visible, a formula inside a sentence must not get one (the old
    ``mjx-container {overflow-x: auto}`` gave every symbol with a subscript its own); the check is
    shown to catch that rule when it is put back."""
    problems, old_rule = [], 0
    for width in WIDTHS:
        tab = scrollbar_browser.new_page(viewport={"width": width, "height": 900})
        try:
            for name in ("notebooks/03_readout.html", "docs/paper.html"):
                tab.goto(server + name, wait_until="load")
                tab.evaluate(JS_MATH_DONE)
                assert tab.evaluate(JS_SCROLLBARS_SHOWN) > 0, "this browser hides scrollbars: the check is blind"
                problems += [f"{name} at {width} px: {m}" for m in tab.evaluate(JS_MATH_SCROLLBARS)]
                tab.add_style_tag(content="mjx-container { overflow-x: auto; }")  # the old rule (until the next page)
                old_rule += len(tab.evaluate(JS_MATH_SCROLLBARS))
        finally:
            tab.close()
    assert old_rule, "the check does not see the scrollbars of the old rule (mjx-container {overflow-x: auto})"
    assert not problems, "inline formulas with a scrollbar:\n" + "\n".join(problems[:40])
    print(f"\nwith scrollbars shown: no inline formula has one; the old rule would give {old_rule} (sum over "
          f"2 pages at {WIDTHS} px)")
