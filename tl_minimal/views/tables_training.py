"""Printed tables of training losses (notebook 01, section 7): the numbers a student compares by eye.

Views print what the notebook computed. Losses come in nats (the library's history) and are
printed in bits per byte, nats / ln 2.

    print_loop_against_fit   the hand-written loop's losses beside fit()'s, step by step
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
