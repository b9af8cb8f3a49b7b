"""Recall against state size (studies/state_size.py): the bytes are measured from the state a model returns."""

import json

import pytest
import torch

from tl_minimal import build_model
from tl_research.results import files, merge, state_size_table
from tl_research.studies import state_size


def test_state_bytes_are_the_kv_cache_or_the_fixed_state():
    d, L, H, T = 64, 3, 4, 128
    assert state_size.state_bytes(build_model("transformer", 64), T) == 2 * L * T * d * 4  # k and v, float32
    assert state_size.state_bytes(build_model("transformer", 64), 64) == 2 * L * 64 * d * 4  # grows with T
    for S in (8, 16, 64):
        model = build_model("triple_latent", 64, state_dim=S)
        # per layer and head: the running state (S) and the pair memory (S x S); the same after 32 or 128 tokens
        assert state_size.state_bytes(model, T) == state_size.state_bytes(model, 32) == L * H * (S + S * S) * 4
    model = build_model("triple_latent", 64).train()
    state_size.state_bytes(model, 16)
    assert model.training  # the model's mode is restored
    assert state_size.tensor_bytes({"a": [torch.zeros(3, dtype=torch.float64)], "t": 5, "b": None}) == 24


def test_gather_measures_each_runs_state(tmp_path):
    protocol = {"task": "mqar", "vocab_size": 64, "seq_len": 128, "n_pairs": 8, "n_queries": 8, "lr": 1e-3,
                "steps": 1000, "seeds": [0]}
    for name, variant, config in (("mqar_state_size_pairs8_S8_triple_latent.json", "triple_latent",
                                   {"state_dim": 8}),
                                  ("mqar_state_size_pairs8_S-_transformer.json", "transformer", {})):
        run = {"variant": variant, "seed": 0, "value": 0.5, "params": 1, "config": {"max_seq_len": 128, **config}}
        data = {"task": "mqar", "protocol": protocol, "runs": [run]}
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    table = tmp_path / "recall_calibrated.json"  # none: no gathered file beside it either
    result = state_size.gather(tmp_path, out=tmp_path / "recall_state_size.json", table=table)
    rows = {r["variant"]: r for r in result["runs"]}
    assert rows["triple_latent"]["state_bytes"] == 3 * 4 * (8 + 64) * 4 and rows["triple_latent"]["state_dim"] == 8
    assert rows["transformer"]["state_bytes"] == 196_608 and rows["transformer"]["state_dim"] is None
    assert json.loads((tmp_path / "recall_state_size.json").read_text(encoding="utf-8"))["runs"] == result["runs"]
    with pytest.raises(FileNotFoundError, match=r"run_calibrated\.sh state_size"):
        state_size.gather(tmp_path / "empty", table=table)


def test_gather_adds_table_4s_rows_to_the_recall_files(tmp_path):
    protocol = {"task": "recall", "vocab_size": 64, "seq_len": 128, "n_pairs": 4, "n_queries": 4, "lr": 3e-3,
                "steps": 1000, "seeds": [0]}
    run = {"variant": "triple_latent", "seed": 0, "value": 0.25, "params": 1,
           "config": {"max_seq_len": 128, "state_dim": 64}}
    (tmp_path / "recall_state_size_S64_triple_latent.json").write_text(
        json.dumps({"task": "recall", "protocol": protocol, "runs": [run, {**run, "seed": 1, "value": None}]}),
        encoding="utf-8")
    table_runs = [{"variant": v, "seed": 0, "value": a, "params": 1, "lr": 1e-3, "config": {"max_seq_len": 128}}
                  for v, a in (("transformer", 1.0), ("gated_hybrid_paper", 0.4))]  # the paper's form is no point
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"protocol": {**protocol, "lr": "per variant"}, "runs": table_runs}),
                     encoding="utf-8")
    result = state_size.gather(tmp_path, out=tmp_path / "out.json", table=table)
    rows = [(r["task"], r["variant"], r["state_dim"], r["accuracy"], r["state_bytes"], r["lr"]) for r in result["runs"]]
    # table 4's row at its own lr, then the suite file's finished seed (the unfinished one has no row)
    assert rows == [("recall", "transformer", None, 1.0, 196_608, 1e-3),
                    ("recall", "triple_latent", 64, 0.25, 3 * 4 * (64 + 64 * 64) * 4, 3e-3)]
    assert result["sources"] == ["table.json", "recall_state_size_S64_triple_latent.json"]
    assert result["tasks"] == ["recall"] and result["protocol"]["n_pairs"] == 4 and result["task"] == "state_size"
    assert files.is_gathered(result) and not merge.mergeable(result)  # `results merge` leaves it alone
    (point, ) = [q for q in state_size_table.points(result) if q["variant"] == "triple_latent"]
    assert point["seeds"] == [0] and point["accuracies"] == [0.25] and point["state_dim"] == 64
    table = state_size_table.markdown(result).splitlines()
    assert table[2:] == ["| 4-pair recall | `transformer` | - | 196,608 | 1 | 100.0% | 100.0 |",  # smallest state first
                         "| 4-pair recall | `triple_latent` | 64 | 199,680 | 1 | 25.0% | 25.0 |"]


def test_points_average_the_seeds_of_one_state_and_refuse_two_sizes():
    run = {"task": "recall", "variant": "triple_latent", "n_pairs": 4, "state_dim": 8, "state_bytes": 100}
    result = {"runs": [{**run, "seed": 0, "accuracy": 0.5}, {**run, "seed": 1, "accuracy": 0.25}]}
    (point, ) = state_size_table.points(result)
    assert point["mean"] == 0.375 and point["seeds"] == [0, 1]
    result["runs"].append({**run, "seed": 2, "accuracy": 0.5, "state_bytes": 200})
    with pytest.raises(ValueError, match="expected one state size per point"):
        state_size_table.points(result)
    result["runs"][-1] = {**run, "seed": 1, "accuracy": 0.5, "source": "a.json"}  # the same seed from two files
    with pytest.raises(ValueError, match=r"seed 1 twice \(a\.json\); expected one run per seed"):
        state_size_table.points(result)


def test_gather_adds_the_relatives_from_the_family_file(tmp_path):
    """recall_calibrated_family.json beside table 4's file gives GLA, DeltaNet and H3 their points; its Transformer
    and triple_latent rows are table 4's own and are not counted twice."""
    protocol = {"task": "recall", "vocab_size": 64, "seq_len": 128, "n_pairs": 4, "n_queries": 4, "lr": "per variant",
                "steps": 1000, "seeds": [0]}
    run = {"seed": 0, "params": 1, "lr": 1e-3, "config": {"max_seq_len": 128}}
    (tmp_path / "recall_state_size_S8_triple_latent.json").write_text(json.dumps(
        {"task": "recall", "protocol": protocol, "runs": [{**run, "variant": "triple_latent", "value": 0.12,
                                                           "config": {"max_seq_len": 128, "state_dim": 8}}]}),
        encoding="utf-8")
    table = tmp_path / "recall_calibrated.json"
    table.write_text(json.dumps({"protocol": protocol, "runs": [{**run, "variant": "transformer", "value": 1.0}]}),
                     encoding="utf-8")
    family = [{**run, "variant": v, "value": a} for v, a in (("transformer", 1.0), ("deltanet", 1.0), ("gla", 0.2),
                                                             ("triple_key_shift", 0.12))]
    (tmp_path / "recall_calibrated_family.json").write_text(json.dumps({"protocol": protocol, "runs": family}),
                                                            encoding="utf-8")
    result = state_size.gather(tmp_path, out=tmp_path / "out.json", table=table)
    rows = [(r["variant"], r["accuracy"], r["source"]) for r in result["runs"]]
    assert rows == [("transformer", 1.0, "recall_calibrated.json"),
                    ("deltanet", 1.0, "recall_calibrated_family.json"), ("gla", 0.2, "recall_calibrated_family.json"),
                    ("triple_latent", 0.12, "recall_state_size_S8_triple_latent.json")]
    by_variant = {r["variant"]: r["state_bytes"] for r in result["runs"]}
    # measured from the model the registry builds: a 16 x 16 matrix per layer and head, and the short
    # convolutions' windows (3 earlier tokens of q, k and v: 3 x 3 x 64 numbers per layer), in float32
    assert by_variant["deltanet"] == state_size.state_bytes(build_model("deltanet", 64), 128) == 19_200
    assert 19_200 == 3 * (4 * 16 * 16 + 3 * 3 * 64) * 4
    assert result["sources"] == ["recall_calibrated.json", "recall_calibrated_family.json",
                                 "recall_state_size_S8_triple_latent.json"]


def test_gather_adds_mqars_gathered_rows_beside_the_recall_table(tmp_path):
    """mqar_calibrated_pairs8.json (run_calibrated.sh mqar_rows, then gather) beside table 4's file gives MQAR
    points to the picture's rows and relatives at their default sizes; other variants are no points."""
    protocol = {"task": "mqar", "vocab_size": 64, "seq_len": 64, "n_pairs": 8, "n_queries": 8, "steps": 3000,
                "lr": "per variant", "lr_by_variant": {"transformer": 1e-3}, "seeds": [0]}
    run = {"seed": 0, "params": 1, "lr": 1e-3, "config": {"max_seq_len": 64}}
    runs = [{**run, "variant": v, "value": a} for v, a in (("transformer", 1.0), ("deltanet", 0.9),
                                                           ("triple_key_shift", 0.1), ("gla", None))]
    (tmp_path / "mqar_calibrated_pairs8.json").write_text(json.dumps({"protocol": protocol, "runs": runs}),
                                                          encoding="utf-8")
    result = state_size.gather(tmp_path / "issue32", out=tmp_path / "out.json",
                               table=tmp_path / "recall_calibrated.json")
    rows = [(r["task"], r["n_pairs"], r["variant"], r["accuracy"], r["state_bytes"]) for r in result["runs"]]
    # a KV cache of 64 tokens; DeltaNet's fixed state (19,200 bytes at any length); a diverged run has no row
    assert rows == [("mqar", 8, "transformer", 1.0, 2 * 3 * 64 * 64 * 4), ("mqar", 8, "deltanet", 0.9, 19_200)]
    assert result["tasks"] == ["mqar"] and result["sources"] == ["mqar_calibrated_pairs8.json"]
    assert "lr_by_variant" not in result["protocols"]["mqar"] and result["protocols"]["mqar"]["steps"] == 3000
    row = state_size_table.markdown(result).splitlines()[2]
    assert row == "| MQAR, 8 pairs | `deltanet` | - | 19,200 | 1 | 90.0% | 90.0 |"
