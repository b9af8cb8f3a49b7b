"""The tables of notebooks 07, 07b and 07c and the figures of 07b and 07c: each draws from the committed
result files, and each table holds the numbers of the files it reads (recomputed here by hand). Notebook
07's figures draw from the rendered reports: tests/course/test_plots_reproduction.py."""

from __future__ import annotations

import json
import statistics

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from tl_research import results as research
from tl_research.views import plots_breaks, plots_seeds

RESULTS = research.results_dir()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_provenance_has_a_row_per_file_and_no_local_path():
    files = sorted(RESULTS.glob("lm*.json"))[:3]
    table = research.provenance_markdown(files).splitlines()
    assert len(table) == 2 + len(research.provenance(files))  # a merged file: one row per source
    assert all(any(f"`{f.name}" in line for line in table[2:]) for f in files)
    assert not any("(/" in line for line in research.data_sources(files))


def test_tokenized_in_bits_divides_by_ln2_and_the_gaps_are_to_the_transformer():
    rows, paper = research.tokenized_in_bits()
    nats = {r.label: r.mean for r in research.TABLES["tokenized"].rows()}
    for r in rows:
        assert r.mean == pytest.approx(nats[r.label] / 0.6931471805599453)
    # only the values change unit: seeds, steps and seconds stay in their own fields
    assert [(r.seeds, r.steps, r.seconds) for r in rows] == [(r.seeds, r.steps, r.seconds)
                                                          for r in research.TABLES["tokenized"].rows()]
    gaps = research.tokenized_gaps_markdown(rows, paper)
    tf = next(r.mean for r in rows if r.label == "transformer")
    other = next(r for r in rows if r.label != "transformer")
    assert f"| `{other.label}` | {other.mean - tf:+.3f} |" in gaps


def test_bpb_by_steps_is_sorted_by_steps_and_the_lead_lines_name_each_table():
    curves = research.bpb_by_steps(("transformer", "triple_latent"))
    assert set(curves) == {"transformer", "triple_latent"}
    for pts in curves.values():
        assert [p[0] for p in pts] == sorted(p[0] for p in pts) and len(pts) == 3
    lines = research.lead_lines()
    assert [line.split()[0] for line in lines] == ["lm_matched_width", "lm_time_matched", "lm_2000_steps"]


def test_seeds_cell_is_mean_std_and_every_seed():
    assert research.seeds_cell({}) == "not run"
    assert research.seeds_cell({0: 0.1, 1: 0.2}) == f"15.0 ± {statistics.stdev([10, 20]):.1f} (10.0, 20.0)"
    assert research.seeds_cell({3: 0.5}) == "50.0 ± 0.0 (50.0)"


def test_recall_reports_hold_the_files_numbers():
    reports = research.recall_file_reports()
    assert [kind for kind, _ in reports] == ["text", "markdown", "markdown", "markdown"]
    assert "best constant guess" in reports[0][1]
    accs = research.seeds_at("recall_gated_hybrid_paper.json", "gated_hybrid_paper", 500)
    assert len(accs) == 5
    table = research.experiments_markdown()
    assert research.seeds_cell(accs) in table
    assert len(table.splitlines()) == 2 + len(research.diagnosis_reports.paper_experiments())
    per_seed, lines = research.per_seed_recall()
    reference = json.loads((RESULTS / "recall_reference_code.json").read_text(encoding="utf-8"))["runs"]
    assert len(per_seed) == 4 and len(lines) == 3
    assert sorted(list(per_seed.values())[1]) == sorted(r["eval_accuracy"] for r in reference)


def test_init_and_read_tables_have_a_row_per_model_and_seed():
    diag = json.loads((RESULTS / "recall_init_diagnosis.json").read_text(encoding="utf-8"))["mean_over_seeds"]
    assert len(research.init_diagnosis_markdown().splitlines()) == 2 + len(diag)
    for table in (research.overwrite_init_markdown(), research.alias_init_markdown(), research.alias_read_markdown()):
        lines = table.splitlines()
        assert len(lines) > 2 and all(line.startswith("|") and line.endswith("|") for line in lines)


def test_the_diagnosis_figures_draw():
    unigram = 4.6
    assert len(plots_seeds.per_seed_recall(research.per_seed_recall()[0]).axes[0].get_xticklabels()) == 4
    assert len(plots_seeds.paper_recall_experiments(research.recall_experiment_panels()).axes) == 3
    history = {"a": [5.0, 4.0, 3.0], "b": [5.0, 3.5, 2.5]}
    fig = plots_seeds.logit_scale(history, {"a": [4.0, 3.0], "b": [3.5, 3.2]}, [1.0, 2.0], unigram, 3)
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="one BPB per factor"):
        plots_seeds.logit_scale(history, {"a": [4.0]}, [1.0, 2.0], unigram, 3)


def test_the_break_figures_draw_and_return_none_without_rows():
    rows = research.break_rows("overwrite")
    assert plots_breaks.overwrite_answers(rows, research.break_chance("overwrite")) is not None
    alias = research.break_rows("alias")
    pairs = plots_breaks.alias_pairs(alias)
    assert pairs and all("alias" in pair for pair in pairs.values())
    assert plots_breaks.alias_accuracy(alias, research.break_chance("alias")) is not None
    assert plots_breaks.alias_training_curves(research.break_curves("alias")) is not None
    distance = research.break_rows("distance")
    assert plots_breaks.distance_accuracy(distance, {}, [1024, 2048, 4096]) is not None
    induction = research.induction_rows()
    assert len(plots_breaks.induction_ratios(induction).axes) == 2
    assert plots_breaks.induction_curves(induction, span_len=64) is not None
    for empty in (plots_breaks.overwrite_answers([], {}), plots_breaks.alias_accuracy([], {}),
                  plots_breaks.alias_training_curves({}), plots_breaks.distance_accuracy([], {}, []),
                  plots_breaks.induction_ratios([]), plots_breaks.induction_curves([], 64)):
        assert empty is None


def test_tables_unigram_is_the_yardstick_notebook_07_prints():
    """research.tables_unigram on the real data gives the number 07's committed output prints."""
    import os
    from pathlib import Path

    if not os.environ.get("TL_MINIMAL_DATA"):
        pytest.skip("needs the real WikiText-2 copy (TL_MINIMAL_DATA); CI sets it")
    from tl_minimal.training.protocols import protocol

    ipynb = Path(__file__).resolve().parents[2] / "notebooks" / "07_paper_reproduction.ipynb"
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                      for o in c.get("outputs", []))
    value = research.tables_unigram(protocol("lm"))
    assert f"unigram baseline on the tables' validation chunks: {value:.3f} BPB" in printed
