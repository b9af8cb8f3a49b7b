"""course/recall_start.py: the gathered gate-start and ladder runs as the lessons show them."""

import json

from tl_minimal.course import recall_start


def test_gate_start_is_the_gate_at_initialization_and_its_half_life():
    assert recall_start.gate_start(0.0) == "0.500 (half-life 1 token)"
    assert recall_start.gate_start(4.0) == "0.982 (half-life 38 tokens)"
    assert recall_start.gate_start(0.0, gate_norm=16) == "0.958 (half-life 16 tokens)"  # GLA's


def test_rows_read_from_the_results_folder_and_rates_carry_their_interval(tmp_path, monkeypatch):
    rows = [{"variant": "triple_latent", "gam_bias": 4.0, "lr": 0.003, "values": [1.0, 1.0, 0.25],
             "mean": 0.75, "recall": 2, "recall_interval": [0.0943, 0.9916]},
            {"variant": "triple_slot", "gam_bias": 4.0, "values": [], "mean": None, "note": "not run yet"}]
    (tmp_path / "recall_gate_start.json").write_text(json.dumps({"rows": rows}), encoding="utf-8")
    monkeypatch.setenv("TL_MINIMAL_RESULTS", str(tmp_path))
    got = recall_start.gate_start_rows(["triple_latent"])
    assert got == rows[:1]
    assert recall_start.rate(got[0]) == "2 of 3 seeds (95% interval 9-99%)"
    table = recall_start.markdown(recall_start.gate_start_rows())
    assert "| `triple_latent` | 4.0 | 0.003 | 100.0 / 100.0 / 25.0 | 75.0% | 2 of 3 seeds" in table
    assert "| `triple_slot` | 4.0 | - | - | - | not run yet |" in table
