"""Make a shipped checkpoint: train a byte-level WikiText-2 model as the committed 2,000-step runs do, keep it.

    python -m tl_research.ship_checkpoint triple_latent              # seed 0, 2,000 steps
    python -m tl_research.ship_checkpoint triple_slot --seed 0 --steps 2000
    python -m tl_research.ship_checkpoint triple_latent --task recall --steps 200   # notebook 06a

The run is the lm task's, step for step: the ``lm`` protocol (d = 64, 3 layers, 16 windows of
128 bytes per step, AdamW at lr 3e-4, constant), trained by the one recipe
(:func:`~tl_minimal.training.recipes.fit`, which seeds and builds through ``seeded_model``) and
evaluated on the protocol's validation chunks (the first 128 batches of 16 non-overlapping
chunks), so with the same data, seed and steps its validation BPB is the ``value`` of that
(variant, seed) in ``data/results/lm_2000steps.json``. The record says whether it matches.

:func:`tl_minimal.course.shipped.shipped_or_retrained` gives the notebooks the shipped model, or the same run retrained.

It writes two files in ``data/checkpoints/`` (:mod:`tl_minimal.course.shipped` reads them):
the weights (float32, under 1 MB) and a JSON record holding

    variant, seed, steps, vocab_size, params, config, protocol   what was trained, and how
    command, git_commit, date, torch, python, threads           where it came from
    data_source, train_seconds                                  on what, and how long training took
    loss_log {"steps", "loss"}      the training loss (nats) at every one of the first
                                    ``FIRST_STEPS`` steps, then every ``LOG_EVERY``, and the last
    val_bpb                         the lm protocol's evaluation (what lm_2000steps.json records)
    small_eval {"chunks", "bpb"}    the same evaluation on its first ``SMALL_EVAL_CHUNKS`` chunks
                                    (what the test recomputes in a second)
    committed {"file", "value", "matches"}   the committed 2,000-step run of this variant and seed

``--task recall`` trains on the paper's associative recall protocol instead (fresh synthetic
examples from the seed, 200 steps by default there), and records the accuracy on the protocol's
fresh evaluation examples (``accuracy``; ``small_eval`` on the first ``SMALL_EVAL_RECALL`` of them)
and the committed run it repeats: the same (variant, seed) at the same step in ``recall.json``.

Use one thread (``OMP_NUM_THREADS=1``): the committed runs did, and the loss log is then
reproduced exactly by the test's few-step retraining. About 3 minutes per model on a quiet CPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

import torch

from tl_minimal.course.shipped import (
    FORMAT,
    RECALL_STEPS,
    SHIPPED,
    SHIPPED_RECALL,
    TASKS,
    remake_command,
    shipped_paths,
)
from tl_minimal.registry import DEFAULTS
from tl_minimal.results.files import results_dir
from tl_minimal.training.evaluate import bits_per_byte, recall_accuracy
from tl_minimal.training.recipes import count_parameters, fit

from .protocols import protocol
from .provenance import git_commit
from .tasks.common import in_batches
from .tasks.paper import load_lm

FIRST_STEPS = 20  # the loss at every step up to here (the test retrains the first few)
LOG_EVERY = 10  # then every LOG_EVERY steps
SMALL_EVAL_CHUNKS = 32  # the small evaluation the test repeats: two batches of 16 chunks
COMMITTED = "lm_2000steps.json"  # the committed runs this one repeats
COMMITTED_RECALL = "recall.json"  # the committed recall runs (accuracy at 200 and 500 steps)
SMALL_EVAL_RECALL = 256  # the recall evaluation examples the test repeats


def save_shipped(model, variant: str, vocab_size: int, record: dict, seed: int = 0, steps: int = 2000,
                 folder=None, task: str = "lm") -> tuple[Path, Path]:
    """Write a trained model's weights (float32) and its record; returns the two paths."""
    weights_path, record_path = shipped_paths(variant, seed, steps, folder, task)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu", torch.float32) if v.is_floating_point() else v.detach().cpu()
             for k, v in model.state_dict().items()}
    torch.save({"format": FORMAT, "variant": variant, "vocab_size": vocab_size,
                "config": model.config.settings(), "model": state}, weights_path)
    record_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return weights_path, record_path


def loss_log(losses: list[float]) -> dict:
    """The losses worth keeping: every one of the first FIRST_STEPS steps, every LOG_EVERY-th after, the last."""
    steps = [k for k in range(len(losses)) if k < FIRST_STEPS or k % LOG_EVERY == 0 or k == len(losses) - 1]
    return {"steps": steps, "loss": [losses[k] for k in steps]}


def committed_value(variant: str, seed: int, steps: int) -> dict | None:
    """The committed run of (variant, seed) at ``steps`` in :data:`COMMITTED`, or None when there is none."""
    if steps != 2000:
        return None
    results = json.loads((results_dir() / COMMITTED).read_text(encoding="utf-8"))
    for run in results["runs"]:
        if run["variant"] == variant and run["seed"] == seed:
            return {"file": f"data/results/{COMMITTED}", "value": run["value"]}
    return None


def committed_recall(variant: str, seed: int, steps: int) -> dict | None:
    """The committed recall run of (variant, seed) evaluated at ``steps`` in :data:`COMMITTED_RECALL`, or None."""
    results = json.loads((results_dir() / COMMITTED_RECALL).read_text(encoding="utf-8"))
    for run in results["runs"]:
        if run["variant"] == variant and run["seed"] == seed and str(steps) in run.get("by_step", {}):
            return {"file": f"data/results/{COMMITTED_RECALL}", "value": run["by_step"][str(steps)]["accuracy"]}
    return None


def recall_eval_set(p, seed: int):
    """The recall protocol's fresh evaluation examples for ``seed`` (what the recall task scores)."""
    return p.eval_set(seed)


def make_recall(variant: str, seed: int = 0, steps: int = RECALL_STEPS, folder=None, progress: bool = False) -> dict:
    """Train ``variant`` on the paper's recall protocol for ``steps``, score it, write its two files."""
    p = protocol("recall", steps=steps, seeds=(seed,))
    model, history = fit(variant, p, seed, device="cpu", progress=progress)
    x, y = recall_eval_set(p, seed)
    record = {
        "task": "recall", "variant": variant, "seed": seed, "steps": steps, "vocab_size": p.vocab_size,
        "params": count_parameters(model), "config": model.config.settings(), "protocol": p.to_dict(),
        "command": remake_command(variant, seed, steps, "recall"), "git_commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "python": platform.python_version(), "threads": torch.get_num_threads(),
        "data_source": f"synthetic associative recall generated from seed {seed} ({p.n_pairs} pairs, "
                       f"{p.n_queries} question, seq {p.seq_len}); eval: {len(x)} fresh examples",
        "train_seconds": round(history["seconds"], 1), "loss_log": loss_log(history["loss"]),
        "accuracy": recall_accuracy(model, x, y)["accuracy"],
        "small_eval": {"examples": SMALL_EVAL_RECALL,
                       "accuracy": recall_accuracy(model, x[:SMALL_EVAL_RECALL], y[:SMALL_EVAL_RECALL])["accuracy"]},
    }
    committed = committed_recall(variant, seed, steps)
    if committed is not None:
        committed["matches"] = committed["value"] == record["accuracy"]
    record["committed"] = committed
    save_shipped(model, variant, p.vocab_size, record, seed, steps, folder, task="recall")
    return record


def make(variant: str, seed: int = 0, steps: int = 2000, folder=None, progress: bool = False) -> dict:
    """Train ``variant`` on the lm protocol for ``steps``, evaluate it, write its two files; returns the record."""
    p = protocol("lm", steps=steps, seeds=(seed,))
    data = load_lm(p)
    model, history = fit(variant, p, seed, data.train, device="cpu", progress=progress)
    x, y = data.eval
    record = {
        "variant": variant, "seed": seed, "steps": steps, "vocab_size": p.vocab_size,
        "params": count_parameters(model), "config": model.config.settings(), "protocol": p.to_dict(),
        "command": remake_command(variant, seed, steps), "git_commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "python": platform.python_version(), "threads": torch.get_num_threads(),
        "data_source": data.source, "train_seconds": round(history["seconds"], 1),
        "loss_log": loss_log(history["loss"]),
        "val_bpb": bits_per_byte(model, in_batches(x, y)),
        "small_eval": {"chunks": SMALL_EVAL_CHUNKS,
                       "bpb": bits_per_byte(model, in_batches(x[:SMALL_EVAL_CHUNKS], y[:SMALL_EVAL_CHUNKS]))},
    }
    committed = committed_value(variant, seed, steps)
    if committed is not None:
        committed["matches"] = abs(committed["value"] - record["val_bpb"]) < 1e-6
    record["committed"] = committed
    save_shipped(model, variant, p.vocab_size, record, seed, steps, folder)
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tl_research.ship_checkpoint",
                                     description="Train a byte-level WikiText-2 model as lm_2000steps.json's runs "
                                                 "and write it to data/checkpoints/ (weights + record).")
    parser.add_argument("variants", nargs="+", help=f"variants to train (shipped: lm {', '.join(SHIPPED)}; "
                                                    f"recall {', '.join(SHIPPED_RECALL)})")
    parser.add_argument("--task", choices=TASKS, default="lm", help="the protocol trained on (default: lm)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None,
                        help=f"training steps (default: 2000 for lm, {RECALL_STEPS} for recall)")
    parser.add_argument("--out-dir", default=None, help="folder for the two files (default: data/checkpoints/)")
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    args = parser.parse_args(argv)
    if args.steps is None:
        args.steps = 2000 if args.task == "lm" else RECALL_STEPS
    if args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")
    unknown = [v for v in args.variants if v not in DEFAULTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}: expected one of {', '.join(DEFAULTS)}")
    for variant in args.variants:
        maker = make if args.task == "lm" else make_recall
        r = maker(variant, args.seed, args.steps, args.out_dir, args.progress)
        c = r["committed"]
        against = f"; committed {c['value']:.6f} ({'matches' if c['matches'] else 'DIFFERS'})" if c else ""
        score = f"val BPB {r['val_bpb']:.6f}" if args.task == "lm" else f"accuracy {r['accuracy']:.6f}"
        print(f"{variant} seed {args.seed}: {args.steps} steps in {r['train_seconds']} s, {score}{against}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
