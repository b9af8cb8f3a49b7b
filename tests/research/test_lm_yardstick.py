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

