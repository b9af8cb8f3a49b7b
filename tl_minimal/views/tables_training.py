"""Printed tables of training runs (notebooks 01 and 03c): the numbers a student compares by eye.

Views print what the notebook computed. Losses come in nats (the library's history) and are
printed in bits per byte, nats / ln 2.

    print_loop_against_fit   the hand-written loop's losses beside fit()'s, step by step
    print_bpb_table          notebook 03c: params, training time, BPB ours and the paper's, and two baselines
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
