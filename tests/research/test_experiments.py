"""The experiments command: tiny runs of every task with real variants, the JSON, and the errors."""

import itertools
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from conftest import FIXTURE_DATA, data_dirs, head_only_copy
from tl_minimal.training.device import available_devices
from tl_research import cli, protocol
from tl_research.protocols import PAPER_VARIANTS, PROTOCOLS

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--set", "d_model=16", "--set", "n_layers=1", "--no-progress", "--device", "cpu"]
_FILES = itertools.count()
RUN_KEYS = {"variant", "seed", "params", "metric", "value", "steps", "seconds", "device"}


def _run(tmp_path, *args):
    out = tmp_path / f"results-{next(_FILES)}.json"  # one file per suite: another suite's file is refused
    code = cli.main([*args, *TINY, "--out", str(out)])
    return code, (json.loads(out.read_text(encoding="utf-8")) if out.exists() else None)


def _lm_data(root, tmp_path):
    """The fixture as an offline copy holds it (train split: a head only), or the real directory."""
    return head_only_copy(root, tmp_path / "data") if root == FIXTURE_DATA else root


@pytest.mark.slow
@pytest.mark.parametrize("root", data_dirs())
def test_lm_run_writes_the_promised_json(tmp_path, monkeypatch, capsys, root):
    root = _lm_data(root, tmp_path)
    head_only = not (root / "wikitext-2-raw" / "wiki.train.raw").is_file()
    monkeypatch.setenv("TL_MINIMAL_DATA", str(root))
    code, res = _run(
        tmp_path,
        "lm",
        "--variants",
        "transformer",
        "triple_latent",
        "--seeds",
        "0",
        "1",
        "--steps",
        "2",
        "--eval-batches",
        "2",
    )
    assert code == 0
    assert res["task"] == "lm" and len(res["runs"]) == 4
    run = res["runs"][0]
    assert RUN_KEYS <= set(run) and run["metric"] == "bpb" and run["steps"] == 2 and run["device"] == "cpu"
    assert 4.0 < run["value"] < 9.5 and run["params"] > 0 and run["config"]["d_model"] == 16
    p = res["protocol"]
    assert p["lr"] == 3e-4 and p["weight_decay"] == 0.05 and p["batch_size"] == 16 and p["eval_batches"] == 2
    train_words = "head of the train split" if head_only else "full train split"
    assert train_words in p["data_source"] and p["overrides"] == {"d_model": 16, "n_layers": 1}
    assert "$TL_MINIMAL_DATA/wikitext-2-raw/" in p["data_source"] and str(root) not in p["data_source"]
    assert p["environment"]["torch"] and "git_commit" in p["environment"]
    printed = capsys.readouterr().out
    assert train_words in printed and ("NOTE training windows" in printed) is head_only and "transformer" in printed


@pytest.mark.slow
def test_recall_and_mqar_report_accuracy_fractions(tmp_path):
    code, res = _run(
        tmp_path,
        "recall",
        "--variants",
        "transformer",
        "--seeds",
        "3",
        "--steps",
        "2",
        "--eval-examples",
        "64",
    )
    assert code == 0 and res["protocol"]["weight_decay"] == 0.01 and res["protocol"]["batch_size"] == 32
    run = res["runs"][0]
    assert run["metric"] == "accuracy" and 0.0 <= run["value"] <= 1.0 and run["eval_examples"] == 64
    code, res = _run(
        tmp_path,
        "mqar",
        "--variants",
        "triple_hybrid",
        "--seeds",
        "0",
        "--steps",
        "1",
        "--eval-examples",
        "32",
    )
    assert code == 0 and len(res["runs"][0]["per_query"]) == res["protocol"]["n_queries"] == 4


@pytest.mark.parametrize("root", data_dirs())
def test_tokenized_reports_mean_token_loss_and_its_corpus(tmp_path, monkeypatch, root):
    monkeypatch.setenv("TL_MINIMAL_DATA", str(root))
    monkeypatch.delenv("TL_MINIMAL_MINIMIND_JSONL", raising=False)
    code, res = _run(
        tmp_path,
        "tokenized",
        "--variants",
        "transformer",
        "--seeds",
        "1",
        "--steps",
        "2",
        "--eval-batches",
        "2",
    )
    assert code == 0 and res["runs"][0]["metric"] == "loss" and 5.0 < res["runs"][0]["value"] < 10.0
    assert "stand-in WikiText-2" in res["protocol"]["data_source"] and res["protocol"]["vocab_size"] == 6400


def test_protocol_fields_can_be_changed(tmp_path):
    code, res = _run(
        tmp_path,
        "recall",
        "--variants",
        "transformer",
        "--steps",
        "2",
        "--eval-examples",
        "32",
        "--protocol",
        "warmup_steps=5",
        "--protocol",
        "lr=1e-3",
        "--protocol",
        "n_pairs=3",
    )
    assert code == 0 and res["protocol"]["warmup_steps"] == 5 and res["protocol"]["lr"] == 1e-3
    assert res["protocol"]["n_pairs"] == 3


def test_time_budget_is_recorded(tmp_path):
    code, res = _run(
        tmp_path,
        "recall",
        "--variants",
        "transformer",
        "--seeds",
        "0",
        "--steps",
        "100000",
        "--max-seconds",
        "0.5",
        "--eval-examples",
        "32",
    )
    assert code == 0 and res["runs"][0]["steps"] < 100000 and "time budget" in res["runs"][0]["stopped"]


def test_defaults_are_the_paper_protocols():
    lm, rec, tok = protocol("lm"), protocol("recall"), protocol("tokenized")
    assert (lm.steps, lm.batch_size, lm.seq_len, lm.eval_batches, lm.grad_clip, lm.dropout) == (
        80,
        16,
        128,
        128,
        1.0,
        0.1,
    )
    assert (rec.vocab_size, rec.batch_size, rec.steps, rec.weight_decay, rec.eval_examples) == (
        64,
        32,
        200,
        0.01,
        2048,
    )
    assert (
        tok.vocab_size,
        tok.d_model,
        tok.n_layers,
        tok.seq_len,
        tok.batch_size,
        tok.steps,
        tok.eval_batches,
        tok.seeds,
    ) == (6400, 96, 2, 96, 4, 120, 32, (1, 2, 3))
    assert len(PAPER_VARIANTS) == 6


def _unavailable_device():
    missing = [d for d in ("cuda", "mps") if d not in available_devices()]
    return missing[0] if missing else None


@pytest.mark.parametrize(
    "args, words",
    [
        (["speling"], "invalid choice"),
        (["lm", "--variants", "nope"], "unknown variant 'nope'"),
        (["recall", "--steps", "0"], "must be >= 1"),
        (["recall", "--steps", "many"], "whole number"),
        (["recall", "--set", "no_such_setting=3"], "no_such_setting"),
        (["recall", "--set", "d_model=-4", "--variants", "transformer"], "d_model"),
        (["recall", "--eval-batches", "3"], "unrecognized"),
        (["recall", "--device", "tpu"], "unknown device"),
        (["recall", "--protocol", "no_field=1"], "no such field"),
    ],
)
def test_bad_arguments_give_one_line_and_status_2(args, words, capsys):
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and words in err and "\n" not in err and "Traceback" not in err


def test_unavailable_device_is_a_one_line_error(capsys):
    device = _unavailable_device()
    if device is None:
        pytest.skip("every device type is available here")
    assert cli.main(["recall", "--variants", "transformer", "--device", device]) == 2
    err = capsys.readouterr().err.strip()
    assert "not available" in err and "\n" not in err


def test_missing_data_names_both_ways(monkeypatch, capsys):
    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)

    def offline(*a, **k):
        raise ConnectionError("offline")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=offline))
    assert cli.main(["lm", "--variants", "transformer", "--steps", "1", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip()
    assert "TL_MINIMAL_DATA" in err and "datasets" in err and "\n" not in err


def test_diverged_run_is_recorded_and_exits_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(PROTOCOLS["recall"].train, "lr", 1e30)  # the first step throws the weights to infinity
    code, res = _run(tmp_path, "recall", "--variants", "transformer", "--steps", "3", "--eval-examples", "32")
    assert code == 1 and res["runs"][0]["value"] is None and "at step 1" in res["runs"][0]["error"]
    assert "diverged" in capsys.readouterr().err


@pytest.mark.slow
def test_module_entry_point_from_a_terminal():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "research")])}
    done = subprocess.run(
        [sys.executable, "-m", "tl_research", "recall", "--variants", "bogus"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "bogus" in done.stderr
    helped = subprocess.run(
        [sys.executable, "-m", "tl_research", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert helped.returncode == 0 and "lm" in helped.stdout and "tokenized" in helped.stdout


def test_one_command_line_holds_the_tasks_speed_and_the_study(capsys):
    from tl_research import recall_study
    from tl_research.arguments import build_parser

    args = build_parser().parse_args(["study", "init", "--ablations", "--set", "a=1", "--set", "b=true"])
    assert args.command == "study" and args.study_command == "init" and dict(args.overrides) == {"a": 1, "b": True}
    assert build_parser().parse_args(["speed", "--set", "d_model=16"]).overrides == [("d_model", 16)]
    assert cli.main(["study", "train", "--variants", "transformer", "--set", "a=1", "b=2"]) == 2  # one per flag
    assert "unrecognized arguments: b=2" in capsys.readouterr().err
    assert recall_study.main(["alias-init", "--variants",
                              "gated_hybrid_repaired"]) == 2  # the old module: where it went
    err = capsys.readouterr().err
    assert "python -m tl_research study alias-init" in err and "train" not in err


def test_recorded_command_names_the_module_not_this_machines_path(monkeypatch):
    from tl_research import provenance as runner

    package = ROOT / "research" / "tl_research"
    monkeypatch.setattr(sys, "argv", [str(package / "__main__.py"), "lm", "--seeds", "0"])
    assert runner.command_line() == "python -m tl_research lm --seeds 0"
    monkeypatch.setattr(sys, "argv", [str(package / "studies" / "x.py"), "train", "--seeds", "1"])
    assert runner.command_line() == "python -m tl_research.studies.x train --seeds 1"
    monkeypatch.setattr(sys, "argv", ["my_script.py", "--x"])  # not a module of the package: as typed
    assert runner.command_line() == "my_script.py --x"


def test_recorded_command_writes_paths_in_the_checkout_relative_to_it(monkeypatch, tmp_path):
    from tl_research import cli
    from tl_research import provenance as runner

    inside, outside = ROOT / "data" / "results" / "x.json", tmp_path / "y.json"
    assert runner.portable(str(inside)) == "data/results/x.json"
    assert runner.portable(f"--out={inside}") == "--out=data/results/x.json"
    assert runner.portable(str(outside)) == str(outside)  # elsewhere: kept, it is where the file is
    assert runner.portable("data/results/x.json") == "data/results/x.json" and runner.portable("7") == "7"
    monkeypatch.setattr(sys, "argv", [str(ROOT / "research" / "tl_research" / "__main__.py"), "lm", "--out",
                                      str(inside)])
    assert runner.command_line() == "python -m tl_research lm --out data/results/x.json"
    assert cli.resume_command(["lm", "--fresh"], str(inside)) == (
        "python -m tl_research lm --out data/results/x.json")
