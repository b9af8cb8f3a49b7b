"""Recall against state size (issue 32, item 2): accuracy against the bytes a model keeps at inference.

Based (Arora et al. 2024) and Zoology (Arora et al. 2023) made this plot the standard way to compare
recurrent models on recall: a fixed-size state can hold only so many key-value pairs, attention's KV
cache holds all of them and grows with the sequence. Here the bytes are *measured*, not derived: a
model reads one sequence of the task's length and :func:`state_bytes` adds up every tensor of the
state it returns (what generation would carry to the next token).

    model                      what its state holds after T tokens (float32)
    transformer                a KV cache: 2 x layers x T x d numbers (grows with T)
    triple_latent, S           per layer and head, the running state (S) and the pair memory (S x S)
    triple_slot, S             the running state and K slots of S numbers on each side
    gated_hybrid_repaired      the triple_hybrid state plus its key-value store of every earlier token
    gla, deltanet              per layer and head, one d_k x d_v matrix (and the short convolutions' windows)
    h3                         its shift filter's window and a sum of constant-decay d_k x d_v memories

At d = 64, 3 layers and T = 128: the Transformer's cache is 196,608 bytes, `triple_latent` keeps 13,056
at S = 16 and 199,680 at S = 64.

Two kinds of runs feed it, each row tagged with its ``task``:

* ``recall``: 4-pair recall at table 4's calibrated budget (``data/results/run_calibrated.sh state_size_recall4``).
  Table 4's own rows (``recall_calibrated.json``: the Transformer, ``gated_hybrid_repaired``, and ``triple_latent`` and
  ``triple_slot`` at their default S = 16) plus ``triple_latent`` at S = 8, 32 and 64, one suite file per S,
  ``issue32/recall_state_size_S{S}_{variant}.json``, at the lr table 4 chose for it. Issue 33's relatives
  (``RELATIVES``: GLA, DeltaNet, H3) from ``recall_calibrated_family.json`` at their default sizes, once
  gathered: fixed states of other write rules on the same task.
* ``mqar``: MQAR with 8 pairs at its calibrated budget, gathered (``MQAR_TABLE``, ``mqar_calibrated_pairs8.json``:
  the rows above that ``run_calibrated.sh mqar_rows`` trained, at their default sizes and 4-pair lr); and the
  MQAR files of the calibrated protocol (``run_calibrated.sh state_size``: one suite file per pair
  count, S and variant, ``issue32/mqar_state_size_pairs{P}_S{S}_{variant}.json``; the Transformer and
  ``gated_hybrid_repaired`` have ``_S-``: their state has no S).

:func:`gather` writes ``data/results/recall_state_size.json``: one row per run with its task, pair count,
S, accuracy and measured state bytes.

    python -m tl_research.studies.state_size bytes transformer triple_latent --set state_dim=64
    python -m tl_research.studies.state_size gather
    python -m tl_research.studies.state_size table    # the points of recall_state_size.json
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import torch

from tl_minimal.registry import build_model, setting_names
from tl_minimal.training.evaluate import evaluating
from tl_research.results.calibrated_table import FAMILY_FILE
from tl_research.results.files import load, results_dir
from tl_research.results.state_size_table import markdown

from ..suite import write_atomic

PATTERN = re.compile(r"mqar_state_size_pairs(\d+)_S(\d+|-)_(\w+)\.json")  # pairs, S, variant
RECALL_PATTERN = re.compile(r"recall_state_size_S(\d+)_(\w+)\.json")  # S, variant
# table 4's rows that are points of the picture: a KV cache, a growing key-value store, two fixed states
TABLE_VARIANTS = ("transformer", "gated_hybrid_repaired", "triple_latent", "triple_slot")
# issue 33's relatives on the same task (recall_calibrated_family.json): fixed states with other write rules
RELATIVES = ("gla", "deltanet", "h3")
# MQAR with 8 pairs, gathered (run_calibrated.sh mqar_rows): the same rows at the lr of their 4-pair sweep
MQAR_TABLE = "mqar_calibrated_pairs8.json"
PER_POINT = ("n_pairs", "n_queries", "seeds", "lr", "lr_by_variant")  # what differs between points: not in a protocol


def tensor_bytes(obj) -> int:
    """The bytes of every tensor in a nested state (dicts, lists, tuples); other values count 0."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def state_bytes(model, seq_len: int) -> int:
    """Bytes of the state ``model`` carries after reading one sequence of ``seq_len`` tokens (batch 1)."""
    with evaluating(model):
        device = next(model.parameters()).device
        _, state = model.run(torch.zeros(1, seq_len, dtype=torch.long, device=device))
    return tensor_bytes(state)


def _row(task: str, run: dict, protocol: dict, source: str) -> dict:
    """One point of the picture: a finished run and the bytes its model keeps after the task's length."""
    config = run["config"]
    model = build_model(run["variant"], protocol["vocab_size"], **config)
    return {"task": task, "variant": run["variant"], "seed": run["seed"], "n_pairs": protocol["n_pairs"],
            "state_dim": config.get("state_dim"), "lr": run.get("lr", protocol["lr"]), "accuracy": run["value"],
            "state_bytes": state_bytes(model, protocol["seq_len"]), "params": run["params"], "source": source}


def gather(folder=None, out=None, table=None) -> dict:
    """Every finished run of the state-size suite files in ``folder`` (and table 4's rows from ``table``,
    ``recall_calibrated.json``, when the folder has 4-pair recall files; MQAR's gathered rows from ``MQAR_TABLE``
    in the same folder as ``table``, when it exists) as rows of ``recall_state_size.json``."""
    folder = Path(folder or results_dir() / "issue32")
    table = Path(table or results_dir() / "recall_calibrated.json")  # the gathered files are read from its folder
    rows, sources, protocols = [], [], {}
    recall_files = [p for p in sorted(folder.glob("recall_state_size_S*.json")) if RECALL_PATTERN.fullmatch(p.name)]
    if recall_files:
        data = load(table)
        sources.append(table.name)
        protocols["recall"] = {k: v for k, v in data["protocol"].items() if k not in ("seeds", "lr_by_variant")}
        rows += [_row("recall", r, data["protocol"], table.name) for r in data["runs"]
                 if r["variant"] in TABLE_VARIANTS and r.get("value") is not None]
        family = table.with_name(FAMILY_FILE)
        if family.exists():
            data = load(family)
            sources.append(family.name)
            rows += [_row("recall", r, data["protocol"], family.name) for r in data["runs"]
                     if r["variant"] in RELATIVES and r.get("value") is not None]
    mqar_table = table.with_name(MQAR_TABLE)
    if mqar_table.exists():  # MQAR's gathered rows (run_calibrated.sh mqar_rows, then gather), at their default sizes
        data = load(mqar_table)
        sources.append(mqar_table.name)
        protocols["mqar"] = {k: v for k, v in data["protocol"].items() if k not in PER_POINT}
        rows += [_row("mqar", r, data["protocol"], mqar_table.name) for r in data["runs"]
                 if r["variant"] in TABLE_VARIANTS + RELATIVES and r.get("value") is not None]
    for path in recall_files + sorted(folder.glob("mqar_state_size_pairs*_S*.json")):
        task = "recall" if path in recall_files else "mqar"
        if task == "mqar" and PATTERN.fullmatch(path.name) is None:
            continue
        data = load(path)
        p = data["protocol"]
        protocols.setdefault(task, {k: v for k, v in p.items() if k not in PER_POINT})
        sources.append(path.name)
        rows += [_row(task, r, p, path.name) for r in data["runs"] if r.get("value") is not None]
    if not rows:
        raise FileNotFoundError(f"no finished run in {folder}/mqar_state_size_pairs*_S*.json or "
                                "recall_state_size_S*.json (bash data/results/run_calibrated.sh state_size_recall4)")
    tasks = sorted(protocols, key=lambda t: t != "recall")  # recall first
    result = {"task": "state_size", "study": "recall against state size (issue 32, item 2)", "tasks": tasks,
              "protocol": protocols[tasks[0]], "protocols": protocols, "sources": sources, "runs": rows}
    write_atomic(result, Path(out) if out else results_dir() / "recall_state_size.json")
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bytes", help="the state bytes of variants after --seq-len tokens")
    b.add_argument("variants", nargs="+")
    b.add_argument("--seq-len", type=int, default=128)
    b.add_argument("--vocab-size", type=int, default=64)
    b.add_argument("--set", action="append", default=[], metavar="KEY=INT", help="e.g. state_dim=64")
    g = sub.add_parser("gather", help="write data/results/recall_state_size.json from the suite files")
    g.add_argument("--folder", default=None)
    g.add_argument("--out", default=None)
    g.add_argument("--table", default=None, help="table 4's gathered rows (default: recall_calibrated.json)")
    t = sub.add_parser("table", help="print the points of a gathered file as a Markdown table")
    t.add_argument("file", nargs="?", default=str(results_dir() / "recall_state_size.json"))
    args = parser.parse_args(argv)
    if args.command == "gather":
        result = gather(args.folder, args.out, args.table)
        print(f"{len(result['runs'])} runs from {len(result['sources'])} files")
        print(markdown(result))
        return
    if args.command == "table":
        print(markdown(load(args.file)))
        return
    settings = {k: int(v) for k, v in (item.split("=", 1) for item in args.set)}
    for v in args.variants:
        model = build_model(v, args.vocab_size, max_seq_len=max(args.seq_len, 128),
                            **{k: x for k, x in settings.items() if k in setting_names(v)})
        print(f"{v:24s} {state_bytes(model, args.seq_len):>10,} bytes after {args.seq_len} tokens")


if __name__ == "__main__":
    main()
