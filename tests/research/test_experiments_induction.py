"""The induction measurement (per-position bits, the copy ratio) and the ``induction`` subcommand."""

import json
import math

import pytest
import torch
import torch.nn.functional as F

from conftest import FIXTURE_DATA
from tl_minimal import build_model
from tl_minimal.data.text import VOCAB_SIZE, encode
from tl_research import cli
from tl_research.protocols import protocol
from tl_research.studies.induction import (
    copy_losses,
    copy_summary,
    position_bits,
    read_switched_off,
)
from tl_research.tasks import induction_data as data_induction

TEXT = encode("the cat sat on the mat, and the dog sat on the log. " * 8)
L = 16


def _spans(n=12, seed=0):
    return data_induction.repeated_spans(TEXT, n, L, torch.Generator().manual_seed(seed))


class Copier(torch.nn.Module):
    """A hand-made perfect copier: uniform on the first copy; on the second, all its bet on the byte the
    first copy had one position later (x[t - L + 1]: at position t >= L the target is a_{t-L+1} again)."""

    def __init__(self, span_len: int, sure: float = 40.0):
        super().__init__()
        self.span_len, self.sure = span_len, sure
        self.dummy = torch.nn.Parameter(torch.zeros(1))  # so that the measurement finds a device

    def forward(self, x):
        logits = torch.zeros(*x.shape, VOCAB_SIZE) + 0 * self.dummy  # [B, T, V]
        source = x[:, 1 : self.span_len + 1]  # [B, L]: a_1 .. a_L, the second copy's targets in order
        logits[:, self.span_len :].scatter_(-1, source[:, :, None], self.sure)
        return logits


class Unigram(torch.nn.Module):
    """Context-free: the same distribution at every position (no copying possible)."""

    def __init__(self):
        super().__init__()
        self.logits = torch.nn.Parameter(torch.randn(VOCAB_SIZE, generator=torch.Generator().manual_seed(0)))

    def forward(self, x):
        return self.logits.expand(*x.shape, VOCAB_SIZE)


def test_position_bits_is_the_mean_cross_entropy_in_bits_at_each_position():
    torch.manual_seed(0)
    model = build_model("transformer", VOCAB_SIZE, d_model=16, n_layers=1, max_seq_len=2 * L)
    x, y = _spans()
    bits = position_bits(model, x, y, batch_size=5)  # batches of 5, 5, 2: the mean is over all 12
    assert model.training  # measured in eval mode, then put back in the mode it was in
    model.eval()
    with torch.no_grad():
        ref = F.cross_entropy(model(x).transpose(1, 2), y, reduction="none").mean(0) / math.log(2)  # [2L]
    assert bits.shape == (2 * L,) and torch.allclose(bits, ref, rtol=1e-5, atol=1e-6)


def test_a_perfect_copier_has_ratio_zero_and_a_context_free_model_ratio_one():
    x, y = _spans()
    out = copy_losses(Copier(L), x, y, L)
    assert out["first_bits"] == pytest.approx(math.log2(VOCAB_SIZE), rel=1e-5)  # uniform over 259 ids
    assert out["second_bits"] < 1e-12 and out["ratio"] < 1e-12
    assert len(out["curve_first"]) == len(out["curve_second"]) == L
    same = copy_losses(Unigram(), x, y, L)  # the same bytes in both copies: the same loss, byte for byte
    assert same["ratio"] == pytest.approx(1.0, abs=1e-6) and same["curve_first"] == same["curve_second"]
    rnd = copy_losses(Copier(L), *data_induction.repeated_random(8, L, seq_len=2 * L), L)
    assert rnd["ratio"] < 1e-12 and rnd["first_bits"] == pytest.approx(math.log2(VOCAB_SIZE), rel=1e-5)


def test_copy_summary_checks_its_input():
    with pytest.raises(ValueError, match=r"bits must be \[2 \* span_len\] = \[8\]"):
        copy_summary(torch.ones(7), 4)
    with pytest.raises(ValueError, match="same shape"):
        position_bits(Unigram(), torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 5, dtype=torch.long))


TINY = ["--set", "d_model=16", "--set", "n_layers=1", "--no-progress", "--device", "cpu", "--steps", "2",
        "--eval-batches", "1", "--eval-examples", "8"]


def _run(tmp_path, monkeypatch, *args, name="r.json"):
    monkeypatch.setenv("TL_MINIMAL_DATA", str(FIXTURE_DATA))
    out = tmp_path / name
    code = cli.main(["induction", *args, *TINY, "--out", str(out)])
    return code, (json.loads(out.read_text(encoding="utf-8")) if out.exists() else None)


@pytest.mark.slow
def test_induction_run_writes_both_ratios_the_curves_and_the_bpb(tmp_path, monkeypatch):
    code, res = _run(tmp_path, monkeypatch, "--variants", "gated_hybrid_repaired", "transformer", "--seeds", "1",
                     "--checkpoint-every", "1")
    assert code == 0 and res["task"] == "induction" and res["complete"] and len(res["runs"]) == 2
    run = res["runs"][0]
    assert run["metric"] == "copy_ratio" and run["value"] == run["text"]["ratio"] and run["steps"] == 2
    for kind in ("text", "random", "text_control", "random_control"):
        r = run[kind]
        assert r["ratio"] == pytest.approx(r["second_bits"] / r["first_bits"])
        assert len(r["curve_first"]) == len(r["curve_second"]) == 64
    assert 4.0 < run["bpb"] < 9.5 and run["span_len"] == 64 and run["eval_examples"] == 8
    assert run["chance"]["no_copy_ratio"] == 1.0 and run["chance"]["random_bytes_bits"] == 8.0
    assert 3.0 < run["chance"]["unigram_text_bits"] < 6.0 and len(run["loss_curve"]) == 2
    assert set(run["random_control_read_off"]) == set(run["text"]) and "text_read_off" not in res["runs"][1]
    assert res["protocol"]["span_len"] == 64 and "read twice" in res["protocol"]["data_source"]


@pytest.mark.slow
def test_induction_trains_exactly_as_lm(tmp_path, monkeypatch):
    """The same recipe: an lm run of the same settings has the same validation BPB."""
    code, ind = _run(tmp_path, monkeypatch, "--variants", "triple_latent", "--seeds", "0")
    out = tmp_path / "lm.json"
    assert code == 0 and cli.main(["lm", "--variants", "triple_latent", "--seeds", "0", *TINY[:-2],
                                   "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][0]["value"] == ind["runs"][0]["bpb"]


@pytest.mark.parametrize("args, words", [
    (["--protocol", "span_len=65"], ("induction: span_len=65 is longer than half the context: two copies need 130 "
                                    "positions, the models see seq_len=128 (span_len <= 64)")),
    (["--protocol", "seq_len=64", "--protocol", "span_len=40"], "(span_len <= 32)"),
])
def test_impossible_spans_are_one_line_errors(args, words, tmp_path, monkeypatch, capsys):
    code, _ = _run(tmp_path, monkeypatch, "--variants", "transformer", *args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and words in err and "Traceback" not in err


def test_defaults_are_the_papers_lm_protocol_at_80_steps():
    p, lm = protocol("induction"), protocol("lm")
    assert (p.steps, p.span_len, p.eval_examples, p.metric) == (80, 64, 512, "copy_ratio")
    assert p.model_config() == lm.model_config() and (p.lr, p.batch_size, p.seq_len) == (lm.lr, lm.batch_size, 128)


def test_read_switched_off_removes_only_what_the_read_returns():
    torch.manual_seed(0)
    model = build_model("gated_hybrid_repaired", VOCAB_SIZE, d_model=16, n_layers=1, max_seq_len=2 * L).eval()
    x, _ = _spans(4)
    with torch.no_grad():
        model.kv.norm.bias.normal_()  # a nonzero bias: "nothing read" is LN(0) = the bias, not 0
        model.kv.value.weight.mul_(100)  # a read large enough to matter (above the LayerNorm's epsilon)
        on = model(x)
        with read_switched_off(model):
            off = model(x)
        again = model(x)
    assert torch.equal(on, again)  # the switch is gone after the block
    # the "previous" read sees no entry at t = 0, 1 (it returns m = 0 there anyway): unchanged
    assert torch.allclose(on[:, :2], off[:, :2], atol=1e-6) and not torch.allclose(on[:, 2:], off[:, 2:], atol=1e-3)
    transformer = build_model("transformer", VOCAB_SIZE, d_model=16, n_layers=1)
    with pytest.raises(ValueError, match="needs a gated hybrid"), read_switched_off(transformer):
        pass
