"""tl_research.results (induction_tables): rows over seeds, the tables, mean curves (no training)."""

import json

import pytest

from tl_research import results as ri


def _measure(first, second, L=4):
    return {"first_bits": first, "second_bits": second, "ratio": second / first,
            "curve_first": [first] * L, "curve_second": [second] * (L - 1) + [second + 0.4]}


def _file(path, variant, per_seed, steps=80, overrides=None, params=100, gated=False):
    runs = []
    for seed, (text_second, random_second) in enumerate(per_seed):
        run = {"variant": variant, "seed": seed, "params": params, "steps": steps, "value": text_second / 2.0,
               "bpb": 3.0 + seed, "text": _measure(2.0, text_second), "random": _measure(10.0, random_second),
               "text_control": _measure(2.0, 2.2), "random_control": _measure(10.0, 10.0)}
        if gated:
            run.update(text_read_off=_measure(2.0, 2.0), random_read_off=_measure(10.0, 10.0))
        runs.append(run)
    runs.append({"variant": variant, "seed": 9, "params": None, "steps": None, "value": None, "error": "diverged"})
    path.write_text(json.dumps({"task": "induction", "protocol": {"task": "induction", "overrides": overrides or {}},
                                "runs": runs}), encoding="utf-8")


def test_rows_group_by_label_and_steps_and_skip_diverged_runs(tmp_path):
    _file(tmp_path / "induction_a.json", "gated_hybrid_repaired", [(1.0, 5.0), (1.2, 6.0)], gated=True)
    _file(tmp_path / "induction_b.json", "transformer", [(2.0, 10.0)])
    _file(tmp_path / "induction_c.json", "transformer", [(1.0, 4.0)], steps=2000)
    _file(tmp_path / "induction_d.json", "gated_hybrid_repaired", [(0.5, 1.0)], steps=2000,
          overrides={"query_align": "current"},
          params=101, gated=True)
    rows = ri.induction_rows(tmp_path / "induction_*.json")
    assert [(r.label, r.steps) for r in rows] == [("transformer", 80), ("gated_hybrid_repaired", 80), ("transformer",
                                                                                                       2000),
                                                 ("gated_hybrid_repaired (query_align=current)", 2000)]
    g = rows[1]
    assert g.seeds == [0, 1] and g.bpb == [3.0, 4.0]
    mean, std, n = g.stats("text", "ratio")
    assert (mean, n) == (pytest.approx(0.55), 2) and std == pytest.approx(0.0707, abs=1e-4)
    first, second = g.curve("text")
    assert first == [2.0] * 4 and second == pytest.approx([1.1, 1.1, 1.1, 1.5])
    assert g.has("text_read_off") and not rows[0].has("text_read_off")


def test_markdown_tables(tmp_path):
    _file(tmp_path / "induction_a.json", "gated_hybrid_repaired", [(1.0, 5.0), (1.2, 6.0)], gated=True)
    _file(tmp_path / "induction_b.json", "transformer", [(2.0, 10.0)], steps=2000)
    rows = ri.induction_rows(tmp_path / "induction_*.json")
    table = ri.induction_markdown(rows, steps=80)
    assert table.splitlines()[0] == ("| model | params | seeds | steps | BPB | text: 1st copy | text: 2nd copy | "
                                     "text: ratio | text: control | random: 1st copy | random: 2nd copy | "
                                     "random: ratio | random: control |")
    assert ("| `gated_hybrid_repaired` | 100 | 2 | 80 | 3.500 ± 0.707 | 2.00 ± 0.00 | 1.10 ± 0.14 | 0.550 ± 0.071 "
            "| 1.100 ± 0.000 | 10.00 ± 0.00 | 5.50 ± 0.71 | 0.550 ± 0.071 | 1.000 ± 0.000 |") in table
    assert "transformer" not in table
    assert "| `transformer` | 100 | 1 | 2000 | 3.000 | 2.00 | 2.00 | 1.000 | 1.100 |" in ri.induction_markdown(rows)
    off = ri.read_off_markdown(rows)
    assert "| `gated_hybrid_repaired` | 2 | 80 | 1.10 ± 0.14 | 2.00 ± 0.00 | 0.550 ± 0.071 | 1.000 ± 0.000 |" in off
    assert "transformer" not in off
    assert "no induction results yet" in ri.induction_markdown([]) and "no gated hybrid" in ri.read_off_markdown([])


def test_another_tasks_file_is_an_error(tmp_path):
    (tmp_path / "induction_x.json").write_text(json.dumps({"task": "lm", "protocol": {"task": "lm"}, "runs": []}),
                                               encoding="utf-8")
    with pytest.raises(ValueError, match="holds 'lm' results, not induction"):
        ri.induction_rows(tmp_path / "induction_x.json")
