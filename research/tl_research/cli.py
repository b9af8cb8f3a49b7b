"""The command line: ``python -m tl_research {TASK,speed,study} [options]``.

    python -m tl_research {lm,recall,mqar,tokenized,overwrite,alias,distance,induction}
        --variants V [V ...] --seeds N [N ...]
        [--steps N] [--device auto|cpu|cuda|mps] [--out FILE.json] [--fresh] [--checkpoint-every N]
        [--set KEY=VALUE ...] [--protocol KEY=VALUE ...] [--max-seconds S]
        [--eval-batches N | --eval-examples N] [--data-dir DIR] [--jsonl FILE]
    python -m tl_research speed [--variants V ...] [--seq-lens T ...] [--quick] ...
    python -m tl_research study {train,init,overwrite-init,alias-init,alias-trained,baseline,merge} ...

What can be typed is :mod:`.arguments`; here each subcommand's handler turns the parsed
arguments into plain values and calls one function: a task
:func:`~tl_research.runner.run_experiment`, ``speed``
:func:`~tl_research.bench.speed.run_speed`, ``study ...`` the functions of
:mod:`tl_research.studies.recall_study`.

Every task subcommand fills its ``--out`` file run by run (:mod:`tl_research.suite`):
the path is checked before any work, each finished run is saved at once (atomically), Ctrl-C
keeps everything finished and prints the command that resumes (exit status 130), and rerunning
the same command skips the runs already there; ``--fresh`` starts the file afresh and
``--checkpoint-every N`` lets a killed run continue from its last checkpoint.

Bad arguments, a bad output path, another suite's output file, an unusable data file or
checkpoint print one line (``error: ...``) and exit with status 2; a missing data set or a
diverged run exits with status 1; Ctrl-C exits with 130. Notebooks can call
``main(["recall", "--steps", "20"])``, which returns the exit code instead of leaving the
interpreter.
"""

from __future__ import annotations

import datetime
import shlex
import sys

import torch

from tl_minimal.data.text import BadDataFile, DataUnavailable
from tl_minimal.training.device import get_device

from .arguments import UsageError, build_parser
from .bench import speed
from .checkpoint import CheckpointError
from .provenance import portable
from .runner import Experiment, check_variants, run
from .studies import recall_study
from .suite import SuiteError, SuiteInterrupted, prepare_output
from .tasks import ConfigError


def resume_command(argv: list, out: str) -> str:
    """The command line that continues this suite: the same arguments, the output file named, no --fresh;
    paths inside the checkout are written relative to it (``provenance.portable``)."""
    words = [portable(w) for w in argv if w != "--fresh"]
    if "--out" not in words and not any(w.startswith("--out=") for w in words):
        words += ["--out", portable(str(out))]
    return "python -m tl_research " + shlex.join(words)


# ----------------------------------------------------------------------------- the handlers
def run_task(args, argv: list) -> int:
    """A task subcommand: :func:`run_experiment` with the parsed options; exit status 1 if a run diverged."""
    out = args.out or f"runs/{args.command}-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    experiment = Experiment(
        task=args.command, variants=args.variants, seeds=args.seeds, steps=args.steps, device=args.device,
        overrides=dict(args.overrides), protocol_changes=dict(args.protocol_changes),
        max_seconds=args.max_seconds, eval_batches=getattr(args, "eval_batches", None),
        eval_examples=getattr(args, "eval_examples", None), data_dir=getattr(args, "data_dir", None),
        jsonl=getattr(args, "jsonl", None), out=out, fresh=args.fresh, checkpoint_every=args.checkpoint_every,
        progress=not args.no_progress, command=resume_command(argv, out))
    results = run(experiment)
    if results["diverged"]:
        print(f"error: {results['diverged']} run(s) diverged (loss NaN or inf); see 'error' in {out}", file=sys.stderr)
        return 1
    return 0


def run_speed_command(args) -> int:
    """``speed``: the benchmark (or, with --profile, the per-op profile) with the parsed options."""
    settings = speed.speed_settings(args.quick, args.steps, args.tokens_per_step, args.fwd_seconds,
                                    memory=not args.no_memory, loop=not args.no_loop, clock=args.clock)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        if args.profile:
            speed.profile(args.variants, args.seq_lens, dict(args.overrides),
                          args.tokens_per_step or speed.TOKENS_PER_STEP, args.profile)
            return 0
        result = speed.run_speed(args.variants, args.seq_lens, args.device, settings, dict(args.overrides), args.out)
    except (ValueError, RuntimeError) as exc:
        raise ConfigError(str(exc)) from None
    env = result["environment"]
    print(f"load average: {speed.format_load(env['load_average_start'])} at the start, "
          f"{speed.format_load(env['load_average_end'])} at the end")
    speed.report_targets(result["rows"])
    return 0


def study_device(args):
    """The study's --device, resolved now (an unavailable device is an error before any work):
    train, init and alias-trained run there; the other diagnoses build on the CPU."""
    if args.study_command not in ("train", "init", "alias-trained"):
        return getattr(args, "device", None)  # baseline and merge build no model
    try:
        return get_device(args.device)
    except (ValueError, RuntimeError) as exc:
        raise ConfigError(str(exc)) from None


def run_study(args) -> int:
    """``study ...``: check the options and the output path, then call the study's function."""
    cmd = args.study_command
    if cmd == "init" and not (args.variants or args.ablations):
        raise UsageError("init needs --variants or --ablations")
    device = study_device(args)
    if getattr(args, "out", None):
        prepare_output(args.out)  # a bad output path fails now, not after hours of training
    overrides = dict(getattr(args, "overrides", []))
    if cmd == "train":
        try:  # a bad protocol field, name or setting fails before any training
            p = recall_study.study_protocol(args.task, args.seq_len, args.pairs, args.queries, args.eval_examples,
                                            dict(args.protocol_changes))
            check_variants(args.variants, p, overrides)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        config = p.train_config(device=device, progress=args.progress)
        recall_study.study_train(p, args.variants, args.seeds, args.eval_at, overrides, config, args.out,
                                 args.ckpt_dir)
    elif cmd == "init":
        recall_study.study_init(args.variants, args.seeds, args.examples, overrides, args.ablations, device, args.out)
    elif cmd in recall_study.BREAK_DIAGNOSES:
        recall_study.study_break_diagnosis(cmd, args.variants, args.seeds, args.examples, overrides,
                                           same_alias=getattr(args, "same_alias", False),
                                           share=getattr(args, "share", 0.0), device=device,
                                           steps=getattr(args, "steps", None), out=args.out)
    elif cmd == "baseline":
        recall_study.study_baseline(args.seeds, args.out)
    else:
        recall_study.study_merge(args.files, args.out)
    return 0


# ----------------------------------------------------------------------------- entry point
def main(argv=None) -> int:
    """Parse ``argv`` (default: sys.argv[1:]), run, and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        if args.command == "speed":
            return run_speed_command(args)
        if args.command == "study":
            return run_study(args)
        return run_task(args, argv)
    except UsageError as exc:
        print(f"error: {exc} (see --help)", file=sys.stderr)
        return 2
    except (ConfigError, SuiteError, BadDataFile, CheckpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (DataUnavailable, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except SuiteInterrupted as exc:
        print(exc.message, file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted before the first run began; nothing to resume", file=sys.stderr)
        return 130
