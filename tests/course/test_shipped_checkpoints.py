"""The shipped checkpoints (data/checkpoints/) are what their records say: the weights give the recorded
small-eval BPB, and retraining the same seed reproduces the recorded first losses.

Both checks run on the real WikiText-2 bytes the checkpoints were trained and evaluated on (the
offline copy ``TL_MINIMAL_DATA`` names, as in CI: data/README.md) and, in every clone, on committed
stand-ins that give the same numbers: the small evaluation's 32 chunks are the first 32 of the
validation split, which the fixture's excerpt of it (tests/fixtures/data) holds unchanged, and the
first training steps read only the windows stored in tests/fixtures/shipped_windows.json (made by
tests/fixtures/make_shipped_windows.py), placed at their starts in a stream of the train split's
length. The file checks (format, config, record) run everywhere. A few seconds in all, on the CPU.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import torch

from conftest import FIXTURE_DATA, data_dirs
from tl_minimal.course import shipped
from tl_minimal.course.shipped import (
    SHIPPED,
    ShippedCheckpointMissing,
    load_shipped,
    read_record,
    shipped_paths,
)
from tl_minimal.data import text as data_text
from tl_minimal.exercises.harness import one_thread
from tl_minimal.training.evaluate import mean_token_loss
from tl_minimal.training.protocols import chunk_eval_set, protocol
from tl_minimal.training.recipes import count_parameters, fit
from tl_research.ship_checkpoint import SMALL_EVAL_CHUNKS, loss_log
from tl_research.tasks.common import in_batches

RETRAIN_STEPS = 5
WINDOWS = Path(__file__).resolve().parents[1] / "fixtures" / "shipped_windows.json"


def _positions(n_tokens: int, seed: int, steps: int = RETRAIN_STEPS) -> set[int]:
    """The starts of the windows the lm sampler draws in its first ``steps`` steps from ``n_tokens`` tokens
    (the sampler run over the positions 0..N-1 returns the positions it reads)."""
    lm = protocol("lm")
    sampler = data_text.WindowSampler(torch.arange(n_tokens), lm.batch_size, lm.seq_len, seed)
    return {int(x[0]) for step in range(steps) for x in sampler(step)[0]}


def _train_tokens(root: Path, seed: int) -> torch.Tensor:
    """The train split the shipped models saw, or, from the fixture, a stream of its length holding
    only the windows their first steps read (the rest zeros, never read)."""
    if root != FIXTURE_DATA:
        return data_text.load_split("train", data_dir=root).tokens
    stored = json.loads(WINDOWS.read_text(encoding="utf-8"))
    tokens = torch.zeros(stored["train_tokens"], dtype=torch.long)
    for start, text in stored["windows"].items():
        piece = torch.tensor(list(text.encode("latin-1")))  # one character per byte
        tokens[int(start):int(start) + len(piece)] = piece
    missing = _positions(len(tokens), seed) - {int(start) for start in stored["windows"]}
    assert stored["seed"] == seed and not missing, (
        "the sampler now draws other windows: make tests/fixtures/shipped_windows.json again "
        "(tests/fixtures/make_shipped_windows.py) and check the shipped records")
    return tokens


def _same_weights(a, b) -> bool:
    """Every tensor of two models' state dicts equal, bit for bit."""
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


@pytest.mark.parametrize("variant", SHIPPED)
def test_a_shipped_checkpoint_is_small_and_its_record_describes_it(variant):
    weights, _ = shipped_paths(variant)
    assert weights.stat().st_size < 1_100_000, "keep shipped checkpoints small (about 1 MB or less)"
    model, record = load_shipped(variant)
    lm = protocol("lm")
    assert record["variant"] == variant and record["seed"] == 0 and record["steps"] == 2000
    assert record["config"] == model.config.settings()
    assert {k: record["config"][k] for k in ("d_model", "n_layers", "n_heads", "max_seq_len", "dropout")} == \
        {"d_model": lm.d_model, "n_layers": lm.n_layers, "n_heads": lm.n_heads, "max_seq_len": lm.seq_len,
         "dropout": lm.dropout}
    assert record["params"] == count_parameters(model)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert record["loss_log"]["steps"][:RETRAIN_STEPS] == list(range(RETRAIN_STEPS))
    assert record["command"].startswith("python -m tl_research.ship_checkpoint")
    assert record["committed"]["matches"], "the shipped model should repeat the committed lm_2000steps.json run"


@pytest.mark.parametrize("root", data_dirs())
@pytest.mark.parametrize("variant", SHIPPED)
def test_a_shipped_checkpoint_gives_its_recorded_small_eval_bpb(variant, root):
    valid = data_text.load_split("validation", data_dir=root)
    model, record = load_shipped(variant)
    x, y = chunk_eval_set(valid.tokens, protocol("lm"))
    assert record["small_eval"]["chunks"] == SMALL_EVAL_CHUNKS
    bpb = mean_token_loss(model, in_batches(x[:SMALL_EVAL_CHUNKS], y[:SMALL_EVAL_CHUNKS])) / math.log(2)
    assert bpb == pytest.approx(record["small_eval"]["bpb"], rel=1e-5)
    assert bpb < 3.5, "a 2,000-step model is far below the unigram baseline (about 5 bits per byte)"


@pytest.mark.slow  # seconds per step on a loaded 2-core machine, one thread as recorded
@pytest.mark.parametrize("root", data_dirs())
@pytest.mark.parametrize("variant", SHIPPED)
def test_retraining_the_same_seed_repeats_the_recorded_first_losses(variant, root):
    record = read_record(variant)
    tokens = _train_tokens(root, record["seed"])
    if root != FIXTURE_DATA:  # the real split: the fixture's windows must be its own bytes
        stored, width = _train_tokens(FIXTURE_DATA, record["seed"]), protocol("lm").seq_len + 1
        assert len(stored) == len(tokens)
        for start in _positions(len(tokens), record["seed"]):
            assert torch.equal(stored[start:start + width], tokens[start:start + width]), start
    with one_thread():  # as the record was made: one thread, the same summation order
        _, history = fit(variant, protocol("lm", steps=RETRAIN_STEPS), record["seed"], tokens, device="cpu",
                         progress=False)
    recorded = record["loss_log"]["loss"][:RETRAIN_STEPS]
    assert history["loss"] == pytest.approx(recorded, rel=1e-5)


def test_the_notebooks_get_the_shipped_model_or_the_same_run_retrained(monkeypatch):
    train = data_text.load_split("train", data_dir=data_dirs()[-1].values[0])  # any text: two runs compared
    model, record = shipped.shipped_or_retrained("triple_latent")
    kept_model, shipped_record = load_shipped("triple_latent")
    assert record == shipped_record
    assert _same_weights(model, kept_model)
    # retrain=True trains the record's steps with the record's seed; 2 steps here instead of 2,000
    monkeypatch.setattr(shipped, "load_shipped", lambda *a, **k: (kept_model, {**record, "steps": 2}))
    with one_thread():
        retrained, kept = shipped.shipped_or_retrained("triple_latent", retrain=True, data=train.tokens)
        expected, _ = fit("triple_latent", protocol("lm", steps=2), record["seed"], train.tokens, device="cpu",
                          progress=False)
    assert kept["steps"] == 2 and not retrained.training
    assert _same_weights(retrained, expected)


def test_the_loss_log_keeps_the_first_steps_every_tenth_and_the_last():
    log = loss_log([float(k) for k in range(45)])
    assert log["steps"] == [*range(20), 20, 30, 40, 44] and log["loss"] == [float(k) for k in log["steps"]]


def test_a_missing_shipped_checkpoint_names_the_command_that_makes_it(tmp_path):
    command = "python -m tl_research.ship_checkpoint triple_slot --seed 3 --steps 2000"
    with pytest.raises(ShippedCheckpointMissing, match=re.escape(command)):
        load_shipped("triple_slot", seed=3, folder=tmp_path)


# --- the recall model notebook 06a reads (task "recall": synthetic examples, no data files) ---------

def test_the_shipped_recall_model_repeats_the_committed_run_and_its_small_eval():
    from tl_minimal.course.shipped import RECALL_STEPS, SHIPPED_RECALL
    from tl_minimal.training.evaluate import recall_accuracy
    from tl_research.ship_checkpoint import SMALL_EVAL_RECALL, recall_eval_set

    for variant in SHIPPED_RECALL:
        weights, _ = shipped_paths(variant, steps=RECALL_STEPS, task="recall")
        assert weights.stat().st_size < 1_100_000, "keep shipped checkpoints small (about 1 MB or less)"
        model, record = load_shipped(variant, steps=RECALL_STEPS, task="recall")
        p = protocol("recall", steps=RECALL_STEPS)
        assert record["task"] == "recall" and record["steps"] == RECALL_STEPS and record["seed"] == 0
        assert record["config"] == model.config.settings() and record["params"] == count_parameters(model)
        assert record["command"] == shipped.remake_command(variant, 0, RECALL_STEPS, "recall")
        assert record["committed"]["matches"], "the shipped model should repeat the committed recall.json run"
        x, y = recall_eval_set(p, record["seed"])
        small = recall_accuracy(model, x[:SMALL_EVAL_RECALL], y[:SMALL_EVAL_RECALL])["accuracy"]
        assert record["small_eval"] == {"examples": SMALL_EVAL_RECALL, "accuracy": small}


def test_retraining_the_recall_model_repeats_its_first_losses_and_the_notebook_path_retrains_it(monkeypatch):
    from tl_minimal.course.shipped import RECALL_STEPS

    kept_model, record = load_shipped("triple_latent", steps=RECALL_STEPS, task="recall")
    monkeypatch.setattr(shipped, "load_shipped", lambda *a, **k: (kept_model, {**record, "steps": 3}))
    with one_thread():  # as the record was made
        retrained, kept = shipped.shipped_or_retrained("triple_latent", retrain=True, task="recall",
                                                       steps=RECALL_STEPS)
        expected, history = fit("triple_latent", protocol("recall", steps=3), record["seed"], device="cpu",
                                progress=False)
    assert kept["steps"] == 3 and not retrained.training
    assert _same_weights(retrained, expected)
    assert history["loss"] == pytest.approx(record["loss_log"]["loss"][:3], rel=1e-5)


def test_a_shipped_model_of_an_unknown_task_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown task"):
        shipped_paths("triple_latent", task="mqar")
