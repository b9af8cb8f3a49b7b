"""The training loop and the metrics, on tiny stand-in models (fast, no data files)."""

import math

import pytest
import torch
from torch import nn

from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.training.evaluate import bits_per_byte, mean_token_loss, recall_accuracy
from tl_minimal.training.train import TrainingDiverged, lr_at, seed_everything, train
from tl_research.checkpoint import Checkpoint, load_checkpoint


class TinyLM(nn.Module):
    """Embedding -> dropout -> causal mean of the past -> linear: enough to learn something."""

    def __init__(self, vocab=259, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        h = self.drop(self.emb(tokens))  # [B, T, d]
        h = h.cumsum(1) / torch.arange(1, tokens.shape[1] + 1)[:, None]
        return self.head(h)


class Uniform(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab
        self.dummy = nn.Parameter(torch.zeros(()))

    def forward(self, tokens):
        return torch.zeros(*tokens.shape, self.vocab) + 0 * self.dummy


class Oracle(nn.Module):
    """Looks the queried key up in the context and puts all its mass on the value after it."""

    def __init__(self, vocab=64):
        super().__init__()
        self.vocab = vocab
        self.dummy = nn.Parameter(torch.zeros(()))

    def forward(self, tokens):
        B, T = tokens.shape
        logits = torch.zeros(B, T, self.vocab)
        for b in range(B):
            for t in range(1, T):
                if tokens[b, t] == data_recall.PAPER_LAYOUT.ANSWER:
                    key = tokens[b, t - 1]
                    pos = int((tokens[b, : t - 2] == key).nonzero()[0])
                    logits[b, t, tokens[b, pos + 1]] = 10.0
        return logits


def _sampler():
    return data_text.WindowSampler(
        torch.randint(0, 256, (5000,), generator=torch.Generator().manual_seed(0)),
        batch_size=4,
        seq_len=32,
        seed=0,
    )


def test_training_lowers_the_loss_and_returns_history():
    seed_everything(0)
    model = TinyLM()
    hist = train(model, _sampler(), steps=30, lr=1e-2, device="cpu", progress=False)
    assert len(hist["loss"]) == 30 and hist["steps"] == 30 and hist["stopped"] == "done"
    assert sum(hist["loss"][-5:]) < sum(hist["loss"][:5])
    assert hist["lr"] == [1e-2] * 30 and hist["seconds"] > 0


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
    hist = train(TinyLM(), _sampler(), steps=6, lr=1e-2, warmup_steps=2, lr_schedule="cosine", device="cpu",
                 progress=False)
    assert hist["lr"] == pytest.approx([lr_at(k, 1e-2, 2, "cosine", 6) for k in range(6)])
    with pytest.raises(ValueError, match="lr_schedule"):
        train(TinyLM(), _sampler(), steps=2, lr_schedule="linear", device="cpu", progress=False)


def test_protocol_lr_schedule_is_omitted_while_constant():
    from tl_research.protocols import protocol

    assert "lr_schedule" not in protocol("recall").to_dict()  # files written before the field still match
    assert "lr_schedule" not in protocol("recall", lr_schedule="constant").to_dict()
    assert protocol("mqar", lr_schedule="cosine").to_dict()["lr_schedule"] == "cosine"
    with pytest.raises(ValueError, match="lr_schedule"):
        protocol("recall", lr_schedule="step")


def test_resume_reproduces_the_uninterrupted_run_exactly(tmp_path):
    seed_everything(1)
    full = train(TinyLM(), _sampler(), steps=8, lr=1e-2, device="cpu", progress=False)["loss"]

    seed_everything(1)
    ckpt = tmp_path / "run.pt"
    first = train(TinyLM(), _sampler(), steps=4, lr=1e-2, device="cpu", progress=False, checkpoint=Checkpoint(ckpt))
    torch.manual_seed(12345)  # disturb every random state: resuming must restore them
    seed_everything(999)
    resumed = train(
        TinyLM(),
        _sampler(),
        steps=8,
        lr=1e-2,
        device="cpu",
        progress=False,
        checkpoint=Checkpoint(ckpt),
    )
    assert first["loss"] == full[:4]
    assert resumed["loss"] == full  # bit-for-bit, including dropout
    model = TinyLM()
    assert load_checkpoint(ckpt, model)["step"] == 8


def test_nan_loss_stops_with_the_step_named():
    class Blows(TinyLM):
        def forward(self, tokens):
            out = super().forward(tokens)
            self.calls = getattr(self, "calls", 0) + 1
            return out * float("nan") if self.calls == 3 else out

    with pytest.raises(TrainingDiverged, match="at step 2"):
        train(Blows(), _sampler(), steps=5, device="cpu", progress=False)


def test_losses_are_read_every_log_every_steps_and_are_the_same_numbers():
    seed_everything(4)
    every_step = train(TinyLM(), _sampler(), steps=13, device="cpu", progress=False, log_every=1)["loss"]
    seed_everything(4)
    batched = train(TinyLM(), _sampler(), steps=13, device="cpu", progress=False, log_every=5)["loss"]
    assert batched == every_step and len(batched) == 13  # one float per step, bit for bit
    with pytest.raises(ValueError, match="log_every"):
        train(TinyLM(), _sampler(), steps=2, device="cpu", progress=False, log_every=0)


def test_a_nan_found_at_the_read_names_the_first_bad_step():
    class Blows(TinyLM):
        def forward(self, tokens):
            out = super().forward(tokens)
            self.calls = getattr(self, "calls", 0) + 1
            return out * float("nan") if self.calls in (13, 15) else out

    with pytest.raises(TrainingDiverged, match=r"became nan at step 12 \(counting from 0, of 30\)"):
        train(Blows(), _sampler(), steps=30, device="cpu", progress=False)  # read at step 19


def test_checkpoints_between_reads_hold_every_loss(tmp_path):
    seed_everything(5)
    full = train(TinyLM(), _sampler(), steps=9, device="cpu", progress=False, log_every=4)["loss"]
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
        train(TinyLM(), dies_at_7, steps=9, device="cpu", progress=False, log_every=4,
              checkpoint=Checkpoint(ckpt, every=3))
    assert load_checkpoint(ckpt, TinyLM())["history"]["loss"] == full[:6]
    resumed = train(TinyLM(), _sampler(), steps=9, device="cpu", progress=False, log_every=4,
                    checkpoint=Checkpoint(ckpt))
    assert resumed["loss"] == full


def test_time_budget_stops_early():
    hist = train(TinyLM(), _sampler(), steps=10_000, device="cpu", progress=False, max_seconds=0.2)
    assert hist["steps"] < 10_000 and "time budget" in hist["stopped"]


def test_steps_must_be_positive():
    with pytest.raises(ValueError, match="steps"):
        train(TinyLM(), _sampler(), steps=0, device="cpu", progress=False)


def test_uniform_model_scores_log2_259_bits_per_byte():
    tokens = data_text.encode("a small text to measure " * 20)
    batches = data_text.eval_batches(tokens, seq_len=16, batch_size=4)
    assert bits_per_byte(Uniform(259), batches) == pytest.approx(math.log2(259), abs=1e-5)
    assert math.log2(259) == pytest.approx(8.017, abs=1e-3)
    assert mean_token_loss(Uniform(259), batches[:1]) == pytest.approx(math.log(259), abs=1e-5)


def test_recall_accuracy_of_an_oracle_is_one_and_uniform_guess_is_zero():
    x, y = data_recall.eval_set(64, seed=0, seq_len=32)
    assert recall_accuracy(Oracle(), x, y, batch_size=16)["accuracy"] == 1.0
    assert recall_accuracy(Uniform(64), x, y)["accuracy"] == 0.0  # argmax of ties is id 0 (PAD)
    mx, my = data_recall.eval_set(32, seed=0, n_queries=3, n_pairs=4, seq_len=40)
    result = recall_accuracy(Oracle(), mx, my)
    assert result["accuracy"] == 1.0 and result["per_query"] == [1.0, 1.0, 1.0] and result["n"] == 32


def test_metrics_leave_the_model_in_training_mode():
    model = TinyLM()
    model.train()
    bits_per_byte(model, data_text.eval_batches(data_text.encode("abc" * 50), 16, 4))
    assert model.training


@pytest.mark.slow
def test_fit_is_the_recipe_and_reproduces_with_its_seed():
    from tl_minimal.training.recipes import count_parameters, fit
    from tl_research import protocol

    p = protocol("recall", steps=3, batch_size=4)
    model, history = fit("triple_latent", p, seed=5, device="cpu", progress=False)
    again, history2 = fit("triple_latent", p, seed=5, device="cpu", progress=False)
    assert history["steps"] == 3 and len(history["loss"]) == 3
    assert history["loss"] == history2["loss"]  # same seed: same initialization, batches and dropout
    assert count_parameters(model) == count_parameters(again) > 0
    with pytest.raises(ValueError, match="tokenized protocol needs its token stream"):
        fit("triple_latent", protocol("tokenized", steps=1), device="cpu", progress=False)


def test_the_protocols_betas_reach_adamw(monkeypatch):
    """Protocol.betas is recorded in every results file, so it must be what AdamW uses."""
    from tl_minimal.training import train as train_module
    from tl_minimal.training.recipes import fit
    from tl_research import protocol
    from tl_research.protocols import PROTOCOLS

    assert {tuple(p.betas) for p in PROTOCOLS.values()} == {(0.9, 0.999)}  # torch's default: no number moves
    seen = []
    real = train_module.make_optimizer

    def spy(model, lr, weight_decay, betas=(0.9, 0.999), device=None):
        optimizer = real(model, lr, weight_decay, betas, device=device)
        seen.append(optimizer.defaults["betas"])
        return optimizer

    monkeypatch.setattr(train_module, "make_optimizer", spy)
    p = protocol("recall", steps=1, batch_size=2, betas=(0.8, 0.95), d_model=16, n_layers=1)
    fit("triple_latent", p, seed=0, config=p.train_config(device="cpu", progress=False))
    assert seen == [(0.8, 0.95)]


def test_fit_takes_a_tasks_own_sampler_and_one_train_config(tmp_path):
    from tl_minimal.training.recipes import fit, make_sampler
    from tl_research import protocol

    p = protocol("recall", steps=2, batch_size=2, d_model=16, n_layers=1)
    config = p.train_config(device="cpu", progress=False)
    assert (config.lr, config.weight_decay, config.grad_clip) == (p.lr, p.weight_decay, p.grad_clip)
    over = {"state_dim": 4}
    model, history = fit("triple_latent", p, 3, sampler=make_sampler(p, 3), overrides=over, config=config)
    _, same = fit("triple_latent", p, 3, overrides=over, config=config)  # the protocol's sampler: the same batches
    assert history["loss"] == same["loss"] and model.config.state_dim == 4
    ckpt = tmp_path / "c.pt"
    fit("triple_latent", p, 3, overrides=over, config=config, checkpoint=Checkpoint(ckpt))  # a keyword: one field
    assert ckpt.exists()


def test_a_protocol_holds_one_train_config_and_records_it_flat():
    """The optimizer settings live once, in the protocol's TrainConfig; the record and --protocol keep
    the flat keys every committed results file has, in the same order."""
    from tl_minimal.registry import COMMON
    from tl_minimal.training.protocols import protocol
    from tl_minimal.training.train import TrainConfig

    lm = protocol("lm")
    assert lm.train == TrainConfig() and protocol("recall").train == TrainConfig(weight_decay=0.01)
    assert {k: getattr(lm, k) for k in ("d_model", "n_layers", "n_heads", "dropout")} == {
        k: COMMON[k] for k in ("d_model", "n_layers", "n_heads", "dropout")} and lm.seq_len == COMMON["max_seq_len"]
    assert list(lm.to_dict()) == ["task", "metric", "vocab_size", "d_model", "n_layers", "n_heads", "dropout",
                                  "seq_len", "batch_size", "steps", "lr", "weight_decay", "betas", "grad_clip",
                                  "warmup_steps", "seeds", "assumed", "eval_split", "eval_batches", "eval_batch_size"]
    cosine = protocol("lm", lr=1e-3, warmup_steps=5, lr_schedule="cosine", steps=7)
    assert (cosine.lr, cosine.train.warmup_steps, cosine.to_dict()["lr_schedule"]) == (1e-3, 5, "cosine")
    assert "lr_schedule" not in protocol("lm", lr_schedule="constant").to_dict()  # the paper's: recorded as absent
    assert cosine.train_config(device="cpu") == TrainConfig(lr=1e-3, warmup_steps=5, lr_schedule="cosine", device="cpu")
    with pytest.raises(ValueError, match="lr_schedule must be one of constant, cosine"):  # TrainConfig's check
        protocol("recall", lr_schedule="linear")
    with pytest.raises(AttributeError, match=r"p.replace\(lr=...\)"):
        lm.lr = 1.0  # would be ignored by training and the record


def test_unigram_bits_is_the_frequency_model():
    from tl_minimal.training.evaluate import IGNORE, unigram_bits

    train_tokens = torch.tensor([0, 0, 0, 1])  # counts + 1: [4, 2, 1] over vocab 3, total 7
    bits = unigram_bits(train_tokens, torch.tensor([[0, 2, IGNORE]]), vocab_size=3)
    assert math.isclose(bits, (-math.log2(4 / 7) - math.log2(1 / 7)) / 2)
    with pytest.raises(ValueError, match=r"ids in \[0, 3\)"):
        unigram_bits(train_tokens, torch.tensor([3]), vocab_size=3)


def test_progress_in_a_notebook_ends_as_one_final_line(monkeypatch):
    """In a kernel, progress is one text output updated in place (never a widget bar that an
    executed notebook would save frozen at 0%), and its last state names the steps done."""
    from IPython import display as ipy_display

    from tl_minimal.training import progress

    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(data["text/plain"])

    def display(data, raw, display_id):
        assert raw and display_id and set(data) == {"text/plain"}  # plain text: no widget
        shown.append(data["text/plain"])
        return Handle()

    monkeypatch.setattr(ipy_display, "display", display)
    monkeypatch.setattr(progress, "in_jupyter_kernel", lambda: True)
    hist = train(TinyLM(), _sampler(), steps=5, lr=1e-2, device="cpu", desc="tiny")
    assert shown[0].startswith("tiny: ") and "0/5 steps" in shown[0]
    assert "5/5 steps" in shown[-1] and "loss" in shown[-1] and "%|" not in shown[-1]
    assert hist["steps"] == 5
    shown.clear()
    train(TinyLM(), _sampler(), steps=10_000, lr=1e-2, device="cpu", desc="budget", max_seconds=0.2)
    assert "/10000 steps" in shown[-1] and "10000/10000" not in shown[-1]  # stopped early: says so
    monkeypatch.setattr(progress, "in_jupyter_kernel", lambda: False)
    shown.clear()
    train(TinyLM(), _sampler(), steps=2, lr=1e-2, device="cpu", progress=True)
    assert shown == []  # outside a kernel: tqdm's text bar on stderr
