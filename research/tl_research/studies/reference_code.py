"""The paper's own recall script, run seed by seed: the reference code's win rate (issue 32, item 3).

The paper reports its gated hybrid at 100% on seed 19 and near chance on seeds 7 and 29, and calls
the outcome seed-dependent. Whether that is a property of the reference code or of our
re-implementation can only be decided by running the reference code itself. Its repository
carries no licence, so nothing of it lives here: this module takes the path of a checkout made at
run time (outside this repository, or under the ignored ``/reference/``) and runs the paper's
``experiments/train_memory.py`` in a subprocess, one seed at a time, with the paper's gated
configuration and the script's own defaults for everything else.

Glossary (paper's experiment -> code name):

    gated hybrid, "assoc-gated-last-logits"  -> REFERENCE_MODEL
    d = 64, 3 layers, state dim 8, 500 steps  -> GATED_ARGS (from the paper's
                                                 gated_recall_seeds_summary.json)
    win (the task solved)                      -> eval_accuracy >= WIN_ACCURACY

The reference repository is a Python package named ``auto_research_llm_ideas`` (its modules import
themselves under that name), so each run gets a temporary folder holding a link of that name to the
checkout, placed first on ``PYTHONPATH``. The device is forced to the CPU (``CUDA_VISIBLE_DEVICES``
empty; the script picks CUDA, then MPS, then CPU) and every run uses one thread
(``OMP_NUM_THREADS=1``, ``MKL_NUM_THREADS=1``).

Each finished seed is appended to the result file at once (written to a temporary file, then
renamed), so an interrupted queue loses at most the run in progress; seeds already in the file are
skipped. Usage:

    python -m tl_research.studies.reference_code --checkout PATH/TO/Autoresearch_ideas \\
        --seeds 7 19 29 0-6 8-18 20-28 --out data/results/recall_reference_code.json
    python -m tl_research.studies.reference_code --checkout PATH --lr 1e-3 --seeds 7 19 29 \\
        --out data/results/recall_reference_code_lr1e-3.json          # an arm: one flag changed, its own file
    python -m tl_research.studies.reference_code --summary   # wins so far, with a 95% interval
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch  # only for the version string recorded: each run is a separate process

from tl_research.results.intervals import clopper_pearson

REFERENCE_REPO = "https://github.com/xiaol/Autoresearch_ideas"
REFERENCE_COMMIT = "e7f66240ef1297d717a67768ada7d0df1646d1ad"
REFERENCE_PACKAGE = "auto_research_llm_ideas"
REFERENCE_SCRIPT = "experiments/train_memory.py"
REFERENCE_MODEL = "triple-hybrid-assoc-gated-last-logits"
# The gated seed study's sizes (papers/generic_triple_latent/supporting_results/
# gated_recall_seeds_summary.json: d_models [64], n_layers_list [3], state_dims [8], steps_list [500]);
# batch 32, length 128, 64 evaluation batches, 4 heads, dropout 0.1, lr 3e-4 are the script's defaults.
GATED_ARGS = ("--d-model", "64", "--n-layers", "3", "--state-dim", "8", "--steps", "500")
WIN_ACCURACY = 0.95
# One "[MEM] <model> step 0100/0500 pairs=4 seq=128 lr=0.000300 loss=1.2345" line every steps/5 steps.
STEP_LINE = re.compile(
    r"\[MEM\] \S+ step (?P<step>\d+)/\d+ pairs=(?P<pairs>\d+) seq=(?P<seq>\d+) "
    r"lr=(?P<lr>[0-9.eE+-]+) loss=(?P<loss>[0-9.eE+-]+|nan|inf)"
)


def parse_seeds(tokens: list[str]) -> list[int]:
    """``["7", "19", "0-3"]`` -> ``[7, 19, 0, 1, 2, 3]`` (order kept, duplicates dropped)."""
    seeds: list[int] = []
    for token in tokens:
        if re.fullmatch(r"\d+-\d+", token):
            low, high = (int(part) for part in token.split("-"))
            if high < low:
                raise ValueError(f"seed range {token!r} runs backwards")
            values = range(low, high + 1)
        elif re.fullmatch(r"\d+", token):
            values = range(int(token), int(token) + 1)
        else:
            raise ValueError(f"a seed is a number or a range like 0-6, got {token!r}")
        seeds.extend(value for value in values if value not in seeds)
    return seeds


def check_checkout(checkout: Path) -> None:
    """Fail early, with the fix, when the path is not a checkout of the reference repository."""
    for relative in (REFERENCE_SCRIPT, "model/triple_latent.py", "experiments/train_lm.py"):
        if not (checkout / relative).is_file():
            raise FileNotFoundError(
                f"{checkout / relative} is missing: pass the root of a checkout of {REFERENCE_REPO} "
                f"at commit {REFERENCE_COMMIT[:7]} (for example `git archive {REFERENCE_COMMIT[:7]} | "
                f"tar -x -C DIR`)"
            )


def reference_command(seed: int, output_dir: str, extra: tuple[str, ...] = ()) -> list[str]:
    """The command line of one run, as recorded (the interpreter is named ``python``)."""
    return [
        "python", "-m", f"{REFERENCE_PACKAGE}.experiments.train_memory",
        "--model", REFERENCE_MODEL, *GATED_ARGS, *extra,
        "--seed", str(seed), "--output-dir", output_dir,
    ]  # fmt: skip


def parse_output(stdout: str) -> tuple[dict, list[dict]]:
    """The script's final JSON (printed last, indented) and its per-step loss lines."""
    steps = [
        {
            "step": int(m["step"]),
            "pairs": int(m["pairs"]),
            "seq_len": int(m["seq"]),
            "lr": float(m["lr"]),
            "loss": float(m["loss"]),
        }
        for m in STEP_LINE.finditer(stdout)
    ]
    start = stdout.rfind("\n{")
    start = 0 if stdout.startswith("{") and start < 0 else start
    if start < 0:
        raise ValueError("the reference script printed no final JSON result")
    return json.loads(stdout[start:]), steps


def git_commit(path: Path) -> str:
    """Our repository's commit (with '+dirty' when the work tree has changes), or 'unknown'."""
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, encoding="utf-8",
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, encoding="utf-8", check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def run_one(checkout: Path, seed: int, extra: tuple[str, ...] = (), timeout_s: float | None = None) -> dict:
    """Train and evaluate the reference model for one seed in a subprocess; return its record."""
    with tempfile.TemporaryDirectory(prefix="tl_reference_") as tmp:
        (Path(tmp) / REFERENCE_PACKAGE).symlink_to(checkout.resolve(), target_is_directory=True)
        output_dir = str(Path(tmp) / "out")
        command = reference_command(seed, output_dir, extra)
        env = dict(os.environ)
        env.update(
            PYTHONPATH=tmp, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
            PYTHONHASHSEED="0",
        )  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *command[1:]], cwd=tmp, env=env, capture_output=True, text=True,
            encoding="utf-8", timeout=timeout_s,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"seed {seed}: the reference script failed:\n{done.stderr[-4000:]}")
        result, steps = parse_output(done.stdout)
    shown = [part if part != output_dir else "OUTPUT_DIR" for part in command]
    return {
        "seed": seed,
        "eval_accuracy": result["eval_accuracy"],
        "eval_loss": result["eval_loss"],
        "train_loss_last": result["train_loss_last"],
        "win": result["eval_accuracy"] >= WIN_ACCURACY,
        "wall_seconds": round(wall, 1),
        "command": " ".join(shown),
        "environment": "CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONHASHSEED=0",
        "loss_log": steps,
        "reference_result": result,
        "our_commit": git_commit(Path(__file__).resolve().parents[3]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],
    }


def load(out: Path, extra: tuple[str, ...] = ()) -> dict:
    """The result file, or a fresh one naming the reference and the configuration (``extra``: changed flags)."""
    if out.exists():
        return json.loads(out.read_text(encoding="utf-8"))
    return {
        "description": (
            "The paper's own experiments/train_memory.py (reference repository, run unmodified from a "
            "checkout outside this repository) with the gated seed study's configuration, one seed per "
            "run, on one CPU thread. A win is eval_accuracy >= 0.95."
        ),
        "reference_repo": REFERENCE_REPO,
        "reference_commit": REFERENCE_COMMIT,
        "reference_model": REFERENCE_MODEL,
        "reference_args": [*GATED_ARGS, *extra],
        "win_accuracy": WIN_ACCURACY,
        "runs": [],
    }


def save(out: Path, data: dict) -> None:
    """Write atomically: a half-written file never replaces a good one."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)


def summary(data: dict) -> str:
    """Per-seed accuracies and the win rate with its exact (Clopper-Pearson) 95% interval."""
    runs = sorted(data["runs"], key=lambda run: run["seed"])
    if not runs:
        return "no finished run yet"
    wins = sum(run["eval_accuracy"] >= data["win_accuracy"] for run in runs)
    lo, hi = clopper_pearson(wins, len(runs))
    per_seed = ", ".join(f"{run['seed']}: {100 * run['eval_accuracy']:.1f}%" for run in runs)
    return (f"{wins}/{len(runs)} wins (accuracy >= {data['win_accuracy']:.0%}), 95% Clopper-Pearson interval "
            f"[{lo:.3f}, {hi:.3f}]; per seed {per_seed}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", type=Path, help="root of the reference repository (to run seeds)")
    parser.add_argument("--seeds", nargs="+", default=["7", "19", "29"], help="numbers or ranges (0-6)")
    parser.add_argument("--out", type=Path, default=Path("data/results/recall_reference_code.json"))
    parser.add_argument("--lr", type=float, default=None,
                        help="pass --lr to the reference script (an arm; default: the script's 3e-4)")
    parser.add_argument("--timeout-s", type=float, default=None, help="give up on one run after this")
    parser.add_argument("--summary", action="store_true", help="print the wins in --out and stop")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(load(args.out)))
        return
    if args.checkout is None:
        parser.error("--checkout is needed to run seeds (or pass --summary)")
    check_checkout(args.checkout)
    seeds = parse_seeds(args.seeds)
    extra = () if args.lr is None else ("--lr", f"{args.lr:g}")
    for seed in seeds:
        data = load(args.out, extra)
        if data["reference_args"] != [*GATED_ARGS, *extra]:
            raise ValueError(f"{args.out} holds runs with {data['reference_args']}, not these flags "
                             f"({' '.join(extra) or 'the defaults'}): give this arm a file of its own")
        if any(run["seed"] == seed for run in data["runs"]):
            print(f"seed {seed}: already in {args.out}, skipped", flush=True)
            continue
        print(f"seed {seed}: running ({dt.datetime.now(dt.timezone.utc):%H:%M:%S} UTC)", flush=True)
        record = run_one(args.checkout, seed, extra, timeout_s=args.timeout_s)
        data = load(args.out, extra)  # re-read: never drop a record another writer added meanwhile
        data["runs"].append(record)
        save(args.out, data)
        wins = sum(run["win"] for run in data["runs"])
        print(
            f"seed {seed}: accuracy {record['eval_accuracy']:.4f}, {record['wall_seconds']:.0f} s; "
            f"wins so far {wins}/{len(data['runs'])}",
            flush=True,
        )


if __name__ == "__main__":
    main()
