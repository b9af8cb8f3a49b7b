"""How much of a stored pair survives a gap: products of a trained model's gates (notebook 06a).

Glossary (paper symbol -> code name -> shape)
    lambda_t    "lam"      [N, L, T, H]   running-state keep gate of every layer and head, per token
    gamma_t     "gam"      [N, L, T, H]   pair-memory keep gate, likewise
    [a, b)      start, stop int           the gap: the tokens a .. b-1 (the recall task's filler)
    kept        kept       [N, L, H]      prod_{u=a..b-1} gate_u, as log10 (it underflows float32)

The half-life of the gap's average decay, the tokens that halve what is stored, is ln(1/2) / mean_u(ln gamma_u).
"""

from __future__ import annotations

import math

import torch

from ..data import recall as data_recall
from ..running_state import log_gate

GATES = ("lam", "gam")  # the keep gates a triple-latent layer records


@torch.no_grad()
def recall_gates(model, x: torch.Tensor) -> dict:
    """lambda_t and gamma_t of every layer and head on the sequences x [N, T], from ``model.internals``:
    {"lam", "gam"} -> [N, L, T, H]."""
    _, record = model.internals(x.to(next(model.parameters()).device))
    layers = record["layers"]
    missing = [i for i, layer in enumerate(layers) if any(key not in layer for key in GATES)]
    if missing:
        raise ValueError(f"layers {missing} of this {model.variant} model record no gates lam, gam: "
                         "keep gates exist in triple-latent (and slot) layers only")
    return {key: torch.stack([layer[key] for layer in layers], dim=1).float().cpu() for key in GATES}


def filler_gap(x: torch.Tensor, layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT) -> tuple[int, int]:
    """(a, b): the recall sequence x [T] has its filler at the tokens a .. b-1, one run between pairs and question."""
    first = layout.first_filler
    where = ((x >= first) & (x < first + layout.n_filler)).nonzero().flatten()  # filler positions
    if len(where) == 0 or int(where[-1] - where[0]) + 1 != len(where):
        raise ValueError("x must be one recall sequence [T] with one run of filler between the pairs and the question")
    return int(where[0]), int(where[-1]) + 1


def kept_fraction(gate: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """log10 of prod_{u=start..stop-1} gate_u over the time axis (dim -2): gate [..., T, H] -> [..., H], summed
    in log space (exact far below float32's smallest number)."""
    T = gate.shape[-2]
    if not 0 <= start < stop <= T:
        raise ValueError(f"the gap [start, stop) must lie in [0, {T}] with start < stop, got [{start}, {stop})")
    # log10 prod_u gate_u = sum_u ln(gate_u) / ln 10
    return log_gate(gate[..., start:stop, :]).sum(dim=-2) / math.log(10)  # [..., H]


def half_life(gate: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """Tokens that halve what is stored, at the gap's average decay: ln(1/2) / mean_u(ln gate_u) -> [..., H]."""
    mean_log = kept_fraction(gate, start, stop) * math.log(10) / (stop - start)  # mean ln gate_u: [..., H]
    return math.log(0.5) / mean_log
