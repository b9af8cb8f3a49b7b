"""The results folder organised by table: the merge keeps every run unchanged, the committed files
are what the merge gives, and the index in data/results/README.md is current (no training)."""

import json
import shutil

import pytest

from tl_research.results import __main__ as cli
from tl_research.results import index, merge, results_dir
from tl_research.suite import Suite

OLD_SUITE_FILES, OLD_RUNS = 110, 391  # counted in the per-command layout this merge replaced (129 files)
# files merged in since, with their runs (issue 24): the paper's d=60 parameter-matched rows (2 files x 3
# seeds), one 200-step recall run of the paper as printed, table 4's triple_slot and
# transformer_plus_triple rows (2 files x 3 seeds), the paper's gated hybrid and ours at d=80 (2 files x 5 seeds);
# then the rest of the paper's recall experiments: the printed form at d=64 and d=80 (2 x 5), the retrain recipe
# coded and printed (2 x 5), and d=96 (the paper's coded form 3 + 2 seeds, printed 3 + 2, ours 5)
ADDED_FILES, ADDED_RUNS = 16, 58


def _suite(task="overwrite", variant="transformer", seeds=(0,), overrides=None, steps=200, commit="abc", **extra):
    runs = [{"variant": variant, "seed": s, "params": 100, "value": 0.1 * (s + 1), "steps": steps} for s in seeds]
    protocol = {"task": task, "steps": steps, "lr": 3e-4, "overrides": overrides or {}, "seeds": list(seeds),
                "data_source": "synthetic", "environment": {"git_commit": commit, "command": f"run {variant}"}}
    return {"task": task, "protocol": protocol, "planned": [[variant, s] for s in seeds], "complete": True,
            "runs": runs, "diverged": 0, **extra}


OLD = {  # an old-style folder: one file per command
    "overwrite_transformer_s0.json": _suite(seeds=(0,)),
    "overwrite_transformer_s12.json": _suite(seeds=(1, 2), commit="def", resumed_by=[{"runs_before": 1}]),
    "overwrite_gated_hybrid.json": _suite(variant="gated_hybrid_repaired", seeds=(0, 1, 2)),
    "overwrite_gated_hybrid_500steps_s0.json": _suite(variant="gated_hybrid_repaired", steps=500),
    "overwrite_gated_hybrid_supersede.json": _suite(variant="gated_hybrid_repaired", seeds=(0, 1),
                                                    overrides={"supersede": True}),
    "overwrite_copy_of_seed0.json": _suite(seeds=(0,)),  # the same run again: a file of its own
    "lm_param_matched_triple_latent.json": _suite("lm", "triple_latent", (0, 1), {"state_dim": 12}, 80),
    "lm_param_matched_triple_slot.json": _suite("lm", "triple_slot", (0, 1), {"state_dim": 12}, 80),
    "overwrite_init_diagnosis.json": {"task": "overwrite", "protocol": {}, "runs": [{"x": 1}], "mean_over_seeds": {}},
}


def _write_folder(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")


def _read(folder):
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))}


def test_merge_groups_by_settings_keeps_every_run_once_and_splits_back(tmp_path):
    _write_folder(tmp_path, OLD)
    written = merge.merge_folder(tmp_path)
    assert written == {
        "overwrite.json": ["overwrite_copy_of_seed0.json", "overwrite_gated_hybrid.json",
                           "overwrite_transformer_s12.json"],
        "overwrite_transformer.json": ["overwrite_transformer_s0.json"],  # seed 0 is already in overwrite.json
        "overwrite_500steps.json": ["overwrite_gated_hybrid_500steps_s0.json"],
        "overwrite_supersede.json": ["overwrite_gated_hybrid_supersede.json"],
        "lm_S12.json": ["lm_param_matched_triple_latent.json", "lm_param_matched_triple_slot.json"],
    }
    new = _read(tmp_path)
    assert set(new) == set(written) | {"overwrite_init_diagnosis.json"}  # merged sources removed, diagnosis kept
    runs = [(name, json.dumps(r, sort_keys=True)) for name, d in new.items() if name in written for r in d["runs"]]
    old_runs = [json.dumps(r, sort_keys=True) for name, d in OLD.items() if "mean_over_seeds" not in d
                for r in d["runs"]]
    assert sorted(r for _, r in runs) == sorted(old_runs)  # every run once, values identical
    for name in written:
        keys = [(r["variant"], r["seed"]) for r in new[name]["runs"]]
        assert len(keys) == len(set(keys)), name  # a suite never holds a run twice
        for source, data in merge.split(new[name]).items():
            assert data == OLD[source]  # provenance kept: each source file comes back exactly
    lm = new["lm_S12.json"]
    assert lm["protocol"]["overrides"] == {"state_dim": 12} and lm["planned"] == [
        ["triple_latent", 0], ["triple_latent", 1], ["triple_slot", 0], ["triple_slot", 1]]
    assert [p["file"] for p in lm["merged_from"]] == ["lm_param_matched_triple_latent.json",
                                                      "lm_param_matched_triple_slot.json"]


def test_merge_is_idempotent_and_can_keep_or_redirect(tmp_path):
    _write_folder(tmp_path / "old", OLD)
    merge.merge_folder(tmp_path / "old", tmp_path / "new", remove=False)
    assert set(_read(tmp_path / "old")) == set(OLD)  # --keep / another --out: the sources stay
    once = _read(tmp_path / "new")
    merge.merge_folder(tmp_path / "new")
    assert _read(tmp_path / "new") == once


def test_a_merged_file_is_a_suite_the_experiments_command_resumes_and_the_merge_keeps(tmp_path):
    _write_folder(tmp_path, {k: OLD[k] for k in ("overwrite_transformer_s0.json", "overwrite_gated_hybrid.json")})
    merge.merge_folder(tmp_path)
    path = tmp_path / "overwrite.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    planned = [("transformer", 0), ("transformer", 1), ("gated_hybrid_repaired", 0)]
    suite = Suite.open(path, "overwrite", {**data["protocol"], "seeds": [0, 1]}, planned,
                       environment={"date": "later", "git_commit": "xyz", "command": "run more"})
    assert suite.todo() == [("transformer", 1)]  # the merged runs count as done
    suite.add({"variant": "transformer", "seed": 1, "params": 100, "value": 0.5, "steps": 200})
    suite.write()
    written = merge.merge_folder(tmp_path)  # merging again keeps the new run, and who added it
    assert written["overwrite.json"][-1] == "overwrite.json (added after the merge)"
    again = json.loads(path.read_text(encoding="utf-8"))
    assert [(r["variant"], r["seed"]) for r in again["runs"]] == [("gated_hybrid_repaired", 0),
                                                                  ("gated_hybrid_repaired", 1),
                                                                  ("gated_hybrid_repaired", 2), ("transformer", 0),
                                                                  ("transformer", 1)]
    assert again["merged_from"][-1]["kept"]["resumed_by"][0]["git_commit"] == "xyz"


def test_committed_results_are_what_the_merge_gives(tmp_path):
    root = results_dir()
    for path in root.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    assert merge.merge_folder(tmp_path, tmp_path / "again", remove=False)
    again = {p.name: p.read_bytes() for p in (tmp_path / "again").glob("*.json")}
    assert again == {name: (root / name).read_bytes() for name in again}


def test_committed_results_runs_are_unique_and_all_there():
    sources, total, seen = 0, 0, {}
    for path in sorted(results_dir().glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not merge.mergeable(data):
            continue
        assert merge.is_merged(data), f"{path.name}: run `python -m tl_research.results merge`"
        keys = [merge.run_key(r) for r in data["runs"]]
        assert len(keys) == len(set(keys)), path.name
        settings = json.dumps(merge.settings_of(data["protocol"]), sort_keys=True)
        for run in data["runs"]:
            key = (data["task"], settings, *merge.run_key(run))
            assert seen.setdefault(key, run) == run, (path.name, key)  # a repeat is only ever a copy
        sources += len(data["merged_from"])
        total += len(data["runs"])
        assert sum(p["runs"] for p in data["merged_from"]) == len(data["runs"])
    assert (sources, total) == (OLD_SUITE_FILES + ADDED_FILES, OLD_RUNS + ADDED_RUNS)


def test_committed_index_is_current():
    assert index.update(results_dir(), check=True), "run `python -m tl_research.results index`"


def test_index_lists_every_file_and_the_table_it_backs(tmp_path):
    _write_folder(tmp_path, {"lm.json": _suite("lm", "transformer", (0, 1, 2), steps=80)})
    (tmp_path / "README.md").write_text(f"# prose\n{index.START}\nold\n{index.END}\nmore prose\n", encoding="utf-8")
    assert cli.main(["index", str(tmp_path), "--check"]) == 1
    assert cli.main(["index", str(tmp_path)]) == 0 and cli.main(["index", str(tmp_path), "--check"]) == 0
    text = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# prose\n") and text.endswith("more prose\n") and "old" not in text
    assert "| [`lm.json`](lm.json) | lm | `transformer` | 0-2 | 80 | 3 | 1, 1b, 2 |" in text
    (tmp_path / "README.md").write_text("no markers", encoding="utf-8")
    with pytest.raises(ValueError, match="index markers"):
        index.update(tmp_path)


def test_cli_merge_and_a_missing_folder(tmp_path, capsys):
    _write_folder(tmp_path, {k: OLD[k] for k in ("lm_param_matched_triple_latent.json",
                                                  "lm_param_matched_triple_slot.json")})
    assert cli.main(["merge", str(tmp_path)]) == 0
    assert "lm_S12.json: 2 file(s)" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lm_S12.json"]
    assert cli.main(["index", str(tmp_path / "nowhere")]) == 2
    assert "error:" in capsys.readouterr().err


def test_cli_prints_intervals_and_the_calibrated_tables(capsys):
    """paired, rate and calibrated: the numbers docs/paper.md and RECALL_STUDY.md quote from these commands."""
    assert cli.main(["rate", "0", "35"]) == 0
    assert capsys.readouterr().out.strip() == "0/35 = 0.0000; 95% Clopper-Pearson [0.0000, 0.1000]"
    assert cli.main(["paired", str(results_dir() / "lm.json"), "transformer", "triple_latent"]) == 0
    out = capsys.readouterr().out
    assert "mean difference +0.0537" in out and out.rstrip().endswith("95% interval [-0.0732, +0.1805]")
    assert cli.main(["calibrated"]) == 0
    assert "## recall_calibrated.json (1,000 steps x 32 sequences" in capsys.readouterr().out
