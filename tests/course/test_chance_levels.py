"""Chance next to every recall table: each caption states the chance level, and it is the library's.

A recall accuracy means nothing without the score of a guess: 6.0% is chance on MQAR with 16 value
ids and far below it with 8. Chance here is a constant guess, one over the number of value ids the
answer is drawn from: ``1 / layout.n_values``, where the layout is the task's
(:func:`tl_minimal.data.recall.layout_for` of the larger of its pairs and key ids; the break tasks of 07c have
their own layouts in ``tl_research.tasks.recall_breaks``).

Every recall table or figure of the required notebooks 06-07 and of ``RECALL_STUDY.md`` is listed
below with the task it scores (read from its result files' protocols where it has them). Its caption
(the Markdown cell before or after the cell that shows it; in the document, the paragraph before
the table) must say "chance" and write each of its tasks' chance levels as ``1/N = X%`` (or
``1/N (X%)``), with N and X the library's. A notebook cell that calls a recall table's function and
is not listed here fails the test, and so does a table of the document with percentages that is
neither listed nor named as no accuracy table.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from tl_minimal.data.recall import RecallLayout, layout_for
from tl_minimal.training.protocols import protocol
from tl_research.results.recall_tables import RECALL_FILES
from tl_research.tasks import recall_breaks

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
STUDY = RESULTS / "RECALL_STUDY.md"


def layouts_of_files(*patterns: str) -> list[RecallLayout]:
    """The task layout of every result file matching the patterns (a gathered table: its sources' too)."""
    out = []
    for pattern in patterns:
        paths = sorted(RESULTS.glob(pattern)) or sorted(RESULTS.rglob(pattern))  # a row's source: anywhere
        assert paths, f"no result file {pattern}"
        for path in paths:
            data = json.loads(path.read_text(encoding="utf-8"))
            if "rows" in data and "runs" not in data:  # a gathered table: the files its rows came from
                out += layouts_of_files(*sorted({s for row in data["rows"] for s in row.get("sources", [])}))
            for p in data.get("protocols", {}).values() or [data.get("protocol", {})]:
                if p.get("n_pairs") or p.get("key_ids"):  # a file's protocol may name only the ids (state size)
                    out.append(layout_for(max(p.get("n_pairs") or 1, p.get("key_ids") or 0)))
    return out


def paper_recall() -> list[RecallLayout]:
    return [protocol("recall").layout()]


GATE_START = "recall_gate_start.json"
# (notebook, a string of the code cell that shows the table or figure, the layouts of its tasks)
NOTEBOOK_TABLES = [
    ("06a_kv_recall", "plots_retrieval.recall_training(", paper_recall),
    ("06a_kv_recall", 'recall_start.gate_start_rows(["triple_latent"])', lambda: layouts_of_files(GATE_START)),
    ("06b_family", 'report("calibrated_family")', lambda: layouts_of_files("recall_calibrated_family.json")),
    ("06b_family", "recall_start.ladder_rows()", lambda: layouts_of_files("recall_ladder.json")),
    ("07_paper_reproduction", 'report("recall_files")', lambda: layouts_of_files(*RECALL_FILES)),
    ("07_paper_reproduction", 'report("mqar")', lambda: layouts_of_files("mqar*.json")),
    ("07_paper_reproduction", '["triple_latent", "triple_hybrid",', lambda: layouts_of_files(GATE_START)),
    ("07_paper_reproduction", 'report("state_size")', lambda: layouts_of_files("recall_state_size.json")),
]
# the calls that show a recall accuracy table or figure in a notebook: each use must be listed above
RECALL_CALLS = ["recall_training(", "recall_start.markdown(", 'report("calibrated_family")', 'report("recall_files")',
                'report("mqar")', "mqar_accuracy(", 'report("state_size")', "recall_vs_state_bytes(", "ladder_figure("]

# RECALL_STUDY.md: (a string of the paragraph before the table, the layouts of its tasks)
STUDY_TABLES = [
    ("`--seeds 3 4`, then `study merge`", paper_recall),
    ("500 --seeds N` gives", paper_recall),
    ("triple_hybrid, S = 8 for the gated rows", paper_recall),
    ("every seed beside the paper's runs", paper_recall),
    ("`results.mqar_markdown(results.mqar_rows())`", lambda: layouts_of_files("mqar*.json")),
    ("`results.break_markdown(results.break_rows(\"overwrite\"))`", lambda: [recall_breaks.OVERWRITE_LAYOUT]),
    ("`results.break_markdown(results.break_rows(\"alias\"))`", lambda: [recall_breaks.ALIAS_LAYOUT]),
    ("leaves ln 8 early in any case", lambda: [recall_breaks.ALIAS_LAYOUT]),
    ("- **Two obstacles, two changes.**", lambda: [recall_breaks.ALIAS_LAYOUT]),
    ("`breaks.left_out_tokens`", lambda: [recall_breaks.ALIAS_LAYOUT]),
    ("`results.break_markdown(results.break_rows(\"distance\"))`", lambda: [layout_for(4)]),
    ("seeds both models have, with its 95% t interval", lambda: layouts_of_files("recall_calibrated.json")),
    ("**The long-decay arm**", lambda: layouts_of_files("recall_calibrated_decay4.json")),
    ("**MQAR with 8 pairs**", lambda: layouts_of_files("mqar_calibrated_pairs8.json")),
    ("**MQAR with 16 pairs**", lambda: layouts_of_files("mqar_calibrated_pairs16.json")),
    ("The bytes are measured from the state each model returns", lambda: layouts_of_files("recall_state_size.json")),
    ("the interval is Clopper-Pearson's 95% interval of that rate", lambda: layouts_of_files("recall_gate_start.json")),
    ("One change per rung, in the order of issue 50", lambda: layouts_of_files("recall_ladder.json")),
    ("the table says how many seeds\neach rung ran:", lambda: layouts_of_files("mqar8_*.json")),  # its MQAR-8 runs
    ("**Seed 0 at each learning rate**", lambda: layouts_of_files("recall_gate_start.json")),
    ("**The long-start rows on MQAR with 8 pairs**", lambda: layouts_of_files("mqar8_*.json")),
    ("**The ladder's rungs at each learning rate**", lambda: layouts_of_files("recall_ladder.json")),
]
# tables of the document with percentages that are no accuracy: where the read puts its weight, files
NOT_ACCURACY = ["Means over the 5 seeds:", "--seq-len T --seeds 0 1 2 --eval-at", "Where the read at the question puts",
                "ranks among the 126 memory entries", "**80 steps**", "**2,000 steps**",
                "**The key-value read switched off**", "pairs' embeddings over its norm"]

FRACTION = re.compile(r"1/(\d+)\s*(?:=\s*|\(\s*)(\d+(?:\.\d+)?)\s*%")


def chance_problems(caption: str, layouts: list[RecallLayout]) -> list[str]:
    """What the caption lacks: the word, a level of one of its tasks, or a level written wrong."""
    wanted = sorted({lay.n_values for lay in layouts})
    if not re.search(r"\bchance\b", caption, re.IGNORECASE):
        return [f"no 'chance' in the caption (wanted {', '.join(f'1/{n}' for n in wanted)})"]
    written = {int(n): float(pct) for n, pct in FRACTION.findall(caption)}
    out = [f"no '1/{n} = {100 / n:g}%' (the chance of its task, layout n_values = {n})"
           for n in wanted if n not in written]
    out += [f"1/{n} = {pct}% is written, but 1/{n} is {100 / n:.4g}%"
            for n, pct in written.items() if abs(pct - 100 / n) > 0.5 * 10 ** -_decimals(pct)]
    return out


def _decimals(pct: float) -> int:
    text = f"{pct}".rstrip("0")
    return len(text.split(".")[1]) if "." in text and not text.endswith(".") else 0


def cells(name: str) -> list[tuple[str, str]]:
    """(kind, text) of each cell of a jupytext percent notebook; Markdown with its '# ' removed."""
    out = []
    for chunk in re.split(r"^# %%", (ROOT / "notebooks" / f"{name}.py").read_text(encoding="utf-8"), flags=re.M)[1:]:
        head, _, body = chunk.partition("\n")
        if "[markdown]" in head:
            out.append(("markdown", "\n".join(re.sub(r"^#\s?", "", ln) for ln in body.splitlines())))
        else:
            out.append(("code", body))
    return out


@pytest.mark.parametrize("name, marker, tasks", NOTEBOOK_TABLES, ids=[f"{n}:{m[:30]}" for n, m, _ in NOTEBOOK_TABLES])
def test_every_recall_table_of_a_notebook_states_the_libraries_chance(name, marker, tasks):
    nb = cells(name)
    found = [i for i, (kind, text) in enumerate(nb) if kind == "code" and marker in text]
    assert len(found) == 1, f"{name}: expected one code cell with {marker!r}, found {len(found)}"
    i = found[0]
    captions = [nb[j][1] for j in (i - 1, i + 1) if 0 <= j < len(nb) and nb[j][0] == "markdown"]
    problems = [chance_problems(c, tasks()) for c in captions] or [["no Markdown cell beside it"]]
    assert any(not p for p in problems), f"{name}, the cell with {marker!r}: {problems}"


@pytest.mark.parametrize("name", sorted({n for n, _, _ in NOTEBOOK_TABLES} | {"06_kv_gated_fusion"}))
def test_every_recall_table_of_a_notebook_is_listed(name):
    listed = [m for n, m, _ in NOTEBOOK_TABLES if n == name]
    unlisted = [text.strip().splitlines()[0] for kind, text in cells(name)
                if kind == "code" and any(c in text for c in RECALL_CALLS) and not any(m in text for m in listed)]
    assert not unlisted, f"{name}: recall tables not in NOTEBOOK_TABLES (add each with its task): {unlisted}"


def study_tables() -> list[tuple[str, str]]:
    """(the paragraph before, the table) of each Markdown table of RECALL_STUDY.md."""
    blocks = re.split(r"\n\s*\n", STUDY.read_text(encoding="utf-8"))
    out = []
    for before, block in itertools.pairwise(blocks):
        if block.lstrip().startswith("|"):
            out.append((before, block))
    return out


@pytest.mark.parametrize("marker, tasks", STUDY_TABLES, ids=[m[:40] for m, _ in STUDY_TABLES])
def test_every_recall_table_of_the_study_states_the_libraries_chance(marker, tasks):
    found = [before for before, _ in study_tables() if marker in before]
    assert len(found) == 1, f"RECALL_STUDY.md: expected one table after a paragraph with {marker!r}, found {len(found)}"
    problems = chance_problems(found[0], tasks())
    assert not problems, f"RECALL_STUDY.md, the table after {marker!r}: {problems}"


def test_every_table_of_the_study_with_percentages_is_listed():
    markers = [m for m, _ in STUDY_TABLES] + NOT_ACCURACY
    unlisted = [before[-120:] for before, table in study_tables()
                if "%" in table and not any(m in before for m in markers)]
    assert not unlisted, f"RECALL_STUDY.md: tables with a percentage, in neither list: {unlisted}"


def test_the_chance_levels_are_the_layouts():
    """The paper's task: 4 pairs, 8 value ids; MQAR-8 among 16 ids: 1/16; 32 pairs: 1/32."""
    assert paper_recall()[0].n_values == 8 and layout_for(16).n_values == 16 and layout_for(32).n_values == 32
    assert chance_problems("chance: 1/16 = 6.25%", [layout_for(16)]) == []
    assert chance_problems("chance: 1/16 = 6.3%", [layout_for(16)]) == []
    assert chance_problems("chance: 1/8 = 12.5%", [layout_for(16)])  # the wrong task's level
    assert chance_problems("chance: 1/16 = 12.5%", [layout_for(16)])  # the wrong percentage
    assert chance_problems("a constant guess: 1/16 = 6.25%", [layout_for(16)])  # the word is missing
