"""RECALL_STUDY.md's tables are the gathered result files, as the results code prints them (data, not prose:
the prose around them is held by tests/course/test_prose_numbers.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
STUDY = (RESULTS / "RECALL_STUDY.md").read_text(encoding="utf-8")


def test_the_calibrated_tables_are_the_gathered_files():
    """Section 12 prints recall_calibrated.json's table (and its arms') as calibrated_table makes them, at the
    budget the file's protocol has."""
    from tl_research.results.calibrated_table import budget, calibrated_markdown

    assert calibrated_markdown("recall_calibrated.json") in STUDY, (
        "RECALL_STUDY.md section 12: paste `python -m tl_research.results calibrated`'s table")
    p = json.loads((RESULTS / "recall_calibrated.json").read_text(encoding="utf-8"))["protocol"]
    assert (p["steps"], p["seq_len"], p["n_pairs"], p["n_queries"]) == (1000, 128, 4, 4)
    assert p["hide_answers"] and p["answer_at_key"] and p["model_config"]["init"] == "fan_in"
    assert budget("recall_calibrated.json").startswith("1,000 steps x 32 sequences of 128 tokens")
    for name in ("recall_calibrated_decay4.json", "mqar_calibrated_pairs8.json", "mqar_calibrated_pairs16.json"):
        if (RESULTS / name).exists():
            assert calibrated_markdown(name) in STUDY, f"RECALL_STUDY.md section 12: paste {name}'s table"


def test_the_state_size_table_is_the_gathered_file():
    from tl_research.studies.state_size import markdown

    result = json.loads((RESULTS / "recall_state_size.json").read_text(encoding="utf-8"))
    assert markdown(result) in STUDY, (
        "RECALL_STUDY.md section 12: paste `python -m tl_research.studies.state_size table`'s table")


def test_the_yardstick_rows_are_the_gathered_file():
    """Section 13's table: each row's seeds and mean as lm_yardstick.json has them."""
    data = json.loads((RESULTS / "lm_yardstick.json").read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", STUDY)
    for r in data["rows"]:
        assert re.search(rf"\| `{r['variant']}`[^|]*\| 3e-3 \| {len(r['by_seed'])} \| {r['mean']:.3f} \|", text), r


def test_section_13s_tables_are_the_gathered_files():
    """Section 13 prints the gate-start study's and the ladder's tables (accuracy per seed, the rate that
    recall, seed 0 at each lr, MQAR with 8 pairs) as ``gate_start tables`` makes them from the two files."""
    from tl_research.studies.gate_start import tables

    gate, ladder = (json.loads((RESULTS / n).read_text(encoding="utf-8"))
                    for n in ("recall_gate_start.json", "recall_ladder.json"))
    for name, table in tables(gate, ladder).items():
        assert table in STUDY, f"RECALL_STUDY.md section 13: paste `gate_start tables`'s {name!r} table"
