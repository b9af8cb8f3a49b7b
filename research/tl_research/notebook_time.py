"""How long a notebook takes a student: a reading measure plus the measured run time.

Every notebook opens with a "**Time.**" line, and the learning paths (notebook 00, section 5, and
the README) give a time per notebook. Those numbers are written by this module, never by hand, from
two sources:

- **reading**, counted from the committed ``.ipynb``: prose at 100 words a minute, code at 4
  non-blank, non-comment lines a minute, half a minute per figure, and 4 seconds for every number in
  the prose (the rates of a careful first read of maths prose and new tensor code, issue 35; the
  numbers, issue 52: a student's honest sittings, 06b's and 07's dense results prose included, fit
  about 4 s a number on top of the words);
- **running**, measured: the wall time of a top-to-bottom run in default mode, recorded by
  ``python -m tl_research.notebook_cost`` in ``docs/notebook_cost.json`` (with CPU time and peak
  memory, and the machine it ran on).

A **number in the prose** (``numbers``, :func:`prose_numbers_in`) is a run of digits, with its decimals,
thousands commas and a ``%``, in counted Markdown outside inline code, maths and link targets: "2.469",
"-0.063", "[-0.079, -0.047]" (two), "25%", "notebook 07" and "section 3" all count; ``lm_d60.json`` and
``$d = 64$`` do not.

Symbols: ``words`` (Markdown words), ``numbers``, ``code_lines``, ``figures`` (image outputs), ``reading_min``,
``run_s`` (``wall_s`` of the cost file), ``exact_min`` = reading + running, ``total_min`` = ``exact_min`` to
the nearest 5 minutes (what the Time lines print).

**Implementation notes are not counted.** An aside about float32 numerics, kernels, memory layouts or
device quirks, rather than the model's idea, sits in a collapsed Markdown block that opens with
``<details><summary>Implementation note: ...`` and ends with ``</details>`` (``IMPLEMENTATION_NOTE``;
JupyterLab and the site render it closed). Its words are not counted, and neither are the code lines
and figures of a code cell tagged ``implementation-note`` (``NOTE_TAG``: the code that belongs to such
a note; the site collapses it too). A reader who opens a note reads beyond the one sitting.

**One sitting.** A lesson notebook is at most ``ONE_SITTING_MIN`` = 60 minutes by this measure, unrounded
(``exact_min``: 61 minutes is over, though its Time line says "about 60"), and 00, the first sitting
of a new student, at most ``START_HERE_MIN`` = 45 (``LIMITS``). The
exceptions are the optional notebooks: 08 (speed) and any notebook whose first cell has a line
that starts with ``**Optional.**`` (say why it is optional on that line). ``--check`` fails, naming
each notebook and its minutes, when a lesson is over the limit and not in ``OVER_60``, the explicit
ratchet of lessons still to be split; ``tests/research/test_notebook_time.py`` holds the set of
lessons over the limit equal to ``OVER_60``, so the set must shrink when one is fixed.

An exercise's line keeps its own estimate of the work (writing code is not reading) and adds the
measured run time of its worked solution.

Usage, from a clone's root::

    python -m tl_research.notebook_time            # print the table
    python -m tl_research.notebook_time --check    # exit 1 when a Time line or learning path is stale
    python -m tl_research.notebook_time --write    # rewrite them (then: jupytext --sync notebooks/*.py)

``tests/research/test_notebook_time.py`` runs ``--check``: a notebook whose text grew must get a new line.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

WORDS_PER_MIN = 100
CODE_LINES_PER_MIN = 4
MIN_PER_FIGURE = 0.5
SECONDS_PER_NUMBER = 4  # issue 52: a number in the prose is read, compared and remembered
ONE_SITTING_MIN = 60  # every lesson notebook fits one sitting (tests/research/test_notebook_time.py)
START_HERE_MIN = 45  # 00, the first sitting (issue 52)
LIMITS = {"00_start_here": START_HERE_MIN}  # a lesson's own limit, where it is not ONE_SITTING_MIN
EXEMPT = {"08_speed"}  # optional by name; other optional notebooks say so in their first cell (OPTIONAL)
OPTIONAL = re.compile(r"^\s*(#\s*)?\*\*Optional\.\*\*", re.MULTILINE)
# issue 35: still to split. Lessons over ONE_SITTING_MIN today; --check tolerates exactly these, and the
# test fails when the set of lessons over the limit differs from it (a new one over, or one fixed).
# Empty since 00 (62.2 -> 58.7 min), 01 (61.3 -> 59.1) and 02 (61.2 -> 59.2) moved set-up checks and printing
# to tl_minimal.course.setup and the views; 06 and 07 fit since their splits into 06a, 07b and 07c.
OVER_60: set[str] = set()
COST_FILE = Path("docs/notebook_cost.json")
KEEP = "\x00"  # a space that a line must not break at ("20 s")
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg")
# "# **Time.** ..." up to the paragraph's end: the next empty "#" line or the end of the comment block
TIME_PARAGRAPH = re.compile(r"^# \*\*Time[.:]\*\*.*?(?=^#\s*$|^[^#]|\Z)", re.MULTILINE | re.DOTALL)
TIME_SENTENCE = re.compile(r"\*\*Time[.:]\*\*.*?(?=\n\s*\n|\Z)", re.DOTALL)  # the same, in a Markdown cell
EXERCISE_ESTIMATE = re.compile(r"\*\*Time:?\*\*:? about (\d+) minutes")
# a collapsed aside: "<details><summary>Implementation note: ...</summary>" ... "</details>", not counted
IMPLEMENTATION_NOTE = re.compile(r"<details>\s*<summary>\s*Implementation note\b.*?</details>", re.DOTALL)
NOTE_TAG = "implementation-note"  # a code cell of such a note: its lines and figures are not counted either
# what is not prose for the number count: inline code, display and inline maths, a link's target, an HTML tag
NOT_PROSE = re.compile(r"`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$|\]\([^)\s]*\)|<[^>\n]+>", re.DOTALL)
PROSE_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def prose_numbers_in(markdown: str) -> int:
    """How many numbers a reader meets in this Markdown ("2.469", "[-0.079, -0.047]" is two, "25%" one)."""
    return len(PROSE_NUMBER.findall(NOT_PROSE.sub(" ", markdown)))


def reading(ipynb: Path) -> dict:
    """Words, numbers, code lines and figures of a committed notebook (implementation notes left out), and the
    minutes they take to study."""
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    words = numbers = code_lines = figures = 0
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":  # neither the Time line itself nor an implementation note counts
            prose = IMPLEMENTATION_NOTE.sub("", TIME_SENTENCE.sub("", text))
            words += len(prose.split())
            numbers += prose_numbers_in(prose)
        elif cell["cell_type"] == "code" and NOTE_TAG not in cell.get("metadata", {}).get("tags", []):
            code_lines += sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#"))
            figures += sum(1 for out in cell.get("outputs", []) if any(t in out.get("data", {}) for t in IMAGE_TYPES))
    # minutes = words / 100 + numbers * 4 / 60 + code lines / 4 + figures / 2
    minutes = (words / WORDS_PER_MIN + numbers * SECONDS_PER_NUMBER / 60 + code_lines / CODE_LINES_PER_MIN
               + figures * MIN_PER_FIGURE)
    return {"words": words, "numbers": numbers, "code_lines": code_lines, "figures": figures,
            "reading_min": round(minutes, 1)}


def is_optional(ipynb: Path) -> bool:
    """08 by name, or a first cell with a line that opens "**Optional.**": exempt from the one-sitting limit."""
    if ipynb.stem in EXEMPT:
        return True
    cells = json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
    return bool(cells) and OPTIONAL.search("".join(cells[0]["source"])) is not None


def load_costs(root: Path) -> dict:
    """The measured runs, {notebook path: cost}; a clear error when the file is missing."""
    path = root / COST_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path}: no measured run times; make them with "
                                "`python -m tl_research.notebook_cost notebooks`")
    return json.loads(path.read_text(encoding="utf-8"))["notebooks"]


def cost_of(costs: dict, ipynb: str) -> dict:
    if ipynb not in costs:
        raise KeyError(f"{ipynb}: not in {COST_FILE}; measure it with `python -m "
                       f"tl_research.notebook_cost {ipynb}`")
    return costs[ipynb]


def round_5(minutes: float) -> int:
    """To the nearest 5 minutes, at least 5: 'about 60 minutes' for 58-62."""
    return 5 * max(1, math.floor(minutes / 5 + 0.5))


def run_phrase(cost: dict) -> str:
    """'62 s (CPU 30 s, peak 716 MiB)' from a cost record."""
    peak = "" if cost.get("peak_mb") is None else f", peak {cost['peak_mb']}{KEEP}MiB"
    return f"{cost['wall_s']:.0f}{KEEP}s (CPU {cost['cpu_s']:.0f}{KEEP}s{peak})"


def comment(sentence: str) -> str:
    """The sentence as '# '-comment lines of at most 100 characters (a jupytext Markdown paragraph)."""
    return "".join(f"# {ln}\n".replace(KEEP, " ") for ln in textwrap.wrap(sentence, 98))


def notebook_times(root: Path) -> list[dict]:
    """One row per concept notebook (NN_*.ipynb) and per exercise, with its measure and its Time line."""
    costs = load_costs(root)
    rows = []
    for ipynb in sorted((root / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        rel = ipynb.relative_to(root).as_posix()
        r, cost = reading(ipynb), cost_of(costs, rel)
        total = round_5(r["reading_min"] + cost["wall_s"] / 60)
        # minutes only (issue 51): a sentence edit moves a word count, rarely the minutes a reader needs
        line = comment(f"**Time.** About {total} minutes: reading at the course's pace (notebook 00, section 5) "
                       f"and a run of every cell in default mode, measured at {run_phrase(cost)} on a 2-core CPU "
                       f"(`docs/notebook_cost.json`).")
        rows.append({"name": ipynb.stem, "py": ipynb.with_suffix(".py"), **r, "run_s": cost["wall_s"],
                     "optional": is_optional(ipynb), "exact_min": round(r["reading_min"] + cost["wall_s"] / 60, 1),
                     "total_min": total, "line": line, "short": f"{total} min (runs in {cost['wall_s']:.0f} s)"})
    for py in sorted((root / "notebooks" / "exercises").glob("[0-9][0-9]_*.py")):
        solution = f"notebooks/exercises/solutions/{py.stem}_solutions.ipynb"
        cost = cost_of(costs, solution)
        found = EXERCISE_ESTIMATE.search(py.read_text(encoding="utf-8"))
        if found is None:
            raise ValueError(f"{py}: expected a '**Time:** about N minutes' estimate of the exercise's work")
        line = comment(f"**Time:** about {found.group(1)} minutes of work (our estimate); the worked solution runs "
                       f"top to bottom in {run_phrase(cost)} on a 2-core CPU (`docs/notebook_cost.json`).") + "#"
        rows.append({"name": f"exercises/{py.stem}", "py": py, "run_s": cost["wall_s"], "line": line,
                     "solution_py": root / solution.replace(".ipynb", ".py")})
    return rows


def _replace_time(text: str, line: str, where: Path) -> str:
    found = list(TIME_PARAGRAPH.finditer(text))
    if len(found) != 1:
        raise ValueError(f"{where}: expected one '# **Time.**' paragraph, found {len(found)}")
    return text[:found[0].start()] + line.rstrip("\n") + "\n" + text[found[0].end():]


def _exercise_paragraph(text: str, line: str, where: Path) -> str:
    """An exercise's Time sentence opens a paragraph that goes on with **Assumes:** - keep the rest."""
    found = re.search(r"^# \*\*Time:\*\*.*?(?= \*\*Assumes:\*\*)", text, re.MULTILINE | re.DOTALL)
    if found is None:
        raise ValueError(f"{where}: expected '# **Time:** ... **Assumes:**' in the exercise's opening")
    return text[:found.start()] + line + text[found.end():]


def _replace_table_cells(text: str, rows: list[dict], pattern: str, where: Path) -> str:
    """Set the last cell of each learning-path row (found by ``pattern`` with the notebook name)."""
    for row in rows:
        if "total_min" not in row:
            continue
        rx = re.compile(pattern.format(name=re.escape(row["name"])), re.MULTILINE)
        if len(rx.findall(text)) != 1:
            raise ValueError(f"{where}: expected one learning-path row for {row['name']}")
        text = rx.sub(lambda m, short=row["short"]: m.group(1) + short + " |", text)
    return text


def expected_files(root: Path) -> dict[Path, str]:
    """Every file that quotes a notebook's time, with the text it should have."""
    rows = notebook_times(root)
    out = {}
    for row in rows:
        paths = [row["py"]] + ([row["solution_py"]] if "solution_py" in row else [])
        for py in paths:
            text = py.read_text(encoding="utf-8")
            out[py] = (_exercise_paragraph if "solution_py" in row else _replace_time)(text, row["line"], py)
    start = root / "notebooks" / "00_start_here.py"
    out[start] = _replace_table_cells(out[start], rows, r"^(# \| `{name}` \|.*\| )[^|]*\|$", start)
    readme = root / "README.md"
    out[readme] = _replace_table_cells(readme.read_text(encoding="utf-8"), rows,
                                       r"^(\| `{name}\.ipynb` \|.*\| )[^|]*\|$", readme)
    return out


def over_limit(rows: list[dict]) -> dict[str, float]:
    """{lesson: minutes} for every lesson notebook (not optional) over its limit (LIMITS, else ONE_SITTING_MIN),
    unrounded."""
    minutes = {r["name"]: r.get("exact_min", r.get("total_min"))
               for r in rows if "total_min" in r and not r["optional"]}
    return {name: m for name, m in minutes.items() if m > LIMITS.get(name, ONE_SITTING_MIN)}


def sitting_problems(rows: list[dict]) -> list[str]:
    """What breaks the one-sitting rule: a lesson over the limit not in OVER_60, or OVER_60 naming one that fits."""
    over = over_limit(rows)
    minutes = {r["name"]: r.get("exact_min", r.get("total_min")) for r in rows}
    out = [f"over one sitting: {name} is {m} min (limit {LIMITS.get(name, ONE_SITTING_MIN)}); cut numbers from its "
           "prose, move tables to a companion, split it or move code to the views"
           for name, m in sorted(over.items()) if name not in OVER_60]
    out += [f"OVER_60 is stale: {name} is {minutes.get(name, 'not a notebook')} min now; remove it from "
            "OVER_60 in research/tl_research/notebook_time.py" for name in sorted(OVER_60 - set(over))]
    return out


def stale(root: Path) -> list[Path]:
    return [p for p, text in expected_files(root).items() if p.read_text(encoding="utf-8") != text]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tl_research.notebook_time",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="the clone's root")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 when a Time line or learning path is stale")
    group.add_argument("--write", action="store_true", help="rewrite them, then sync the .ipynb pairs")
    args = parser.parse_args(argv)
    rows = notebook_times(args.root)
    for row in rows:
        if "total_min" in row:
            print(f"{row['name']:24s} {row['words']:5d} words {row['numbers']:4d} numbers {row['code_lines']:4d} code "
                  f"lines {row['figures']:3d} figures -> {row['reading_min']:5.1f} min reading + "
                  f"{row['run_s']:6.1f} s run = "
                  f"{row['total_min']} min" + (" (optional)" if row["optional"] else "")
                  + (" (over one sitting: OVER_60, still to split)" if row["name"] in OVER_60 else ""))
        else:
            print(f"{row['name']:24s} solution runs in {row['run_s']:.1f} s")
    if args.check:
        bad = stale(args.root)
        for p in bad:
            print(f"stale: {p} (run `python -m tl_research.notebook_time --write`)")
        problems = sitting_problems(rows)
        for line in problems:
            print(line)
        return 1 if bad or problems else 0
    if args.write:
        for _ in range(3):  # 00's learning path is itself Markdown that is counted: write until nothing moves
            changed = [path for path, text in expected_files(args.root).items()
                       if path.read_text(encoding="utf-8") != text and path.write_text(text, encoding="utf-8")]
            for path in changed:
                print(f"wrote {path}")
                if path.suffix == ".py":  # its .ipynb pair gets the same text, outputs kept
                    subprocess.run([sys.executable, "-m", "jupytext", "--sync", str(path)], check=True,
                                   capture_output=True)
            if not changed:
                break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
