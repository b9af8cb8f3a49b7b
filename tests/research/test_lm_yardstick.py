"""studies/lm_yardstick.py: each row at the lr its seed 0 chose (lower bits per byte), paired differences over
the seeds two rows share, and rows not run yet named as such."""

import json

import pytest

from tl_research.studies import lm_yardstick


def write(folder, variant, lr, values):
    runs = [{"variant": variant, "seed": s, "value": v} for s, v in enumerate(values)]
    (folder / f"lm2000_cosine_{variant}_lr{lr}.json").write_text(json.dumps({"runs": runs}), encoding="utf-8")


def test_rows_take_the_lower_seed_0_and_pair_by_seed(tmp_path):
    runs = tmp_path / "issue50"
    runs.mkdir()
    write(runs, "transformer", "1e-3", [2.90, 2.92, 2.91])
    write(runs, "transformer", "3e-3", [2.95])
    write(runs, "triple_latent", "1e-3", [2.60])
    write(runs, "triple_latent", "3e-3", [2.50, 2.52, 2.49])
    out = lm_yardstick.gather(runs, tmp_path)
    rows = {r["variant"]: r for r in out["rows"]}
    assert rows["transformer"]["lr"] == 1e-3 and rows["triple_latent"]["lr"] == 3e-3
    assert rows["triple_latent"]["by_seed"] == {"0": 2.50, "1": 2.52, "2": 2.49}
    assert rows["ladder_1"]["note"] == "not run yet"
    first = out["comparisons"][0]
    assert (first["a"], first["b"], first["seeds"]) == ("triple_latent", "transformer", [0, 1, 2])
    assert first["mean"] == pytest.approx(-0.4066666, abs=1e-6) and first["low"] < first["mean"] < first["high"]
    assert out["comparisons"][1]["note"] == "fewer than 2 shared seeds"
    assert json.loads((tmp_path / "lm_yardstick.json").read_text("utf-8")) == out


def test_the_study_quotes_the_committed_yardstick():
    """RECALL_STUDY.md section 13's table and comparisons are lm_yardstick.json's, rounded as printed."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    data = json.loads((root / "data" / "results" / "lm_yardstick.json").read_text("utf-8"))
    text = re.sub(r"\s+", " ", (root / "data" / "results" / "RECALL_STUDY.md").read_text("utf-8"))
    rows = {r["variant"]: r for r in data["rows"]}
    for variant, r in rows.items():
        row = rf"\| `{variant}`[^|]*\| 3e-3 \| {len(r['by_seed'])} \| {r['mean']:.3f} \|"
        assert re.search(row, text), variant
    transformers = ("transformer", "transformer_rope")
    seed0 = [f"{rows[v]['seed0_by_lr'][lr]:.3f}" for v in transformers for lr in ("1e-3", "3e-3")]
    assert "learned positions {} / {} BPB, rotary {} / {} on seed 0".format(*seed0) in text
    pairs = {(c["a"], c["b"]): c for c in data["comparisons"]}

    def cell(a, b):
        c = pairs[(a, b)]
        return f"{c['mean']:+.3f}", f"[{c['low']:+.3f}, {c['high']:+.3f}]", len(c["seeds"])

    mean, ci, n = cell("triple_latent", "transformer_rope")
    assert f"`triple_latent` minus the rotary Transformer is {mean} BPB over {n} seeds, 95% interval {ci}" in text
    mean, ci, n = cell("ladder_1", "triple_latent")
    assert f"`ladder_1` minus `triple_latent` is {mean} BPB over {n} seeds, 95% interval {ci}" in text
    mean, ci, n = cell("triple_latent", "transformer")
    assert f"({mean} over {n} seeds, {ci})" in text
    mean, ci, _ = cell("ladder_1", "transformer_rope")
    assert f"rotary Transformer ({mean} {ci})" in text
