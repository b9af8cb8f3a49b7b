"""``python -m tl_research.convert OLD.pt NEW.pt``: a model file saved by tl_minimal 1.x reads in 2.0, same
weights.

The fixture ``tests/fixtures/lm_triple_latent_1x.pt`` is the shipped triple_latent checkpoint as 1.0 wrote
it (format "tl_minimal shipped model 1"); ``data/checkpoints`` holds the same model converted.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tl_minimal import build_model
from tl_minimal.course.shipped import FORMAT, load_shipped, shipped_paths
from tl_research.convert import CHECKPOINT, SHIPPED, SHIPPED_1, convert

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "tests" / "fixtures" / "lm_triple_latent_1x.pt"


def test_the_command_converts_a_real_1x_checkpoint_to_the_shipped_2_0_file(tmp_path):
    new = tmp_path / "new.pt"
    out = subprocess.run([sys.executable, "-m", "tl_research.convert", str(OLD), str(new)], cwd=ROOT,
                         capture_output=True, text=True, encoding="utf-8", check=False)
    assert out.returncode == 0 and SHIPPED in out.stdout, out.stderr
    old, converted = torch.load(OLD, weights_only=True), torch.load(new, weights_only=True)
    shipped = torch.load(shipped_paths("triple_latent")[0], weights_only=True)
    assert old["format"] == SHIPPED_1 and converted["format"] == shipped["format"] == SHIPPED
    assert FORMAT == SHIPPED  # the course's loader reads what the converter writes (each keeps the name)
    assert converted["config"] == shipped["config"] == old["config"]
    assert list(converted["model"]) == list(shipped["model"])
    assert all(torch.equal(converted["model"][k], shipped["model"][k]) for k in shipped["model"])


def test_2_0_refuses_a_1x_file_and_names_the_command(tmp_path):
    weights, record = shipped_paths("triple_latent", folder=tmp_path)
    shutil.copy(OLD, weights)
    shutil.copy(shipped_paths("triple_latent")[1], record)
    with pytest.raises(ValueError, match=r"python -m tl_research\.convert"):
        load_shipped("triple_latent", folder=tmp_path)


def test_the_renamed_score_scale_setting_and_weight_convert():
    torch.manual_seed(0)
    model = build_model("gated_hybrid_repaired", 64, score_scale=3.0, learnable_score_scale=True)
    old_name = {"kv.log_score_scale": "kv.log_temperature"}
    state = {old_name.get(k, k): v for k, v in model.state_dict().items()}
    old = {"format": SHIPPED_1, "variant": "gated_hybrid", "vocab_size": 64, "model": state,  # its old name
           "config": {**model.config.settings(), "temperature": 3.0, "learnable_temperature": True}}
    del old["config"]["score_scale"], old["config"]["learnable_score_scale"]
    new = convert(old)
    assert new["config"] == model.config.settings() and "kv.log_score_scale" in new["model"]
    assert new["variant"] == "gated_hybrid_repaired"  # the repaired hybrid's name since round 5
    again = build_model("gated_hybrid_repaired", 64, **new["config"])
    again.load_state_dict(new["model"])
    assert torch.equal(again.kv.log_score_scale, model.kv.log_score_scale)
    checkpoint = convert({"format": CHECKPOINT, "model": state, "step": 3})
    assert checkpoint["step"] == 3 and list(checkpoint["model"]) == list(model.state_dict())
    with pytest.raises(ValueError, match=r"not a tl_minimal 1\.x model file"):
        convert({"format": "something else"})


def test_a_2_0_file_of_the_old_repaired_hybrid_name_gets_the_new_name():
    model = build_model("gated_hybrid_repaired", 64)
    saved = {"format": SHIPPED, "variant": "gated_hybrid", "vocab_size": 64,  # its old name
             "config": model.config.settings(), "model": model.state_dict()}
    assert convert(saved)["variant"] == "gated_hybrid_repaired"
