"""Run a task for several variants and seeds, print a table, write the results JSON.

The results file (filled run by run and resumable: see :mod:`.suite`)::

    {"task": "lm",
     "protocol": {...every hyperparameter..., "data_source": "...", "model_config": {...},
                  "overrides": {...}, "environment": {"torch", "python", "device", "git_commit", ...}},
     "planned": [[variant, seed], ...], "complete": true,
     "runs": [{"variant", "seed", "params", "metric", "value", "steps", "seconds", "device", ...}, ...],
     "diverged": 0}

``value`` is the metric: bpb (lm), accuracy as a fraction (recall, mqar), mean token loss in
nats (tokenized). A run whose loss turned NaN or inf has ``value: null`` and an ``error``.
"""

from __future__ import annotations

import datetime
import inspect
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import torch

from ..training import distributed
from ..training.device import device_name, get_device
from ..training.train import TrainingDiverged
from .protocols import PAPER_VARIANTS
from .protocols import protocol as make_protocol
from .suite import Suite, SuiteInterrupted, write_atomic
from .tasks import TASKS, build


class ConfigError(ValueError):
    """A bad task, variant, config value or device: reported by the command line as one line."""


def git_commit() -> str | None:
    """The repository's current commit (with "+dirty" when files changed), or None outside git."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=False, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("+dirty" if dirty else "")) or None


def portable(word: str) -> str:
    """One word of a recorded command, as it reads on another machine: an absolute path inside this
    checkout (``--out /home/me/tl-minimal/data/results/x.json``, or ``--out=...``) is written
    relative to the checkout's root (``data/results/x.json``); every other word is kept."""
    root = Path(__file__).resolve().parents[2]  # the checkout: tl_minimal/experiments/ -> ..
    option, eq, value = word.partition("=") if word.startswith("--") else ("", "", word)
    path = Path(value)
    if not path.is_absolute() or root not in path.resolve().parents:
        return word
    return option + eq + path.resolve().relative_to(root).as_posix()


def command_line() -> str:
    """The command that is running, as a reader would type it: a module of this package run with
    ``python -m`` is written ``python -m tl_minimal...`` (not the file's path on this machine), and
    paths inside the checkout relative to it (:func:`portable`)."""
    package = Path(__file__).resolve().parents[1]  # tl_minimal/
    program = Path(sys.argv[0]).resolve()
    args = [portable(word) for word in sys.argv[1:]]
    if program.suffix != ".py" or package not in program.parents:  # a script, an interactive session
        return " ".join([sys.argv[0], *args])
    module = program.relative_to(package.parent).with_suffix("")
    parts = [part for part in module.parts if part != "__main__"]
    return " ".join(["python -m " + ".".join(parts), *args])


def environment(device: torch.device, command: str | None = None) -> dict:
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": str(device),
        "cuda_device": device_name(device),
        "threads": torch.get_num_threads(),
        "world_size": distributed.world_size(),
        "git_commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command or command_line(),
    }


def check_variants(variants, p, overrides) -> None:
    """Build each variant once on the CPU, so a bad name or --set value fails before any training."""
    from .. import VARIANTS, default_config

    for v in variants:
        if v not in VARIANTS:
            raise ValueError(f"unknown variant {v!r}: expected one of {', '.join(VARIANTS)}")
    for key in overrides:
        if not any(key in default_config(v) for v in variants):
            raise ValueError(
                f"--set {key}: no variant in this run has that setting "
                f"(e.g. {variants[0]} has: {', '.join(sorted(default_config(variants[0])))})"
            )
    for v in dict.fromkeys(variants):
        build(v, p, overrides)


def _settle(task, variants, seeds, steps, device, overrides, eval_batches, eval_examples, protocol_changes):
    """Check every argument before any data is loaded or model trained."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(TASKS)}")
    from .. import VARIANTS

    if steps is not None and steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    changes = {"steps": steps, "seeds": tuple(seeds) if seeds else None}
    fields = make_protocol(task).to_dict()
    for key in protocol_changes or {}:
        if key not in fields or key in ("task", "metric", "assumed"):
            raise ValueError(
                f"--protocol {key}: the {task} protocol has no such field; it has: {', '.join(fields)}"
            )
    changes.update({k: v for k, v in (protocol_changes or {}).items() if v is not None})
    if eval_batches is not None:
        changes["eval_batches"] = eval_batches if eval_batches > 0 else None
        if "eval_batches" not in fields:
            raise ValueError(f"--eval-batches applies to the text tasks, not {task}; recall tasks take --eval-examples")
    if eval_examples is not None:
        if "eval_examples" not in fields:
            raise ValueError(f"--eval-examples applies to the synthetic tasks, not {task}")
        changes["eval_examples"] = eval_examples
    p = make_protocol(task, **changes)
    if eval_batches == 0:
        p.eval_batches = None
    variants = list(variants or [v for v in PAPER_VARIANTS if v in VARIANTS])
    overrides = dict(overrides or {})
    device = get_device(device)
    if distributed.launched() and not TASKS[task].distributed:
        raise ValueError(
            f"task {task!r} does not run under torchrun; only: "
            f"{', '.join(t for t in TASKS if TASKS[t].distributed)}"
        )
    check_variants(variants, p, overrides)
    device = distributed.setup(device)  # under torchrun: join the group, take this rank's GPU
    return p, variants, overrides, device


def run_experiment(
    task: str,
    variants=None,
    seeds=None,
    steps=None,
    device="auto",
    overrides=None,
    max_seconds=None,
    eval_batches=None,
    eval_examples=None,
    data_dir=None,
    jsonl=None,
    out=None,
    progress=True,
    echo=print,
    protocol_changes=None,
    fresh=False,
    checkpoint_every=None,
    command=None,
) -> dict:
    """Run ``task`` for every (variant, seed); returns the results dict (and fills the file ``out``).

    ``eval_batches=0`` evaluates the whole split (lm, tokenized). ``protocol_changes`` changes
    other protocol fields (e.g. ``{"lr": 1e-3, "warmup_steps": 20}``). Usable from notebooks:
    ``run_experiment("recall", ["transformer"], [0], steps=50)``.

    With ``out`` the runs go into a suite file (:mod:`.suite`): checked before any work, rewritten
    after every finished run, resumed when it exists (``fresh=True`` starts it afresh).
    ``checkpoint_every`` saves each run's training every N steps beside the file, so a killed run
    continues from its last checkpoint. Ctrl-C raises :class:`~.suite.SuiteInterrupted` (a
    KeyboardInterrupt) after the finished runs are saved; ``command`` is the command line that
    resumes (shown then, and recorded).
    """
    try:
        p, variants, overrides, device = _settle(
            task, variants, seeds, steps, device, overrides, eval_batches, eval_examples, protocol_changes
        )
        if checkpoint_every is not None:
            if out is None:
                raise ValueError("--checkpoint-every needs an output file (--out): checkpoints are kept beside it")
            if checkpoint_every < 1 or "checkpoint_every" not in inspect.signature(TASKS[task].run_one).parameters:
                raise ValueError(f"--checkpoint-every: must be >= 1, and task {task!r} must take checkpoint_every")
    except (ValueError, RuntimeError) as exc:  # device errors are RuntimeErrors
        raise ConfigError(str(exc)) from exc

    main = distributed.is_main()
    say = echo if main else (lambda *a, **k: None)
    env = environment(device, command)
    section = {**p.to_dict(), "model_config": p.model_config(overrides),
               "model_config_note": "plus each variant's registry defaults; see runs[].config",
               "overrides": overrides, "max_seconds": max_seconds, "environment": env}
    plan = [(v, s) for v in variants for s in p.seeds]
    suite = None
    if out is not None:  # before the data: a bad path or another suite's file fails at once
        suite = Suite.open(out, task, section, plan, fresh=fresh, environment=env, writer=main)

    data = TASKS[task].load(p, data_dir=data_dir, jsonl=jsonl)
    say(f"{task}: data = {data.source}")
    if data.note:
        say(f"{task}: NOTE {data.note}")
    section.update(data_source=data.source, data_note=data.note)
    if suite is not None:
        suite.check_data(data.source, data.note)
        suite.write()
        if suite.saved:
            say(f"{task}: resuming {out}: {len(plan) - len(suite.todo())} of {len(plan)} planned runs are done")
    runs, ckpt = [], None
    try:
        for variant, seed in plan:
            if suite is not None and suite.has(variant, seed):
                continue
            ckpt = suite.checkpoint_path(variant, seed) if checkpoint_every else None
            if ckpt is not None and ckpt.exists():
                say(f"  {variant:<24} seed {seed:<3} continues from its checkpoint {ckpt}")
            extra = {"checkpoint_path": ckpt, "checkpoint_every": checkpoint_every} if ckpt else {}
            try:
                run = TASKS[task].run_one(p, data, variant, seed, device, overrides, progress, max_seconds, **extra)
            except TrainingDiverged as exc:
                run = {"variant": variant, "seed": seed, "params": None, "metric": p.metric, "value": None,
                       "steps": None, "seconds": None, "device": str(device), "error": str(exc)}
            runs.append(run)
            if suite is not None:
                suite.add(run)
                if ckpt is not None and main:
                    ckpt.unlink(missing_ok=True)
            shown = "diverged" if run["value"] is None else f"{run['value']:.4f}"
            say(f"  {variant:<24} seed {seed:<3} {p.metric} {shown}  ({run['steps']} steps, {run['seconds']} s)")
    except KeyboardInterrupt:
        if suite is None:
            raise
        kept = str(ckpt) if ckpt is not None and ckpt.exists() else None
        raise SuiteInterrupted(suite.saved, len(suite.results["planned"]), out, command, kept) from None
    if suite is not None:
        results = suite.finish()
    else:
        diverged = sum(1 for r in runs if r["value"] is None)
        results = {"task": task, "protocol": section, "planned": [list(x) for x in plan], "complete": True,
                   "runs": runs, "diverged": diverged}
    if main:
        say(format_table(results))
        if out is not None:
            say(f"wrote {out} ({len(results['runs'])} runs, complete)")
    distributed.teardown()
    return results


def format_table(results: dict) -> str:
    """A plain-text table: one row per variant, mean (and spread over seeds) of the metric."""
    rows, metric = {}, results["protocol"]["metric"]
    for r in results["runs"]:
        rows.setdefault(r["variant"], []).append(r)
    lines = [f"{'variant':<24} {'params':>9} {'seeds':>5} {metric:>9} {'+-':>7} {'steps':>6} {'seconds':>8}"]
    for variant, rs in rows.items():
        vals = [r["value"] for r in rs if r["value"] is not None]
        mean = f"{statistics.fmean(vals):.4f}" if vals else "diverged"
        spread = f"{statistics.stdev(vals):.4f}" if len(vals) > 1 else ""
        secs = sum(r["seconds"] or 0 for r in rs) / len(rs)
        lines.append(
            f"{variant:<24} {rs[0]['params']!s:>9} {len(rs):>5} {mean:>9} {spread:>7} "
            f"{rs[0]['steps']!s:>6} {secs:>8.1f}"
        )
    return "\n".join(lines)


def write_json(results: dict, path) -> Path:
    """Write ``results`` as JSON, atomically (a temporary file beside it, then a rename)."""
    return write_atomic(results, path)
