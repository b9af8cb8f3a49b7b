"""Where recall breaks: the experiments tasks ``overwrite``, ``alias`` and ``distance`` (data: data/recall_breaks.py).

    python -m tl_research overwrite --variants gated_hybrid_repaired --seeds 0 1 2
    python -m tl_research alias --variants gated_hybrid_repaired --seeds 0 1 2
    python -m tl_research alias --protocol same_alias=true ...   # identical-token control
    python -m tl_research distance --variants gated_hybrid_repaired --seeds 0 1 2

Each task trains like ``recall`` (the same recipe and optimizer, only the last position is
supervised) and is evaluated on ``eval_examples`` fresh sequences per seed. A run record is the
recall record (``value`` = accuracy) plus what the task needs to be read:

    overwrite   earlier_rate  answers that are an EARLIER value of the asked key (overwritten)
                other_rate    answers that are neither the latest nor an earlier value
                by_writes     {"2": {...}, "3": {...}}: the three rates by how often the asked key was written
    alias       same_alias    whether the run was the identical-token control
                same_alias_share  the share of TRAINING questions asked with the written token
                              (a curriculum, --protocol same_alias_share=0.25; evaluation: none)
    distance    by_length     {"1024": {"accuracy", "n", "mean_distance"}, ...}: one evaluation per length
                              (``value`` is the mean of the per-length accuracies)
                loss_curve_by_length  {"1024": [...], ...}: training loss (nats) of each length's
                              batches, in windows of 10 of them
    every run   chance        the chance lines of its task (constant guess, random pick)
                loss_curve_every_10  the training loss (nats) in windows of 10 steps

:data:`BREAK_TASKS` holds the three tasks; the runner adds them to its
:data:`~tl_research.runner.TASKS`, so its JSON and the command line treat them like recall.
"""

from __future__ import annotations

import time
from functools import partial
from types import SimpleNamespace

import torch

from tl_minimal.training.evaluate import evaluating
from tl_minimal.training.recipes import fit, seeded_model
from tl_minimal.training.train import TrainConfig

from ..protocols import protocol
from ..tasks import recall_breaks as rb
from ..tasks.common import ConfigError, Task, loss_curve, run_record
from .diagnose_recall import require_gated, retrieval_report, summarize

EVAL_BATCH = 256


def last_predictions(model, x: torch.Tensor, batch_size: int = EVAL_BATCH) -> torch.Tensor:
    """argmax over the whole vocabulary at the LAST position of each sequence x [N, T] -> [N]."""
    device = next(model.parameters()).device
    out = []
    with evaluating(model):
        for i in range(0, len(x), batch_size):
            out.append(model(x[i : i + batch_size].to(device))[:, -1].argmax(-1).cpu())  # [b]
    return torch.cat(out)


def _load(p, data_dir=None, jsonl=None):
    """Check the task's settings on one example (a bad one is a one-line error naming the limit)."""
    try:
        if p.task == "distance":
            rb.distance_batch(1, min(p.lengths), p.n_pairs)
        else:
            _make(p, 0)(1, generator=rb.eval_generator(0))
    except ValueError as exc:
        raise ConfigError(f"{p.task}: {exc}") from exc
    if p.task == "distance":
        return SimpleNamespace(note=None, source=(
            f"synthetic distance recall ({p.n_pairs} pairs at the start, lengths {', '.join(map(str, p.lengths))}), "
            f"generated from each run's seed; eval: {p.eval_examples} fresh examples per length"))
    return SimpleNamespace(note=None, source=f"synthetic {p.task} recall ({p.n_pairs} keys, seq {p.seq_len}), "
                                             f"generated from each run's seed; eval: {p.eval_examples} fresh examples")


def _train_on_batches(p, variant, seed, overrides: dict | None, config: TrainConfig):
    """overwrite and alias: train on the task's batches, then draw its fresh evaluation set (x, y) [N, T]."""
    make = _make(p, seed)
    sampler = rb.BreakSampler(_make(p, seed, train=True), p.batch_size, seed)
    model, history = fit(variant, p, seed, sampler=sampler, overrides=overrides, config=config)
    return make, model, history, make(p.eval_examples, generator=rb.eval_generator(seed))


def _make(p, seed: int, train: bool = False):
    """The task's batch maker ``make(batch_size, generator=...)`` for protocol p (alias: seed's table).

    ``train=True``: the training batches, where alias's ``same_alias_share`` (a curriculum) applies;
    the evaluation set is always the task itself.
    """
    if p.task == "overwrite":
        return partial(rb.overwrite_batch, n_keys=p.n_pairs, max_writes=p.max_writes, seq_len=p.seq_len)
    table = rb.alias_table(seed, p.n_classes, p.min_aliases, p.max_aliases)
    return partial(rb.alias_batch, table=table, n_pairs=p.n_pairs, seq_len=p.seq_len, same_alias=p.same_alias,
                   same_alias_share=p.same_alias_share if train else 0.0)


# ----------------------------------------------------------------------------- overwrite
def overwrite_rates(pred: torch.Tensor, x: torch.Tensor) -> dict:
    """How often pred [N] is the latest value, an earlier value, or neither; overall and by writes."""
    written = [rb.written_values(row) for row in x]  # per sequence: the asked key's values in order
    kind = torch.tensor([0 if int(p) == w[-1] else 1 if int(p) in w[:-1] else 2
                         for p, w in zip(pred, written, strict=True)])
    n_writes = torch.tensor([len(w) for w in written])

    def rates(sel):
        k = kind[sel]
        n = max(len(k), 1)
        return {"accuracy": float((k == 0).sum()) / n, "earlier": float((k == 1).sum()) / n,
                "other": float((k == 2).sum()) / n, "n": len(k)}

    overall = rates(torch.ones(len(kind), dtype=torch.bool))
    by_writes = {str(w): rates(n_writes == w) for w in sorted(set(n_writes.tolist()))}
    return {**overall, "by_writes": by_writes}


def overwrite_chance(p) -> dict:
    """Chance lines: a constant guess (1 / value ids) and a random pick among the asked key's writes."""
    ws = range(2, p.max_writes + 1)
    return {"constant": 1 / rb.OVERWRITE_LAYOUT.n_values,
            "pick_among_writes": sum(1 / w for w in ws) / len(ws),
            "pick_among_writes_earlier": sum((w - 1) / w for w in ws) / len(ws)}


def run_overwrite(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    t0 = time.perf_counter()
    _, model, history, (x, _) = _train_on_batches(p, variant, seed, overrides, config)
    r = overwrite_rates(last_predictions(model, x), x)
    return run_record(variant, seed, model, p, r["accuracy"], history, time.perf_counter() - t0, config.device,
                      earlier_rate=r["earlier"], other_rate=r["other"], by_writes=r["by_writes"],
                      eval_examples=len(x), chance=overwrite_chance(p),
                      loss_curve_every_10=loss_curve(history["loss"]))


# ----------------------------------------------------------------------------- alias
def run_alias(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    t0 = time.perf_counter()
    make, model, history, (x, y) = _train_on_batches(p, variant, seed, overrides, config)
    accuracy = float((last_predictions(model, x) == y[:, -1]).float().mean())
    return run_record(variant, seed, model, p, accuracy, history, time.perf_counter() - t0, config.device,
                      same_alias=p.same_alias, same_alias_share=p.same_alias_share,
                      alias_table=make.keywords["table"], eval_examples=len(x),
                      chance={"constant": 1 / rb.ALIAS_LAYOUT.n_values, "in_context_pick": 1 / p.n_pairs},
                      loss_curve_every_10=loss_curve(history["loss"]))


# ----------------------------------------------------------------------------- distance
def run_distance(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    t0 = time.perf_counter()
    sampler = rb.DistanceSampler(p.lengths, p.batch_size, seed, p.n_pairs)
    model, history = fit(variant, p, seed, sampler=sampler, overrides=overrides, config=config)
    by_length, curves = {}, {}
    for i, T in enumerate(p.lengths):
        x, y = rb.distance_eval_set(p.eval_examples, seed, T, p.n_pairs)
        right = last_predictions(model, x, batch_size=max(1, EVAL_BATCH * 128 // T)) == y[:, -1]  # [N]
        by_length[str(T)] = {"accuracy": float(right.float().mean()), "n": len(x),
                             "mean_distance": sum(rb.distance_of(row) for row in x) / len(x)}
        curves[str(T)] = loss_curve(history["loss"][i :: len(p.lengths)])
    accuracy = sum(b["accuracy"] for b in by_length.values()) / len(by_length)
    return run_record(variant, seed, model, p, accuracy, history, time.perf_counter() - t0, config.device,
                      by_length=by_length, lengths=list(p.lengths), eval_examples=p.eval_examples,
                      chance={"constant": 1 / rb.PAPER_LAYOUT.n_values, "in_context_pick": 1 / p.n_pairs},
                      loss_curve_every_10=loss_curve(history["loss"]), loss_curve_by_length=curves)


BREAK_TASKS = {
    "overwrite": Task("overwrite", _load, run_overwrite),
    "alias": Task("alias", _load, run_alias),
    "distance": Task("distance", _load, run_distance),
}


# ----------------------------------------------------------------------------- the overwrite read, measured
def overwrite_read(model, x: torch.Tensor) -> dict:
    """Where a gated hybrid's read at the last position puts its weight, for overwrite sequences x [N, T].

    Memory entry j holds (key = token j, value = token j + 1), so the writes of the asked key are
    the entries at its positions. Returns per-example [N] tensors: ``latest`` (weight on the
    entry of the latest write), ``earlier`` (summed weight on the earlier writes), ``rest``
    (everything else), and ``latest_first`` (the latest write has the largest weight).
    """
    require_gated(model, "overwrite_read")
    device = next(model.parameters()).device
    _, rec = model.internals(x.to(device))
    w, idx = rec["retrieval"]["weights"][:, -1].cpu(), rec["retrieval"]["index"][:, -1].cpu()  # [N, K]
    out = {"latest": [], "earlier": [], "rest": [], "latest_first": []}
    for row, wr, ir in zip(x, w, idx, strict=True):
        where = (row[:-3] == row[-2]).nonzero().flatten()  # positions of the asked key's writes
        on = {int(j): float(wr[ir == j].sum()) for j in where}
        latest, earlier = on[int(where[-1])], sum(on[int(j)] for j in where[:-1])
        out["latest"].append(latest)
        out["earlier"].append(earlier)
        out["rest"].append(float(wr.sum()) - latest - earlier)
        best = int(ir[wr.argmax()]) if wr.numel() else -1
        out["latest_first"].append(float(best == int(where[-1])))
    return {k: torch.tensor(v) for k, v in out.items()}


def diagnose_overwrite(variants, seeds, examples: int = 256, overrides=None) -> dict:
    """The overwrite read at initialization (no training): mean of :func:`overwrite_read` per (variant, seed)."""
    p = protocol("overwrite")
    runs = []
    for variant in variants:
        for seed in seeds:
            model = seeded_model(variant, p, seed, overrides)
            x, _ = rb.overwrite_batch(examples, p.n_pairs, p.max_writes, p.seq_len, generator=rb.eval_generator(seed))
            r = overwrite_read(model, x)
            runs.append({"variant": variant, "seed": seed, "examples": examples,
                         **{k: round(float(v.mean()), 4) for k, v in r.items()}})
    return {"task": "overwrite", "study": "read at initialization", "protocol": p.to_dict(),
            "overrides": dict(overrides or {}), "runs": runs}



# ----------------------------------------------------------------------------- the alias read, measured
def alias_key_positions(x: torch.Tensor, table: list[list[int]]) -> torch.Tensor:
    """[N]: where each alias sequence x [N, T] wrote the asked key (with whichever of its aliases)."""
    out = []
    for row in x:
        aliases = next(a for a in table if int(row[-2]) in a)
        out.append(next(i for i in range(1, len(row) - 3) if int(row[i]) in aliases))
    return torch.tensor(out)


def diagnose_alias(variants, seeds, examples: int = 256, overrides=None, same_alias: bool = False) -> dict:
    """The alias read at initialization (no training): where the right entry (the written alias) ranks.

    :func:`tl_research.studies.diagnose_recall.retrieval_report` per (variant, seed) on the
    seed's evaluation sequences, with the answer entry at the written alias's position.
    """
    p = protocol("alias", same_alias=same_alias)
    runs = []
    for variant in variants:
        for seed in seeds:
            make = _make(p, seed)
            x, y = make(examples, generator=rb.eval_generator(seed))
            model = seeded_model(variant, p, seed, overrides)
            report = retrieval_report(model, x, y, rb.ALIAS_LAYOUT, alias_key_positions(x, make.keywords["table"]))
            runs.append({"variant": variant, "seed": seed, "examples": examples, **summarize(report)})
    return {"task": "alias", "study": "read at initialization", "protocol": p.to_dict(),
            "overrides": dict(overrides or {}), "runs": runs}


def missed_split(report: dict) -> dict:
    """Why a trained read misses: of a :func:`retrieval_report`'s wrong answers, the share whose
    answer entry (the written alias) was CUT by the top-k, against the share where it was kept and
    outweighed; the same cut share on the right answers for comparison."""
    wrong, cut = ~report["correct"], ~report["in_kept"]  # [N] bool each

    def share(of: torch.Tensor, where: torch.Tensor) -> float | None:
        return round(float((of & where).sum()) / int(where.sum()), 4) if where.any() else None

    return {"missed": int(wrong.sum()), "missed_cut": share(cut, wrong), "right_cut": share(cut, ~wrong),
            "missed_answer_rank_median": float(report["answer_rank"][wrong].float().median()) if wrong.any()
            else None}


def pair_split(right: torch.Tensor, asked: torch.Tensor, written: torch.Tensor) -> dict:
    """Accuracy per (asked alias, written alias) pair of tokens, over questions right [N] (bool) with
    asked [N] and written [N] token ids: are the misses spread over every pair, or whole pairs never
    learned? ``pairs``: [asked, written, questions, accuracy] sorted by accuracy; ``learned`` /
    ``never`` / ``between``: how many pairs are answered on >= 90% / <= 25% / in between."""
    rows = {}
    for a, w, r in zip(asked.tolist(), written.tolist(), right.tolist(), strict=True):
        rows.setdefault((a, w), []).append(r)
    pairs = sorted(([a, w, len(rs), round(sum(rs) / len(rs), 4)] for (a, w), rs in rows.items()), key=lambda p: p[3])
    acc = [p[3] for p in pairs]
    return {"learned": sum(a >= 0.9 for a in acc), "never": sum(a <= 0.25 for a in acc),
            "between": sum(0.25 < a < 0.9 for a in acc), "pairs": pairs}


def left_out_tokens(pairs, below: float = 0.5) -> tuple[list[int], bool]:
    """Alias tokens the trained read left out of their group: every pair that contains the token, as
    the asked or the written one, is answered on fewer than ``below`` of its questions. ``pairs``:
    :func:`pair_split`'s [asked, written, questions, accuracy] rows. Also returns whether these
    tokens account for every such failing pair (each failing pair contains one of them)."""
    failing = {(a, w) for a, w, _, acc in pairs if acc < below}
    tokens = {t for a, w, *_ in pairs for t in (a, w)}
    out = sorted(t for t in tokens if all((a, w) in failing for a, w, *_ in pairs if t in (a, w)))
    return out, all(a in out or w in out for a, w in failing)


def diagnose_alias_trained(variants, seeds, examples: int = 512, overrides=None, same_alias_share: float = 0.0,
                           device="cpu", steps: int | None = None, eval_examples: int | None = None) -> dict:
    """The alias read AFTER training: the ``alias`` command's run, same seed and settings, so the same
    model (its ``accuracy`` on the whole evaluation set equals the committed run's value); then
    :func:`retrieval_report` and :func:`missed_split` on the first ``examples`` evaluation sequences.
    It tests the explanation of the top-k ceiling: the questions a top-8 read misses are those whose
    written alias did not make the cut; ``by_pair`` (:func:`pair_split`, on the whole evaluation set)
    says whether the misses are whole alias pairs."""
    p = protocol("alias", same_alias_share=same_alias_share, steps=steps, eval_examples=eval_examples)
    config = p.train_config(device=device, progress=False)
    runs = []
    for variant in variants:
        for seed in seeds:
            make, model, _, (x, y) = _train_on_batches(p, variant, seed, overrides, config)
            right = last_predictions(model, x) == y[:, -1]  # [N] the alias command's evaluation
            where = alias_key_positions(x, make.keywords["table"])  # [N]
            xs, ys = x[:examples], y[:examples]  # [n, T]
            report = retrieval_report(model, xs, ys, rb.ALIAS_LAYOUT, where[:examples])
            runs.append({"variant": variant, "seed": seed, "steps": p.steps, "same_alias_share": same_alias_share,
                         "accuracy": round(float(right.float().mean()), 6), "examples": len(xs), **summarize(report),
                         **missed_split(report),
                         "by_pair": pair_split(right, x[:, -2], x[torch.arange(len(x)), where])})
    return {"task": "alias", "study": "read after training", "protocol": p.to_dict(),
            "overrides": dict(overrides or {}), "runs": runs}
