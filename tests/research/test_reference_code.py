"""The runner of the paper's own recall script (studies/reference_code.py): parsing, file, no training."""

import json

import pytest

from tl_research.studies import reference_code as rc

# what the reference script prints (the shape of its print statements; numbers made up for the test)
STDOUT = """[MEM] triple-hybrid-assoc-gated-last-logits step 0100/0500 pairs=4 seq=128 lr=0.000300 loss=2.0794
[MEM] triple-hybrid-assoc-gated-last-logits step 0200/0500 pairs=4 seq=128 lr=0.000300 loss=1.5000
{
  "task": "associative_recall",
  "seed": 7,
  "eval_loss": 1.25,
  "eval_accuracy": 0.5,
  "train_loss_last": 1.5
}
"""


def test_parse_seeds_keeps_order_and_expands_ranges():
    assert rc.parse_seeds(["7", "19", "29", "0-3", "7", "5-5"]) == [7, 19, 29, 0, 1, 2, 3, 5]
    for bad in ("3-1", "x", "-2"):
        with pytest.raises(ValueError):
            rc.parse_seeds([bad])


def test_parse_output_reads_the_final_json_and_the_loss_lines():
    result, steps = rc.parse_output(STDOUT)
    assert result["eval_accuracy"] == 0.5 and result["seed"] == 7
    assert steps == [{"step": 100, "pairs": 4, "seq_len": 128, "lr": 3e-4, "loss": 2.0794},
                     {"step": 200, "pairs": 4, "seq_len": 128, "lr": 3e-4, "loss": 1.5}]
    with pytest.raises(ValueError):
        rc.parse_output("[MEM] no result\n")


def test_command_uses_the_gated_configuration():
    cmd = rc.reference_command(19, "OUT")
    assert cmd[:3] == ["python", "-m", "auto_research_llm_ideas.experiments.train_memory"]
    assert cmd[cmd.index("--model") + 1] == "triple-hybrid-assoc-gated-last-logits"
    got = {cmd[i]: cmd[i + 1] for i in range(3, len(cmd) - 1, 2)}
    assert got == {"--model": "triple-hybrid-assoc-gated-last-logits", "--d-model": "64", "--n-layers": "3",
                   "--state-dim": "8", "--steps": "500", "--seed": "19", "--output-dir": "OUT"}


def test_missing_checkout_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"train_memory\.py"):
        rc.check_checkout(tmp_path)


def test_result_file_is_fresh_then_kept(tmp_path):
    out = tmp_path / "r.json"
    data = rc.load(out)
    assert data["runs"] == [] and data["reference_commit"] == rc.REFERENCE_COMMIT
    data["runs"].append({"seed": 7, "win": False})
    rc.save(out, data)
    assert json.loads(out.read_text(encoding="utf-8"))["runs"] == [{"seed": 7, "win": False}]
    assert rc.load(out)["runs"][0]["seed"] == 7


def test_summary_counts_wins_with_an_exact_interval(tmp_path):
    data = rc.load(tmp_path / "none.json")
    assert rc.summary(data) == "no finished run yet"
    data["runs"] = [{"seed": 19, "eval_accuracy": 1.0}, {"seed": 7, "eval_accuracy": 0.25},
                    {"seed": 29, "eval_accuracy": 0.12}]
    text = rc.summary(data)
    assert text.startswith("1/3 wins") and "[0.008, 0.906]" in text
    assert text.endswith("per seed 7: 25.0%, 19: 100.0%, 29: 12.0%")


def fake_checkout(tmp_path):
    for relative in (rc.REFERENCE_SCRIPT, "model/triple_latent.py", "experiments/train_lm.py"):
        (tmp_path / "ref" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ref" / relative).write_text("", encoding="utf-8")
    return tmp_path / "ref"


def test_lr_arm_passes_the_flag_and_keeps_its_own_file(tmp_path, monkeypatch):
    calls = []

    def fake_run(checkout, seed, extra=(), timeout_s=None):
        calls.append((seed, extra))
        return {"seed": seed, "eval_accuracy": 0.25, "win": False, "wall_seconds": 1.0}

    monkeypatch.setattr(rc, "run_one", fake_run)
    checkout, out = fake_checkout(tmp_path), tmp_path / "lr.json"
    rc.main(["--checkout", str(checkout), "--lr", "1e-3", "--seeds", "7", "19", "--out", str(out)])
    assert calls == [(7, ("--lr", "0.001")), (19, ("--lr", "0.001"))]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["reference_args"] == [*rc.GATED_ARGS, "--lr", "0.001"] and len(data["runs"]) == 2
    rc.main(["--checkout", str(checkout), "--lr", "1e-3", "--seeds", "7", "--out", str(out)])  # resumed: skipped
    assert len(calls) == 2
    with pytest.raises(ValueError, match="a file of its own"):  # the default lr must not join the lr arm's file
        rc.main(["--checkout", str(checkout), "--seeds", "29", "--out", str(out)])
