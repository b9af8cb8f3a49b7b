"""The training loop and the metrics, on tiny stand-in models (fast, no data files)."""

import math

import pytest
import torch
from torch import nn

from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.training.evaluate import bits_per_byte, mean_token_loss, recall_accuracy
from tl_minimal.training.train import TrainingDiverged, seed_everything, train


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
    with pytest.raises(ValueError, match="no training data for task 'tokenized': expected lm, recall or mqar"):
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


def test_fit_takes_a_tasks_own_sampler_and_one_train_config():
    from tl_minimal.training.recipes import fit, make_sampler
    from tl_research import protocol

    p = protocol("recall", steps=2, batch_size=2, d_model=16, n_layers=1)
    config = p.train_config(device="cpu", progress=False)
    assert (config.lr, config.weight_decay, config.grad_clip) == (p.lr, p.weight_decay, p.grad_clip)
    over = {"state_dim": 4}
    model, history = fit("triple_latent", p, 3, sampler=make_sampler(p, 3), overrides=over, config=config)
    _, same = fit("triple_latent", p, 3, overrides=over, config=config)  # the protocol's sampler: the same batches
    assert history["loss"] == same["loss"] and model.config.state_dim == 4
    _, quiet = fit("triple_latent", p, 3, overrides=over, config=config, desc="quiet")  # a keyword: one field
    assert quiet["loss"] == same["loss"]


def test_a_protocol_holds_one_train_config_and_records_it_flat():
    """The optimizer settings live once, in the protocol's TrainConfig; the record and --protocol keep
    them as flat keys (the research protocols add warmup_steps: tests/research/test_run_config.py)."""
    from tl_minimal.registry import COMMON
    from tl_minimal.training.protocols import protocol
    from tl_minimal.training.train import TrainConfig

    lm = protocol("lm")
    assert lm.train == TrainConfig() and protocol("recall").train == TrainConfig(weight_decay=0.01)
    assert {k: getattr(lm, k) for k in ("d_model", "n_layers", "n_heads", "dropout")} == {
        k: COMMON[k] for k in ("d_model", "n_layers", "n_heads", "dropout")} and lm.seq_len == COMMON["max_seq_len"]
    assert list(lm.to_dict()) == ["task", "metric", "vocab_size", "d_model", "n_layers", "n_heads", "dropout",
                                  "seq_len", "batch_size", "steps", "lr", "weight_decay", "betas", "grad_clip",
                                  "seeds", "assumed", "eval_split", "eval_batches", "eval_batch_size"]
    fast = protocol("lm", lr=1e-3, steps=7)
    assert fast.train_config(device="cpu") == TrainConfig(lr=1e-3, device="cpu")
    with pytest.raises(ValueError, match="the lm protocol has no such field"):  # the course has no lr schedule
        protocol("lm", warmup_steps=5)
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
    monkeypatch.setattr(progress, "in_jupyter_kernel", lambda: False)
    shown.clear()
    train(TinyLM(), _sampler(), steps=2, lr=1e-2, device="cpu", progress=True)
    assert shown == []  # outside a kernel: tqdm's text bar on stderr
