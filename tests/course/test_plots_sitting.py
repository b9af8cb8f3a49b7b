"""The helpers that keep notebooks 00-02 one sitting (issue 35): notebook 00's set-up checks and BPB
yardsticks, 01's and 02's run summaries, 02's recall curve read out. Each prints what the notebook
printed before the move, and refuses a wrong input."""

from __future__ import annotations

import math

import pytest
import torch

from tl_minimal.course import setup, shipped
from tl_minimal.training import device
from tl_minimal.training.evaluate import unigram_bits
from tl_minimal.training.protocols import protocol
from tl_minimal.views import tables


def test_setup_prints_device_missing_devices_and_smoke(capsys, monkeypatch):
    setup.print_device("9.9.9")
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == [*device.describe(), "tl_minimal"]
    assert lines[-1] == f"{'tl_minimal':12s} 9.9.9"
    setup.print_missing_devices()
    errors = capsys.readouterr().out.splitlines()
    missing = [k for k in ("cuda", "mps") if k not in device.available_devices()]
    assert [ln.split(" -> ")[0] for ln in errors] == [f"get_device({k!r})" for k in missing]
    assert all("not available here; available:" in ln for ln in errors)
    monkeypatch.setenv("TL_SMOKE", "1")
    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)
    setup.print_smoke_and_data()
    assert capsys.readouterr().out.splitlines() == [
        "smoke mode: True",
        "local data directory (TL_MINIMAL_DATA): not set, so WikiText-2 comes from Hugging Face datasets"]
    monkeypatch.setenv("TL_MINIMAL_DATA", "/somewhere/wikidata")
    setup.print_smoke_and_data()
    assert capsys.readouterr().out.splitlines()[1].endswith("set, a folder named 'wikidata'")


def test_baselines_and_training_text(capsys):
    tables.print_baselines(259, 4.5891)
    assert capsys.readouterr().out.splitlines() == [
        "uniform over 259 ids: 8.017 BPB",
        "unigram (byte frequencies of the train split), on the validation split: 4.589 BPB"]
    tables.print_training_text("the head", 1_000_000, protocol("lm"))
    source, seen = capsys.readouterr().out.splitlines()
    assert source == "training text: the head"
    assert seen == ("one 80-step run sees 80 x 16 windows x 128 bytes = 163,840 bytes, 16.4% of the "
                    "1,000,000 training bytes (windows may overlap)")


def test_unigram_on_record_chunks_is_the_baseline_on_the_scored_chunks():
    gen = torch.Generator().manual_seed(0)
    train, valid = torch.randint(0, 259, (5000,), generator=gen), torch.randint(0, 259, (3000,), generator=gen)
    record = {"protocol": {"task": "lm", "eval_batches": 2, "eval_batch_size": 3}, "val_bpb": 5.0}
    unigram, n = shipped.unigram_on_record_chunks(train, valid, record)
    seq = protocol("lm").seq_len
    y = torch.stack([valid[1 + i * seq: 1 + (i + 1) * seq] for i in range(6)])  # the first 6 chunks' targets
    assert n == 6 and unigram == pytest.approx(unigram_bits(train, y, 259))
    with pytest.raises(ValueError, match="shipped lm model's record"):
        shipped.unigram_on_record_chunks(train, valid, {"protocol": {"task": "recall"}, "accuracy": 1.0})


def test_short_run_and_shipped_record_lines(capsys):
    history = {"steps": 80, "seconds": 41.6, "loss": [5.0 * math.log(2), 3.25 * math.log(2)]}
    tables.print_short_run(history, 4.589, "the validation split")
    assert capsys.readouterr().out == ("80 steps in 42 s; training loss 5.000 -> 3.250 bits per byte "
                                       "(unigram baseline on the validation split: 4.589)\n")
    record = {"command": "python -m x", "train_seconds": 270.0, "threads": 1, "steps": 2000,
              "loss_log": {"loss": [2.5 * math.log(2)]}, "val_bpb": 2.6951}
    tables.print_shipped_record(record, 4.6712, 2048)
    assert capsys.readouterr().out.splitlines() == [
        "made by: python -m x  (4.5 min of training on 1 CPU thread)",
        "2000 steps: training loss 2.500 bits per byte at the last step, validation BPB 2.695 (unigram baseline on "
        "the same 2,048 chunks: 4.671)"]
    tables.print_shipped_bpb(record, 4.6712, 2048)
    assert capsys.readouterr().out == ("2000 steps (made by: python -m x, 4.5 min of training): validation BPB 2.695 "
                                       "(unigram baseline on the same 2,048 chunks: 4.671)\n")


def test_recall_at_reads_each_curve_at_S_and_at_the_end(capsys):
    curves = {8: torch.linspace(1, 0.45, 20), 16: torch.ones(20)}
    tables.print_recall_at(curves, 20)
    assert capsys.readouterr().out.splitlines() == [
        f"S =  8: recall with 8 pairs {curves[8][7]:.0%}, with 20 pairs 45%",
        "S = 16: recall with 16 pairs 100%, with 20 pairs 100%"]
