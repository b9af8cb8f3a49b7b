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

:data:`TASKS` holds every task: the paper's (:mod:`.tasks`) and the studies' (where recall
breaks: :mod:`.studies.breaks`, :mod:`.studies.induction`).
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from pathlib import Path

from tl_minimal.registry import DEFAULTS, setting_names
from tl_minimal.training.device import get_device
from tl_minimal.training.recipes import build
from tl_minimal.training.train import TrainConfig, TrainingDiverged

from . import distributed
from .checkpoint import Checkpoint
from .protocols import PAPER_VARIANTS, PROTOCOLS, check_fields
from .protocols import protocol as make_protocol
from .provenance import environment
from .studies.breaks import BREAK_TASKS
from .studies.induction import INDUCTION_TASKS
from .suite import Suite, SuiteInterrupted, write_atomic
from .tasks import PAPER_TASKS, ConfigError

TASKS = {**PAPER_TASKS, **BREAK_TASKS, **INDUCTION_TASKS}


@dataclass
class Experiment:
    """One experiment: a task, its variants and seeds, model overrides, the training's run settings and
    where the results go. Each field is one command-line flag of ``python -m tl_research TASK``.

    task, variants, seeds, steps   the task (its protocol), the variants (default: the paper's six),
                                   the seeds and the step count (default: the protocol's)
    overrides          model settings for build_model (``--set``), checked against the variants
    protocol_changes   other protocol fields, e.g. ``{"lr": 1e-3, "warmup_steps": 20}`` (``--protocol``)
    device, max_seconds, checkpoint_every, progress
                       the :class:`~tl_minimal.training.train.TrainConfig` fields a run adds to its
                       protocol's optimizer settings: where (auto: TL_DEVICE, else MPS, CUDA, CPU), a
                       wall-clock budget per run, a checkpoint every N steps beside ``out`` (a killed
                       run continues), progress bars
    eval_batches       text tasks: evaluation batches (0: the whole split)
    eval_examples      synthetic tasks: fresh evaluation examples
    data_dir, jsonl    where the data sets are (default: ``TL_MINIMAL_DATA``; the MiniMind jsonl)
    out, fresh         the suite file, filled run by run and resumed (``fresh``: start it afresh)
    echo, command      where the table and messages go (``print``); the command line that resumes the suite
    """

    task: str = "lm"
    variants: list | None = None
    seeds: tuple | None = None
    steps: int | None = None
    device: object = "auto"
    overrides: dict | None = None
    protocol_changes: dict | None = None
    max_seconds: float | None = None
    eval_batches: int | None = None
    eval_examples: int | None = None
    data_dir: object = None
    jsonl: object = None
    out: object = None
    fresh: bool = False
    checkpoint_every: int | None = None
    progress: bool = True
    echo: object = print
    command: str | None = None


def check_variants(variants, p, overrides) -> None:
    """Build each variant once on the CPU, so a bad name or --set value fails before any training."""
    for v in variants:
        if v not in DEFAULTS:  # the course's variants and the registered research ones (variants.py)
            raise ValueError(f"unknown variant {v!r}: expected one of {', '.join(DEFAULTS)}")
    for key in overrides:
        if not any(key in setting_names(v) for v in variants):
            raise ValueError(
                f"--set {key}: no variant in this run has that setting "
                f"(e.g. {variants[0]} has: {', '.join(sorted(setting_names(variants[0])))})"
            )
    for v in dict.fromkeys(variants):
        build(v, p, overrides)


def settle_protocol(s: Experiment):
    """The task's protocol with this run's changes (seeds, steps, evaluation size, --protocol fields)."""
    task, seeds, steps = s.task, s.seeds, s.steps
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(TASKS)}")
    if steps is not None and steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    changes = {"steps": steps, "seeds": tuple(seeds) if seeds else None}
    fields = type(PROTOCOLS[task]).field_names()
    check_fields(task, s.protocol_changes or {})
    changes.update({k: v for k, v in (s.protocol_changes or {}).items() if v is not None})
    if s.eval_batches is not None:
        changes["eval_batches"] = s.eval_batches if s.eval_batches > 0 else None
        if "eval_batches" not in fields:
            raise ValueError(f"--eval-batches applies to the text tasks, not {task}; recall tasks take --eval-examples")
    if s.eval_examples is not None:
        if "eval_examples" not in fields:
            raise ValueError(f"--eval-examples applies to the synthetic tasks, not {task}")
        changes["eval_examples"] = s.eval_examples
    p = make_protocol(task, **changes)
    if s.eval_batches == 0:
        p.eval_batches = None
    return p


def settle(s: Experiment):
    """Check every argument before any data is loaded or model trained: (protocol, variants, overrides,
    train config)."""
    task = s.task
    p = settle_protocol(s)
    variants = list(s.variants or [v for v in PAPER_VARIANTS if v in DEFAULTS])
    overrides = dict(s.overrides or {})
    device = get_device(s.device)
    if distributed.launched() and not TASKS[task].distributed:
        raise ValueError(
            f"task {task!r} does not run under torchrun; only: {', '.join(t for t in TASKS if TASKS[t].distributed)}"
        )
    if s.checkpoint_every is not None:
        if s.out is None:
            raise ValueError("--checkpoint-every needs an output file (--out): checkpoints are kept beside it")
        if s.checkpoint_every < 1:
            raise ValueError(f"--checkpoint-every: must be >= 1, got {s.checkpoint_every}")
    check_variants(variants, p, overrides)
    device = distributed.setup(device)  # under torchrun: join the group, take this rank's GPU
    config = p.train_config(device=device, progress=s.progress, max_seconds=s.max_seconds)
    return p, variants, overrides, config


def run_experiment(task: str, variants=None, seeds=None, steps=None, **fields) -> dict:
    """:func:`run` of ``Experiment(task, variants, seeds, steps, **fields)``; usable from notebooks:
    ``run_experiment("recall", ["transformer"], [0], steps=50)``."""
    return run(Experiment(task=task, variants=variants, seeds=seeds, steps=steps, **fields))


def run(s: Experiment) -> dict:
    """Run ``task`` for every (variant, seed); returns the results dict (and fills the file ``settings.out``).

    With ``out`` the runs go into a suite file (:mod:`.suite`): checked before any work, rewritten
    after every finished run, resumed when it exists (``fresh=True`` starts it afresh). Ctrl-C
    raises :class:`~.suite.SuiteInterrupted` (a KeyboardInterrupt) after the finished runs are saved.
    """
    task = s.task
    try:
        p, variants, overrides, config = settle(s)
    except (ValueError, RuntimeError) as exc:  # device errors are RuntimeErrors
        raise ConfigError(str(exc)) from exc
    main = distributed.is_main()
    say = s.echo if main else (lambda *a, **k: None)
    env = environment(config.device, s.command)
    section = {**p.to_dict(), "model_config": p.model_config(overrides),
               "model_config_note": "plus each variant's registry defaults; see runs[].config",
               "overrides": overrides, "max_seconds": s.max_seconds, "environment": env}
    plan = [(v, seed) for v in variants for seed in p.seeds]
    suite = None
    if s.out is not None:  # before the data: a bad path or another suite's file fails at once
        suite = Suite.open(s.out, task, section, plan, fresh=s.fresh, environment=env, writer=main)
    data = load_data(task, p, s, section, suite, say, len(plan))
    runs = run_plan(task, p, data, plan, overrides, config, suite, s, say)
    if suite is not None:
        results = suite.finish()
    else:
        results = {"task": task, "protocol": section, "planned": [list(x) for x in plan], "complete": True,
                   "runs": runs, "diverged": sum(1 for r in runs if r["value"] is None)}
    if main:
        say(format_table(results))
        if s.out is not None:
            say(f"wrote {s.out} ({len(results['runs'])} runs, complete)")
    distributed.teardown()
    return results


def load_data(task: str, p, s: Experiment, section: dict, suite: Suite | None, say, planned: int):
    """The task's data, loaded once; its source goes into the results (and is checked against the suite's)."""
    data = TASKS[task].load(p, data_dir=s.data_dir, jsonl=s.jsonl)
    say(f"{task}: data = {data.source}")
    if data.note:
        say(f"{task}: NOTE {data.note}")
    section.update(data_source=data.source, data_note=data.note)
    if suite is not None:
        suite.check_data(data.source, data.note)
        suite.write()
        if suite.saved:
            say(f"{task}: resuming {s.out}: {planned - len(suite.todo())} of {planned} planned runs are done")
    return data


def run_plan(task: str, p, data, plan, overrides: dict, config: TrainConfig, suite: Suite | None, s: Experiment,
             say):
    """Every planned (variant, seed) not yet in the suite, in order; each finished run is saved at once.
    A diverged run is recorded with ``value: None`` and its ``error``; Ctrl-C keeps what is finished."""
    runs, ckpt = [], None
    try:
        for variant, seed in plan:
            if suite is not None and suite.has(variant, seed):
                continue
            ckpt = suite.checkpoint_path(variant, seed) if s.checkpoint_every else None
            checkpoint = Checkpoint(ckpt, s.checkpoint_every) if ckpt is not None else None
            if ckpt is not None and ckpt.exists():
                say(f"  {variant:<24} seed {seed:<3} continues from its checkpoint {ckpt}")
            try:
                run = TASKS[task].run_one(p, data, variant, seed, overrides,
                                          dataclasses.replace(config, checkpoint=checkpoint))
            except TrainingDiverged as exc:
                run = {"variant": variant, "seed": seed, "params": None, "metric": p.metric, "value": None,
                       "steps": None, "seconds": None, "device": str(config.device), "error": str(exc)}
            runs.append(run)
            if suite is not None:
                suite.add(run)
                if ckpt is not None and distributed.is_main():
                    ckpt.unlink(missing_ok=True)
            shown = "diverged" if run["value"] is None else f"{run['value']:.4f}"
            say(f"  {variant:<24} seed {seed:<3} {p.metric} {shown}  ({run['steps']} steps, {run['seconds']} s)")
    except KeyboardInterrupt:
        if suite is None:
            raise
        kept = str(ckpt) if ckpt is not None and ckpt.exists() else None
        raise SuiteInterrupted(suite.saved, len(suite.results["planned"]), s.out, s.command, kept) from None
    return runs


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
