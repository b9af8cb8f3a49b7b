"""The command line: ``python -m tl_minimal.experiments TASK [options]``.

    python -m tl_minimal.experiments {lm,recall,mqar,tokenized,overwrite,alias} --variants V [V ...] --seeds N [N ...]
        [--steps N] [--device auto|cpu|cuda|mps] [--out FILE.json] [--set KEY=VALUE ...]
        [--max-seconds S] [--eval-batches N | --eval-examples N] [--data-dir DIR] [--jsonl FILE]

Subcommands live in a registry: :func:`register` adds one (name, help, a function that adds
its arguments, a function that runs it and returns an exit code). The paper tasks register
below; another module (e.g. ``speed``) registers itself when imported, and the modules named
in :data:`SUBCOMMAND_MODULES` are imported if they exist. A new subcommand is one file::

    # tl_minimal/experiments/speed.py
    from .cli import register

    def add_arguments(parser): parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128])
    def run(args) -> int: ...; return 0

    register("speed", "forward throughput against sequence length", add_arguments, run)

Bad arguments print one line (``error: ...``) and exit with status 2; a missing data set or a
diverged run exits with status 1. Notebooks can call ``main(["recall", "--steps", "20"])``,
which returns the exit code instead of leaving the interpreter.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..data.text import DataUnavailable
from .protocols import PROTOCOLS
from .runner import ConfigError

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


# ----------------------------------------------------------------------------- the paper tasks
def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    task = parser.prog.split()[-1]
    p = PROTOCOLS[task]
    parser.add_argument("--variants", nargs="+", metavar="V", help="model variants (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, metavar="N", help=f"seeds (default: {list(p.seeds)})")
    parser.add_argument("--steps", type=positive_int, help=f"training steps (default: {p.steps})")
    parser.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N or mps")
    parser.add_argument("--out", metavar="FILE.json", help="results file (default: runs/<task>-<time>.json)")
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
    if task in ("lm", "tokenized"):
        parser.add_argument(
            "--eval-batches",
            type=non_negative_int,
            metavar="N",
            help=f"evaluation batches (default: {p.eval_batches}; 0 = the whole split)",
        )
        parser.add_argument(
            "--data-dir", metavar="DIR", help="local data directory (default: $TL_MINIMAL_DATA)"
        )
    else:
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
    try:
        args = build_parser().parse_args(argv)
        return SUBCOMMANDS[args.command].run(args)
    except UsageError as exc:
        print(f"error: {exc} (see --help)", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (DataUnavailable, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
