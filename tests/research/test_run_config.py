"""The research runs' training config (tl_research.run_config.RunConfig): warmup and cosine lr, checkpoints
and resumes, a time budget, and the research protocols that record them (moved from tests/model/test_train.py)."""

import math

import pytest
import torch

from tl_minimal import build_model
from tl_minimal.data import text as data_text
from tl_minimal.training.train import TrainConfig, seed_everything, train
from tl_research.checkpoint import Checkpoint, load_checkpoint
from tl_research.protocols import protocol
from tl_research.run_config import RunConfig, lr_at


def _model():
    return build_model("triple_latent", 259, d_model=16, n_layers=1, n_heads=2, max_seq_len=32)


def _sampler():
    tokens = torch.randint(0, 256, (5000,), generator=torch.Generator().manual_seed(0))
    return data_text.WindowSampler(tokens, batch_size=4, seq_len=32, seed=0)


def _train(steps: int, **changes) -> dict:
    return train(_model(), _sampler(), steps, RunConfig(device="cpu", progress=False), **changes)


def test_warmup_is_linear_then_constant():
    assert [lr_at(k, 1.0, 4) for k in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert lr_at(0, 3e-4, 0) == 3e-4


def test_cosine_schedule_warms_up_then_decays_to_near_zero():
    # W = 2 of K = 10 steps: 0.5, 1, then (1 + cos(pi (k - 2) / 8)) / 2 for k = 2..9
    lrs = [lr_at(k, 1.0, 2, "cosine", 10) for k in range(10)]
    assert lrs[:2] == [0.5, 1.0]
    assert lrs[2:] == pytest.approx([(1 + math.cos(math.pi * (k - 2) / 8)) / 2 for k in range(2, 10)])
    assert lrs[6] == pytest.approx(0.5) and 0 < lrs[-1] < 0.04
    assert lr_at(3, 1.0, 0, "cosine", 4) == pytest.approx((1 + math.cos(math.pi * 3 / 4)) / 2)
    with pytest.raises(ValueError):
        lr_at(5, 1.0, 2, "cosine")  # the decay needs the run's length


def test_train_follows_the_cosine_schedule():
    seed_everything(0)
    hist = _train(6, lr=1e-2, warmup_steps=2, lr_schedule="cosine")
    assert hist["lr"] == pytest.approx([lr_at(k, 1e-2, 2, "cosine", 6) for k in range(6)])
    with pytest.raises(ValueError, match="lr_schedule"):
        _train(2, lr_schedule="linear")
    with pytest.raises(ValueError, match="warmup_steps must be a whole number"):
        _train(2, warmup_steps=-1)


def test_a_default_run_config_trains_as_the_course_does():
    seed_everything(3)
    course = train(_model(), _sampler(), 5, device="cpu", progress=False)
    seed_everything(3)
    research = _train(5)
    assert research["loss"] == course["loss"] and research["lr"] == course["lr"]  # bit for bit


def test_resume_reproduces_the_uninterrupted_run_exactly(tmp_path):
    seed_everything(1)
    full = _train(8, lr=1e-2)["loss"]
    seed_everything(1)
    ckpt = tmp_path / "run.pt"
    first = _train(4, lr=1e-2, checkpoint=Checkpoint(ckpt))
    torch.manual_seed(12345)  # disturb every random state: resuming must restore them
    seed_everything(999)
    resumed = _train(8, lr=1e-2, checkpoint=Checkpoint(ckpt))
    assert first["loss"] == full[:4]
    assert resumed["loss"] == full  # bit-for-bit, including dropout
    assert load_checkpoint(ckpt, _model())["step"] == 8


def test_checkpoints_between_reads_hold_every_loss(tmp_path):
    seed_everything(5)
    full = _train(9, log_every=4)["loss"]
    seed_everything(5)
    ckpt = tmp_path / "c.pt"

    class Killed(Exception):
        pass

    sampler = _sampler()

    def dies_at_7(step):
        if step == 7:
            raise Killed
        return sampler(step)

    with pytest.raises(Killed):  # a run killed at step 7, last checkpoint after step 3 + 3 = 6
        train(_model(), dies_at_7, 9, RunConfig(device="cpu", progress=False, log_every=4,
                                                 checkpoint=Checkpoint(ckpt, every=3)))
    assert load_checkpoint(ckpt, _model())["history"]["loss"] == full[:6]
    resumed = _train(9, log_every=4, checkpoint=Checkpoint(ckpt))
    assert resumed["loss"] == full


def test_time_budget_stops_early():
    hist = _train(10_000, max_seconds=0.2)
    assert hist["steps"] < 10_000 and "time budget" in hist["stopped"]


def test_research_protocols_carry_a_run_config_and_record_it_flat():
    """The research protocols record the course's flat keys plus warmup_steps (and lr_schedule unless
    constant), in the order every committed results file has."""
    lm = protocol("lm")
    assert lm.train == RunConfig() and protocol("recall").train == RunConfig(weight_decay=0.01)
    assert list(lm.to_dict()) == ["task", "metric", "vocab_size", "d_model", "n_layers", "n_heads", "dropout",
                                  "seq_len", "batch_size", "steps", "lr", "weight_decay", "betas", "grad_clip",
                                  "warmup_steps", "seeds", "assumed", "eval_split", "eval_batches", "eval_batch_size"]
    cosine = protocol("lm", lr=1e-3, warmup_steps=5, lr_schedule="cosine", steps=7)
    assert (cosine.lr, cosine.train.warmup_steps, cosine.to_dict()["lr_schedule"]) == (1e-3, 5, "cosine")
    assert "lr_schedule" not in protocol("lm", lr_schedule="constant").to_dict()  # the paper's: recorded as absent
    assert "lr_schedule" not in protocol("recall").to_dict()  # files written before the field still match
    assert protocol("mqar", lr_schedule="cosine").to_dict()["lr_schedule"] == "cosine"
    assert cosine.train_config(device="cpu") == RunConfig(lr=1e-3, warmup_steps=5, lr_schedule="cosine", device="cpu")
    with pytest.raises(ValueError, match="lr_schedule must be one of constant, cosine"):  # RunConfig's check
        protocol("recall", lr_schedule="linear")
    with pytest.raises(ValueError, match="lr_schedule"):
        protocol("recall", lr_schedule="step")
    assert isinstance(protocol("tokenized").train, RunConfig) and isinstance(protocol("induction").train, RunConfig)
    assert issubclass(RunConfig, TrainConfig)


def test_fit_takes_a_checkpoint_as_a_keyword(tmp_path):
    from tl_minimal.training.recipes import build, fit

    p = protocol("recall", steps=2, batch_size=2, d_model=16, n_layers=1)
    ckpt = tmp_path / "c.pt"
    fit("triple_latent", p, 3, config=p.train_config(device="cpu", progress=False), checkpoint=Checkpoint(ckpt))
    assert load_checkpoint(ckpt, build("triple_latent", p))["step"] == 2


def test_a_time_budget_stop_shows_the_steps_done_in_a_notebook(monkeypatch):
    from IPython import display as ipy_display

    from tl_minimal.training import progress

    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(data["text/plain"])

    def display(data, raw, display_id):
        shown.append(data["text/plain"])
        return Handle()

    monkeypatch.setattr(ipy_display, "display", display)
    monkeypatch.setattr(progress, "in_jupyter_kernel", lambda: True)
    train(_model(), _sampler(), 10_000, RunConfig(device="cpu", desc="budget", max_seconds=0.2))
    assert "/10000 steps" in shown[-1] and "10000/10000" not in shown[-1]  # stopped early: says so


def test_torchrun_refuses_a_plain_train_config(monkeypatch):
    """Under torchrun only a RunConfig stops all ranks together; a course TrainConfig is refused before any work."""
    from tl_research import distributed

    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(TypeError, match=r"must be a tl_research\.run_config\.RunConfig"):
        distributed.fit("triple_latent", protocol("lm", steps=1), 0, config=TrainConfig(device="cpu"))
