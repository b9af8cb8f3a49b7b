"""The paper's recall retrain recipe: lr warmup, a length curriculum, the read gate's initial bias.

    --protocol warmup_steps=50 --protocol length_curriculum=32:128:150 --set read_gate_bias=-2

Each piece is checked on its own (the schedule, the batches it makes, the bias at init, the bad
values), then a 3-step run with all three through both commands that train recall.
"""

import json

import pytest
import torch

from tl_minimal import build_model
from tl_minimal.data.recall import IGNORE, RecallSampler, locate
from tl_minimal.training.recipes import fit, make_sampler
from tl_research import cli
from tl_research.protocols import protocol
from tl_research.recall_schedule import LengthCurriculum, min_seq_len

TINY = ["--set", "d_model=16", "--set", "n_layers=1", "--device", "cpu"]
RECIPE = ["--protocol", "warmup_steps=2", "--protocol", "length_curriculum=16:32:3", "--set", "read_gate_bias=-2"]


# ----------------------------------------------------------------------------- the schedule
def test_length_grows_from_start_to_end_over_the_curriculum_steps_then_stays():
    c = LengthCurriculum.parse("32:128:150")
    assert c == LengthCurriculum(32, 128, 150) == LengthCurriculum.parse((32, 128, 150))
    # L(k) = round(32 + 96 k / 149): the reference's linear ramp over steps 1..150 (counted from 1 there)
    assert [c.length(k) for k in (0, 1, 2, 74, 148, 149, 150, 499)] == [32, 33, 33, 80, 127, 128, 128, 128]
    lengths = [c.length(k) for k in range(200)]
    assert lengths == sorted(lengths) and set(range(32, 129)) <= set(lengths)  # every length once at least
    assert [LengthCurriculum(20, 40, 1).length(k) for k in (0, 5)] == [40, 40]  # one step: the end at once
    assert [LengthCurriculum(64, 64, 10).length(k) for k in (0, 9)] == [64, 64]


@pytest.mark.parametrize("value, words", [
    ("64:32:150", "start 64 is longer than end 32"),
    ("32:128:-5", "steps must be a whole number >= 1, got -5"),
    ("32:128:0", "steps must be a whole number >= 1, got 0"),
    ("0:128:150", "start must be a whole number >= 1"),
    ("32:128", "expected START:END:STEPS"),
    ("a:b:c", "expected START:END:STEPS"),
    (32, "expected START:END:STEPS"),
])
def test_a_bad_curriculum_says_what_is_expected(value, words):
    with pytest.raises(ValueError, match=words):
        LengthCurriculum.parse(value)


@pytest.mark.parametrize("task, changes, words", [
    ("recall", {"length_curriculum": "32:256:150"}, "end 256 is longer than the task's seq_len 128"),
    ("recall", {"length_curriculum": "8:128:150"}, "start 8 is too short for 4 pairs and 1 question"),
    ("mqar", {"length_curriculum": "20:128:150"}, "too short for 8 pairs and 4 question"),
    ("overwrite", {"length_curriculum": "32:128:150"}, "applies to recall and mqar"),
    ("recall", {"warmup_steps": -1}, "warmup_steps must be a whole number >= 0"),
    ("lm", {"warmup_steps": 2.5}, "warmup_steps must be a whole number >= 0"),
    ("recall", {"length_curicculum": "32:128:150"}, "has no such field; it has: .*length_curriculum"),
])
def test_a_bad_recipe_setting_is_a_clear_error(task, changes, words):
    with pytest.raises(ValueError, match=words):
        protocol(task, **changes)


def test_the_default_protocol_and_its_record_are_unchanged():
    p = protocol("recall")
    assert p.length_curriculum is None and p.curriculum() is None and p.warmup_steps == 0
    assert "length_curriculum" not in p.to_dict()  # results files written before the field keep their settings
    recipe = protocol("recall", warmup_steps=50, length_curriculum="32:128:150")
    assert recipe.to_dict()["length_curriculum"] == (32, 128, 150) and recipe.warmup_steps == 50
    assert recipe.replace(steps=500).length_curriculum == (32, 128, 150)  # survives the study's replace
    x, y = make_sampler(p, seed=3)(7)
    x0, y0 = RecallSampler(p.batch_size, 3)(7)
    assert torch.equal(x, x0) and torch.equal(y, y0)


# ----------------------------------------------------------------------------- the batches
@pytest.mark.parametrize("task, curriculum", [("recall", "32:128:150"), ("mqar", "40:128:150")])
def test_curriculum_batches_have_the_scheduled_lengths_and_stay_valid_examples(task, curriculum):
    p = protocol(task, length_curriculum=curriculum, batch_size=8)
    sampler, full = make_sampler(p, seed=1), make_sampler(protocol(task, batch_size=8), seed=1)
    for step in (0, 1, 74, 149, 300):
        x, y = sampler(step)
        length = p.curriculum().length(step)
        assert x.shape == y.shape == (8, length)
        assert (x[:, 0] == 1).all() and ((y != IGNORE).sum(1) == p.n_queries).all() and y[:, -1].ne(IGNORE).all()
        for i in range(8):  # every question asks a key written once in context; its value follows it
            for q in locate(x[i], y[i]):
                assert x[i, q["value_pos"]] == q["value"] and (x[i, : q["query_pos"]] == q["key"]).sum() == 1
        filler = ((x >= 21) & (x <= 30)).sum(1)
        assert (filler == length - min_seq_len(p.n_pairs, p.n_queries)).all()  # only the filler is shorter
        if length == p.seq_len:  # at full length, the very batch the plain protocol draws
            assert all(torch.equal(a, b) for a, b in zip((x, y), full(step), strict=True))


# ----------------------------------------------------------------------------- the read gate's bias
@pytest.mark.parametrize("variant, width", [("gated_hybrid_paper", 1), ("gated_hybrid_printed", 64),
                                            ("gated_hybrid_repaired", 1)])
def test_read_gate_bias_is_set_at_initialization(variant, width):
    torch.manual_seed(0)
    plain = build_model(variant, 64)
    torch.manual_seed(0)
    biased = build_model(variant, 64, read_gate_bias=-2)
    assert plain.kv.read_gate.bias.shape == (width,) and torch.all(plain.kv.read_gate.bias == 0)
    assert torch.all(biased.kv.read_gate.bias == -2) and biased.config.kv.read_gate_bias == -2
    same = {k: torch.equal(v, biased.state_dict()[k]) for k, v in plain.state_dict().items()}
    assert [k for k, eq in same.items() if not eq] == ["kv.read_gate.bias"]  # nothing else moves


def test_read_gate_bias_on_a_model_without_a_read_gate_is_an_error(capsys):
    with pytest.raises(ValueError, match=r"'transformer' has no setting.*'read_gate_bias'"):
        build_model("transformer", 64, read_gate_bias=-2)
    with pytest.raises(ValueError, match="read_gate_bias must be a real number"):
        build_model("gated_hybrid_paper", 64, read_gate_bias="low")
    for command in (["recall", "--steps", "1"], ["study", "train", "--eval-at", "1"]):
        assert cli.main([*command, "--variants", "triple_hybrid", "--set", "read_gate_bias=-2", "--device", "cpu"]) == 2
        assert "--set read_gate_bias: no variant in this run has that setting" in capsys.readouterr().err
    assert cli.main(["study", "train", "--variants", "gated_hybrid_paper", "--eval-at", "1", "--device", "cpu",
                     "--protocol", "length_curriculum=64:32:10"]) == 2
    assert "start 64 is longer than end 32" in capsys.readouterr().err


# ----------------------------------------------------------------------------- end to end
@pytest.mark.slow
def test_warmup_and_curriculum_drive_the_training_loop():
    p = protocol("recall", steps=3, warmup_steps=2, length_curriculum="16:32:3", batch_size=4)
    lengths = []
    sampler = make_sampler(p, seed=0)

    def watched(step):
        x, y = sampler(step)
        lengths.append(x.shape[1])
        return x, y

    _, history = fit("gated_hybrid_paper", p, seed=0, sampler=watched, device="cpu", progress=False,
                         overrides={"d_model": 16, "n_layers": 1, "read_gate_bias": -2.0})
    assert lengths == [16, 24, 32] and history["lr"] == pytest.approx([p.lr / 2, p.lr, p.lr])
    assert history["steps"] == 3 and all(torch.isfinite(torch.tensor(history["loss"])))


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["gated_hybrid_paper", "gated_hybrid_printed"])
def test_a_three_step_run_with_the_recipe_works_through_both_commands(tmp_path, variant):
    study = tmp_path / "study.json"
    assert cli.main(["study", "train", "--variants", variant, "--seeds", "0", "--eval-at", "2", "3",
                     "--seq-len", "32", "--eval-examples", "16", *RECIPE, *TINY, "--out", str(study)]) == 0
    res = json.loads(study.read_text(encoding="utf-8"))
    assert res["protocol"]["length_curriculum"] == [16, 32, 3] and res["protocol"]["warmup_steps"] == 2
    run = res["runs"][0]
    assert set(run["by_step"]) == {"2", "3"} and run["steps"] == 3 and run["config"]["read_gate_bias"] == -2
    assert run["eval_examples"] == 16  # evaluated on the full task: seq_len 32, not a curriculum length
    task = tmp_path / "task.json"
    assert cli.main(["recall", "--variants", variant, "--seeds", "0", "--steps", "3", "--eval-examples", "16",
                     "--protocol", "seq_len=32", *RECIPE, *TINY, "--no-progress", "--out", str(task)]) == 0
    res = json.loads(task.read_text(encoding="utf-8"))
    assert res["protocol"]["length_curriculum"] == [16, 32, 3] and res["runs"][0]["config"]["read_gate_bias"] == -2
    assert 0.0 <= res["runs"][0]["value"] <= 1.0


# ----------------------------------------------------------------------------- run_all.sh
def test_run_all_paper_experiments_commands_parse_and_name_their_table_files(tmp_path):
    """``run_all.sh paper_experiments`` with PYTHON=echo prints its commands instead of running them; each
    must parse, build its protocol and variants, and write to the file ``results merge`` would name."""
    import os
    import shlex
    import shutil
    import subprocess
    from pathlib import Path

    from tl_research.arguments import build_parser
    from tl_research.results.merge import base_name
    from tl_research.runner import check_variants
    from tl_research.studies.recall_study import study_protocol

    if shutil.which("bash") is None or shutil.which("nice") is None:
        pytest.skip("run_all.sh needs bash and nice")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHON": "echo"}
    done = subprocess.run(["bash", str(root / "data" / "results" / "run_all.sh"), "paper_experiments"], env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=60, check=True)
    lines = done.stdout.splitlines()
    commands = [shlex.split(line)[2:] for line in lines if line.startswith("-m tl_research ")]
    assert len(commands) == 5 and "-m tl_research.results merge" in done.stdout
    variants, names = set(), set()
    for argv in commands:
        args = build_parser().parse_args(argv)
        assert args.study_command == "train" and args.eval_at == [200, 500]
        p = study_protocol(args.task, changes=dict(args.protocol_changes))
        check_variants(args.variants, p, dict(args.overrides))
        settings = {**p.to_dict(), "overrides": dict(args.overrides)}
        names.add(Path(args.out).name)
        variants |= {(v, len(args.seeds), base_name(settings)) for v in args.variants}
    assert {"recall_d80.json", "recall_d96.json", "recall_warmup50_lengths32-128-150_gatebias-2.json"} <= names
    for v in ("gated_hybrid_paper", "gated_hybrid_printed", "gated_hybrid_repaired"):
        assert {(v, 5, "recall_d80"), (v, 5, "recall_d96")} <= variants
    assert {("gated_hybrid_paper", 5, "recall_warmup50_lengths32-128-150_gatebias-2"),
            ("gated_hybrid_printed", 5, "recall_warmup50_lengths32-128-150_gatebias-2"),
            ("gated_hybrid_printed", 5, "recall"),  # d = 64: folded into table 4's recall.json
            ("triple_slot", 3, "recall"), ("transformer_plus_triple", 3, "recall")} <= variants
