"""Checkers for exercise 04, the slot-compressed pair memory (triple_slot).

    L_k,t = gam_t L_k,t-1 + (1 - gam_t) g_t[k] s_{t-1}       R_k,t = gam_t R_k,t-1 + (1 - gam_t) g_t[k] b_t
    f_t[k] = (q^l_t . L_k,t) (q^r_t . R_k,t)

Tasks (notebooks/exercises/04_slots.ipynb)
    1  slot_step(L, R [B, H, K, S], s_prev_t, b_t [B, H, S], g_t [B, H, K], gam_t [B, H]) -> (L_t, R_t)
    2  slot_features(L, R [B, H, K, S], q_left, q_right [B, H, S]) -> f [B, H, K]
    3  a prediction: is sum_k outer(L_k, R_k) the dense pair memory P?
    4  slot_entropy(g [..., K]) -> [...], how spread a token's slot choice is (then on a trained model)
"""

from __future__ import annotations

import math

import torch

from .. import slots
from ..pair_memory import pair_memory
from .answers import prediction_check
from .harness import Case, Mistake, case, check_function, gates, generator, rand, sizes

K = 5  # slots in task 4's cases


def _weights(g, *shape):
    return torch.softmax(3 * rand(g, *shape), dim=-1)  # rows sum to 1 over the K slots


def _step(g, B, H, K, S, **_):
    return (rand(g, B, H, K, S), rand(g, B, H, K, S), rand(g, B, H, S), rand(g, B, H, S),
            _weights(g, B, H, K), gates(g, B, H))


def _ref_step(L, R, s, b, g, gam):
    keep, write = gam[..., None, None], (1 - gam[..., None, None]) * g.unsqueeze(-1)  # [B, H, 1, 1], [B, H, K, 1]
    return keep * L + write * s.unsqueeze(-2), keep * R + write * b.unsqueeze(-2)


def check_slot_step(student):
    """Task 1: one token of both slot memories; the result is the pair (L_t, R_t)."""
    mistakes = [
        Mistake("forgot the slot weights g_t[k]: every slot gets the same write, so the K slots stay copies",
                lambda L, R, s, b, g, gam: _ref_step(L, R, s, b, torch.ones_like(g), gam)),
        Mistake("L and R are swapped: L collects the states s_{t-1}, R the writes b_t",
                lambda L, R, s, b, g, gam: _ref_step(L, R, b, s, g, gam)),
        Mistake("forgot the (1 - gam_t) factor on the new write",
                lambda L, R, s, b, g, gam: _ref_step(L, R, s / (1 - gam[..., None]), b / (1 - gam[..., None]), g, gam)),
        Mistake("the gates are swapped: gam_t keeps the old slot contents, (1 - gam_t) scales the write",
                lambda L, R, s, b, g, gam: _ref_step(L, R, s, b, g, 1 - gam)),
    ]
    return check_function("04.1 slot_step", student, _ref_step,
                          [case("a random token", 0, _step), case("another token", 1, _step)], mistakes,
                          todo="Task 1: equations (1) of the Recap for one token, both memories; Task 1 gives the "
                               "shapes",
                          what="one token, 2 random cases",
                          on_error={"must match the size": "line the axes up: L is [B, H, K, S], so the write "
                                                           "s_prev_t needs a K axis (unsqueeze(-2)) and g_t an S axis "
                                                           "(unsqueeze(-1))"})


def _ref_features(L, R, ql, qr):
    return (L @ ql.unsqueeze(-1)).squeeze(-1) * (R @ qr.unsqueeze(-1)).squeeze(-1)  # [B, H, K]


def _features(g, B, H, K, S, **_):
    return rand(g, B, H, K, S), rand(g, B, H, K, S), rand(g, B, H, S), rand(g, B, H, S)


def check_slot_features(student):
    """Task 2: f[k] = (q^l . L_k)(q^r . R_k)."""
    mistakes = [
        Mistake("the two dot products are added; the feature is their PRODUCT (q^l . L_k) * (q^r . R_k)",
                lambda L, R, ql, qr: (L @ ql.unsqueeze(-1)).squeeze(-1) + (R @ qr.unsqueeze(-1)).squeeze(-1)),
        Mistake("the queries are swapped: q^l reads L (the state side), q^r reads R",
                lambda L, R, ql, qr: _ref_features(L, R, qr, ql)),
        Mistake("that multiplies before summing: (sum_i L_k[i] q^l[i] R_k[i] q^r[i]) is not (q^l . L_k)(q^r . R_k)",
                lambda L, R, ql, qr: (L * ql.unsqueeze(-2) * R * qr.unsqueeze(-2)).sum(-1)),
    ]
    return check_function("04.2 slot_features", student, _ref_features,
                          [case("random slots", 10, _features), case("other slots", 11, _features)], mistakes,
                          todo="Task 2: equation (2) of the Recap, for every slot",
                          what="2 random cases")


check_dense_prediction = prediction_check(
    "04.3", "replace None by the letter of your answer", "abc",
    doc="Task 3: the slots' sum of outer products against the dense memory (a letter)")


def slot_entropy(g: torch.Tensor) -> torch.Tensor:
    """Reference: -sum_k g[k] log g[k] in nats over the last axis (0 log 0 = 0)."""
    return -(g * torch.log(g.clamp_min(1e-30))).sum(-1)


def check_slot_entropy(student, g: torch.Tensor | None = None):
    """Task 4: the entropy of the slot weights; ``g`` (optional): a trained model's slot weights."""
    one_hot = torch.eye(K, dtype=torch.float64)[None, None].expand(2, 1, K, K) * 0.999 + 0.001 / K
    cases = [case("random weights [2, 7, 3, 5]", 20, lambda gen, **_: (_weights(gen, 2, 7, 3, K),)),
             Case("nearly one-hot weights", lambda: (one_hot.clone(),))]
    if g is not None:
        trained = g.detach().double()
        cases.append(Case("the trained model's slot weights", lambda: (trained.clone(),)))
    mistakes = [
        Mistake("the sign: entropy is -sum_k g log g, which is >= 0", lambda g: -slot_entropy(g)),
        Mistake("that is in bits (log2); use the natural log, so the maximum is log K nats",
                lambda g: slot_entropy(g) / math.log(2)),
        Mistake("summed over the wrong axis: the slots are the LAST axis (K)", lambda g: -(g * torch.log(g)).sum(-2)),
        Mistake("forgot the weights: the entropy is -sum_k g[k] log g[k], not -sum_k log g[k]",
                lambda g: -torch.log(g).sum(-1)),
    ]
    return check_function("04.4 slot_entropy", student, slot_entropy, cases, mistakes,
                          todo="Task 4 defines the entropy of a slot choice (in nats)",
                          what=f"{len(cases)} cases"
                          + (" incl. the trained model's slot weights" if g is not None else ""))


def dense_vs_slots(T: int = 12, seed: int = 0):
    """For the plot after task 3: relative difference between sum_k outer(L_k, R_k) (K = 1) and P, per t."""
    g = generator(seed)
    (S,) = sizes("S")  # the hidden tests' own sizes inside hidden_tests()
    s_prev, b, gam = rand(g, 1, T, 1, S), rand(g, 1, T, 1, S), gates(g, 1, T, 1)
    s_prev[:, 0] = 0  # s_{-1} = 0
    L, R = slots.slot_memory(s_prev, b, torch.ones(1, T, 1, 1, dtype=torch.float64), gam)  # [1, T, 1, 1, S]
    approx = L[0, :, 0, 0].unsqueeze(-1) * R[0, :, 0, 0].unsqueeze(-2)  # [T, S, S]
    P = pair_memory(s_prev, b, gam)[0, :, 0]  # [T, S, S]
    return [((approx[t] - P[t]).norm() / P[t].norm().clamp_min(1e-12)).item() for t in range(T)], approx, P
