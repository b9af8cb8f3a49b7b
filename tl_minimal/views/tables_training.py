"""Printed tables of training runs (notebooks 01, 02 and 03c): the numbers a student compares by eye.

Views print what the notebook computed. Losses come in nats (the library's history) and are
printed in bits per byte, nats / ln 2.

    print_loop_against_fit   the hand-written loop's losses beside fit()'s, step by step
    print_bpb_table          notebook 03c: params, training time, BPB ours and the paper's, and two baselines
    print_short_run          notebooks 01-02: a run's steps, seconds and first and last loss beside the unigram
    print_shipped_record     notebook 01: how the shipped model was made, its last loss and validation BPB
    print_shipped_bpb        notebook 02: the same record in one line, its validation BPB
"""

from __future__ import annotations

import math


def print_loop_against_fit(mine: list, fit_losses: list) -> None:
    """Two columns of losses in bits per byte, one row per step; both lists in nats, of one length."""
    if len(mine) != len(fit_losses):
        raise ValueError(f"one loss per step in both: got {len(mine)} and {len(fit_losses)} steps")
    print("step   loop above   fit()      (bits per byte = nats / ln 2)")
    for k, (a, b) in enumerate(zip(mine, fit_losses, strict=True)):
        print(f"{k:4d}   {a / math.log(2):10.4f}   {b / math.log(2):8.4f}")


def print_bpb_table(params: dict, seconds: dict, bpb: dict, paper: dict, unigram: float, vocab_size: int) -> None:
    """One row per model ({name: value} each): parameters, training seconds, our BPB, the paper's; then the
    unigram and uniform baselines (bits per byte)."""
    if not set(params) == set(seconds) == set(bpb):
        raise ValueError(f"one value per model in params, seconds and bpb: {sorted(params)}, {sorted(seconds)}, "
                         f"{sorted(bpb)}")
    print(f"{'model':14s} {'params':>8s} {'training s':>10s} {'BPB (ours)':>11s} {'BPB (paper)':>12s}")
    for name in params:
        theirs = f"{paper[name]:.3f}" if name in paper else "-"
        print(f"{name:14s} {params[name]:>8,} {seconds[name]:>10.1f} {bpb[name]:>11.3f} {theirs:>12s}")
    print(f"{'unigram':14s} {'':>8s} {'':>10s} {unigram:>11.3f}   (byte frequencies, no context)")
    print(f"{'uniform':14s} {'':>8s} {'':>10s} {math.log2(vocab_size):>11.3f}   (all {vocab_size} ids equally likely)")


def print_short_run(history: dict, unigram: float, where: str) -> None:
    """history: fit()'s (``steps``, ``seconds``, ``loss`` in nats); unigram: the baseline (BPB) on ``where``."""
    if not history.get("loss"):
        raise ValueError("a run's history needs its losses (fit()'s history['loss'], in nats); got none")
    bits = [v / math.log(2) for v in history["loss"]]  # nats -> bits per byte
    print(f"{history['steps']} steps in {history['seconds']:.0f} s; training loss {bits[0]:.3f} -> {bits[-1]:.3f} "
          f"bits per byte (unigram baseline on {where}: {unigram:.3f})")


def _chunks_phrase(record: dict, unigram: float, n_chunks: int) -> str:
    if "val_bpb" not in record:
        raise ValueError(f"a shipped lm model's record has its val_bpb; got keys {sorted(record)}")
    return (f"validation BPB {record['val_bpb']:.3f} (unigram baseline on the same {n_chunks:,} chunks: "
            f"{unigram:.3f})")


def print_shipped_record(record: dict, unigram: float, n_chunks: int) -> None:
    """record: a shipped model's (``course.shipped``); unigram, n_chunks: the baseline on the chunks its
    val_bpb scored, and how many (``course.shipped.unigram_on_record_chunks``). Two lines: how it was made,
    then its last training loss (bits per byte) and its validation BPB beside the baseline."""
    scored = _chunks_phrase(record, unigram, n_chunks)
    print(f"made by: {record['command']}  ({record['train_seconds'] / 60:.1f} min of training on "
          f"{record['threads']} CPU thread)")
    print(f"{record['steps']} steps: training loss {record['loss_log']['loss'][-1] / math.log(2):.3f} bits per byte "
          f"at the last step, {scored}")


def print_shipped_bpb(record: dict, unigram: float, n_chunks: int) -> None:
    """As :func:`print_shipped_record`, in one line and without the training loss."""
    scored = _chunks_phrase(record, unigram, n_chunks)
    print(f"{record['steps']} steps (made by: {record['command']}, {record['train_seconds'] / 60:.1f} min of "
          f"training): {scored}")
