"""What can be typed after ``python -m tl_research``: the argument parsers, apart from the work.

Three kinds of subcommand (:mod:`.cli` runs them):

    TASK    lm, recall, mqar, tokenized (the paper's) and overwrite, alias, distance, induction
            (where recall breaks): train and evaluate every (variant, seed), fill a results file
    speed   time a training step, a forward pass and one generated token per variant and length
    study   the recall study: train, init, overwrite-init, alias-init, alias-trained, baseline, merge

One syntax for settings everywhere: ``--set KEY=VALUE`` (model settings; repeat the flag for
several) and, for the tasks, ``--protocol KEY=VALUE`` (protocol fields; repeatable). Values
read as numbers, true/false or none where they look like one (:func:`parse_value`).
A bad command line raises :class:`UsageError` (one line, exit status 2), never a usage dump.
"""

from __future__ import annotations

import argparse

from .bench.speed import DEFAULT_SEQ_LENS, DEFAULT_VARIANTS, TOKENS_PER_STEP
from .protocols import PROTOCOLS
from .studies.recall_study import BREAK_DIAGNOSES

DEVICE_HELP = "auto (default: TL_DEVICE, else MPS, CUDA, CPU), cpu, cuda, cuda:N or mps"
TASK_HELP = {
    "lm": "byte-level WikiText-2, metric bits per byte",
    "recall": "the paper's associative recall, accuracy",
    "mqar": "multi-query associative recall, accuracy",
    "tokenized": "MiniMind-tokenized LM, mean token loss",
    "overwrite": "recall when a key is written 2-3 times: accuracy on the latest value",
    "alias": "recall when the question uses another alias of the written key: accuracy",
    "distance": "recall with the pairs at the start of 1k-4k tokens and the question at the end: accuracy per length",
    "induction": "byte-level WikiText-2, then held-out text read twice: loss on the second copy / the first",
}


class UsageError(Exception):
    """A bad command line: reported as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + traceback
        raise UsageError(message)


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


# ----------------------------------------------------------------------------- shared arguments
def add_set_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--set KEY=VALUE`` (repeatable) into ``args.overrides``, a list of (key, value): model settings."""
    parser.add_argument(
        "--set", dest="overrides", action="append", type=key_value, default=[], metavar="KEY=VALUE", help=help
    )


def add_protocol_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--protocol KEY=VALUE`` (repeatable) into ``args.protocol_changes``, a list of (key, value)."""
    parser.add_argument("--protocol", dest="protocol_changes", action="append", type=key_value, default=[],
                        metavar="KEY=VALUE", help=help)


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    """--out, --fresh and --checkpoint-every: where a suite's results go and how it resumes."""
    parser.add_argument("--out", metavar="FILE.json", help="results file, filled run by run; rerun the same "
                        "command to resume it (default: runs/<task>-<time>.json)")
    parser.add_argument("--fresh", action="store_true", help="start the --out file afresh instead of resuming it")
    parser.add_argument("--checkpoint-every", type=positive_int, metavar="N",
                        help="save each run's training every N steps beside --out (FILE.checkpoints/), so a "
                        "killed run continues from its last checkpoint")


# ----------------------------------------------------------------------------- the tasks
def add_task_arguments(parser: argparse.ArgumentParser, task: str) -> None:
    p = PROTOCOLS[task]
    add = parser.add_argument
    add("--variants", nargs="+", metavar="V", help="model variants (default: all)")
    add("--seeds", nargs="+", type=int, metavar="N", help=f"seeds (default: {list(p.seeds)})")
    add("--steps", type=positive_int, help=f"training steps (default: {p.steps})")
    add("--device", default="auto", help=DEVICE_HELP)
    add_suite_arguments(parser)
    add_set_argument(parser, "model config override passed to build_model, e.g. --set state_dim=8 (repeatable)")
    add_protocol_argument(parser, "change a protocol field, e.g. --protocol lr=1e-3 --protocol warmup_steps=20 "
                          "(repeatable); recall and mqar: --protocol length_curriculum=32:128:150")
    add("--max-seconds", type=positive_float, metavar="S",
        help="wall-clock training budget per run (stops early; for time-matched comparisons)")
    if hasattr(p, "eval_batches"):  # the text tasks (lm, tokenized, induction)
        add("--eval-batches", type=non_negative_int, metavar="N",
            help=f"evaluation batches (default: {p.eval_batches}; 0 = the whole split)")
        add("--data-dir", metavar="DIR", help="local data directory (default: $TL_MINIMAL_DATA)")
    if hasattr(p, "eval_examples"):  # the synthetic tasks, and induction's spans
        add("--eval-examples", type=positive_int, metavar="N",
            help=f"fresh evaluation examples (default: {p.eval_examples})")
    if task == "tokenized":
        add("--jsonl", metavar="FILE", help="MiniMind pretraining jsonl (default: WikiText-2 stand-in)")
    add("--no-progress", action="store_true", help="no progress bars")


# ----------------------------------------------------------------------------- speed
def add_speed_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--variants", nargs="+", metavar="V", default=list(DEFAULT_VARIANTS),
        help=f"model variants (default: {' '.join(DEFAULT_VARIANTS)})")
    add("--seq-lens", nargs="+", type=positive_int, metavar="T", default=list(DEFAULT_SEQ_LENS),
        help=f"sequence lengths (default: {' '.join(map(str, DEFAULT_SEQ_LENS))})")
    add("--device", default="auto", help="auto (default), cpu, cuda, cuda:N or mps")
    add("--out", metavar="FILE.json", help="write the rows here as JSON")
    add("--quick", action="store_true", help="fewer repetitions of everything (noisier)")
    add("--steps", type=positive_int, metavar="N", help="timed training steps per variant and T")
    add("--fwd-seconds", type=positive_float, metavar="S",
        help="time budget of the timed forward passes at one T (default 30)")
    add("--tokens-per-step", type=positive_int, metavar="N",
        help=f"training batch = max(1, N // T) (default {TOKENS_PER_STEP})")
    add("--clock", choices=("wall", "cpu"), default="wall",
        help="wall: elapsed time (default); cpu: process CPU time, for a shared CPU with --threads 1")
    add("--threads", type=positive_int, metavar="N", help="torch.set_num_threads(N) first")
    add("--no-loop", action="store_true", help="skip the loop (reference) form")
    add("--no-memory", action="store_true", help="skip the peak-memory step")
    add("--profile", type=positive_int, metavar="N", help="instead: CPU time per op of a training step, top N ops")
    add_set_argument(parser, "model setting for every variant that has it, e.g. --set d_model=16 (repeatable)")


# ----------------------------------------------------------------------------- the recall study
def add_study_commands(parser: argparse.ArgumentParser) -> None:
    """``study train|init|overwrite-init|alias-init|alias-trained|baseline|merge``: the recall study."""
    sub = parser.add_subparsers(dest="study_command", metavar="{train,init," + ",".join(BREAK_DIAGNOSES)
                                + ",baseline,merge}", parser_class=Parser)
    sub.required = True
    tr = sub.add_parser("train", help="train, evaluate at several steps, probe the memory")
    tr.add_argument("--task", choices=("recall", "mqar"), default="recall")
    tr.add_argument("--eval-at", type=positive_int, nargs="+", default=[200, 500])
    tr.add_argument("--pairs", type=positive_int, default=None)
    tr.add_argument("--queries", type=positive_int, default=None)
    tr.add_argument("--seq-len", type=positive_int, default=None)
    tr.add_argument("--eval-examples", type=positive_int, default=None)
    tr.add_argument("--progress", action="store_true")
    tr.add_argument("--ckpt-dir", default=None, help="keep run checkpoints here (default: a temporary dir)")
    add_protocol_argument(tr, "change a protocol field, e.g. the paper's retrain recipe: --protocol warmup_steps=50 "
                          "--protocol length_curriculum=32:128:150 (with --set read_gate_bias=-2) (repeatable)")
    it = sub.add_parser("init", help="diagnose freshly initialized models (no training)")
    it.add_argument("--examples", type=positive_int, default=256)
    it.add_argument("--ablations", action="store_true", help="the paper row with one change at a time")
    ow = sub.add_parser("overwrite-init", help="the overwrite task's read at initialization (no training)")
    ow.add_argument("--examples", type=positive_int, default=256)
    al = sub.add_parser("alias-init", help="the alias task's read at initialization (no training)")
    al.add_argument("--examples", type=positive_int, default=256)
    al.add_argument("--same-alias", action="store_true", help="the identical-token control")
    at = sub.add_parser("alias-trained", help="train like the alias command, then measure its read (what the "
                                              "top-k cuts on the missed questions)")
    at.add_argument("--examples", type=positive_int, default=512)
    at.add_argument("--share", type=float, default=0.0, help="same_alias_share: the training curriculum")
    at.add_argument("--steps", type=positive_int, default=None, help="training steps (default: the alias command's)")
    bl = sub.add_parser("baseline", help="the constant-guess accuracy on each seed's evaluation set")
    bl.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    bl.add_argument("--out", default=None)
    mg = sub.add_parser("merge", help="merge result files of the same protocol")
    mg.add_argument("files", nargs="+")
    mg.add_argument("--out", required=True)
    for s in (tr, it, ow, al, at):
        s.add_argument("--variants", nargs="+", required=s is not it)
        s.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
        add_set_argument(s, "model setting, e.g. --set supersede=true (repeat the flag for several)")
        s.add_argument("--out", default=None)
        s.add_argument("--device", default="auto", help=DEVICE_HELP)


def build_parser() -> Parser:
    """The whole command line: one subcommand per task, ``speed``, and the ``study`` group."""
    parser = Parser(prog="python -m tl_research",
                    description="Run the paper's protocols (and friends); print a table, write JSON.")
    subs = parser.add_subparsers(dest="command", metavar="{" + ",".join([*PROTOCOLS, "speed", "study"]) + "}",
                                 parser_class=Parser)
    subs.required = True
    for task in PROTOCOLS:
        add_task_arguments(subs.add_parser(task, help=TASK_HELP[task], description=TASK_HELP[task]), task)
    speed_help = "time a training step, forward throughput and generation per variant and length"
    add_speed_arguments(subs.add_parser("speed", help=speed_help, description=speed_help))
    study_help = "the recall study: train and evaluate at several steps, diagnose the read, baselines"
    add_study_commands(subs.add_parser("study", help=study_help, description=study_help))
    return parser
