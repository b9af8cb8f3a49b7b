"""tl_research.results: loading results files, seed summaries, the table beside the paper (no training)."""

import json
from pathlib import Path

import pytest

from tl_research import results
from tl_research.protocols import PROTOCOLS


def _write(path, runs, overrides=None):
    data = {"task": "lm", "protocol": {"task": "lm", "steps": 80, "overrides": overrides or {},
                                       "data_source": "test", "environment": {"device": "cpu"}},
            "runs": runs}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _run(variant, seed, value, params=100):
    return {"variant": variant, "seed": seed, "params": params, "value": value, "steps": 80, "seconds": 1.0}


def test_summary_mean_std_and_labels(tmp_path):
    a = _write(tmp_path / "lm_a.json", [_run("transformer", 0, 5.0), _run("transformer", 1, 5.2),
                                        _run("triple_hybrid", 0, None)])
    b = _write(tmp_path / "lm_b.json", [_run("triple_hybrid", 0, 4.0, 90)], {"d_model": 56, "state_dim": 16})
    rows = results.summarize(results.load_runs([a, b]))
    assert [r.label for r in rows] == ["transformer", "triple_hybrid", "triple_hybrid (d=56, S=16)"]
    assert rows[0].mean == pytest.approx(5.1) and rows[0].std == pytest.approx(0.1414, abs=1e-4)
    assert rows[1].mean is None and rows[1].n == 1  # a diverged run stays visible
    table = results.markdown_table(rows, paper=results.PAPER["lm_matched_width"])
    assert "| `transformer` | 100 | 2 | 5.100 ± 0.141 | 5.124 |" in table
    assert "| `triple_hybrid (d=56, S=16)` | 90 | 1 | 4.000 | 4.766 |" in table


def test_glob_percent_and_errors(tmp_path):
    _write(tmp_path / "recall_x.json", [_run("gated_hybrid_paper", 0, 0.25)])
    rows = results.summarize(results.load_runs(tmp_path / "recall_*.json"))
    assert results.markdown_table(rows, results.PAPER["recall"], percent=True).endswith("| 25.0% | 41.9% |")
    with pytest.raises(FileNotFoundError, match=r"run_all\.sh"):
        results.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="not an experiments results file"):
        results.load(tmp_path / "bad.json")
    mixed = [_run("transformer", 0, 1.0, 10), _run("transformer", 1, 1.0, 11)]
    with pytest.raises(ValueError, match="different parameter counts"):
        results.summarize(results.load_runs(_write(tmp_path / "m.json", mixed)))


def test_provenance_names_device_and_source(tmp_path):
    path = _write(tmp_path / "lm_a.json", [_run("transformer", 0, 5.0)])
    (info,) = results.provenance(path)
    assert info["device"] == "cpu" and info["data_source"] == "test" and info["file"] == "lm_a.json"


def test_table_picks_variants_from_files_and_waits_for_missing(tmp_path):
    _write(tmp_path / "lm.json", [_run("transformer", 0, 5.0), _run("triple_latent", 0, 4.9)])
    table = results.TABLES["lm_param_matched"]
    assert [r["variant"] for r in table.runs(tmp_path)] == ["transformer"]  # only the baseline row
    _write(tmp_path / "lm_S12.json", [_run("triple_latent", 0, 4.8, 99)], {"state_dim": 12})
    # the paper's 5.114 is its d=60, S=16 row: our S=12 alternative gets no paper number
    assert "`triple_latent (S=12)` | 99 | 1 | 4.800 | - |" in table.markdown(tmp_path)
    _write(tmp_path / "lm_d60_S16.json", [_run("triple_latent", 0, 5.1, 98)], {"d_model": 60, "state_dim": 16})
    assert "`triple_latent (d=60, S=16)` | 98 | 1 | 5.100 | 5.114 |" in table.markdown(tmp_path)
    assert "no results yet" in results.TABLES["tokenized"].markdown(tmp_path)


def _mqar(path, variant, pairs, seq_len, accs_by_step, params=100):
    runs = [{"variant": variant, "seed": seed, "params": params, "value": accs[-1],
             "by_step": {str(s): {"accuracy": a} for s, a in zip(accs_by_step, accs, strict=True)}}
            for seed, accs in enumerate(zip(*accs_by_step.values(), strict=True))]
    data = {"task": "mqar", "protocol": {"task": "mqar", "n_pairs": pairs, "seq_len": seq_len},
            "constant_guess": {"expected": 1 / pairs}, "runs": runs}
    path.write_text(json.dumps(data), encoding="utf-8")


def test_mqar_rows_group_by_setting_and_step(tmp_path):
    _mqar(tmp_path / "mqar_a.json", "gated_hybrid_repaired", 32, 256, {100: [1.0, 0.9], 500: [1.0, 1.0]})
    _mqar(tmp_path / "mqar_b.json", "transformer", 32, 256, {100: [0.03, 0.04]})
    _mqar(tmp_path / "mqar_c.json", "transformer", 8, 128, {200: [0.12, 0.13, 0.14]})
    rows = results.mqar_rows(tmp_path / "mqar_*.json")
    assert [(r.variant, r.pairs, r.seq_len) for r in rows] == [
        ("transformer", 8, 128), ("transformer", 32, 256), ("gated_hybrid_repaired", 32, 256)]
    mean, std, low, n = rows[2].stats(100)
    assert (mean, low, n) == (pytest.approx(0.95), 0.9, 2) and std == pytest.approx(0.0707, abs=1e-4)
    table = results.mqar_markdown(rows)
    assert table.splitlines()[0] == ("| model | params | pairs | seq | chance | seeds "
                                     "| 100 steps | 200 steps | 500 steps |")
    assert ("| `gated_hybrid_repaired` | 100 | 32 | 256 | 3.1% | 2 | 95.0% ± 7.1 (90.0%) | - "
            "| 100.0% ± 0.0 (100.0%) |") in table
    assert "| `transformer` | 100 | 8 | 128 | 12.5% | 3 | - | 13.0% ± 1.0 (12.0%) | - |" in table


def test_committed_mqar_rows_sit_on_or_above_their_chance_line():
    rows = results.mqar_rows()
    assert rows, "no mqar_*.json in data/results"
    for r in rows:
        assert r.chance == pytest.approx(1 / max(r.pairs, 8))  # paper layout: 8 values; more pairs: one value each
        for step, accs in r.by_step.items():
            assert all(0.0 <= a <= 1.0 for a in accs) and len(accs) >= 3, (r, step)


def test_sweep_markdown_pivots_a_protocol_field(tmp_path):
    def lm(name, lr, runs):
        data = {"task": "lm", "protocol": {"task": "lm", "lr": lr, "overrides": {}}, "runs": runs}
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    lm("a.json", 3e-4, [_run("transformer", 0, 3.4), _run("triple_latent", 0, 2.7)])
    lm("b.json", 1e-3, [_run("transformer", 0, 2.9), _run("transformer", 1, 3.1), _run("triple_latent", 0, None)])
    table = results.sweep_markdown(results.load_runs(tmp_path / "*.json"), "lr")
    assert table.splitlines()[0] == "| model | lr=0.0003 | lr=0.001 |"
    assert "| `transformer` | 3.400 | 3.000 ± 0.141 (2) |" in table
    assert "| `triple_latent` | 2.700 | diverged |" in table


def _break_file(path, task, variant, rates_by_seed, overrides=None, params=100, **protocol):
    steps = PROTOCOLS[task].steps  # the command's default: no " (N steps)" in the label
    runs = [{"variant": variant, "seed": s, "params": params, "steps": steps, "chance": {"constant": 1 / 16},
             **rates} for s, rates in enumerate(rates_by_seed)]
    data = {"task": task, "protocol": {"task": task, "overrides": overrides or {}, **protocol}, "runs": runs}
    path.write_text(json.dumps(data), encoding="utf-8")


def test_break_rows_overwrite_rates_and_markdown(tmp_path):
    def r(a, e):
        return {"value": a, "earlier_rate": e, "other_rate": round(1 - a - e, 6)}

    _break_file(tmp_path / "overwrite_a.json", "overwrite", "gated_hybrid_repaired", [r(0.4, 0.6), r(0.5, 0.5)])
    _break_file(tmp_path / "overwrite_b.json", "overwrite", "gated_hybrid_repaired", [r(1.0, 0.0)],
                {"supersede": True}, 101)
    _break_file(tmp_path / "overwrite_c.json", "overwrite", "transformer", [r(0.06, 0.1)], params=90)
    _break_file(tmp_path / "overwrite_d.json", "overwrite", "transformer", [{**r(0.07, 0.1), "steps": 500}], params=90)
    (tmp_path / "overwrite_init.json").write_text(json.dumps(
        {"task": "overwrite", "protocol": {"task": "overwrite"}, "runs": [{"variant": "gated_hybrid_repaired",
                                                                           "latest": 0.4}]}),
        encoding="utf-8")
    rows = results.break_rows("overwrite", tmp_path / "overwrite_*.json")
    assert [row.label for row in rows] == ["transformer", "transformer (500 steps)", "gated_hybrid_repaired",
                                           "gated_hybrid_repaired (supersede=True)"]
    mean, std, low, n = rows[2].stats("earlier_rate")
    assert (mean, low, n) == (pytest.approx(0.55), 0.5, 2) and std == pytest.approx(0.0707, abs=1e-4)
    table = results.break_markdown(rows)
    assert table.splitlines()[0] == ("| model | params | seeds | steps | latest value (accuracy) | an earlier value "
                                     "| anything else |")
    assert ("| `gated_hybrid_repaired` | 100 | 2 | 200 | 45.0% ± 7.1 (40.0%) | 55.0% ± 7.1 (50.0%) "
            "| 0.0% ± 0.0 (0.0%) |") in table
    assert results.break_chance("overwrite", tmp_path / "overwrite_*.json") == {"constant": 1 / 16}
    assert "no results yet" in results.break_markdown([])


def test_break_rows_alias_control_is_its_own_row(tmp_path):
    _break_file(tmp_path / "alias_a.json", "alias", "gated_hybrid_repaired", [{"value": 0.12}])
    _break_file(tmp_path / "alias_b.json", "alias", "gated_hybrid_repaired", [{"value": 1.0, "same_alias": True}],
                same_alias=True)
    rows = results.break_rows("alias", tmp_path / "alias_*.json")
    assert [row.label for row in rows] == ["gated_hybrid_repaired", "gated_hybrid_repaired (identical tokens)"]
    assert "| `gated_hybrid_repaired (identical tokens)` | 100 | 1 | 1000 | 100.0% |" in results.break_markdown(rows)


def test_break_rows_alias_curriculum_is_its_own_row(tmp_path):
    _break_file(tmp_path / "alias_a.json", "alias", "gated_hybrid_repaired", [{"value": 0.12}])
    _break_file(tmp_path / "alias_c.json", "alias", "gated_hybrid_repaired", [{"value": 0.9, "same_alias_share": 0.25}],
                same_alias_share=0.25)
    assert [row.label for row in results.break_rows("alias", tmp_path / "alias_*.json")] == [
        "gated_hybrid_repaired", "gated_hybrid_repaired (trained with 25% identical)"]


def test_break_curves_by_row_label_and_seed(tmp_path):
    _break_file(tmp_path / "alias_a.json", "alias", "gated_hybrid_repaired",
                [{"value": 0.12, "loss_curve_every_10": [3.8, 2.1]}, {"value": 0.13}])
    _break_file(tmp_path / "alias_b.json", "alias", "gated_hybrid_repaired",
                [{"value": 1.0, "steps": 200, "loss_curve_every_10": [3.8, 0.1]}], {"top_k": "all"})
    curves = results.break_curves("alias", tmp_path / "alias_*.json")
    assert curves == {"gated_hybrid_repaired": {0: [3.8, 2.1]},
                      "gated_hybrid_repaired (top_k=all) (200 steps)": {0: [3.8, 0.1]}}
    assert [r.label for r in results.break_rows("alias", tmp_path / "alias_*.json")] == [
        "gated_hybrid_repaired", "gated_hybrid_repaired (top_k=all) (200 steps)"]


def test_break_rows_distance_has_a_column_per_length(tmp_path):
    def by(a, b):
        return {"value": (a + b) / 2, "by_length": {"1024": {"accuracy": a}, "4096": {"accuracy": b}}}

    _break_file(tmp_path / "distance_a.json", "distance", "gated_hybrid_repaired", [by(1.0, 0.9), by(1.0, 0.7)])
    _break_file(tmp_path / "distance_b.json", "distance", "transformer", [by(0.1, 0.2)], params=90)
    rows = results.break_rows("distance", tmp_path / "distance_*.json")
    assert [row.label for row in rows] == ["transformer", "gated_hybrid_repaired"]
    assert results.break_columns(rows) == [("length 1024", "1,024 tokens"), ("length 4096", "4,096 tokens"),
                                           ("value", "mean over lengths")]
    table = results.break_markdown(rows)
    assert table.splitlines()[0] == ("| model | params | seeds | steps | 1,024 tokens | 4,096 tokens "
                                     "| mean over lengths |")
    assert ("| `gated_hybrid_repaired` | 100 | 2 | 200 | 100.0% ± 0.0 (100.0%) | 80.0% ± 14.1 (70.0%) "
            "| 90.0% ± 7.1 (85.0%) |") in table
    _break_file(tmp_path / "distance_c.json", "distance", "transformer", [{"value": 0.1, "by_length": {}}], params=90)
    with pytest.raises(ValueError, match="evaluated at different lengths"):
        results.break_rows("distance", tmp_path / "distance_*.json")


def test_committed_overwrite_rows_are_consistent():
    rows = results.break_rows("overwrite")
    assert rows, "no overwrite_*.json in data/results"
    for r in rows:
        for a, e, o in zip(r.rates["value"], r.rates["earlier_rate"], r.rates["other_rate"], strict=True):
            assert a + e + o == pytest.approx(1.0) and min(a, e, o) >= 0.0, r.label
        assert r.steps == {200} or r.label.endswith("steps)"), r.label  # 200: the command's default
    assert results.break_chance("overwrite")["pick_among_writes"] == pytest.approx(5 / 12)


def test_results_dir_is_the_clone_unless_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv(results.ENV, raising=False)
    assert results.results_dir() == Path(__file__).resolve().parents[2] / "data" / "results"
    monkeypatch.setenv(results.ENV, str(tmp_path))
    assert results.results_dir() == tmp_path
    _write(tmp_path / "lm.json", [_run("transformer", 0, 5.0)])
    assert [r.label for r in results.TABLES["lm_matched_width"].rows()] == ["transformer"]  # every reader follows
    monkeypatch.setenv(results.ENV, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match=r"TL_MINIMAL_RESULTS=.*is not a folder"):
        results.results_dir()


def test_tables_pair_each_row_with_the_yardstick_by_seed():
    # issue 32 item 4: a table that names a yardstick shows each row minus it, paired by seed, 95% t interval
    from tl_research.results.intervals import paired_difference
    from tl_research.results.tables import markdown_table, summarize

    def run(variant, seed, value):
        return {"label": variant, "variant": variant, "params": 10, "seed": seed, "value": value, "steps": 80,
                "seconds": 1.0}

    runs = [run("transformer", s, v) for s, v in ((0, 5.0), (1, 5.1), (2, 4.9))]
    runs += [run("triple_latent", s, v) for s, v in ((2, 4.8), (0, 4.9), (1, 5.05))]  # seeds in another order
    runs += [run("gla", 0, 4.7)]  # one shared seed: no interval
    text = markdown_table(summarize(runs), paired_with="transformer")
    d = paired_difference({0: 4.9, 1: 5.05, 2: 4.8}, {0: 5.0, 1: 5.1, 2: 4.9})
    assert "minus `transformer`, paired 95%" in text.splitlines()[0]
    assert f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] (3)" in text
    assert "(1 shared seed)" in text
