"""tl_minimal.results: loading results files, seed summaries, the table beside the paper (no training)."""

import json

import pytest

from tl_minimal import results


def _write(path, runs, overrides=None):
    data = {"task": "lm", "protocol": {"task": "lm", "steps": 80, "overrides": overrides or {},
                                       "data_source": "test", "environment": {"device": "cpu"}},
            "runs": runs}
    path.write_text(json.dumps(data))
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
    with pytest.raises(FileNotFoundError, match="run_all.sh"):
        results.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{}")
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
    _write(tmp_path / "lm_matched_width.json", [_run("transformer", 0, 5.0), _run("triple_latent", 0, 4.9)])
    table = results.TABLES["lm_param_matched"]
    assert [r["variant"] for r in table.runs(tmp_path)] == ["transformer"]  # only the baseline row
    _write(tmp_path / "lm_param_matched_triple_latent.json", [_run("triple_latent", 0, 4.8, 99)], {"state_dim": 12})
    assert "`triple_latent (S=12)` | 99 | 1 | 4.800 | 5.114 |" in table.markdown(tmp_path)
    assert "no results yet" in results.TABLES["tokenized"].markdown(tmp_path)
