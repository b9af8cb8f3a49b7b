"""Printed tables of notebook 02's pair toy (section 2.1): which write each memory returns for a context.

Views print what the notebook computed (the cosines come from ``tl_minimal.course.pair_toy``).

    print_cosine_table   one memory's cosines [question i, write j], and how many questions got their own write
    print_many_pairs     more pairs than S: how many were answered with their own write, and how cleanly
    print_recall_at      the recall curves read at S pairs and at the most pairs stored
"""

from __future__ import annotations

import torch


def _own_write(table: torch.Tensor) -> int:
    if table.dim() != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"a cosine table is [n questions, n writes]; got shape {tuple(table.shape)}")
    return int((table.argmax(dim=1) == torch.arange(table.shape[0])).sum())


def print_cosine_table(name: str, table: torch.Tensor) -> None:
    """table [n, n]: the cosine of the answer to 'what followed δ_i?' (row i) with write b_j (column j)."""
    right = _own_write(table)
    print(f"{name}: cosine of the answer to 'what followed δ_i?' with b_j (rows i, columns j); "
          f"{right} of {table.shape[0]} answered with their own write\n{table.numpy().round(2)}")


def print_many_pairs(table: torch.Tensor, S: int) -> None:
    """table [n, n] for n pairs stored in a memory of size S: the count right and the range of own cosines."""
    right, own = _own_write(table), table.diagonal()
    n = table.shape[0]
    print(f"{n} pairs in S = {S}: {right} of {n} answered with their own write; cosine with it from "
          f"{own.min():.2f} to {own.max():.2f} (1 for a clean read)")


def print_recall_at(curves: dict, n_pairs: int) -> None:
    """curves: {S: recall [n_pairs]}, recall[n - 1] the fraction answered right with n pairs stored."""
    for S, recall in curves.items():
        if len(recall) != n_pairs or S > n_pairs:
            raise ValueError(f"a curve holds one recall per number of pairs 1..{n_pairs} (at least S = {S}); "
                             f"got {len(recall)} values")
        print(f"S = {S:2d}: recall with {S} pairs {recall[S - 1]:.0%}, with {n_pairs} pairs {recall[-1]:.0%}")
