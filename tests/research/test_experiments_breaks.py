"""The overwrite, alias and distance subcommands: tiny runs, their JSON, bad settings, and the overwrite read."""

import json

import pytest
import torch

from tl_minimal.training.recipes import build
from tl_minimal.training.train import seed_everything
from tl_research import cli
from tl_research.protocols import protocol
from tl_research.studies import breaks
from tl_research.tasks import recall_breaks as rb

TINY = ["--set", "d_model=16", "--set", "n_layers=1", "--no-progress", "--device", "cpu",
        "--steps", "2", "--eval-examples", "32"]
RUN_KEYS = {"variant", "seed", "params", "metric", "value", "steps", "seconds", "device", "chance"}


def _run(tmp_path, *args, name: str = "r.json"):
    out = tmp_path / name
    code = cli.main([*args, *TINY, "--out", str(out)])
    return code, (json.loads(out.read_text(encoding="utf-8")) if out.exists() else None)


@pytest.mark.slow
def test_overwrite_writes_accuracy_and_earlier_rate(tmp_path):
    code, res = _run(tmp_path, "overwrite", "--variants", "gated_hybrid_repaired", "transformer", "--seeds", "1")
    assert code == 0 and res["task"] == "overwrite" and len(res["runs"]) == 2
    run = res["runs"][0]
    assert RUN_KEYS <= set(run) and run["eval_examples"] == 32 and run["steps"] == 2
    assert run["value"] + run["earlier_rate"] + run["other_rate"] == pytest.approx(1.0)
    assert set(run["by_writes"]) <= {"2", "3"} and sum(b["n"] for b in run["by_writes"].values()) == 32
    assert run["chance"]["constant"] == 1 / 16 and run["chance"]["pick_among_writes"] == pytest.approx(5 / 12)
    assert res["protocol"]["max_writes"] == 3 and res["protocol"]["steps"] == 2


@pytest.mark.slow
def test_alias_run_and_its_identical_token_control(tmp_path):
    code, res = _run(tmp_path, "alias", "--variants", "triple_latent", "--seeds", "0")
    assert code == 0 and res["runs"][0]["same_alias"] is False
    assert res["runs"][0]["alias_table"] == rb.alias_table(0) and 0 <= res["runs"][0]["value"] <= 1
    # the control is another protocol: its own results file (the first one refuses other settings)
    code, res = _run(tmp_path, "alias", "--variants", "triple_latent", "--seeds", "0", "--protocol", "same_alias=true",
                     name="control.json")
    assert code == 0 and res["runs"][0]["same_alias"] is True and res["protocol"]["same_alias"] is True


@pytest.mark.slow
def test_alias_curriculum_trains_on_the_share_and_evaluates_on_the_task(tmp_path, monkeypatch):
    shares = []
    real = rb.alias_batch
    monkeypatch.setattr(rb, "alias_batch", lambda *a, **kw: shares.append(kw["same_alias_share"]) or real(*a, **kw))
    code, res = _run(tmp_path, "alias", "--variants", "triple_latent", "--seeds", "0",
                     "--protocol", "same_alias_share=0.25")
    assert code == 0 and res["protocol"]["same_alias_share"] == 0.25
    run = res["runs"][0]
    assert run["same_alias_share"] == 0.25 and run["same_alias"] is False
    assert 0.25 in shares and shares[-1] == 0.0  # training batches with the share, the evaluation set without
    assert breaks._make(protocol("alias", same_alias_share=0.5), 0).keywords["same_alias_share"] == 0.0


@pytest.mark.slow
def test_distance_evaluates_every_length_and_sizes_the_positions(tmp_path):
    code, res = _run(tmp_path, "distance", "--variants", "gated_hybrid_repaired", "transformer", "--seeds", "0",
                     "--protocol", "lengths=32,64")
    assert code == 0 and res["task"] == "distance" and len(res["runs"]) == 2
    p = res["protocol"]
    assert p["lengths"] == [32, 64] and p["seq_len"] == 64 and p["model_config"]["max_seq_len"] == 64
    for run in res["runs"]:
        assert RUN_KEYS <= set(run) and run["config"]["max_seq_len"] == 64 and run["lengths"] == [32, 64]
        assert set(run["by_length"]) == {"32", "64"} and all(b["n"] == 32 for b in run["by_length"].values())
        assert run["value"] == pytest.approx(sum(b["accuracy"] for b in run["by_length"].values()) / 2)
        assert 20 <= run["by_length"]["32"]["mean_distance"] <= 29  # T - 3 - 3i for pair i of 4
        assert run["chance"] == {"constant": 1 / 8, "in_context_pick": 1 / 4}
        assert [len(c) for c in run["loss_curve_by_length"].values()] == [1, 1]  # one step each, one window


def test_distance_protocol_defaults_and_lengths_option():
    p = protocol("distance")
    assert p.lengths == (1024, 2048, 4096) and p.seq_len == 4096 and p.model_config()["max_seq_len"] == 4096
    assert protocol("distance", lengths="128, 256").lengths == (128, 256)
    assert protocol("distance", lengths=64).seq_len == 64
    with pytest.raises(ValueError, match="seq_len is the longest of the lengths"):
        protocol("distance", seq_len=128)
    with pytest.raises(ValueError, match="distinct positive whole numbers"):
        protocol("distance", lengths="64,64")


@pytest.mark.parametrize("args, words", [
    (["distance", "--protocol", "lengths=15,64"], "distance: seq_len=15 is too short for 4 pairs: need at least 16"),
    (["distance", "--protocol", "n_pairs=9"], "distance: n_pairs must be in 1..8 (the layout has 8 key ids"),
    (["distance", "--protocol", "lengths=64,x"], "lengths: expected whole numbers separated by commas"),
    (["distance", "--protocol", "seq_len=99"], "seq_len is the longest of the lengths"),
    (["overwrite", "--protocol", "max_writes=5"], "overwrite: n_keys * max_writes = 20 writes"),
    (["overwrite", "--protocol", "seq_len=20"], "seq_len=20 is too short"),
    (["alias", "--protocol", "max_aliases=5"], "alias: 8 keys x up to 5 aliases = 40 alias ids"),
    (["alias", "--protocol", "n_pairs=9"], "n_pairs must be in 1..8"),
])
def test_impossible_settings_are_one_line_errors(args, words, tmp_path, capsys):
    code = cli.main([*args, "--variants", "transformer", *TINY, "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and words in err and "Traceback" not in err


@pytest.mark.slow
def test_overwrite_read_at_initialization():
    """Tied keys average over the writes of the asked key; supersede puts the weight on the latest."""
    p = protocol("overwrite")
    x, _ = rb.overwrite_batch(32, generator=rb.eval_generator(0))
    seed_everything(0)
    plain = breaks.overwrite_read(build("gated_hybrid_repaired", p), x)
    seed_everything(0)
    latest = breaks.overwrite_read(build("gated_hybrid_repaired", p, {"supersede": True}), x)
    assert 0.3 < plain["latest"].mean() < 0.6 and plain["earlier"].mean() > 0.3
    assert latest["latest"].mean() > 0.9 and latest["latest_first"].mean() == 1.0
    with pytest.raises(ValueError, match="needs a gated hybrid"):
        breaks.overwrite_read(build("transformer", p), x)


def test_overwrite_rates_count_latest_earlier_other():
    x, _ = rb.overwrite_batch(4, generator=torch.Generator().manual_seed(0))
    written = [rb.written_values(r) for r in x]
    pred = torch.tensor([written[0][-1], written[1][0], 0, written[3][-1]])
    r = breaks.overwrite_rates(pred, x)
    assert (r["accuracy"], r["earlier"], r["other"]) == (0.5, 0.25, 0.25)


@pytest.mark.slow
@pytest.mark.parametrize("task", list(breaks.BREAK_TASKS))
def test_break_tasks_take_checkpoint_every(task, tmp_path):
    """--checkpoint-every reaches train() (every task's run_one takes it in its TrainConfig)."""
    short = ["--protocol", "lengths=32,64"] if task == "distance" else []
    code, res = _run(tmp_path, task, "--variants", "transformer", "--seeds", "0", "--checkpoint-every", "1", *short)
    assert code == 0 and res["complete"] and res["runs"][0]["steps"] == 2
    assert not (tmp_path / "r.checkpoints").exists()  # the run's checkpoint is removed once it is saved


@pytest.mark.slow
def test_alias_read_at_initialization_finds_the_written_token_only_in_the_control():
    """Tied keys find an identical token at step 0 (the control); an alias ranks like any other token."""
    table = rb.alias_table(0)
    x, y = rb.alias_batch(16, table, generator=rb.eval_generator(0))
    pos = breaks.alias_key_positions(x, table)
    for row, j, target in zip(x, pos, y[:, -1], strict=True):
        aliases = next(a for a in table if int(row[-2]) in a)
        assert int(row[j]) in aliases and int(row[j]) != int(row[-2]) and int(row[j + 1]) == int(target)
    control = breaks.diagnose_alias(["gated_hybrid_repaired"], [0], examples=32, same_alias=True)["runs"][0]
    alias = breaks.diagnose_alias(["gated_hybrid_repaired"], [0], examples=32)["runs"][0]
    assert control["answer_top1"] == 1.0 and control["answer_weight"] > 0.9
    assert alias["answer_top1"] < 0.5 and alias["answer_weight"] < 0.2


@pytest.mark.slow
def test_alias_read_after_training_measures_the_alias_commands_model(tmp_path):
    """alias-trained retrains the alias command's run (same seed, settings) and splits its misses by the cut."""
    code, res = _run(tmp_path, "alias", "--variants", "gated_hybrid_repaired", "--seeds", "0")
    study = breaks.diagnose_alias_trained(["gated_hybrid_repaired"], [0], examples=16, overrides={"d_model": 16,
                                                                                                  "n_layers": 1},
                                          steps=2, eval_examples=32)
    run = study["runs"][0]
    assert code == 0 and run["accuracy"] == pytest.approx(res["runs"][0]["value"])  # the same model
    assert run["examples"] == 16 and run["missed"] == round((1 - run["correct"]) * 16)
    assert run["missed_cut"] is None or 0 <= run["missed_cut"] <= 1
    assert study["study"] == "read after training" and "value" not in run  # not a row of the alias table
    by_pair = run["by_pair"]
    assert sum(p[2] for p in by_pair["pairs"]) == 32 and len(by_pair["pairs"]) == sum(
        by_pair[k] for k in ("learned", "never", "between"))
    table = rb.alias_table(0)
    assert all(any(a in group and w in group for group in table) and a != w for a, w, *_ in by_pair["pairs"])


def test_missed_split_counts_cut_answers_among_the_wrong_ones():
    report = {"correct": torch.tensor([True, False, False, False]), "in_kept": torch.tensor([True, False, True, False]),
              "answer_rank": torch.tensor([0, 9, 2, 30])}
    assert breaks.missed_split(report) == {"missed": 3, "missed_cut": round(2 / 3, 4), "right_cut": 0.0,
                                           "missed_answer_rank_median": 9.0}
    everything_right = {"correct": torch.ones(2, dtype=torch.bool), "in_kept": torch.ones(2, dtype=torch.bool),
                        "answer_rank": torch.zeros(2)}
    assert breaks.missed_split(everything_right)["missed_cut"] is None


def test_pair_split_groups_questions_by_their_two_tokens():
    right = torch.tensor([True, True, False, False, True, False])
    asked, written = torch.tensor([3, 3, 4, 4, 5, 5]), torch.tensor([7, 7, 8, 8, 9, 9])
    split = breaks.pair_split(right, asked, written)
    assert split["pairs"] == [[4, 8, 2, 0.0], [5, 9, 2, 0.5], [3, 7, 2, 1.0]]
    assert (split["learned"], split["never"], split["between"]) == (1, 1, 1)


@pytest.mark.slow
def test_alias_trained_command_writes_its_study(tmp_path):
    out = tmp_path / "read.json"
    assert cli.main(["study", "alias-trained", "--variants", "gated_hybrid_repaired", "--seeds", "0", "1", "--steps",
                     "2",
                              "--examples", "8", "--set", "d_model=16", "--set", "n_layers=1", "--device", "cpu",
                              "--out", str(out)]) == 0
    study = json.loads(out.read_text(encoding="utf-8"))
    assert [r["seed"] for r in study["runs"]] == [0, 1] and study["protocol"]["steps"] == 2
    mean = study["mean_over_seeds"]["gated_hybrid_repaired"]
    assert "by_pair" not in mean and mean["accuracy"] == pytest.approx(
        sum(r["accuracy"] for r in study["runs"]) / 2, abs=1e-4)


def test_left_out_tokens_are_those_whose_every_pair_fails():
    group = [[1, 2, 3, 0.95], [2, 1, 3, 1.0], [1, 3, 3, 0.1], [3, 1, 3, 0.0], [2, 3, 3, 0.2], [3, 2, 3, 0.1]]
    assert breaks.left_out_tokens(group) == ([3], True)  # 1 and 2 found each other; 3 was left out
    spread = [[1, 2, 3, 0.1], [2, 1, 3, 1.0], [4, 5, 3, 1.0]]  # one direction of a pair fails: no token is out
    assert breaks.left_out_tokens(spread) == ([], False)


@pytest.mark.slow
@pytest.mark.parametrize("cmd", ["alias-init", "overwrite-init"])
def test_the_diagnoses_at_initialization_write_their_study(cmd, tmp_path):
    """Their --device stays "auto" (they build on the CPU): the file records the CPU, not a crash."""
    out = tmp_path / "init.json"
    assert cli.main(["study", cmd, "--variants", "gated_hybrid_repaired", "--seeds", "0", "--examples", "8",
                              "--set", "d_model=16", "--set", "n_layers=1", "--out", str(out)]) == 0
    study = json.loads(out.read_text(encoding="utf-8"))
    assert study["study"] == "read at initialization" and study["protocol"]["environment"]["device"] == "cpu"
