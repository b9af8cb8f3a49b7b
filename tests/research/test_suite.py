"""The experiments command never loses finished work: the output is checked first, every finished run
is saved at once, Ctrl-C (SIGINT) or a kill (SIGKILL) loses only the run in progress (or nothing of
it, with --checkpoint-every), and rerunning the same command resumes to the same file an
uninterrupted run writes. Bad data files and checkpoints are one-line errors."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conftest import real_data_dir
from tl_minimal.data import text as data_text
from tl_research import cli, protocol
from tl_research.runner import TASKS
from tl_research.tasks import tokenized_data as data_tokenized

ROOT = Path(__file__).resolve().parents[2]
DATA = real_data_dir()  # TL_MINIMAL_DATA when set, else the committed fixture (it has a tokenizer too)
SUITE = ["recall", "--variants", "transformer", "--seeds", "0", "1", "2", "--steps", "12", "--eval-examples", "32",
         "--set", "d_model=16", "--set", "n_layers=1", "--no-progress", "--device", "cpu"]
TIMING = {"seconds", "train_seconds"}  # wall-clock fields: the only ones allowed to differ


def _one_thread_main(args):
    """cli.main on one thread, as the subprocesses run (the same numbers, bit for bit)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return cli.main(args)
    finally:
        torch.set_num_threads(before)


def _comparable(path):
    results = json.loads(Path(path).read_text(encoding="utf-8"))
    runs = [{k: v for k, v in r.items() if k not in TIMING} for r in results["runs"]]
    protocol = {k: v for k, v in results["protocol"].items() if k != "environment"}
    return results["complete"], protocol, runs


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "suite.json"
    assert _one_thread_main([*SUITE, "--out", str(out)]) == 0
    return _comparable(out)


def _start(out, *extra):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "research")]), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "tl_research", *SUITE, "--out", str(out), *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            encoding="utf-8")


def _wait_for(condition, process, what, timeout=240):
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            pytest.fail(f"the run ended before {what}: {process.communicate()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"no {what} after {timeout} s")
        time.sleep(0.02)


def _saved_runs(out) -> int:
    try:
        return len(json.loads(out.read_text(encoding="utf-8"))["runs"])
    except (OSError, ValueError):  # not written yet (never half-written: the test would see a JSON error)
        return 0


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="Windows cannot send SIGINT or SIGKILL to a child process")
@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"], ids=["ctrl-c", "kill"])
def test_an_interrupted_suite_keeps_its_finished_runs_and_resumes_to_the_same_file(tmp_path, uninterrupted, how):
    how = getattr(signal, how)  # by name: Windows has no signal.SIGKILL, and collecting must not fail there
    out = tmp_path / "suite.json"
    process = _start(out)
    _wait_for(lambda: _saved_runs(out) >= 1, process, "finished run in the file")
    process.send_signal(how)
    _, stderr = process.communicate(timeout=120)
    saved = json.loads(out.read_text(encoding="utf-8"))  # valid JSON at the moment of the interruption
    assert 1 <= len(saved["runs"]) <= 3
    if how == signal.SIGINT and len(saved["runs"]) < 3:
        assert process.returncode == 130, stderr
        assert f"runs saved in {out}" in stderr and "resume with: python -m tl_research recall" in stderr
        assert saved["complete"] is False
    assert not list(tmp_path.glob(".suite.json.*"))  # no temporary file left beside it
    assert _one_thread_main([*SUITE, "--out", str(out)]) == 0  # the same command resumes
    assert _comparable(out) == uninterrupted


@pytest.mark.slow
def test_a_killed_run_continues_from_its_checkpoint(tmp_path, uninterrupted, capsys):
    out = tmp_path / "suite.json"
    folder = tmp_path / "suite.checkpoints"
    process = _start(out, "--checkpoint-every", "2")
    _wait_for(lambda: any(folder.glob("*.pt")) and _saved_runs(out) >= 1, process, "checkpoint of a later run")
    process.kill()
    process.communicate(timeout=60)
    left = sorted(folder.glob("*.pt"))
    assert left and all("recall-transformer-s" in p.name for p in left)
    capsys.readouterr()
    assert _one_thread_main([*SUITE, "--out", str(out), "--checkpoint-every", "2"]) == 0
    assert "continues from its checkpoint" in capsys.readouterr().out
    assert _comparable(out) == uninterrupted  # bit-equal: the resumed run is the uninterrupted one
    assert not folder.exists()  # finished runs' checkpoints are removed, then the empty folder


def test_another_suites_file_is_refused_and_fresh_starts_afresh(tmp_path, capsys):
    out = tmp_path / "suite.json"
    tiny = ["recall", "--variants", "transformer", "--seeds", "0", "--steps", "1", "--eval-examples", "8",
            "--set", "d_model=8", "--set", "n_layers=1", "--no-progress", "--device", "cpu", "--out", str(out)]
    assert cli.main(tiny) == 0
    before = out.read_text(encoding="utf-8")
    assert cli.main([*tiny, "--steps", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {out} was written under other settings (steps: 1 in the file, 2 now)")
    assert "--fresh" in err and out.read_text(encoding="utf-8") == before  # nothing mixed, nothing overwritten
    assert cli.main([*tiny, "--steps", "2", "--fresh"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][0]["steps"] == 2
    assert cli.main(["mqar", *tiny[1:]]) == 2 and "holds 'recall' results" in capsys.readouterr().err


@pytest.mark.parametrize("where, words", [
    ("/proc/results.json", "cannot write the output /proc/results.json"),
    ("DIR", "is a directory"),
    ("FILE/results.json", "cannot write the output"),
])
def test_a_bad_output_path_is_refused_before_any_work(tmp_path, monkeypatch, capsys, where, words):
    (tmp_path / "FILE").write_text("a file, not a folder", encoding="utf-8")
    out = where.replace("DIR", str(tmp_path)).replace("FILE", str(tmp_path / "FILE"))

    def no_data(*a, **k):
        raise AssertionError("data were loaded before the output path was checked")

    monkeypatch.setattr(TASKS["recall"], "load", no_data)
    assert cli.main(["recall", "--variants", "transformer", "--steps", "1", "--no-progress", "--out", out]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and words in err and "\n" not in err


def test_a_corrupted_checkpoint_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    from tl_research.suite import Suite

    seen, real = [], Suite.checkpoint_path

    def truncated(self, variant, seed):  # the run finds a broken file where its checkpoint belongs
        path = real(self, variant, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"PK\x03\x04 truncated")
        seen.append(path)
        return path

    monkeypatch.setattr(Suite, "checkpoint_path", truncated)
    args = ["recall", "--variants", "transformer", "--seeds", "0", "--steps", "2", "--eval-examples", "8",
            "--set", "d_model=8", "--set", "n_layers=1", "--no-progress", "--device", "cpu",
            "--out", str(tmp_path / "suite.json"), "--checkpoint-every", "1"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: checkpoint {seen[0]} cannot be read") and "Traceback" not in err


# ----------------------------------------------------------------------------- bad data files
def _wikitext(tmp_path, valid: bytes | None, train: bytes = b"hello world, a line of training text\n" * 20):
    folder = tmp_path / "data" / "wikitext-2-raw"
    folder.mkdir(parents=True)
    (folder / "wiki.train.raw").write_bytes(train)
    if valid is not None:
        (folder / "wiki.valid.raw").write_bytes(valid)
    return tmp_path / "data", folder / "wiki.valid.raw"


@pytest.mark.parametrize("valid, words", [
    (b"", "holds no text (0 bytes)"),
    (b"\n\n   \n", "holds no text (6 bytes, blank lines only)"),
    (b"a short line\n", ("is too short: 12 bytes of text (14 tokens with BOS and EOS); evaluating one window of "
                         "128 bytes (+1 target) of the lm protocol needs at least 129 tokens (127 bytes)")),
    (b"\xff\xfe not utf-8 " * 20, "cannot read it as UTF-8 text"),
])
def test_a_bad_wikitext_file_is_one_error_line_naming_it(tmp_path, capsys, valid, words):
    data_dir, path = _wikitext(tmp_path, valid)
    args = ["lm", "--variants", "transformer", "--steps", "1", "--no-progress", "--device", "cpu",
            "--data-dir", str(data_dir), "--out", str(tmp_path / "r.json")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}") and words in err and "\n" not in err
    with pytest.raises(data_text.DataUnavailable, match=words.split(" (")[0]):  # the library: one exception type
        TASKS["lm"].load(protocol("lm"), data_dir)


def test_a_folder_in_place_of_a_data_file_is_named(tmp_path):
    data_dir, path = _wikitext(tmp_path, None)
    path.mkdir()
    with pytest.raises(data_text.BadDataFile, match=f"{path}: cannot read it"):
        data_text.load_split("validation", data_dir)


@pytest.mark.parametrize("content, words", [
    ('{"version": "1.0", "model": {"type": "BPE", "vocab": {"a', "is not valid JSON (Unterminated string"),
    ('{"hello": "world"}', "is JSON but not a tokenizer"),
])
def test_a_broken_tokenizer_json_is_named_with_its_parse_error(tmp_path, capsys, content, words):
    folder = tmp_path / "minimind"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(content, encoding="utf-8")
    with pytest.raises(data_text.BadDataFile, match=re.escape(words)):
        data_tokenized.load_tokenizer(tmp_path)
    args = ["tokenized", "--variants", "transformer", "--steps", "1", "--no-progress", "--device", "cpu",
            "--data-dir", str(tmp_path), "--out", str(tmp_path / "r.json")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {folder / 'tokenizer.json'}") and "\n" not in err


def test_a_bad_jsonl_line_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TL_MINIMAL_DATA", str(DATA))
    bad = tmp_path / "pretrain.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n', encoding="utf-8")
    args = ["tokenized", "--variants", "transformer", "--steps", "1", "--no-progress", "--device", "cpu",
            "--jsonl", str(bad), "--out", str(tmp_path / "r.json")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}:2: expected a JSON object with a 'text' field") and "\n" not in err


def test_recall_study_checks_its_output_path_first(capsys):
    assert cli.main(["study", "train", "--variants", "transformer", "--device", "cpu", "--out",
                     "/proc/study.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write the output /proc/study.json") and err.count("\n") == 1


def test_two_processes_filling_one_file_keep_each_others_runs(tmp_path):
    """Two queues with the same settings share a file: a write takes in what the other wrote since it opened;
    a --fresh start replaces the file once, then merges again."""
    from tl_research.suite import Suite

    path, section = tmp_path / "shared.json", {"task": "recall", "lr": 1e-3, "environment": {}}
    first = Suite.open(path, "recall", section, [("transformer", 1)])
    second = Suite.open(path, "recall", section, [("triple_latent", 0)])  # opened before either wrote
    second.add({"variant": "triple_latent", "seed": 0, "value": 0.3})
    first.add({"variant": "transformer", "seed": 1, "value": 1.0})  # its write keeps triple_latent's run
    data = json.loads(path.read_text(encoding="utf-8"))
    assert {(r["variant"], r["seed"]) for r in data["runs"]} == {("transformer", 1), ("triple_latent", 0)}
    assert data["complete"] and {tuple(p) for p in data["planned"]} == {("transformer", 1), ("triple_latent", 0)}
    fresh = Suite.open(path, "recall", section, [("transformer", 2)], fresh=True)
    fresh.add({"variant": "transformer", "seed": 2, "value": 0.9})
    assert [r["seed"] for r in json.loads(path.read_text(encoding="utf-8"))["runs"]] == [2]
    other = Suite.open(tmp_path / "other.json", "recall", {**section, "lr": 3e-3}, [("transformer", 0)])
    other.path = path  # a file of other settings on disk is not merged from
    other.add({"variant": "transformer", "seed": 0, "value": 0.2})
    assert [r["seed"] for r in json.loads(path.read_text(encoding="utf-8"))["runs"]] == [0]
