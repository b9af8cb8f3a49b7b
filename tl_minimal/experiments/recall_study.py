"""The recall study: train once per (variant, seed), evaluate at several step counts, probe the memory.

    python -m tl_minimal.experiments.recall_study train --variants gated_hybrid_paper --seeds 0 1 2 \\
        --eval-at 200 500 --out data/results/recall_table4.json
    python -m tl_minimal.experiments.recall_study init --variants gated_hybrid_paper gated_hybrid \\
        --seeds 0 1 2 3 4 --out data/results/recall_init_diagnosis.json
    python -m tl_minimal.experiments.recall_study train --task mqar --pairs 16 --queries 4 --seq-len 256 ...
    python -m tl_minimal.experiments.recall_study overwrite-init --variants gated_hybrid --set supersede=true
    python -m tl_minimal.experiments.recall_study alias-init --variants gated_hybrid [--same-alias]
    python -m tl_minimal.experiments.recall_study alias-trained --variants gated_hybrid --seeds 0 [--share 0.25]

``--device`` (auto, cpu, cuda, cuda:N, mps; default auto, which honours ``TL_DEVICE``) picks where
``train`` and ``init`` run; an unavailable device is an error before anything runs.

The learning rate is constant (the paper's protocol), so the model after 200 steps of a
500-step run IS the 200-step model: ``train`` evaluates at each ``--eval-at`` step and then
continues from an exact checkpoint (model, optimizer, every random state), so the 500-step
number equals ``python -m tl_minimal.experiments recall --steps 500`` for the same seed.
At each evaluation of a gated hybrid, :func:`tl_minimal.experiments.diagnose_recall.retrieval_report` is
summarized on 256 of the evaluation examples (where the answer ranks, filler in the top-k,
entropy, read gate), so per-seed curves of the diagnosis come with the accuracies.

MQAR with more pairs than the paper's 8 keys / 8 values uses a larger layout: keys and values
``max(8, pairs)`` ids each, 10 filler ids, vocabulary rounded up to a multiple of 64.
Every result file records the protocol, the data source, the device and the git commit.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from ..data import recall as data_recall
from ..training.device import get_device
from ..training.evaluate import recall_accuracy
from ..training.recipes import build, count_parameters
from ..training.train import seed_everything, train
from .diagnose_recall import at_initialization, constant_guess, retrieval_report, summarize
from .protocols import protocol
from .runner import environment, write_json
from .suite import SuiteError, prepare_output

PROBE_EXAMPLES = 256


def layout_for(n_pairs: int) -> data_recall.RecallLayout:
    """The paper's layout for <= 8 pairs; otherwise n_pairs keys and values (vocab a multiple of 64)."""
    if n_pairs <= 8:
        return data_recall.PAPER_LAYOUT
    n = n_pairs
    vocab = 64 * math.ceil((5 + 2 * n + 10) / 64)
    return data_recall.RecallLayout(n_keys=n, n_values=n, n_filler=10, vocab_size=vocab)


def _curve(losses, every=10):
    """Training loss averaged over consecutive windows of ``every`` steps (a readable curve)."""
    return [round(statistics.fmean(losses[i : i + every]), 4) for i in range(0, len(losses), every)]


def advance(p, variant, seed, steps, overrides, layout, ckpt, run=None, device="cpu", progress=False) -> dict:
    """Train (variant, seed) up to ``steps``, resuming from ``ckpt`` when it exists; evaluate and probe.

    ``run`` is the record of the earlier evaluations of this (variant, seed) (None the first time);
    the updated record is returned and the checkpoint is left at ``steps`` for the next call.
    """
    kw = {"n_queries": p.n_queries, "n_pairs": p.n_pairs, "seq_len": p.seq_len, "layout": layout}
    t0 = time.perf_counter()
    seed_everything(seed)
    model = build(variant, p, overrides).to(device)
    x, y = data_recall.eval_set(p.eval_examples, seed, **kw)
    probe = (x[:PROBE_EXAMPLES], y[:PROBE_EXAMPLES])
    gated = hasattr(model, "kv")
    if run is None:
        run = {"variant": variant, "seed": seed, "params": count_parameters(model), "metric": "accuracy",
               "by_step": {}, "probes": {}, "seconds": 0.0, "device": str(device), "eval_examples": len(x),
               "config": dict(model.config)}
        if gated:
            run["probes"][0] = summarize(retrieval_report(model, *probe, layout))
    sampler = data_recall.RecallSampler(p.batch_size, seed, **kw)
    history = train(model, sampler, steps, lr=p.lr, weight_decay=p.weight_decay, grad_clip=p.grad_clip,
                    warmup_steps=p.warmup_steps, device=device, checkpoint_path=ckpt, resume=True,
                    progress=progress, desc=f"{variant} s{seed}")
    result = recall_accuracy(model, x, y)
    run["by_step"][steps] = {"accuracy": result["accuracy"], "per_query": result["per_query"]}
    if gated:
        run["probes"][steps] = summarize(retrieval_report(model, *probe, layout))
    run.update(value=result["accuracy"], steps=history["steps"], loss_curve_every_10=_curve(history["loss"]),
               seconds=round(run["seconds"] + time.perf_counter() - t0, 1))
    return run


def table(runs) -> str:
    """variant x eval step: mean and std over seeds, parameters, per-seed values."""
    lines = [f"{'variant':<22} {'params':>8} {'steps':>5} {'mean':>7} {'std':>6} {'min':>6}  per seed"]
    rows = {}
    for r in runs:
        rows.setdefault(r["variant"], []).append(r)
    for v, rs in rows.items():
        for s in sorted(rs[0]["by_step"], key=int):
            accs = [r["by_step"][s]["accuracy"] for r in rs]
            std = statistics.stdev(accs) if len(accs) > 1 else 0.0
            lines.append(
                f"{v:<22} {rs[0]['params']:>8} {s:>5} {100 * statistics.fmean(accs):>6.1f}% "
                f"{100 * std:>5.1f} {100 * min(accs):>5.1f}%  " + " ".join(f"{100 * a:.1f}" for a in accs)
            )
    return "\n".join(lines)


def _protocol(args):
    return protocol(
        args.task,
        seq_len=args.seq_len,
        n_pairs=args.pairs,
        n_queries=args.queries,
        eval_examples=args.eval_examples,
    )


def _overrides(pairs):
    out = {}
    for item in pairs or []:
        key, _, text = item.partition("=")
        value = {"true": True, "false": False, "none": None}.get(text.lower(), text)
        if isinstance(value, str):
            for cast in (int, float):
                try:
                    value = cast(text)
                    break
                except ValueError:
                    pass
        out[key] = value
    return out


def cmd_train(args) -> int:
    p = _protocol(args)
    layout = layout_for(p.n_pairs)
    p = p.replace(vocab_size=layout.vocab_size)
    overrides = _overrides(args.set)
    for v in args.variants:  # fail on a bad name or setting before any training
        build(v, p, overrides)
    env = environment(args.device)  # the commit the runs start from
    ckpt_dir = Path(args.ckpt_dir or tempfile.mkdtemp(prefix="recall_study_"))
    runs = {}
    # breadth first: every (variant, seed) reaches the first eval step before any goes further,
    # and the results file is rewritten after each evaluation, so a stopped study keeps its numbers
    for steps in sorted(args.eval_at):
        for v in args.variants:
            for seed in args.seeds:
                ckpt = ckpt_dir / f"{p.task}-{v}-s{seed}.pt"
                runs[v, seed] = advance(p, v, seed, steps, overrides, layout, ckpt, runs.get((v, seed)),
                                        device=args.device, progress=args.progress)
                print(f"  {v:<22} seed {seed}: {steps} steps {100 * runs[v, seed]['value']:.1f}%  "
                      f"({runs[v, seed]['seconds']} s)", flush=True)
                if args.out:
                    write_json(_results(args, p, layout, overrides, env, list(runs.values())), args.out)
    results = _results(args, p, layout, overrides, env, list(runs.values()))
    print(table(results["runs"]))
    if args.out:
        write_json(results, args.out)
        print(f"wrote {args.out}")
    return 0


def _results(args, p, layout, overrides, env, runs) -> dict:
    _, y0 = data_recall.eval_set(p.eval_examples, args.seeds[0], p.n_queries, p.n_pairs, p.seq_len, layout)
    results = {
        "task": p.task,
        "study": "recall_study train",
        "protocol": {
            **p.to_dict(),
            "eval_at": sorted(args.eval_at),
            "layout": vars(layout),
            "data_source": f"synthetic associative recall generated from each run's seed "
            f"({p.n_pairs} pairs, {p.n_queries} question(s), seq {p.seq_len}); "
            f"eval: {p.eval_examples} fresh examples per seed",
            "overrides": overrides,
            "environment": env,
        },
        "constant_guess": {
            **constant_guess(y0, layout, p.n_pairs),
            "note": f"best_on_set: seed {args.seeds[0]}'s eval set",
        },
        "runs": runs,
    }
    return results


# one change at a time from the paper's gated row, then together: which one fixes the read?
ABLATIONS = {
    "paper": {},
    "tie_qk": {"tie_qk": True},
    "temperature_10": {"temperature": 10.0, "learnable_temperature": True},
    "top_k_all": {"top_k": "all"},
    "tie_qk+temperature_10 (new default)": {"tie_qk": True, "temperature": 10.0, "learnable_temperature": True},
    "tie_qk+temperature_10+top_k_all": {"tie_qk": True, "temperature": 10.0, "learnable_temperature": True,
                                        "top_k": "all"},
}


def _mean_row(rs):
    """Mean over seeds of each numeric field (lists and dicts, e.g. a per-pair table, are left to the
    runs); a field that is None in a run (a share of no questions) is averaged over the runs that
    have it, and stays None when none has."""
    def mean(k):
        xs = [r[k] for r in rs if r[k] is not None]
        return round(statistics.fmean(xs), 4) if xs else None

    numeric = [k for k in rs[0] if k != "seed" and all(r[k] is None or isinstance(r[k], (int, float)) for r in rs)]
    return {k: mean(k) for k in numeric}


def cmd_init(args) -> int:
    overrides = _overrides(args.set)
    if args.ablations:
        rows = {f"gated_hybrid_paper {name}": at_initialization("gated_hybrid_paper", args.seeds, args.examples,
                                                                 {**overrides, **extra}, device=args.device)
                for name, extra in ABLATIONS.items()}
    else:
        rows = {v: at_initialization(v, args.seeds, args.examples, overrides, device=args.device)
                for v in args.variants}
    for v, rs in rows.items():
        print(v, "mean over seeds:", _mean_row(rs))
        for r in rs:
            print("   ", r)
    if args.out:
        results = {
            "task": "recall",
            "study": "recall_study init (no training)",
            "protocol": {
                **protocol("recall").to_dict(),
                "examples": args.examples,
                "data_source": "synthetic associative recall, eval_set(seed 0)",
                "overrides": overrides,
                "environment": environment(args.device),
            },
            "at_initialization": rows,
            "mean_over_seeds": {v: _mean_row(rs) for v, rs in rows.items()},
            "ablations": ABLATIONS if args.ablations else None,
        }
        write_json(results, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_baseline(args) -> int:
    """The collapse line, exactly: best constant answer per seed's evaluation set, and in expectation."""
    p = protocol("recall")
    rows = {}
    for seed in args.seeds:
        _, y = data_recall.eval_set(p.eval_examples, seed, p.n_queries, p.n_pairs, p.seq_len)
        rows[seed] = constant_guess(y, n_pairs=p.n_pairs)
        print(f"  seed {seed}: best constant {100 * rows[seed]['best_on_set']:.2f}% "
              f"(always v{rows[seed]['most_frequent']}), expected {100 * rows[seed]['expected']:.1f}%")
    if args.out:
        write_json({"task": "recall", "study": "recall_study baseline (no model)",
                    "protocol": {**p.to_dict(), "data_source": "synthetic associative recall, eval_set(seed) "
                                 "for each seed (the evaluation examples of that training seed)",
                                 "environment": environment(torch.device("cpu"))},
                    "params": 0, "constant_guess": rows}, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_break_diagnosis(args) -> int:
    """overwrite-init, alias-init, alias-trained: the break task's read at initialization (alias also
    after training), where the right entry is and what it gets, per seed and averaged."""
    from .breaks import diagnose_alias, diagnose_alias_trained, diagnose_overwrite

    if args.cmd == "alias-init":
        result = diagnose_alias(args.variants, args.seeds, args.examples, _overrides(args.set), args.same_alias)
    elif args.cmd == "alias-trained":
        result = diagnose_alias_trained(args.variants, args.seeds, args.examples, _overrides(args.set), args.share,
                                        args.device, args.steps)
    else:
        result = diagnose_overwrite(args.variants, args.seeds, args.examples, _overrides(args.set))
    # alias-trained trains on the device it resolved; the diagnoses at initialization build on the CPU
    result["protocol"]["environment"] = environment(args.device if args.cmd == "alias-trained" else torch.device("cpu"))
    by = {}
    for r in result["runs"]:
        print("   ", r)
        by.setdefault(r["variant"], []).append(r)
    result["mean_over_seeds"] = {v: _mean_row([{k: x for k, x in r.items() if k != "variant"} for r in rs])
                                 for v, rs in by.items()}
    for v, row in result["mean_over_seeds"].items():
        print(v, "mean over seeds:", row)
    if args.out:
        write_json(result, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_merge(args) -> int:
    """One result file from several (e.g. seeds run in parallel processes): runs concatenated."""
    import json

    parts = [json.loads(Path(f).read_text()) for f in args.files]
    merged = dict(parts[0])
    merged["runs"] = [r for part in parts for r in part["runs"]]
    merged["merged_from"] = [{"file": str(f), "environment": part["protocol"]["environment"],
                              "seeds": [r["seed"] for r in part["runs"]]} for f, part in zip(args.files, parts)]
    print(table(merged["runs"]))
    write_json(merged, args.out)
    print(f"wrote {args.out}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tl_minimal.experiments.recall_study",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train, evaluate at several steps, probe the memory")
    tr.add_argument("--task", choices=("recall", "mqar"), default="recall")
    tr.add_argument("--eval-at", type=int, nargs="+", default=[200, 500])
    tr.add_argument("--pairs", type=int, default=None)
    tr.add_argument("--queries", type=int, default=None)
    tr.add_argument("--seq-len", type=int, default=None)
    tr.add_argument("--eval-examples", type=int, default=None)
    tr.add_argument("--progress", action="store_true")
    tr.add_argument("--ckpt-dir", default=None, help="keep run checkpoints here (default: a temporary dir)")
    it = sub.add_parser("init", help="diagnose freshly initialized models (no training)")
    it.add_argument("--examples", type=int, default=256)
    it.add_argument("--ablations", action="store_true", help="the paper row with one change at a time")
    ow = sub.add_parser("overwrite-init", help="the overwrite task's read at initialization (no training)")
    ow.add_argument("--examples", type=int, default=256)
    al = sub.add_parser("alias-init", help="the alias task's read at initialization (no training)")
    al.add_argument("--examples", type=int, default=256)
    al.add_argument("--same-alias", action="store_true", help="the identical-token control")
    at = sub.add_parser("alias-trained", help="train like the alias command, then measure its read (what the "
                                              "top-k cuts on the missed questions)")
    at.add_argument("--examples", type=int, default=512)
    at.add_argument("--share", type=float, default=0.0, help="same_alias_share: the training curriculum")
    at.add_argument("--steps", type=int, default=None, help="training steps (default: the alias command's)")
    bl = sub.add_parser("baseline", help="the constant-guess accuracy on each seed's evaluation set")
    bl.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    bl.add_argument("--out", default=None)
    mg = sub.add_parser("merge", help="merge result files of the same protocol")
    mg.add_argument("files", nargs="+")
    mg.add_argument("--out", required=True)
    for s in (tr, it, ow, al, at):
        s.add_argument("--variants", nargs="+", required=s is not it)
        s.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
        s.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
        s.add_argument("--out", default=None)
        s.add_argument("--device", default="auto", help="auto (default: TL_DEVICE, else MPS, CUDA, CPU), cpu, "
                                                         "cuda, cuda:N or mps")
    args = ap.parse_args(argv)
    if args.cmd in ("train", "init", "alias-trained"):
        try:  # an unavailable device is an error before any work starts
            args.device = get_device(args.device)
        except (ValueError, RuntimeError) as exc:
            ap.error(str(exc))
    if args.cmd == "init" and not (args.variants or args.ablations):
        ap.error("init needs --variants or --ablations")
    if args.cmd == "train" and min(args.eval_at) < 1:
        ap.error("--eval-at steps must be >= 1")
    if getattr(args, "out", None):
        try:  # a bad output path fails now, not after hours of training
            prepare_output(args.out)
        except SuiteError as exc:
            ap.error(str(exc))
    return {"train": cmd_train, "init": cmd_init, "merge": cmd_merge, "baseline": cmd_baseline,
            "overwrite-init": cmd_break_diagnosis, "alias-init": cmd_break_diagnosis,
            "alias-trained": cmd_break_diagnosis}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
