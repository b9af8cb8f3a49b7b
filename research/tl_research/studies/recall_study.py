"""The recall study: train once per (variant, seed), evaluate at several step counts, probe the memory.

    python -m tl_research study train --variants gated_hybrid_paper --seeds 0 1 2 \\
        --eval-at 200 500 --out data/results/recall_table4.json
    python -m tl_research study init --variants gated_hybrid_paper gated_hybrid_repaired \\
        --seeds 0 1 2 3 4 --out data/results/recall_init_diagnosis.json
    python -m tl_research study train --task mqar --pairs 16 --queries 4 --seq-len 256 ...
    python -m tl_research study train --variants gated_hybrid_paper --seeds 0 1 2 3 4 \
        --protocol warmup_steps=50 --protocol length_curriculum=32:128:150 --set read_gate_bias=-2 \
        --eval-at 200 500        (the paper's recall retrain recipe, docs/paper.md section 5)
    python -m tl_research study overwrite-init --variants gated_hybrid_repaired --set supersede=true
    python -m tl_research study alias-init --variants gated_hybrid_repaired [--same-alias]
    python -m tl_research study alias-trained --variants gated_hybrid_repaired --seeds 0 [--share 0.25]

(The command line is :mod:`tl_research.cli`; each subcommand calls one function here
with plain arguments: :func:`study_train`, :func:`study_init`, :func:`study_break_diagnosis`,
:func:`study_baseline`, :func:`study_merge`.)

The learning rate is constant after any warmup (the paper's protocol), so the model after 200 steps of a
500-step run IS the 200-step model: ``train`` evaluates at each ``--eval-at`` step and then
continues from an exact checkpoint (model, optimizer, every random state), so the 500-step
number equals ``python -m tl_research recall --steps 500`` for the same seed.
At each evaluation of a gated hybrid, :func:`~tl_research.studies.diagnose_recall.retrieval_report`
is summarized on 256 of the evaluation examples (where the answer ranks, filler in the top-k,
entropy, read gate), so per-seed curves of the diagnosis come with the accuracies.

MQAR with more pairs than the paper's 8 keys / 8 values uses a larger layout
(:func:`tl_minimal.data.recall.layout_for`): keys and values ``max(8, pairs)`` ids each, 10
filler ids, vocabulary rounded up to a multiple of 64. Every result file records the protocol,
the data source, the device and the git commit.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

from tl_minimal.training.evaluate import recall_accuracy
from tl_minimal.training.recipes import count_parameters, fit, seeded_model
from tl_minimal.training.train import TrainConfig

from ..checkpoint import Checkpoint
from ..protocols import protocol
from ..provenance import environment
from ..suite import write_atomic
from ..tasks.common import loss_curve
from .breaks import diagnose_alias, diagnose_alias_trained, diagnose_overwrite
from .diagnose_recall import at_initialization, constant_guess, is_gated_model, retrieval_report, summarize

PROBE_EXAMPLES = 256
BREAK_DIAGNOSES = ("overwrite-init", "alias-init", "alias-trained")


def study_protocol(task: str = "recall", seq_len=None, n_pairs=None, n_queries=None, eval_examples=None,
                   changes: dict | None = None):
    """The recall (or mqar) protocol with the study's changes; the vocabulary fits the pairs' layout.

    ``changes``: other protocol fields (``--protocol``), e.g. the paper's retrain recipe
    ``{"warmup_steps": 50, "length_curriculum": "32:128:150"}``. The lr warmup and the
    curriculum are functions of the step, so a run resumed at an evaluation step continues them
    exactly; the evaluation is always the full task (``seq_len`` tokens).
    """
    named = {"seq_len": seq_len, "n_pairs": n_pairs, "n_queries": n_queries, "eval_examples": eval_examples}
    p = protocol(task, **{**(changes or {}), **{k: v for k, v in named.items() if v is not None}})
    return p.replace(vocab_size=p.layout().vocab_size)


def advance(p, variant: str, seed: int, steps: int, overrides: dict | None, config: TrainConfig,
            run: dict | None = None) -> dict:
    """Train (variant, seed) up to ``steps``, resuming from ``config.checkpoint``; evaluate and probe.

    ``run`` is the record of the earlier evaluations of this (variant, seed) (None the first time);
    the updated record is returned and the checkpoint is left at ``steps`` for the next call.
    """
    layout = p.layout()
    t0 = time.perf_counter()
    x, y = p.eval_set(seed)
    probe = (x[:PROBE_EXAMPLES], y[:PROBE_EXAMPLES])
    if run is None:
        start = seeded_model(variant, p, seed, overrides).to(config.device)  # the model at step 0
        run = {"variant": variant, "seed": seed, "params": count_parameters(start), "metric": "accuracy",
               "by_step": {}, "probes": {}, "seconds": 0.0, "device": str(config.device), "eval_examples": len(x),
               "config": start.config.settings()}
        if is_gated_model(start):
            run["probes"][0] = summarize(retrieval_report(start, *probe, layout))
    model, history = fit(variant, p.replace(steps=steps), seed, overrides=overrides, config=config)
    result = recall_accuracy(model, x, y)
    run["by_step"][steps] = {"accuracy": result["accuracy"], "per_query": result["per_query"]}
    if is_gated_model(model):
        run["probes"][steps] = summarize(retrieval_report(model, *probe, layout))
    run.update(value=result["accuracy"], steps=history["steps"], loss_curve_every_10=loss_curve(history["loss"]),
               seconds=round(run["seconds"] + time.perf_counter() - t0, 1))
    return run


def study_train(p, variants, seeds, eval_at, overrides: dict | None, config: TrainConfig, out=None,
                ckpt_dir=None) -> dict:
    """Train every (variant, seed) of protocol ``p``, evaluating at each step of ``eval_at``.

    Breadth first: every (variant, seed) reaches the first eval step before any goes further, and
    the file ``out`` is rewritten after each evaluation, so a stopped study keeps its numbers.
    ``config.checkpoint`` is set per run, inside ``ckpt_dir`` (default: a temporary folder).
    """
    if getattr(p, "lr_schedule", None) == "cosine" and len(set(eval_at)) > 1:
        raise ValueError("a cosine lr schedule depends on the run's length: the model at an earlier "
                         "--eval-at step is not that shorter run's model; evaluate at one step "
                         "(or use the recall command)")
    env = environment(config.device)  # the commit the runs start from
    ckpt_dir = Path(ckpt_dir or tempfile.mkdtemp(prefix="recall_study_"))
    runs = {}
    for steps in sorted(eval_at):
        for v in variants:
            for seed in seeds:
                ckpt = ckpt_dir / f"{p.task}-{v}-s{seed}.pt"
                runs[v, seed] = advance(p, v, seed, steps, overrides, replace(config, checkpoint=Checkpoint(ckpt)),
                                        runs.get((v, seed)))
                print(f"  {v:<22} seed {seed}: {steps} steps {100 * runs[v, seed]['value']:.1f}%  "
                      f"({runs[v, seed]['seconds']} s)", flush=True)
                if out:
                    write_atomic(_train_results(p, seeds, eval_at, overrides, env, list(runs.values())), out)
    results = _train_results(p, seeds, eval_at, overrides, env, list(runs.values()))
    print(table(results["runs"]))
    if out:
        write_atomic(results, out)
        print(f"wrote {out}")
    return results


def _train_results(p, seeds, eval_at, overrides, env, runs) -> dict:
    layout = p.layout()
    _, y0 = p.eval_set(seeds[0])  # its labels' values: the same with or without the sequence switches
    return {
        "task": p.task,
        "study": "recall_study train",
        "protocol": {
            **p.to_dict(),
            "eval_at": sorted(eval_at),
            "layout": vars(layout),
            "data_source": f"synthetic associative recall generated from each run's seed "
            f"({p.n_pairs} pairs, {p.n_queries} question(s), seq {p.seq_len}); "
            f"eval: {p.eval_examples} fresh examples per seed",
            "overrides": overrides,
            "environment": env,
        },
        "constant_guess": {
            **constant_guess(y0, layout, p.n_pairs),
            "note": f"best_on_set: seed {seeds[0]}'s eval set",
        },
        "runs": runs,
    }


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


# one change at a time from the paper's gated row, then together: which one fixes the read? (The labels keep
# the setting's old name, temperature, because they key the rows of the committed diagnosis files.)
ABLATIONS = {
    "paper": {},
    "tie_qk": {"tie_qk": True},
    "temperature_10": {"score_scale": 10.0, "learnable_score_scale": True},
    "top_k_all": {"top_k": "all"},
    "tie_qk+temperature_10 (new default)": {"tie_qk": True, "score_scale": 10.0, "learnable_score_scale": True},
    "tie_qk+temperature_10+top_k_all": {"tie_qk": True, "score_scale": 10.0, "learnable_score_scale": True,
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


def study_init(variants, seeds, examples: int, overrides: dict, ablations: bool, device, out=None) -> dict:
    """Freshly initialized models, no training: :func:`at_initialization` per variant (or, with
    ``ablations``, the paper's gated row with each change of :data:`ABLATIONS`), and the means over seeds."""
    if ablations:
        rows = {f"gated_hybrid_paper {name}": at_initialization("gated_hybrid_paper", seeds, examples,
                                                                 {**overrides, **extra}, device=device)
                for name, extra in ABLATIONS.items()}
    else:
        rows = {v: at_initialization(v, seeds, examples, overrides, device=device) for v in variants}
    for v, rs in rows.items():
        print(v, "mean over seeds:", _mean_row(rs))
        for r in rs:
            print("   ", r)
    results = {
        "task": "recall",
        "study": "recall_study init (no training)",
        "protocol": {
            **protocol("recall").to_dict(),
            "examples": examples,
            "data_source": "synthetic associative recall, eval_set(seed 0)",
            "overrides": overrides,
            "environment": environment(device),
        },
        "at_initialization": rows,
        "mean_over_seeds": {v: _mean_row(rs) for v, rs in rows.items()},
        "ablations": ABLATIONS if ablations else None,
    }
    if out:
        write_atomic(results, out)
        print(f"wrote {out}")
    return results


def study_baseline(seeds, out=None) -> dict:
    """The collapse line, exactly: best constant answer per seed's evaluation set, and in expectation."""
    p = protocol("recall")
    rows = {}
    for seed in seeds:
        _, y = p.eval_set(seed)
        rows[seed] = constant_guess(y, n_pairs=p.n_pairs)
        print(f"  seed {seed}: best constant {100 * rows[seed]['best_on_set']:.2f}% "
              f"(always v{rows[seed]['most_frequent']}), expected {100 * rows[seed]['expected']:.1f}%")
    results = {"task": "recall", "study": "recall_study baseline (no model)",
               "protocol": {**p.to_dict(), "data_source": "synthetic associative recall, eval_set(seed) "
                            "for each seed (the evaluation examples of that training seed)",
                            "environment": environment(torch.device("cpu"))},
               "params": 0, "constant_guess": rows}
    if out:
        write_atomic(results, out)
        print(f"wrote {out}")
    return results


def study_break_diagnosis(which: str, variants, seeds, examples: int, overrides: dict, *, same_alias: bool = False,
                          share: float = 0.0, device="cpu", steps=None, out=None) -> dict:
    """``which`` of :data:`BREAK_DIAGNOSES`: the break task's read at initialization (alias also after
    training), where the right entry is and what it gets, per seed and averaged over seeds.
    (Ten parameters: the three diagnoses share one printout and file, each reads its own options.)"""
    if which == "alias-init":
        result = diagnose_alias(variants, seeds, examples, overrides, same_alias)
    elif which == "alias-trained":
        result = diagnose_alias_trained(variants, seeds, examples, overrides, share, device, steps)
    elif which == "overwrite-init":
        result = diagnose_overwrite(variants, seeds, examples, overrides)
    else:
        raise ValueError(f"unknown diagnosis {which!r}: expected one of {', '.join(BREAK_DIAGNOSES)}")
    # alias-trained trains on the device it resolved; the diagnoses at initialization build on the CPU
    result["protocol"]["environment"] = environment(device if which == "alias-trained" else torch.device("cpu"))
    by = {}
    for r in result["runs"]:
        print("   ", r)
        by.setdefault(r["variant"], []).append(r)
    result["mean_over_seeds"] = {v: _mean_row([{k: x for k, x in r.items() if k != "variant"} for r in rs])
                                 for v, rs in by.items()}
    for v, row in result["mean_over_seeds"].items():
        print(v, "mean over seeds:", row)
    if out:
        write_atomic(result, out)
        print(f"wrote {out}")
    return result


def study_merge(files, out) -> dict:
    """One result file from several (e.g. seeds run in parallel processes): runs concatenated."""
    parts = [json.loads(Path(f).read_text(encoding="utf-8")) for f in files]
    merged = dict(parts[0])
    merged["runs"] = [r for part in parts for r in part["runs"]]
    merged["merged_from"] = [{"file": str(f), "environment": part["protocol"]["environment"],
                              "seeds": [r["seed"] for r in part["runs"]]} for f, part in zip(files, parts, strict=True)]
    print(table(merged["runs"]))
    write_atomic(merged, out)
    print(f"wrote {out}")
    return merged
