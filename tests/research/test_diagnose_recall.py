"""The recall diagnosis: the answer's memory entry, the report's ranges, the constant-guess line."""

import pytest
import torch

from tl_minimal import build_model
from tl_minimal.data.recall import recall_batch
from tl_research.studies.diagnose_recall import (
    answer_entries,
    at_initialization,
    constant_guess,
    read_gate_gradient,
    retrieval_report,
    summarize,
)

SMALL = {"d_model": 16, "n_layers": 1, "n_heads": 2, "state_dim": 4, "max_seq_len": 32, "assoc_dim": 16}


def _batch(n=24, seed=0):
    return recall_batch(n, seq_len=32, generator=torch.Generator().manual_seed(seed))


def test_answer_entry_holds_the_key_and_its_value_follows():
    x, y = _batch()
    t, key_pos = answer_entries(x, y)
    rows = torch.arange(len(x))
    assert t == 31
    assert torch.equal(x[rows, key_pos], x[:, t - 1]) and torch.equal(x[rows, key_pos + 1], y[:, t])


@pytest.mark.parametrize("tie", [False, True])
def test_report_ranges_and_tied_keys_find_the_answer_at_init(tie):
    torch.manual_seed(0)
    model = build_model("gated_hybrid_repaired", 64, tie_qk=tie, score_scale=10.0, **SMALL)
    x, y = _batch()
    rep = retrieval_report(model, x, y)
    s = summarize(rep)
    assert 0 <= s["filler_share"] <= 1 and 0 <= s["answer_weight"] <= 1
    assert 0 <= s["entropy"] <= s["uniform_entropy"] + 1e-6
    assert torch.all(rep["kept"] == 8) and 0.4 < s["read_gate"] < 0.6
    assert torch.equal(rep["in_kept"], rep["answer_rank"] < 8)
    if tie:  # an exact repeat scores cos = 1: first place for every example, most of the weight
        assert s["answer_top1"] == 1.0 and s["answer_weight"] > 0.5


def test_report_needs_a_gated_model_and_constant_guess():
    x, y = _batch()
    with pytest.raises(ValueError, match="gated"):
        retrieval_report(build_model("transformer", 64, d_model=16, n_layers=1, n_heads=2, max_seq_len=32), x, y)
    c = constant_guess(y)
    assert c["expected"] == 0.125 and c["in_context_pick"] == 0.25 and c["n"] == 24
    assert c["best_on_set"] >= 1 / 8


def test_at_initialization_runs_the_protocol_model():
    rows = at_initialization("gated_hybrid_paper", [0], n_examples=4, seq_len=32)
    assert rows[0]["seed"] == 0 and 0 <= rows[0]["in_kept"] <= 1


@pytest.mark.slow
def test_study_runner_evaluates_at_each_step_and_writes_json(tmp_path):
    import json

    from tl_research.cli import main

    out = tmp_path / "r.json"
    assert main(["study", "train", "--variants", "gated_hybrid_repaired", "--seeds", "0", "--eval-at", "1", "2",
                 "--seq-len", "32", "--eval-examples", "16", "--out", str(out)]) == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    run = res["runs"][0]
    assert set(run["by_step"]) == {"1", "2"} and set(run["probes"]) == {"0", "1", "2"} and run["steps"] == 2
    assert res["protocol"]["environment"]["git_commit"] and res["constant_guess"]["expected"] == 0.125


def test_read_gate_gets_no_gradient_inside_the_norm_once_values_are_large():
    # LN(g m) cancels g only when |m| is well above the LayerNorm epsilon; at the paper's init
    # (weights N(0, 0.02)) m is tiny and the epsilon dominates, so scale W_v up to see it
    x, y = _batch(8)
    grads = {}
    for outside in (False, True):
        torch.manual_seed(0)
        model = build_model("gated_hybrid_repaired", 64, gate_outside_norm=outside, dropout=0.0, **SMALL)
        with torch.no_grad():
            model.kv.value.weight.mul_(100.0)
        grads[outside] = read_gate_gradient(model, x, y)
    assert grads[False]["read_gate_grad"] < 1e-2 * grads[True]["read_gate_grad"]
    assert grads[False]["value_grad"] > 0


def test_study_baseline_and_merge_commands_write_their_files(tmp_path, capsys):
    import json

    from tl_research.cli import main

    base = tmp_path / "baseline.json"
    assert main(["study", "baseline", "--seeds", "0", "1", "--out", str(base)]) == 0
    rows = json.loads(base.read_text(encoding="utf-8"))["constant_guess"]
    assert set(rows) == {"0", "1"} and all(r["expected"] == 0.125 for r in rows.values())
    parts = []
    for seed in (0, 1):
        parts.append(tmp_path / f"s{seed}.json")
        part = {"task": "recall", "protocol": {"environment": {"seed_file": seed}},
                "runs": [{"variant": "v", "seed": seed, "params": 1, "by_step": {"5": {"accuracy": 0.5}}}]}
        parts[-1].write_text(json.dumps(part), encoding="utf-8")
    merged = tmp_path / "merged.json"
    assert main(["study", "merge", *map(str, parts), "--out", str(merged)]) == 0
    res = json.loads(merged.read_text(encoding="utf-8"))
    assert [r["seed"] for r in res["runs"]] == [0, 1] and [m["seeds"] for m in res["merged_from"]] == [[0], [1]]
    capsys.readouterr()
