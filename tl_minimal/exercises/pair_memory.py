"""Checkers for exercise 02, the pair memory  P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t).

Tasks (notebooks/exercises/02_pair_memory.ipynb)
    1  pair_memory_step(P_prev [B, H, S, S], s_prev_t, b_t [B, H, S], gam_t [B, H]) -> P_t
    2  pair_memory_from_states(s [B, T, H, S], b, gam) -> P [B, T, H, S, S]   (s[:, t] = s_t: shift it!)
    3  a prediction: what is P_0?
    4  unrolled_weights_row(gam [T], t) -> w [T], the weight of each write in P_t (then on trained gates)
"""

from __future__ import annotations

import torch

from ..pair_memory import pair_memory, pair_memory_step, unrolled_weights
from ..running_state import previous_states
from .answers import prediction_check
from .harness import Case, Mistake, case, check_function, gates, generator, rand

BROADCAST = {"must match the size": "gam_t is [B, H]; give it two trailing axes (gam_t[..., None, None]) "
                                    "so it scales the whole S x S memory of its head"}


def _outer(x, y):
    return x.unsqueeze(-1) * y.unsqueeze(-2)  # [..., S, S]


def _step(g, B, H, S, **_):
    return rand(g, B, H, S, S), rand(g, B, H, S), rand(g, B, H, S), gates(g, B, H)


def check_pair_memory_step(student):
    """Task 1: one token of the pair memory, against ``pair_memory.pair_memory_step``."""
    def gate(gam):  # [B, H] -> [B, H, 1, 1]: one gate per head
        return gam[..., None, None]

    mistakes = [
        Mistake("the outer product is transposed: rows index the state, outer(s, b)[i, j] = s[i] * b[j]; "
                "you built outer(b, s)", lambda P, s, b, g: gate(g) * P + (1 - gate(g)) * _outer(b, s)),
        Mistake("s_prev_t * b_t is elementwise ([B, H, S]); the outer product is s[..., :, None] * b[..., None, :]",
                lambda P, s, b, g: gate(g)[..., 0] * P.diagonal(dim1=-2, dim2=-1) + (1 - gate(g)[..., 0]) * s * b),
        Mistake("forgot the (1 - gam_t) factor on the new outer product",
                lambda P, s, b, g: gate(g) * P + _outer(s, b)),
        Mistake("the gates are swapped: gam_t keeps the OLD memory, (1 - gam_t) scales the new pair",
                lambda P, s, b, g: (1 - gate(g)) * P + gate(g) * _outer(s, b)),
        Mistake("the old memory P_prev is missing", lambda P, s, b, g: (1 - gate(g)) * _outer(s, b)),
    ]
    return check_function("02.1 pair_memory_step", student, pair_memory_step,
                          [case("a random token", 0, _step), case("another random token", 1, _step)], mistakes,
                          todo="Task 1: equation (1) of the Recap for one token, per head; Task 1 gives the shapes",
                          what="one token, 2 random cases", on_error=BROADCAST)


def _seq(T):
    return lambda g, B, H, S, **_: (rand(g, B, T, H, S), rand(g, B, T, H, S), gates(g, B, T, H))


def _from_states(s, b, gam):
    return pair_memory(previous_states(s), b, gam, mode="loop")


def check_pair_memory_from_states(student):
    """Task 2: P for every t from the running states s (s[:, t] = s_t), so the student must shift."""
    mistakes = [
        Mistake("uses s_t instead of s_{t-1}: token t pairs its write b_t with the state BEFORE it, "
                "s_prev[:, 0] = 0 and s_prev[:, t] = s[:, t-1]", lambda s, b, gam: pair_memory(s, b, gam, mode="loop")),
        Mistake("off by one in time: P[:, t] must be the memory AFTER token t (P_t); you stored P_{t-1}",
                lambda s, b, gam: previous_states(_from_states(s, b, gam))),
        Mistake("the outer product is transposed: outer(s_{t-1}, b_t)[i, j] = s_{t-1}[i] * b_t[j]",
                lambda s, b, gam: _from_states(s, b, gam).transpose(-1, -2)),
        Mistake("forgot the (1 - gam_t) factor on the new outer product",
                lambda s, b, gam: _from_states(s, b / (1 - gam[..., None]), gam)),
        Mistake("time is on the wrong axis: stack along dim=1, the result is [B, T, H, S, S]",
                lambda s, b, gam: _from_states(s, b, gam).transpose(0, 1)),
    ]
    return check_function("02.2 pair_memory_from_states", student, _from_states,
                          [case("T = 5", 10, _seq(5)), case("T = 1", 11, _seq(1)), case("T = 7", 12, _seq(7))],
                          mistakes,
                          todo="Task 2: which state does token t pair with in equation (1)? Then equation (1) token "
                               "after token",
                          what="3 sequences: T = 5, T = 1, T = 7", on_error=BROADCAST)


check_first_memory_prediction = prediction_check(
    "02.3", 'replace None by the letter of your answer, e.g. "a"', "abcd", doc="Task 3: what is P_0? (a letter)")


def unrolled_weights_row(gam: torch.Tensor, t: int) -> torch.Tensor:
    """Reference: w[tau] = (1 - gam[tau]) prod_{u=tau+1..t} gam[u] for tau <= t, 0 after; gam [T] -> w [T]."""
    w, _ = unrolled_weights(gam[None, :, None], [t])  # [1, 1, T, 1]
    return w[0, 0, :, 0]


def _no_mask(gam, t):
    """Wrong on purpose: the formula applied to tau > t as well (an empty product is 1)."""
    w = unrolled_weights_row(gam, t).clone()
    w[t + 1:] = 1 - gam[t + 1:]
    return w


def check_unrolled_weights(student, gam: torch.Tensor | None = None):
    """Task 4: the weight of write tau in P_t; ``gam`` [T] (optional): a trained head's gates."""
    def make(seed, T, t):
        return lambda: (gates(generator(seed), T), t)
    cases = [Case("T = 9, t = 5", make(20, 9, 5)), Case("T = 9, t = 0", make(21, 9, 0)),
             Case("T = 9, t = 8 (the last token)", make(22, 9, 8)), Case("T = 1, t = 0", make(23, 1, 0))]
    if gam is not None:
        trained = gam.detach().double().flatten()
        cases.append(Case("the trained head's gates", lambda: (trained.clone(), len(trained) - 1)))
    mistakes = [
        Mistake("off by one: the product of later gates runs over u = tau+1 .. t; you included gam[tau] too",
                lambda gam, t: unrolled_weights_row(gam, t) * gam),
        Mistake("forgot the (1 - gam[tau]) factor: each write enters the memory scaled by (1 - gam_tau)",
                lambda gam, t: unrolled_weights_row(gam, t) / (1 - gam)),
        Mistake("leaks the future: writes after t are not in P_t yet, so w[tau] = 0 for tau > t", _no_mask),
    ]
    return check_function("02.4 unrolled_weights_row", student, unrolled_weights_row, cases, mistakes,
                          todo="Task 4 defines the weights w_{t,tau}: unroll equation (1) of the Recap",
                          what=f"{len(cases)} cases incl. t = 0, the last token and T = 1"
                               + (", and the trained head" if gam is not None else ""))
