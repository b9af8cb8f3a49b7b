"""The speed command: runs on tiny settings and writes the documented JSON (no timing asserts)."""

import json

import pytest

from tl_research import cli
from tl_research.bench import speed

TINY = ["--set", "d_model=16", "--set", "n_layers=1", "--device", "cpu", "--quick", "--tokens-per-step", "64"]
ROW_KEYS = {
    "variant",
    "seq_len",
    "batch",
    "train_ms",
    "ratio_vs_transformer",
    "fwd_tokens_per_s",
    "gen_ms_per_token",
    "peak_mem_mb",
    "loop_train_ms",
    "loop_ratio_vs_transformer",
    "train_ms_quartiles",
    "fwd_iters",
    "params",
}


@pytest.mark.slow
def test_speed_command_writes_the_documented_rows(tmp_path, capsys):
    out = tmp_path / "speed.json"
    code = cli.main(
        [
            "speed",
            "--variants",
            "transformer",
            "triple_latent",
            "gated_hybrid_repaired",
            "--seq-lens",
            "16",
            "8",
            *TINY,
            "--out",
            str(out),
        ]
    )
    assert code == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["benchmark"] == "speed" and res["environment"]["device"] == "cpu"
    assert res["overrides"] == {"d_model": 16, "n_layers": 1} and res["settings"]["train_steps"] == 3
    assert res["settings"]["tokens_per_step"] == 64
    rows = res["rows"]
    assert [(r["seq_len"], r["variant"]) for r in rows] == [
        (8, "transformer"),
        (8, "triple_latent"),
        (8, "gated_hybrid_repaired"),
        (16, "transformer"),
        (16, "triple_latent"),
        (16, "gated_hybrid_repaired"),
    ]
    for r in rows:
        assert ROW_KEYS <= set(r)
        assert r["batch"] == 64 // r["seq_len"] and r["train_ms"] > 0 and r["fwd_tokens_per_s"] > 0
        assert r["gen_ms_per_token"] > 0 and r["train_ms_quartiles"][0] <= r["train_ms_quartiles"][1]
        assert r["peak_mem_mb"] is None or r["peak_mem_mb"] > 0
        if r["variant"] == "transformer":
            assert r["ratio_vs_transformer"] == 1.0 and r["loop_train_ms"] is None
        else:  # short T: the loop form is timed too
            assert r["loop_train_ms"] > 0 and r["loop_ratio_vs_transformer"] > 0
    printed = capsys.readouterr().out
    assert "train ms" in printed and "triple_latent" in printed


@pytest.mark.slow
def test_without_transformer_ratios_are_null_and_loop_can_be_skipped(tmp_path):
    res = speed.run_speed(
        ["triple_slot"],
        [8],
        "cpu",
        speed.SpeedSettings(tokens_per_step=64).quick(),
        {"d_model": 16, "n_layers": 1, "num_slots": 2},
        out=None,
        log=lambda *a: None,
    )
    row = res["rows"][0]
    assert row["ratio_vs_transformer"] is None and row["loop_train_ms"] > 0
    settings = speed.SpeedSettings(loop_steps=0, memory=False, tokens_per_step=64, clock="cpu").quick()
    res = speed.run_speed(
        ["triple_slot"], [8], "cpu", settings, {"d_model": 16, "n_layers": 1}, log=lambda *a: None
    )
    assert res["rows"][0]["loop_train_ms"] is None and res["rows"][0]["peak_mem_mb"] is None
    assert res["settings"]["clock"] == "cpu" and res["rows"][0]["train_ms"] > 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--variants", "nope"], "unknown variant"),
        (["--variants", "transformer", "--set", "state_dim=8"], "no chosen variant has"),
        (["--seq-lens", "0"], "must be >= 1"),
        (["--clock", "sundial"], "invalid choice"),
    ],
)
def test_bad_arguments_are_one_line_errors(args, message, capsys):
    assert cli.main(["speed", *args, "--device", "cpu", "--quick"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_targets_read_the_rows():
    rows = [
        {"variant": v, "seq_len": T, "ratio_vs_transformer": ratio, "gen_ms_per_token": gen, "peak_mem_mb": mem}
        for v, T, ratio, gen, mem in [
            ("transformer", 4096, 1.0, 1.0, 72.0),
            ("triple_latent", 128, 1.15, 1.0, 50.0),
            ("triple_latent", 2048, 1.1, 1.1, 50.0),
            ("gated_hybrid_repaired", 128, 1.4, 1.0, 50.0),
            ("gated_hybrid_repaired", 4096, 0.9, 1.0, 100.0),
        ]
    ]
    checks = {c["target"]: c for c in speed.targets(rows)}
    assert checks["triple_latent train step at T=128 <= 1.2x transformer"]["met"] is True
    assert checks["gated_hybrid_repaired train step at T=128 <= 1.3x transformer"]["met"] is False
    assert checks["(stretch) triple_latent train step at T=128 <= 1.0x transformer"]["met"] is False
    assert checks["triple_latent train step at T=2048 <= 1.0x transformer"]["met"] is False
    assert checks["triple_latent ms/token at context 2048 <= 1.2x context 128"]["value"] == pytest.approx(1.1)
    assert checks["triple_slot train step at T=128 <= 1.3x transformer"]["met"] is None
    assert checks["gated_hybrid_repaired train step at T=2048 <= 1.0x transformer"]["met"] is None
    memory = checks["gated_hybrid_repaired peak step memory at T=4096 <= 1.5x transformer"]
    assert memory["value"] == pytest.approx(100 / 72) and memory["met"] is True


def test_interleaved_times_every_job_in_rounds():
    calls = []

    class Job:
        def __init__(self, name):
            self.name = name

        def run(self):
            calls.append(self.name)

    times = speed.interleaved({"a": Job("a"), "b": Job("b")}, "cpu", warmup=1, reps=3)
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3}
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]  # warm-up, then rotated rounds


@pytest.mark.slow
def test_profile_prints_cpu_time_per_op(capsys):
    code = cli.main(["speed", "--profile", "3", "--variants", "transformer", "triple_latent", "--seq-lens", "8",
                     "--set", "d_model=16", "--set", "n_layers=1", "--device", "cpu", "--tokens-per-step", "16"])
    assert code == 0
    out = capsys.readouterr().out
    assert "triple_latent, T=8, batch 2:" in out
    for phase in ("forward", "backward", "optimizer"):
        assert f"  {phase}: " in out and "ms CPU time in" in out
    assert "native_layer_norm" in out and "[(2, 8, 16)" in out  # ops with their input shapes


@pytest.mark.slow
def test_a_system_without_load_averages_records_none_and_prints_n_a(tmp_path, monkeypatch, capsys):
    """Windows has no os.getloadavg: the benchmark still runs, records None and prints "n/a"."""
    import os

    monkeypatch.delattr(os, "getloadavg", raising=False)
    assert speed.load_average() is None and speed.format_load(None) == "n/a"
    out = tmp_path / "speed.json"
    assert cli.main(["speed", "--variants", "transformer", "--seq-lens", "8", "--no-loop", "--no-memory", *TINY,
                     "--out", str(out)]) == 0
    env = json.loads(out.read_text(encoding="utf-8"))["environment"]
    assert env["load_average_start"] is None and env["load_average_end"] is None
    assert "load average: n/a at the start, n/a at the end" in capsys.readouterr().out
    assert speed.format_load((0.5, 1.25, 2.0)) == "0.50 1.25 2.00"
