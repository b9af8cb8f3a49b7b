"""Build the course's website from the committed files: ``python docs/site/build.py``.

    python docs/site/build.py                  # into build/site/html (open build/site/html/index.html)
    python docs/site/build.py --out DIR        # somewhere else
    python docs/site/build.py --no-figures     # skip exporting the slide figures (faster)
    python docs/site/build.py --publish        # refuse to build without a real repository address

The repository the pages link to (source button, "Source:" links, library files) is read from the
environment: TL_SITE_REPO=owner/name, else GITHUB_REPOSITORY (set by GitHub Actions, so the pages
workflow needs nothing). With it every notebook page has the theme's launch menu (Colab, Binder, and
a course's JupyterHub through nbgitpuller when TL_SITE_JUPYTERHUB names one). Without either the build
is local: the home page says so, no page links to the code host and none has a launch menu.
--publish (the pages workflow) fails at once without an address or with the README's placeholder
owner (OWNER).

Needs the ``site`` extra (``pip install -e ".[site]"``: Sphinx, MyST-NB, the book theme and a MathJax
copy) and, to typeset the formulas at build time, Node.js (without it the pages load MathJax; a
``--publish`` build refuses to run without it). No page is executed: the notebooks' saved outputs are
the pages' outputs. Steps:

1. stage (``staging.py``): the pages, links rewritten, notes and alt texts added, into DIR/src; the
   widgets of notebooks 00-06 become moving figures (``widget_frames.py``: their frames are drawn
   from the notebooks' code and the shipped models, or, for the widgets of 05 and 06a, whose models
   the notebooks train, after running the notebook's cells above the widget in full, minutes on a
   CPU; all cached in build/widget_frames, so a rebuild with unchanged notebooks draws nothing);
2. export the slide figures (``figures.py``, alone: ``python docs/site/figures.py``) into DIR/src/figures,
   listed on the site's "Figures for slides" page;
3. Sphinx with ``-W --keep-going -n``: any warning (a missing reference, image, heading or anchor)
   fails the build. Each warning is printed with the committed file it comes from and its line:
   for a notebook, the cell number and the line in its jupytext ``.py`` pair where it can be found;
4. the formulas of every page typeset as SVG with MathJax under Node.js (``math_render.py``), so no
   page loads a maths renderer.

Exit code 0 only for a build without a warning.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

# the sibling modules: a script's own folder is the first entry of sys.path, wherever it is run from
import math_render
import search_terms
import widget_frames
import widget_page
from alt_text import AltTexts
from staging import (
    REPO_VARIABLES,
    Staged,
    page_list,
    placeholder,
    repository,
    site_url,
    stage_home,
    stage_markdown,
    stage_notebook,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WARNING = re.compile(r"^(?P<path>.+?):(?P<line>\d+)?:? ?(?P<kind>WARNING|ERROR|CRITICAL): (?P<msg>.*)$")
TOC_GROUPS = [("Exercises", "notebooks/exercises/"), ("The course", "notebooks/"),
              ("The course", "docs/linear_algebra.md"),
              ("For instructors", "docs/instructors.md"), ("For instructors", "CHANGELOG.md"),
              ("The paper and the results", "docs/"), ("The paper and the results", "data/")]


def toc(pages: list[str], figures: bool) -> str:
    """The hidden toctrees of the home page: the sidebar and previous/next follow this order."""
    groups: dict[str, list[str]] = {}
    for page in pages:
        caption = next(c for c, prefix in TOC_GROUPS if page.startswith(prefix))
        groups.setdefault(caption, []).append(page.rsplit(".", 1)[0])
    if figures:
        groups["The paper and the results"].append("figures")
    return "".join(f"```{{toctree}}\n:caption: {caption}\n:hidden:\n\n" + "\n".join(entries) + "\n```\n\n"
                   for caption, entries in groups.items())


def stage(root: Path, src: Path, figures: bool) -> Staged:
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    staged, alts = Staged(), AltTexts()
    staged.pages = page_list(root)
    site_pages = set(staged.pages)
    started = time.perf_counter()
    frames = widget_frames.prepare(root, staged.pages)  # the widgets' frames, drawn or from the cache
    print(f"site: {widget_frames.summary(frames, time.perf_counter() - started)}")
    for page in staged.pages:
        if page.endswith(".ipynb"):
            stage_notebook(page, root, src, site_pages, staged, alts,
                           widget_page.PageWidgets(page, frames.get(page, [])))
        else:
            stage_markdown(page, root, src, site_pages, staged)
    stale = alts.unused(site_pages)
    if stale:
        raise ValueError("figure_alt.json names figures the notebooks do not have: " + "; ".join(stale))
    stage_home(root, src, site_pages, staged, toc(staged.pages, figures))
    static = src / "_static"
    shutil.copytree(HERE / "static", static)
    if not math_render.node():  # the formulas are typeset in the reader's browser (math_render.py)
        shutil.copytree(mathjax_dir(), static / "mathjax")
    widget_frames.copy_frames(frames, static, root)
    (src / "alt_text.json").write_text(json.dumps(staged.alt, indent=1, ensure_ascii=False), encoding="utf-8")
    (src / "figure_zoom.json").write_text(json.dumps(staged.zoom, indent=1), encoding="utf-8")
    (src / "search_terms.json").write_text(json.dumps(search_terms.entries(root, site_pages), indent=1),
                                           encoding="utf-8")
    return staged


def mathjax_dir() -> Path:
    """MathJax 3 as the sphinx-mathjax-offline package ships it (its folder name has a hyphen, so it
    is found by distribution, not imported)."""
    from importlib import metadata
    try:
        files = metadata.distribution("sphinx-mathjax-offline").files or []
    except metadata.PackageNotFoundError as error:
        raise SystemExit('the site needs the site extra: pip install -e ".[site]" (sphinx-mathjax-offline '
                         "is missing)") from error
    loader = next(f for f in files if f.as_posix().endswith("static/mathjax/tex-svg.js"))
    return Path(loader.locate()).parent


def export_figures(root: Path, src: Path, staged: Staged) -> None:
    """Slide figures into src/figures and the page that shows them (figures.md)."""
    from figures import export_all  # imports torch and matplotlib: only when figures are wanted
    done = export_all(src / "figures")
    lines = ["# Figures for slides", "",
             ("The architecture figures and the main result plots, as SVG (scales for slides) and PNG. "
              "Made by `python docs/site/figures.py OUT_DIR` from the library and the "
              "committed results; the site build runs it, so these are as current as the site."), ""]
    for figure in done:
        lines += [f"## {figure.title}", "", f"![{figure.alt}](figures/{figure.name}.png)", "",
                  (f"Download: [{figure.name}.svg](figures/{figure.name}.svg) · "
                   f"[{figure.name}.png](figures/{figure.name}.png)"), ""]
    (src / "figures.md").write_text("\n".join(lines), encoding="utf-8")
    staged.sources["figures.md"] = "docs/site/figures.py"


def where(path: str, line: str | None, src: Path, staged: Staged, root: Path) -> str:
    """The committed file (and line) a warning about staged file ``path`` comes from."""
    try:
        rel = Path(path).resolve().relative_to(src.resolve()).as_posix()
    except ValueError:
        return f"{path}:{line}" if line else path
    committed = staged.sources.get(rel, rel)
    if not line or not rel.endswith(".ipynb"):
        return f"{committed}:{line}" if line else committed
    return notebook_location(committed, int(line), src / rel, root)


def notebook_location(page: str, line: int, staged_nb: Path, root: Path) -> str:
    """MyST-NB numbers a notebook's lines (cell index + 1) * 10000 + 2 + the 0-based line of the
    paragraph in the cell (measured on a known link); name the
    committed cell (the staged copy has the same cells: the run note sits inside the title's cell) and,
    where the line's text is found, its line in the jupytext ``.py`` pair."""
    cells = json.loads(staged_nb.read_text(encoding="utf-8"))["cells"]
    index, offset = line // 10000 - 1, line % 10000
    if not 0 <= index < len(cells):
        return f"{page}:{line}"
    text = "".join(cells[index]["source"]) if isinstance(cells[index]["source"], list) else cells[index]["source"]
    lines = text.splitlines() or [""]
    wanted = lines[max(0, min(offset - 2, len(lines) - 1))].strip()  # the paragraph's first line
    number = index + 1  # 1-based, counted in the committed notebook
    pair = root / (page[:-len(".ipynb")] + ".py")
    if wanted and pair.is_file():
        for n, pair_line in enumerate(pair.read_text(encoding="utf-8").splitlines(), start=1):
            if wanted in pair_line:
                return f"{page} cell {number} ({pair.relative_to(root).as_posix()}:{n})"
    return f"{page} cell {number}"


def build(root: Path, out: Path, figures: bool = True) -> int:
    """Stage, export, run Sphinx; print every warning with its committed file; 0 when clean."""
    started = time.perf_counter()
    src, html, log = out / "src", out / "html", out / "warnings.txt"
    for old in (html, out / "doctrees", log):  # a fresh build: no page of an earlier one survives
        if old.is_dir():
            shutil.rmtree(old)
        elif old.exists():
            old.unlink()
    staged = stage(root, src, figures)
    if figures:
        export_figures(root, src, staged)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(HERE), "-W", "--keep-going", "-n", "-q",
               "-w", str(log), "-d", str(out / "doctrees"), str(src), str(html)]
    result = subprocess.run(command, cwd=root, check=False)
    for source_map in html.glob("_static/**/*.map"):  # the theme's source maps: for its developers, 3.4 MB
        source_map.unlink()
    problems = []
    if result.returncode == 0 and math_render.node():
        try:
            print(f"site: {math_render.typeset_pages(html, mathjax_dir())}")
        except (ValueError, RuntimeError) as error:  # a formula TeX cannot read, or Node.js failed
            problems.append(str(error))
    elif result.returncode == 0:
        print("site: Node.js not found, so MathJax typesets the formulas in the reader's browser (2 MB more on "
              "every page with a formula); install Node.js to typeset them here (docs/site/math_render.py)")
    for raw in (log.read_text(encoding="utf-8").splitlines() if log.exists() else []):
        match = WARNING.match(raw)
        if match:
            problems.append(f"{where(match['path'], match['line'], src, staged, root)}: {match['msg']}")
        elif raw.strip():
            problems.append(raw)
    for problem in problems:
        print(f"site: {problem}", file=sys.stderr)
    seconds = time.perf_counter() - started
    if result.returncode != 0 or problems:
        print(f"site: FAILED with {len(problems)} warning(s) after {seconds:.0f} s", file=sys.stderr)
        return result.returncode or 1
    where_to = (f"for {site_url()} (links to github.com/{repository()})" if repository() else
                f"a local build: no links to the code host (set {' or '.join(REPO_VARIABLES)} to add them)")
    print(f"site: {len(staged.pages) + 1 + int(figures)} pages in {html} ({seconds:.0f} s), {where_to}; "
          f"open {html / 'index.html'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="output folder")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root to build from")
    parser.add_argument("--no-figures", action="store_true", help="skip the slide figures")
    parser.add_argument("--publish", action="store_true",
                        help="a build to publish: fail without a real repository address (TL_SITE_REPO or "
                             "GITHUB_REPOSITORY, owner/name)")
    args = parser.parse_args(argv)
    if args.publish and placeholder(repository()):
        print(f"site: refusing to publish with the repository address {repository()!r}: set "
              f"{' or '.join(REPO_VARIABLES)} to the real owner/name (GitHub Actions sets GITHUB_REPOSITORY)",
              file=sys.stderr)
        return 2
    if args.publish and not math_render.node():
        print("site: refusing to publish without Node.js: the formulas would be typeset in each reader's browser "
              "(docs/site/math_render.py)", file=sys.stderr)
        return 2
    return build(args.root.resolve(), args.out.resolve(), figures=not args.no_figures)


if __name__ == "__main__":
    sys.exit(main())
