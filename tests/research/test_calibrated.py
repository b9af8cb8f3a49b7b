"""Gathering the calibrated protocol's lr sweep (studies/calibrated.py) from small stand-in suite files."""

import json

import pytest

from tl_minimal.experiments.studies import calibrated


def _suite(folder, name, lr, runs):
    data = {"task": "recall", "protocol": {"task": "recall", "lr": lr, "n_queries": 4}, "runs": runs}
    (folder / name).write_text(json.dumps(data), encoding="utf-8")


def _run(variant, seed, value):
    return {"variant": variant, "seed": seed, "value": value}


def test_gather_keeps_each_variants_best_lr(tmp_path):
    _suite(tmp_path, "recall_calibrated_lr1e-3.json", 1e-3,
           [_run("transformer", 0, 0.90), _run("triple_latent", 0, 0.30), _run("triple_latent", 1, 0.31),
            _run("gated_hybrid", 0, 0.5)])
    _suite(tmp_path, "recall_calibrated_lr3e-3.json", 3e-3,
           [_run("transformer", 0, 0.99), _run("transformer", 1, 0.98), _run("triple_latent", 0, 0.30)])
    _suite(tmp_path, "recall_calibrated_lr3e-3_decay4.json", 3e-3, [_run("triple_latent", 0, 0.7)])
    result = calibrated.gather(tmp_path, "recall_calibrated_lr")
    # transformer: 3e-3 is better; triple_latent: a tie, the smaller lr; gated_hybrid: no seed 0 at 3e-3 yet
    assert result["protocol"]["lr_by_variant"] == {"transformer": 3e-3, "triple_latent": 1e-3}
    assert result["protocol"]["lr_sweep"] == [1e-3, 3e-3]
    kept = [(r["variant"], r["seed"], r["lr"]) for r in result["runs"]]
    assert kept == [("transformer", 0, 3e-3), ("transformer", 1, 3e-3), ("triple_latent", 0, 1e-3),
                    ("triple_latent", 1, 1e-3)]
    swept = [(r["variant"], r["lr"]) for r in result["sweep_runs"]]
    assert swept == [("transformer", 1e-3), ("triple_latent", 3e-3)]
    assert json.loads((tmp_path / "recall_calibrated.json").read_text(encoding="utf-8")) == result
    assert result["sources"] == ["recall_calibrated_lr1e-3.json", "recall_calibrated_lr3e-3.json"]


def test_gather_needs_its_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        calibrated.gather(tmp_path, "recall_calibrated_lr")
