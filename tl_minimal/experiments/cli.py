"""The command line: ``python -m tl_minimal.experiments TASK [options]``.

    python -m tl_minimal.experiments {lm,recall,mqar,tokenized,overwrite,alias,distance,induction}
        --variants V [V ...] --seeds N [N ...]
        [--steps N] [--device auto|cpu|cuda|mps] [--out FILE.json] [--fresh] [--checkpoint-every N]
        [--set KEY=VALUE ...] [--max-seconds S] [--eval-batches N | --eval-examples N]
        [--data-dir DIR] [--jsonl FILE]

Every task subcommand fills its ``--out`` file run by run (:mod:`tl_minimal.experiments.suite`):
the path is checked before any work, each finished run is saved at once (atomically), Ctrl-C
keeps everything finished and prints the command that resumes (exit status 130), and rerunning
the same command skips the runs already there; ``--fresh`` starts the file afresh and
``--checkpoint-every N`` lets a killed run continue from its last checkpoint.

Subcommands live in a registry: :func:`register` adds one (name, help, a function that adds
its arguments, a function that runs it and returns an exit code). The paper tasks register
below; another module (e.g. ``speed``) registers itself when imported, and the modules named
in :data:`SUBCOMMAND_MODULES` are imported if they exist. A new subcommand is one file::

    # tl_minimal/experiments/speed.py
    from .cli import register

    def add_arguments(parser): parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128])
    def run(args) -> int: ...; return 0

    register("speed", "forward throughput against sequence length", add_arguments, run)

A task subcommand is a :class:`~tl_minimal.experiments.tasks.Task` in ``tasks.TASKS`` plus a protocol
in ``protocols.PROTOCOLS``, registered with ``register(name, help, add_task_arguments, run_task)``
(the loop below does it for every protocol): it gets the suite arguments (:func:`add_suite_arguments`)
and the saving / resuming of :func:`~tl_minimal.experiments.runner.run_experiment` with no code
of its own; its ``run_one`` takes ``checkpoint_path=None, checkpoint_every=None`` and passes them
to ``train`` (as ``tasks._fit`` does).

Bad arguments, a bad output path, another suite's output file, an unusable data file or
checkpoint print one line (``error: ...``) and exit with status 2; a missing data set or a
diverged run exits with status 1; Ctrl-C exits with 130. Notebooks can call
``main(["recall", "--steps", "20"])``, which returns the exit code instead of leaving the
interpreter.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..data.text import BadDataFile, DataUnavailable
from ..training.checkpoint import CheckpointError
from .protocols import PROTOCOLS
from .runner import ConfigError, portable
from .suite import SuiteError, SuiteInterrupted

SUBCOMMAND_MODULES = ("tl_minimal.experiments.speed",)  # optional extra subcommands, imported if present


class UsageError(Exception):
    """A bad command line: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + traceback
        raise UsageError(message)


@dataclass
class Subcommand:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: dict[str, Subcommand] = {}


def register(name: str, help: str, add_arguments, run) -> None:
    """Add a subcommand ``name`` (re-registering a name replaces it)."""
    SUBCOMMANDS[name] = Subcommand(name, help, add_arguments, run)


# ----------------------------------------------------------------------------- argument types
def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text) if text.lstrip("-").isdigit() else None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def parse_value(text: str):
    """'8' -> 8, '0.1' -> 0.1, 'true'/'false' -> bool, 'none' -> None, anything else stays a string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def key_value(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), parse_value(value)


def add_set_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--set KEY=VALUE`` (repeatable) into ``args.overrides``: model settings for build_model."""
    parser.add_argument(
        "--set", dest="overrides", action="append", type=key_value, default=[], metavar="KEY=VALUE", help=help
    )


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    """--out, --fresh and --checkpoint-every: where a suite's results go and how it resumes."""
    parser.add_argument("--out", metavar="FILE.json", help="results file, filled run by run; rerun the same "
                        "command to resume it (default: runs/<task>-<time>.json)")
    parser.add_argument("--fresh", action="store_true", help="start the --out file afresh instead of resuming it")
    parser.add_argument("--checkpoint-every", type=positive_int, metavar="N",
                        help="save each run's training every N steps beside --out (FILE.checkpoints/), so a "
                        "killed run continues from its last checkpoint")


def resume_command(argv: list, out: str) -> str:
    """The command line that continues this suite: the same arguments, the output file named, no --fresh;
    paths inside the checkout are written relative to it (``runner.portable``)."""
    words = [portable(w) for w in argv if w != "--fresh"]
    if "--out" not in words and not any(w.startswith("--out=") for w in words):
        words += ["--out", portable(str(out))]
    return "python -m tl_minimal.experiments " + shlex.join(words)


# ----------------------------------------------------------------------------- the paper tasks
def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    task = parser.prog.split()[-1]
    p = PROTOCOLS[task]
    parser.add_argument("--variants", nargs="+", metavar="V", help="model variants (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, metavar="N", help=f"seeds (default: {list(p.seeds)})")
    parser.add_argument("--steps", type=positive_int, help=f"training steps (default: {p.steps})")
    parser.add_argument("--device", default="auto", help="auto (default: TL_DEVICE, else MPS, CUDA, CPU), cpu, "
                        "cuda, cuda:N or mps")
    add_suite_arguments(parser)
    add_set_argument(parser, "model config override passed to build_model, e.g. --set state_dim=8 (repeatable)")
    parser.add_argument(
        "--protocol",
        dest="protocol_changes",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="change a protocol field, e.g. --protocol lr=1e-3 --protocol warmup_steps=20 (repeatable)",
    )
    parser.add_argument(
        "--max-seconds",
        type=positive_float,
        metavar="S",
        help="wall-clock training budget per run (stops early; for time-matched comparisons)",
    )
    if hasattr(p, "eval_batches"):  # the text tasks (lm, tokenized, induction)
        parser.add_argument(
            "--eval-batches",
            type=non_negative_int,
            metavar="N",
            help=f"evaluation batches (default: {p.eval_batches}; 0 = the whole split)",
        )
        parser.add_argument(
            "--data-dir", metavar="DIR", help="local data directory (default: $TL_MINIMAL_DATA)"
        )
    if hasattr(p, "eval_examples"):  # the synthetic tasks, and induction's spans
        parser.add_argument(
            "--eval-examples",
            type=positive_int,
            metavar="N",
            help=f"fresh evaluation examples (default: {p.eval_examples})",
        )
    if task == "tokenized":
        parser.add_argument(
            "--jsonl", metavar="FILE", help="MiniMind pretraining jsonl (default: WikiText-2 stand-in)"
        )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def run_task(args: argparse.Namespace) -> int:
    import datetime

    from .runner import run_experiment

    out = args.out or f"runs/{args.command}-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    results = run_experiment(
        args.command,
        variants=args.variants,
        seeds=args.seeds,
        steps=args.steps,
        device=args.device,
        overrides=dict(args.overrides),
        max_seconds=args.max_seconds,
        eval_batches=getattr(args, "eval_batches", None),
        eval_examples=getattr(args, "eval_examples", None),
        data_dir=getattr(args, "data_dir", None),
        jsonl=getattr(args, "jsonl", None),
        out=out,
        progress=not args.no_progress,
        protocol_changes=dict(args.protocol_changes),
        fresh=args.fresh,
        checkpoint_every=args.checkpoint_every,
        command=resume_command(getattr(args, "argv", sys.argv[1:]), out),
    )
    if results["diverged"]:
        print(
            f"error: {results['diverged']} run(s) diverged (loss NaN or inf); see 'error' in {out}",
            file=sys.stderr,
        )
        return 1
    return 0


_HELP = {
    "lm": "byte-level WikiText-2, metric bits per byte",
    "recall": "the paper's associative recall, accuracy",
    "mqar": "multi-query associative recall, accuracy",
    "tokenized": "MiniMind-tokenized LM, mean token loss",
    "overwrite": "recall when a key is written 2-3 times: accuracy on the latest value",
    "alias": "recall when the question uses another alias of the written key: accuracy",
    "distance": "recall with the pairs at the start of 1k-4k tokens and the question at the end: accuracy per length",
    "induction": "byte-level WikiText-2, then held-out text read twice: loss on the second copy / the first",
}
for _name in PROTOCOLS:
    register(_name, _HELP[_name], add_task_arguments, run_task)


def _load_extra_subcommands() -> None:
    for module in SUBCOMMAND_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the module exists but something it needs is missing: say so
                raise


# ----------------------------------------------------------------------------- entry point
def build_parser() -> argparse.ArgumentParser:
    _load_extra_subcommands()
    parser = _Parser(
        prog="python -m tl_minimal.experiments",
        description="Run the paper's protocols (and friends); print a table, write JSON.",
    )
    subs = parser.add_subparsers(
        dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}", parser_class=_Parser
    )
    subs.required = True
    for sc in SUBCOMMANDS.values():
        sc.add_arguments(subs.add_parser(sc.name, help=sc.help, description=sc.help))
    return parser


def main(argv=None) -> int:
    """Parse ``argv`` (default: sys.argv[1:]), run, and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        args.argv = argv
        return SUBCOMMANDS[args.command].run(args)
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
