"""Gathering the calibrated protocol's lr sweep (studies/calibrated.py) from small stand-in suite files."""

import json
from pathlib import Path

import pytest

from tl_research.studies import calibrated


def _suite(folder, name, lr, runs):
    data = {"task": "recall", "protocol": {"task": "recall", "lr": lr, "n_queries": 4}, "runs": runs}
    (folder / name).write_text(json.dumps(data), encoding="utf-8")


def _run(variant, seed, value):
    return {"variant": variant, "seed": seed, "value": value}


def test_gather_keeps_each_variants_best_lr(tmp_path):
    _suite(tmp_path, "recall_calibrated_lr1e-3.json", 1e-3,
           [_run("transformer", 0, 0.90), _run("triple_latent", 0, 0.30), _run("triple_latent", 1, 0.31),
            _run("gated_hybrid_repaired", 0, 0.5)])
    _suite(tmp_path, "recall_calibrated_lr3e-3.json", 3e-3,
           [_run("transformer", 0, 0.99), _run("transformer", 1, 0.98), _run("triple_latent", 0, 0.30)])
    _suite(tmp_path, "recall_calibrated_lr3e-3_decay4.json", 3e-3, [_run("triple_latent", 0, 0.7)])
    result = calibrated.gather(tmp_path, "recall_calibrated_lr")
    # transformer: 3e-3 is better; triple_latent: a tie, the smaller lr; gated_hybrid_repaired: no seed 0 at 3e-3 yet
    assert result["protocol"]["lr_by_variant"] == {"transformer": 3e-3, "triple_latent": 1e-3}
    assert result["protocol"]["lr_sweep"] == [1e-3, 3e-3]
    kept = [(r["variant"], r["seed"], r["lr"]) for r in result["runs"]]
    assert kept == [("transformer", 0, 3e-3), ("transformer", 1, 3e-3), ("triple_latent", 0, 1e-3),
                    ("triple_latent", 1, 1e-3)]
    swept = [(r["variant"], r["lr"]) for r in result["sweep_runs"]]
    assert swept == [("transformer", 1e-3), ("triple_latent", 3e-3)]
    assert json.loads((tmp_path / "recall_calibrated.json").read_text(encoding="utf-8")) == result
    assert result["sources"] == ["recall_calibrated_lr1e-3.json", "recall_calibrated_lr3e-3.json"]


def test_the_queue_asks_the_module_for_each_variants_lr(tmp_path, capsys):
    """run_calibrated.sh's best_lr calls the CLI: it prints the chosen lr text, and stops a queue (exit
    message, no lr) while a sweep file lacks the variant's seed 0."""
    _suite(tmp_path, "recall_z_lr1e-3.json", 1e-3, [_run("transformer", 0, 1.0), _run("h3", 0, 0.4)])
    _suite(tmp_path, "recall_z_lr3e-3.json", 3e-3, [_run("transformer", 0, 0.25)])
    _suite(tmp_path, "recall_z_lr1e-3_decay4.json", 1e-3, [_run("transformer", 0, 0.5)])
    _suite(tmp_path, "recall_z_lr3e-3_decay4.json", 3e-3, [_run("transformer", 0, 0.5)])
    cli = ["--folder", str(tmp_path), "recall_z_lr", "--best-lr"]
    calibrated.main([*cli, "transformer"])
    calibrated.main([*cli, "transformer", "--suffix", "_decay4"])  # a tie: the smaller lr
    assert capsys.readouterr().out.split() == ["1e-3", "1e-3"]
    with pytest.raises(SystemExit, match=r"best-lr: h3 lacks seed 0 in one of \['recall_z_lr1e-3.json'"):
        calibrated.main([*cli, "h3"])
    script = (Path(__file__).parents[2] / "data/results/run_calibrated.sh").read_text(encoding="utf-8")
    assert "studies.calibrated --folder \"$OUT\" \"$1\" --suffix \"${3:-}\" --best-lr \"$2\"" in script


def test_gather_needs_its_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        calibrated.gather(tmp_path, "recall_calibrated_lr")


def test_the_calibrated_table_gives_wins_intervals_and_paired_differences(tmp_path):
    """From a sweep to the table: each variant at its lr, wins with Clopper-Pearson, d = a - transformer per seed."""
    from tl_research.results import calibrated_table as ct

    protocol = {"task": "recall", "n_queries": 4, "n_pairs": 4, "steps": 1000, "batch_size": 32, "seq_len": 128}
    accs = {"transformer": [1.0, 1.0, 0.99], "triple_latent": [0.30, 0.25, 0.40]}
    for lr, scale in ((1e-3, 1.0), (3e-3, 0.5)):
        runs = [_run(v, s, a * scale) for v, values in accs.items() for s, a in enumerate(values)]
        data = {"task": "recall", "protocol": {**protocol, "lr": lr}, "runs": runs}
        (tmp_path / f"recall_zoology_lr{lr:g}.json").write_text(json.dumps(data), encoding="utf-8")
    calibrated.gather(tmp_path, "recall_zoology_lr", out=tmp_path / "recall_calibrated.json")
    rows = {r.variant: r for r in ct.calibrated_rows("recall_calibrated.json", root=tmp_path)}
    assert list(rows) == ["transformer", "triple_latent"]  # table 4's order
    t, m = rows["transformer"], rows["triple_latent"]
    assert t.lr == m.lr == 1e-3 and t.wins == 3 and m.wins == 0 and t.vs_transformer is None
    assert m.win_interval == pytest.approx((0.0, 0.7076), abs=1e-4)  # 0 of 3, Clopper-Pearson
    assert m.vs_transformer.differences == pytest.approx((-0.70, -0.75, -0.59))
    assert m.vs_transformer.high < 0  # resolved: below the Transformer
    table = ct.calibrated_markdown("recall_calibrated.json", root=tmp_path)
    assert "| `triple_latent` | 0.001 | 3 | 31.7% | 30.0 / 25.0 / 40.0 | 0 of 3 [0.00, 0.71] | -68.0 [" in table
    assert ct.budget("recall_calibrated.json", root=tmp_path) == (
        "1,000 steps x 32 sequences of 128 tokens, 4 pairs, 4 questions each")
    data = json.loads((tmp_path / "recall_calibrated.json").read_text(encoding="utf-8"))
    data["protocol"].update(key_ids=16, n_pairs=8, n_queries=8, seq_len=64, steps=3000)  # MQAR's form
    (tmp_path / "mqar_calibrated_pairs8.json").write_text(json.dumps(data), encoding="utf-8")
    assert ct.budget("mqar_calibrated_pairs8.json", root=tmp_path) == (
        "3,000 steps x 32 sequences of 64 tokens, 8 pairs among 16 key ids, 8 questions each")
    data["protocol"].update(key_ids=32, n_pairs=16, n_queries=16, seq_len=128, steps=10000, pairs_mix=[4, 8, 16],
                            mix_lengths="scaled")  # 16 pairs, trained on Zoology's pool
    (tmp_path / "mqar_calibrated_pairs16.json").write_text(json.dumps(data), encoding="utf-8")
    assert ct.budget("mqar_calibrated_pairs16.json", root=tmp_path) == (
        "10,000 steps x 32 sequences of 128 tokens, 16 pairs among 32 key ids, 16 questions each; "
        "trained on batches of 4, 8, 16 pairs in turn, fewer pairs in shorter sequences")


def test_gather_joins_sweeps_of_other_settings_and_waits_for_unfinished_ones(tmp_path):
    """The gated hybrids' sweep has its own files: gathered into the same table; a sweep without any file yet,
    or without seed 0 at every lr, is left out; nothing finished at all is an error, not an empty table."""
    for name, lr, runs in (("recall_z_lr1e-3.json", 1e-3, [_run("transformer", 0, 1.0)]),
                           ("recall_z_lr3e-3.json", 3e-3, [_run("transformer", 0, 0.25)]),
                           ("recall_za_lr1e-3.json", 1e-3, [_run("gated_hybrid_repaired", 0, 0.4)]),
                           ("recall_za_lr3e-3.json", 3e-3,
                            [_run("gated_hybrid_repaired", 0, 0.6), _run("gated_hybrid_repaired", 1, 0.7)])):
        _suite(tmp_path, name, lr, runs)
    result = calibrated.gather(tmp_path, ["recall_z_lr", "recall_za_lr", "recall_zb_lr"])
    assert result["protocol"]["lr_by_variant"] == {"transformer": 1e-3, "gated_hybrid_repaired": 3e-3}
    assert [(r["variant"], r["seed"], r["source"]) for r in result["runs"]] == [
        ("transformer", 0, "recall_z_lr1e-3.json"), ("gated_hybrid_repaired", 0, "recall_za_lr3e-3.json"),
        ("gated_hybrid_repaired", 1, "recall_za_lr3e-3.json")]
    _suite(tmp_path, "recall_y_lr1e-3.json", 1e-3, [_run("triple_latent", 0, 0.1)])
    _suite(tmp_path, "recall_y_lr3e-3.json", 3e-3, [])
    with pytest.raises(ValueError, match="no variant has seed 0 at every lr yet"):
        calibrated.gather(tmp_path, "recall_y_lr")
    with pytest.raises(FileNotFoundError, match=r"no recall_x_lr<lr>\.json"):
        calibrated.gather(tmp_path, "recall_x_lr")


def test_a_family_file_keeps_only_its_variants_and_reads_them_against_triple_latent_too(tmp_path):
    """The sweep files hold table 4's rows and issue 33's: --variants gathers one table's rows; the family file
    has a second paired difference, minus triple_latent, beside the Transformer's."""
    from tl_research.results import calibrated_table as ct

    accs = {"transformer": [1.0, 1.0, 1.0], "triple_latent": [0.125, 0.12, 0.13], "gla": [0.5, 0.3, 0.4],
            "gated_hybrid_repaired": [1.0, 1.0, 1.0]}
    for lr in (1e-3, 3e-3):
        _suite(tmp_path, f"recall_z_lr{lr:g}.json", lr,
               [_run(v, s, a) for v, values in accs.items() for s, a in enumerate(values)])
    family = tmp_path / ct.FAMILY_FILE
    result = calibrated.gather(tmp_path, "recall_z_lr", out=family, variants=["transformer", "triple_latent", "gla"])
    assert {r["variant"] for r in result["runs"]} == {"transformer", "triple_latent", "gla"}
    rows = {r.variant: r for r in ct.calibrated_rows(ct.FAMILY_FILE, root=tmp_path)}
    assert list(rows) == ["transformer", "triple_latent", "gla"]
    assert rows["gla"].vs_second.differences == pytest.approx((0.375, 0.18, 0.27))
    assert rows["triple_latent"].vs_second is None and rows["transformer"].vs_second is not None
    table = ct.calibrated_markdown(ct.FAMILY_FILE, root=tmp_path)
    assert "| minus transformer (95% interval) | minus triple_latent (95% interval) |" in table
    assert "| `gla` | 0.001 | 3 | 40.0% | 50.0 / 30.0 / 40.0 | 0 of 3 [0.00, 0.71] | -60.0 [" in table
    calibrated.gather(tmp_path, "recall_z_lr", out=tmp_path / "recall_calibrated.json")  # table 4: one difference
    assert "minus triple_latent" not in ct.calibrated_markdown("recall_calibrated.json", root=tmp_path)


def test_a_variant_run_at_one_lr_chosen_elsewhere_is_gathered_only_when_named_unswept(tmp_path):
    """MQAR's rows beside the Transformer's ran at the lr of their 4-pair sweep (run_calibrated.sh mqar_rows):
    named ``unswept``, each is gathered at the one lr it has and listed in the protocol; unnamed, it waits
    for a sweep like any other; a variant with seed 0 at every lr is swept whatever the list says."""
    _suite(tmp_path, "mqar_lr1e-3.json", 1e-3, [_run("transformer", 0, 1.0), _run("deltanet", 0, 1.0),
                                                _run("deltanet", 1, 0.9)])
    _suite(tmp_path, "mqar_lr3e-3.json", 3e-3, [_run("transformer", 0, 0.5), _run("triple_latent", 0, 0.06)])
    plain = calibrated.gather(tmp_path, "mqar_lr", out=tmp_path / "plain.json")
    assert plain["protocol"]["lr_by_variant"] == {"transformer": 1e-3} and "lr_unswept" not in plain["protocol"]
    result = calibrated.gather(tmp_path, "mqar_lr", unswept=("deltanet", "triple_latent", "transformer", "gla"))
    assert result["protocol"]["lr_by_variant"] == {"transformer": 1e-3, "deltanet": 1e-3, "triple_latent": 3e-3}
    assert result["protocol"]["lr_unswept"]["variants"] == {"deltanet": 1e-3, "triple_latent": 3e-3}
    assert [(r["variant"], r["seed"], r["lr"]) for r in result["runs"]] == [
        ("transformer", 0, 1e-3), ("deltanet", 0, 1e-3), ("deltanet", 1, 1e-3), ("triple_latent", 0, 3e-3)]
    assert [(r["variant"], r["lr"]) for r in result["sweep_runs"]] == [("transformer", 3e-3)]
