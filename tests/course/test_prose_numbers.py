"""Every number in the prose is true: one rule, one test (issue 51, item 5).

The rule (:mod:`tl_research.prose_numbers` says it in full): a measured number in the prose of a
notebook or a write-up is printed by a cell of that notebook (a write-up: in one of its tables), is a
value of a result file its paragraph names or a summary of that file's runs over seeds (mean, std,
the Clopper-Pearson interval of the seeds that recall, a paired difference and its interval), is the
paper's in a sentence that says "paper", or is worked out in its sentence (``1 - 5/12 = 58.3%``).
A setting is written as code or maths (```lr = 3e-3```, ``$\\gamma = 0.99$``).

A new sentence whose number fails: print the number from a cell, name the result file it comes from
in its paragraph, or write the arithmetic that gives it. There is no allow-list.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tl_research import prose_numbers as pn

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.py"))
DOCUMENTS = [ROOT / "README.md", ROOT / "docs" / "paper.md", ROOT / "data" / "results" / "RECALL_STUDY.md"]
ABOUT_THE_PAPER = {"paper.md"}  # notes on the paper: any sentence may quote the paper's numbers

def findings(path: Path) -> list[pn.Finding]:
    return pn.check(path, about_paper=path.name in ABOUT_THE_PAPER)


@pytest.mark.parametrize("path", NOTEBOOKS + DOCUMENTS, ids=lambda p: p.name)
def test_every_number_in_the_prose_is_matched(path):
    found = findings(path)
    assert not found, "numbers in the prose that no output, named result or arithmetic gives:\n" + "\n".join(
        map(str, found))


# --- the checker itself: a false number is caught -------------------------------------------------

@pytest.mark.parametrize("sentence, number", [
    ("The paper's winner scores 4.806.", None),  # the paper's number, attributed to it
    ("Our winner scores 4.806.", "4.806"),  # the same number, not attributed: not ours
    ("A constant guess scores 1/16 = 6.25%.", None),  # worked out in the sentence
    ("An earlier value 1 - 5/12 = 58.3% of the time, 8/126 (6.3%), ln 8 = 2.08.", None),
    ("The gap is 2.939 - 2.516 = 0.43 BPB.", "0.43"),  # arithmetic that is wrong
    ("Seeds stop at 12.5-14.4% here.", "14.4%"),  # both ends of a range are checked
    ("See section 3.2, arXiv:2606.05175, Python >= 3.10, torch 2.13.0 and lr 3e-4.", None),  # references
    ("Notebook 03, sections 3.1 and 3.2, or sections 2.1, 2.2, 4.5.", None),  # a list of sections
    ("Sections 3.1 and 5.5 dropped 4.5%.", "4.5%"),  # a list ends at its last section number
    ("Settings: `betas=(0.9, 0.999)` and $\\gamma = 0.99$.", None),  # code and maths are settings
])
def test_rule_on_single_sentences(sentence, number):
    found = pn.check_blocks("x", [(sentence, {0.125, 13.44, 2.939, 2.516})])
    assert [f.number.text for f in found] == ([number] if number else [])


def write_runs(folder: Path, name: str, accuracies: dict) -> None:
    runs = [{"variant": v, "seed": s, "value": a} for v, seeds in accuracies.items() for s, a in enumerate(seeds)]
    (folder / name).write_text(json.dumps({"runs": runs}), encoding="utf-8")


def test_a_named_file_gives_its_summaries_over_seeds_and_a_new_seed_is_caught(tmp_path):
    """What the fixed wordings held (issue 32): the count that recalls, its interval, a paired difference."""
    write_runs(tmp_path, "arm.json", {"ours": [0.1] * 11, "theirs": [0.2, 0.25, 0.31] + [0.2] * 8})
    text = ("Ours won 0 of 11 seeds (95% Clopper-Pearson interval [0.00, 0.28]) in `arm.json`; theirs minus "
            "ours is 0.115 on average, 95% interval [0.091, 0.138]; ours scores 10.0%.")
    values = pn.cited_results(text, tmp_path)
    assert not pn.check_blocks("x", [(text, values)])
    write_runs(tmp_path, "arm.json", {"ours": [0.1] * 12, "theirs": [0.2, 0.25, 0.31] + [0.2] * 9})  # one more seed
    pn.file_values.cache_clear()
    stale = {f.number.text for f in pn.check_blocks("x", [(text, pn.cited_results(text, tmp_path))])}
    assert {"0.28", "0.115", "0.091", "0.138"} <= stale


@pytest.mark.parametrize("name, share", [("07c_recall_breaks.py", 0.7), ("paper.md", 0.6), ("RECALL_STUDY.md", 0.35)])
def test_a_changed_number_in_a_real_text_is_caught(name, share):
    """Numbers of three or more digits, each moved by 7 in its last digit: most are caught (any wording).
    A moved number that lands on another value its paragraph rests on passes: the share measures that."""
    path = next(p for p in NOTEBOOKS + DOCUMENTS if p.name == name)
    paragraphs = pn.blocks(path)
    picked = [(i, n) for i, (markdown, _) in enumerate(paragraphs) for n in pn.prose_numbers(markdown)
              if n.worked is None and len(n.text.strip("%").replace(".", "").lstrip("0")) >= 3
              and markdown.count(n.text) == 1]
    assert len(picked) >= 10, f"{name}: too few numbers to test the checker on"
    caught = 0
    for i, n in picked:
        wrong = f"{n.value + 7 * 10 ** -n.decimals:.{n.decimals}f}" + ("%" if n.percent else "")
        markdown, values = paragraphs[i]
        changed = [(markdown.replace(n.text, wrong), values)]
        caught += wrong in [f.number.text for f in pn.check_blocks(name, changed, path.name in ABOUT_THE_PAPER)]
    assert caught >= share * len(picked), f"{name}: {caught} of {len(picked)} changed numbers caught"
