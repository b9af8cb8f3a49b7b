"""Recall against state size (studies/state_size.py): the bytes are measured from the state a model returns."""

import json

import pytest
import torch

from tl_minimal import build_model
from tl_minimal.experiments.studies import state_size


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
    result = state_size.gather(tmp_path, out=tmp_path / "recall_state_size.json")
    rows = {r["variant"]: r for r in result["runs"]}
    assert rows["triple_latent"]["state_bytes"] == 3 * 4 * (8 + 64) * 4 and rows["triple_latent"]["state_dim"] == 8
    assert rows["transformer"]["state_bytes"] == 196_608 and rows["transformer"]["state_dim"] is None
    assert json.loads((tmp_path / "recall_state_size.json").read_text(encoding="utf-8"))["runs"] == result["runs"]
    with pytest.raises(FileNotFoundError, match=r"run_calibrated\.sh state_size"):
        state_size.gather(tmp_path / "empty")
