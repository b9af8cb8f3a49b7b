"""Checkpoints hold plain data only, restore every random state, and a bad file is a clear error."""

import random

import numpy as np
import pytest
import torch
from torch import nn

from tl_research.checkpoint import CheckpointError, load_checkpoint, read_checkpoint, save_checkpoint


def _saved(tmp_path, model=None):
    model = model or nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    path = tmp_path / "run.pt"
    save_checkpoint(path, model, opt, 1, {"loss": [1.5], "lr": [1e-3], "steps": 1, "seconds": 0.1, "stopped": "done"})
    return path, model, opt


def test_a_checkpoint_is_plain_data_and_restores_every_random_state(tmp_path):
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    path, model, _ = _saved(tmp_path)
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    random.seed(9)
    np.random.seed(9)
    torch.manual_seed(9)
    ckpt = torch.load(path, weights_only=True)  # no pickled objects: tensors, numbers, strings, lists, dicts
    assert ckpt["format"] == "tl_minimal checkpoint 1" and ckpt["step"] == 1
    fresh = nn.Linear(3, 2)
    load_checkpoint(path, fresh, torch.optim.AdamW(fresh.parameters()))
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected
    assert torch.equal(fresh.weight, model.weight)


@pytest.mark.parametrize("damage, words", [
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "cannot be read"),  # truncated
    (lambda p: p.write_bytes(b"\x00garbage" * 10), "cannot be read"),  # corrupted
    (lambda p: p.write_text("", encoding="utf-8"), "cannot be read"),  # empty
    (lambda p: torch.save({"model": {}, "note": "from elsewhere"}, p),
     "not a tl_minimal checkpoint: it has no optimizer"),
    (lambda p: torch.save(np.arange(3), p), "cannot be read"),  # pickled objects are never loaded
])
def test_a_bad_checkpoint_is_a_clear_error_naming_the_file(tmp_path, damage, words):
    path, model, opt = _saved(tmp_path)
    damage(path)
    with pytest.raises(CheckpointError, match=words) as err:
        load_checkpoint(path, model, opt)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_checkpoint_of_another_model_does_not_fit(tmp_path):
    path, _, _ = _saved(tmp_path)
    other = nn.Linear(4, 2)
    with pytest.raises(CheckpointError, match="does not fit this run"):
        load_checkpoint(path, other)
    assert read_checkpoint(path)["history"]["loss"] == [1.5]
