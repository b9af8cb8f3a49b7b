"""Lay out the site's source tree from the committed files, without executing anything.

The site mirrors the repository's own layout (``notebooks/``, ``notebooks/exercises/``, ``docs/``,
``data/results/``), so a relative link that works on the code host works on the site unchanged.
Staging copies each page and makes four changes, none of which moves a line of a Markdown file
(so a build warning's line number is the committed file's line number; a notebook's warning is
traced through the staged copy to its cell, which keeps its number):

1. links: an HTML anchor (``<a id="x"></a>`` on its own line) becomes a MyST target; a link to a
   page of the site stays as it is; a link to any other file or folder of the repository (a library
   file, a result JSON, a solution notebook) becomes a link to its source on the code host
   (``source_url``; a local build, with no repository address, keeps the label as plain text); a
   link to nothing is left alone, so the build reports it;
2. the home page is the README's front matter (up to the end of its learning path); a link into
   the part that was cut goes to the README on the code host;
3. notebooks: a "Run it yourself" note of at most 40 words goes directly under the title (the
   study and run times the notebook's own **Time** line states, and the launch menu or a clone),
   an exercise's pointer to ``solutions/`` becomes one to the instructors' guide, widget views
   are dropped in favour of the static picture committed beside them (a site has no kernel), the
   notebook's widget state is removed, test-harness comment lines (``# NBVAL_IGNORE_OUTPUT``)
   are taken out of the displayed code, the code cells of an implementation note are collapsed
   (MyST-NB's ``hide-cell``, as the note's ``<details>`` prose is), and each "predict before you
   plot" question gets a check that answers without a kernel (``predictions.py``);
4. every picture gets a text alternative (``alt_text.py``), collected in ``alt_text.json`` keyed by
   page and the picture's SHA-256 (the name the notebook reader gives the image file); one that
   fails ``alt_text.problems`` stops the build, naming the page, figure and cell.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from alt_text import AltTexts
from alt_text import problems as alt_problems
from figure_scale import zoom_class
from predictions import stage as stage_predictions

# the repository on the code host, "owner/name", is read when the site is built: TL_SITE_REPO if set,
# else GITHUB_REPOSITORY (GitHub Actions sets it to the repository the workflow runs in). Without
# either the build is local: it says so on the home page and links to nothing on the code host.
REPO_VARIABLES = ("TL_SITE_REPO", "GITHUB_REPOSITORY")
PLACEHOLDER_OWNER = "OWNER"  # the README's stand-in until the repository is public
JUPYTERHUB_VARIABLE = "TL_SITE_JUPYTERHUB"  # a course's JupyterHub (launch through nbgitpuller), optional


def repository() -> str | None:
    """"owner/name" of the repository the site links to, or None for a local build."""
    for variable in REPO_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value:
            name = re.sub(r"^https://github\.com/", "", value).strip("/")
            if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
                raise ValueError(f"{variable}={value!r}: expected owner/name (or https://github.com/owner/name)")
            return name
    return None


def repo_url() -> str | None:
    name = repository()
    return f"https://github.com/{name}" if name else None


def site_url() -> str | None:
    """Where GitHub Pages publishes the site of the repository (None for a local build)."""
    name = repository()
    if not name:
        return None
    owner, repo = name.split("/")
    return f"https://{owner.lower()}.github.io/{repo}/"


def launch_buttons() -> dict[str, str]:
    """The book theme's launch menu (its ``launch_buttons`` option) for a site that knows its
    repository: Colab and Binder (mybinder.org builds the repository's environment.yml), and a
    JupyterHub through nbgitpuller when TL_SITE_JUPYTERHUB names one (a course's own hub, e.g. set as
    a repository variable for the pages workflow). A local build gets none: there is nothing to launch."""
    if not repository():
        return {}
    buttons = {"notebook_interface": "jupyterlab", "colab_url": "https://colab.research.google.com",
               "binderhub_url": "https://mybinder.org"}
    hub = os.environ.get(JUPYTERHUB_VARIABLE, "").strip().rstrip("/")
    if hub:
        if not re.match(r"^https?://[^/\s]+", hub):
            raise ValueError(f"{JUPYTERHUB_VARIABLE}={hub!r}: expected the hub's address, https://hub.example.org")
        buttons["jupyterhub_url"] = hub
    return buttons


def placeholder(name: str | None) -> bool:
    return name is None or name.split("/")[0] == PLACEHOLDER_OWNER

LEARNING_PATH = "notebooks/[0-9][0-9]*_*.ipynb"  # 06b_family too
EXERCISES = "notebooks/exercises/[0-9][0-9]_*.ipynb"  # the blank versions; solutions/ stays off the site
DOCUMENTS = ["docs/linear_algebra.md", "docs/paper.md", "docs/glossary.md", "docs/devices.md",
             "data/results/README.md", "data/results/RECALL_STUDY.md", "data/results/SPEED.md",
             "docs/instructors.md", "CHANGELOG.md"]
HOME_SECTIONS = ("Quick start", "Learning path")  # the README's front matter: title, intro and these
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
HTML_ANCHOR = re.compile(r'^<a (?:id|name)="([\w-]+)"></a>\s*$', re.MULTILINE)  # GitHub's way; MyST's is (name)=
# test-harness markers (nbval's) in code cells: the notebook needs them, a reader of the page does not
HARNESS_COMMENT = re.compile(r"^[ \t]*# NBVAL_[A-Z_]+[ \t]*\n?", re.MULTILINE)
# a code cell of an implementation note (tl_research.notebook_time): collapsed on the page, as
# the note's <details> prose is, by MyST-NB's own tag
NOTE_TAG, COLLAPSED_TAG = "implementation-note", "hide-cell"
READ_AS_WEBSITE = re.compile(r"^\*\*Read it as a website[.:]?\*\*.*$", re.MULTILINE)
TIME_LINE = re.compile(r"\*\*Time[.:]?\*\*:?\s*(.+?)(?:\n\s*\n|\n\*\*|$)", re.DOTALL)  # to the paragraph's end
STUDY_MINUTES = re.compile(r"\b[Aa]bout (\d+) minutes")
RUN_SECONDS = re.compile(r"\b(?:at|in) (\d+(?:\.\d+)?) s\b")
RUN_NOTE_WORDS = 40
# an exercise's pointer to its solutions folder, which is not on the site (solutions stay off it)
SOLUTIONS_POINTER = re.compile(r"The\s+solutions\s+are\s+in\s+`solutions/`:\s*try\s+first,\s+look\s+after\.")
SOLUTIONS_ON_SITE = ("Try first, look after: the worked solutions are in the repository, not on this site, and "
                     "instructors release them with nbgrader ([the instructors' guide, sections 1-2]"
                     "(../../docs/instructors.md#1-what-an-exercise-is)).")


@dataclass
class Staged:
    """What staging produced: the pages (site paths), each staged file's source, the alt texts."""
    pages: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # staged path -> committed path
    alt: dict[str, dict[str, str]] = field(default_factory=dict)  # page (no suffix) -> image sha256 -> alt
    predictions: dict[str, int] = field(default_factory=dict)  # notebook page -> prediction checks added
    zoom: dict[str, dict[str, str]] = field(default_factory=dict)  # page -> image sha256 -> its phone class


def source_url(path: str, folder: bool = False) -> str | None:
    """The file's page on the code host; None for a local build (no repository address)."""
    base = repo_url()
    return f"{base}/{'tree' if folder else 'blob'}/main/{path}" if base else None


def linked(label: str, url: str | None) -> str:
    """A Markdown link, or the bare label when there is no address to link to (a local build)."""
    return f"[{label}]({url})" if url else label


def page_list(root: Path) -> list[str]:
    """Every page of the site, repository-relative, in reading order (home page excluded)."""
    notebooks = sorted(p.relative_to(root).as_posix() for p in root.glob(LEARNING_PATH))
    exercises = sorted(p.relative_to(root).as_posix() for p in root.glob(EXERCISES))
    missing = [d for d in DOCUMENTS if not (root / d).is_file()]
    if missing or not notebooks:
        raise FileNotFoundError(f"the site needs {', '.join(missing) or LEARNING_PATH} under {root}")
    return notebooks + exercises + DOCUMENTS


def rewrite_links(text: str, page: str, root: Path, site_pages: set[str], images: set[str],
                  anchors_elsewhere: str | None = None) -> str:
    """Rewrite the Markdown links of ``text`` (from repository file ``page``), as the module says.

    images collects the repository paths of pictures the page shows (they are copied beside it);
    anchors_elsewhere: the file a bare ``#anchor`` link points to when the anchor was cut away."""
    def one(match: re.Match) -> str:
        bang, label, target = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # https:, mailto:, ...
            return match.group(0)
        path, _, anchor = target.partition("#")
        fragment = f"#{anchor}" if anchor else ""
        if not path:
            if anchors_elsewhere:
                url = source_url(anchors_elsewhere)
                return linked(label, url and url + fragment)
            return match.group(0)
        resolved = os.path.normpath(PurePosixPath(page).parent / path).replace(os.sep, "/")
        if resolved in site_pages or resolved.startswith(".."):
            return match.group(0)  # a page of the site, or outside the clone: the build judges it
        if (root / resolved).is_file():
            if bang:
                images.add(resolved)
                return match.group(0)
            url = source_url(resolved)
            return linked(label, url and url + fragment)
        if (root / resolved).is_dir():
            return linked(label, source_url(resolved, folder=True))
        return match.group(0)  # missing: left for the build to report with file and line
    return HTML_ANCHOR.sub(r"(\1)=", LINK.sub(one, text))


def home_front_matter(readme: str) -> tuple[str, bool]:
    """The README up to the end of its last HOME_SECTIONS section; True if something was cut."""
    lines = readme.splitlines(keepends=True)
    kept, seen = [], False
    for line in lines:
        if line.startswith("## "):
            title = line[3:].strip()
            if title in HOME_SECTIONS:
                seen = True
            elif seen:
                return "".join(kept), True
        kept.append(line)
    return "".join(kept), False


def notebook_time(nb: dict, name: str) -> tuple[int, int]:
    """(minutes to study, seconds to run every cell), read from the notebook's own "**Time.**" (or
    "**Time:**") line: "About 60 minutes: ... measured at 84 s" (a lesson), "about 25 minutes of
    work ... runs top to bottom in 10 s" (an exercise)."""
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            found = TIME_LINE.search(text)
            if found:
                line = " ".join(found.group(0).split())
                minutes, seconds = STUDY_MINUTES.search(line), RUN_SECONDS.search(line)
                if minutes and seconds:
                    return int(minutes.group(1)), round(float(seconds.group(1)))
                raise ValueError(f"{name}: its **Time.** line gives no 'about N minutes' and no 'in/at N s' "
                                 f"run time: {line[:200]!r}")
    raise ValueError(f"{name}: no **Time.** line in a Markdown cell; every notebook states its time "
                     "(the site's run-it-yourself note quotes it)")


def duration(seconds: int) -> str:
    return f"{seconds} s" if seconds < 100 else f"{round(seconds / 60)} min"


def run_note(page: str, minutes: int, seconds: int) -> str:
    """The "Run it yourself" note put directly under a notebook's title: at most RUN_NOTE_WORDS
    words: the time to study, the time to run, and how to run it (the launch menu, a clone and the
    jupytext pair on the code host when the site knows its repository, else a clone)."""
    exercise = page.startswith("notebooks/exercises/")
    times = (f"About {minutes} min of {'work' if exercise else 'study'}; "
             f"{'the worked solution' if exercise else 'every cell'} runs in {duration(seconds)} on a 2-core CPU. ")
    name = repository()
    if name:
        hosts = [h for key, h in (("colab_url", "Colab"), ("binderhub_url", "Binder"),
                                  ("jupyterhub_url", "JupyterHub")) if key in launch_buttons()]
        pair = page[:-len(".ipynb")] + ".py"
        how = (f"Launch from the rocket button above ({', '.join(hosts)}), or clone "
               f"[github.com/{name}](https://github.com/{name}) and run `python run.py lab`. "
               f"Source: {linked(f'`{pair}`', source_url(pair))}.")
    else:
        how = f"Clone the repository, run `python run.py lab` and open `{page[len('notebooks/'):]}`."
    words = len(re.sub(r"\]\([^)]*\)", " ", f"Run it yourself {times}{how}").split())  # link targets unread
    if words > RUN_NOTE_WORDS:
        raise ValueError(f"{page}: the run note has {words} words, over {RUN_NOTE_WORDS}: {times}{how}")
    return f":::{{admonition}} Run it yourself\n:class: tip run-note\n{times}{how}\n:::\n"


def with_run_note(cells: list[dict], note: str, page: str) -> None:
    """Put the note directly under the notebook's title (the first level-1 heading), inside its cell."""
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        text = cell["source"]
        title = re.search(r"^# .+$\n?", text, re.MULTILINE)
        if title:
            cell["source"] = text[:title.end()].rstrip("\n") + "\n\n" + note + "\n" + text[title.end():].lstrip("\n")
            return
    raise ValueError(f"{page}: no title (a '# ' heading in a Markdown cell) to put the run note under")


def strip_harness(code: str) -> str:
    """A code cell's source without its test-harness comment lines (the site's copy only)."""
    return HARNESS_COMMENT.sub("", code)


def stage_notebook(page: str, root: Path, out: Path, site_pages: set[str], staged: Staged,
                   alts: AltTexts, widgets=None) -> None:
    """Copy one notebook with its links rewritten, a run note, static pictures and alt texts;
    ``widgets`` (a ``widget_page.PageWidgets``) turns its widgets' pictures into moving figures."""
    nb = json.loads((root / page).read_text(encoding="utf-8"))
    nb["metadata"].pop("widgets", None)
    images: set[str] = set()
    figure, title, section = 0, page, ""
    texts = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"]]
    for number, cell in enumerate(nb["cells"]):
        text = texts[number]
        after = nb["cells"][number + 1] if number + 1 < len(nb["cells"]) else None
        caption = texts[number + 1] if after is not None and after["cell_type"] == "markdown" else ""
        before = texts[number - 1] if number and nb["cells"][number - 1]["cell_type"] == "markdown" else ""
        if cell["cell_type"] == "code":
            cell["source"] = strip_harness(text)
            tags = cell.get("metadata", {}).get("tags", [])
            if NOTE_TAG in tags and COLLAPSED_TAG not in tags:
                cell["metadata"]["tags"] = [*tags, COLLAPSED_TAG]
        if cell["cell_type"] == "markdown":
            if page.startswith("notebooks/exercises/"):
                text = SOLUTIONS_POINTER.sub(SOLUTIONS_ON_SITE, text)
            cell["source"] = rewrite_links(text, page, root, site_pages, images)
            headings = re.findall(r"^(#+)\s+(.+)$", text, re.MULTILINE)
            for level, heading in headings:
                if len(level) == 1 and title == page:
                    title = heading.strip()
                else:
                    section = heading.strip()
        added = []  # captions of widgets that do not move on the site
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            note = ""
            if WIDGET_VIEW in data and len(data) > 1:
                del data[WIDGET_VIEW]  # the static picture saved with it is what a reader sees
                plain = data.get("text/plain", "")
                note = "".join(plain) if isinstance(plain, list) else plain
            for mime in ("image/png", "image/jpeg"):
                if mime in data:
                    figure += 1
                    raw = base64.b64decode(data[mime])
                    meta = output.get("metadata", {}).get(mime, {})
                    alt = alts.for_output(page, figure, (title, section, text), meta, caption, note, before)
                    saved = str(meta.get("alt", "")).strip()  # a bad saved text fails even where unused
                    wrong = alt_problems(alt) + (alt_problems(saved) if saved else [])
                    if wrong:
                        raise ValueError(f"{page}, figure {figure} (cell {number + 1}): its alt text has "
                                         f"{'; '.join(wrong)}: {alt[:300]!r}")
                    digest = hashlib.sha256(raw).hexdigest()
                    staged.alt.setdefault(page[:-len(".ipynb")], {})[digest] = alt
                    zoom = zoom_class(meta.get("font_px"))  # its size on a phone (figure_scale.py)
                    if zoom:
                        staged.zoom.setdefault(page[:-len(".ipynb")], {})[digest] = zoom
                    if note and widgets is not None:  # pre-drawn frames and a slider (widget_page.py)
                        added += filter(None, [widgets.restage(number, output, alt, note)])
        cell.get("outputs", []).extend(added)
    staged.predictions[page] = stage_predictions(nb["cells"], page, root)  # kernel-free checks
    with_run_note(nb["cells"], run_note(page, *notebook_time(nb, page)), page)
    write(out / page, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    copy_images(images, root, out)
    staged.sources[page] = page


def stage_markdown(page: str, root: Path, out: Path, site_pages: set[str], staged: Staged) -> None:
    images: set[str] = set()
    text = rewrite_links((root / page).read_text(encoding="utf-8"), page, root, site_pages, images)
    write(out / page, text)
    copy_images(images, root, out)
    staged.sources[page] = page


def stage_home(root: Path, out: Path, site_pages: set[str], staged: Staged, toc: str) -> None:
    """index.md: the README's front matter, then the site's table of contents."""
    text, cut = home_front_matter((root / "README.md").read_text(encoding="utf-8"))
    # the README's pointer to the website is no news on the website (an empty line keeps the numbering)
    text = READ_AS_WEBSITE.sub("", text)
    text = link_notebook_names(text, site_pages)
    images: set[str] = set()
    text = rewrite_links(text, "README.md", root, site_pages, images, "README.md" if cut else None)
    if repo_url() is None:
        text = text.rstrip("\n") + "\n\n" + LOCAL_NOTE
    write(out / "index.md", text.rstrip("\n") + "\n\n" + toc)
    copy_images(images, root, out)
    staged.sources["index.md"] = "README.md"


NOTEBOOK_CELL = re.compile(r"^\| `(\d\d\w*\.ipynb)` \|", re.MULTILINE)


def link_notebook_names(text: str, site_pages: set[str]) -> str:
    """The learning path's first column names each notebook as code; on the site each name is a
    link to its page, so a reader on a phone moves by the table and not only by search. The link
    reads as words ("01b chunked running state"), which wrap at a space on a phone."""
    def link(match: re.Match) -> str:
        page = f"notebooks/{match[1]}"
        words = match[1].removesuffix(".ipynb").replace("_", " ")
        return f"| [{words}]({page}) |" if page in site_pages else match[0]
    return NOTEBOOK_CELL.sub(link, text)


LOCAL_NOTE = (":::{note}\nThis is a **local build** of the site: it was built without a repository address "
              f"({' or '.join(REPO_VARIABLES)}), so it links to no file on the code host; a file named on a page "
              "is in your clone.\n:::\n")


def copy_images(images: set[str], root: Path, out: Path) -> None:
    for image in images:
        (out / image).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / image, out / image)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
