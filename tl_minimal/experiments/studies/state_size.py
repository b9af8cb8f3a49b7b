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
    gated_hybrid               the triple_hybrid state plus its key-value store of every earlier token

At d = 64, 3 layers and T = 128: the Transformer's cache is 196,608 bytes, `triple_latent` keeps 13,056
at S = 16 and 199,680 at S = 64.

The runs are MQAR files of the calibrated protocol (``data/results/run_calibrated.sh state_size``: one
suite file per pair count, state size S and variant, ``issue32/mqar_state_size_pairs{P}_S{S}_{variant}.json``;
the Transformer and ``gated_hybrid`` have ``_S-``: their state has no S). :func:`gather`
writes ``data/results/recall_state_size.json``: one row per run with its pair count, S, accuracy and
measured state bytes.

    python -m tl_minimal.experiments.studies.state_size bytes transformer triple_latent --set state_dim=64
    python -m tl_minimal.experiments.studies.state_size gather
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import torch

from ...registry import build_model, setting_names
from ...training.evaluate import evaluating
from ..results.files import load, results_dir
from ..suite import write_atomic

PATTERN = re.compile(r"mqar_state_size_pairs(\d+)_S(\d+|-)_(\w+)\.json")  # pairs, S, variant


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


def gather(folder=None, out=None) -> dict:
    """Every run of the state-size suite files in ``folder`` as rows of ``recall_state_size.json``."""
    folder = Path(folder or results_dir() / "issue32")
    rows, sources, protocol = [], [], None
    for path in sorted(folder.glob("mqar_state_size_pairs*_S*.json")):
        match = PATTERN.fullmatch(path.name)
        if match is None:
            continue
        data = load(path)
        p = data["protocol"]
        protocol = protocol or {k: v for k, v in p.items() if k not in ("n_pairs", "n_queries", "seeds", "lr")}
        sources.append(path.name)
        for r in data["runs"]:
            if r.get("value") is None:
                continue
            config = r["config"]
            model = build_model(r["variant"], p["vocab_size"], **config)
            rows.append({"variant": r["variant"], "seed": r["seed"], "n_pairs": p["n_pairs"],
                         "state_dim": config.get("state_dim"), "lr": p["lr"], "accuracy": r["value"],
                         "state_bytes": state_bytes(model, p["seq_len"]), "params": r["params"], "source": path.name})
    if not rows:
        raise FileNotFoundError(f"no finished run in {folder}/mqar_state_size_pairs*_S*.json "
                                "(bash data/results/run_calibrated.sh state_size)")
    result = {"task": "mqar", "study": "recall against state size (issue 32, item 2)", "protocol": protocol,
              "sources": sources, "runs": rows}
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
    args = parser.parse_args(argv)
    if args.command == "gather":
        result = gather(args.folder, args.out)
        print(f"{len(result['runs'])} runs from {len(result['sources'])} files")
        return
    settings = {k: int(v) for k, v in (item.split("=", 1) for item in args.set)}
    for v in args.variants:
        model = build_model(v, args.vocab_size, max_seq_len=max(args.seq_len, 128),
                            **{k: x for k, x in settings.items() if k in setting_names(v)})
        print(f"{v:24s} {state_bytes(model, args.seq_len):>10,} bytes after {args.seq_len} tokens")


if __name__ == "__main__":
    main()
