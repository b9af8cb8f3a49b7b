"""Printed summaries of a model's gates and slot choices (notebooks 01 and 04): the numbers under figures.

Views print what the notebook computed; the half-life formula stays in the notebook.

    print_half_lives    per layer, each head's half-life of the mean decay, then the gates' range and spread
    print_gate_means    per run, a gate's mean per layer and its spread over the tokens
    print_slot_choices  per layer, the entropy of the slot weights per head and the largest weight
"""

from __future__ import annotations

import torch


def print_half_lives(runs: dict) -> None:
    """runs {training steps: (half-lives [L, H], gates [L, T, H])}: one line per layer, one summary per run."""
    for steps, (half_lives, lam) in runs.items():
        if half_lives.dim() != 2 or lam.dim() != 3 or half_lives.shape[0] != lam.shape[0]:
            raise ValueError(f"{steps} steps: want half-lives [L, H] and gates [L, T, H]; got "
                             f"{tuple(half_lives.shape)} and {tuple(lam.shape)}")
        for layer in range(half_lives.shape[0]):
            print(f"{steps} steps, layer {layer}: half-life of the mean decay per head",
                  [round(v, 2) for v in half_lives[layer].tolist()])
        spread = torch.as_tensor(lam).std(dim=1).mean(1)  # [L]: std over tokens, mean over heads
        print(f"{steps} steps: λ from {lam.min():.2f} to {lam.max():.2f}; its spread over the tokens (std, mean "
              f"over heads) per layer {[round(v, 2) for v in spread.tolist()]}")


def print_slot_choices(entropy: dict, largest: dict) -> None:
    """Notebook 04, section 4: entropy {steps: [L, H]} of the slot weights and largest {steps: [L]} weight."""
    for steps, ent in entropy.items():
        if ent.dim() != 2 or largest[steps].shape != ent.shape[:1]:
            raise ValueError(f"{steps} steps: want entropy [L, H] and largest [L]; got {tuple(ent.shape)} and "
                             f"{tuple(largest[steps].shape)}")
        for i in range(ent.shape[0]):
            print(f"{steps:5d} steps, layer {i}: mean entropy per head {[round(v, 3) for v in ent[i].tolist()]}, "
                  f"largest weight on average {largest[steps][i]:.3f}")


def print_gate_means(gates: dict, name: str = "γ") -> None:
    """Notebook 02, section 4: gates {steps: [L, T, H]}; per run the mean per layer and the spread over tokens."""
    for steps, g in gates.items():
        if g.dim() != 3:
            raise ValueError(f"{steps} steps: gates must be [L, T, H], got shape {tuple(g.shape)}")
        print(f"{steps:5d} steps: mean {name} per layer", [round(v, 3) for v in g.mean(dim=(1, 2)).tolist()],
              "; spread over tokens (std, mean over heads)", [round(v, 2) for v in g.std(dim=1).mean(1).tolist()])
