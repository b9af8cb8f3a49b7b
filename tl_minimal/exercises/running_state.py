"""Checkers for exercise 01, the running state  s_t = lam_t s_{t-1} + (1 - lam_t) a_t.

Tasks (notebooks/exercises/01_running_state.ipynb)
    1  running_state_step(a_t [B, H, S], lam_t [B, H], s_prev [B, H, S]) -> s_t [B, H, S]
    2  running_state_loop(a [B, T, H, S], lam [B, T, H], s0=None) -> s [B, T, H, S]
    3  a prediction: the impulse response of a constant gate
    4  half_life(lam) -> tokens until a write has lost half its weight (then on trained gates)
"""

from __future__ import annotations

import math

import torch

from ..running_state import previous_states, running_state, running_state_step
from .answers import prediction_check
from .harness import Case, Mistake, case, check_function, gates, rand

BROADCAST = {"must match the size": "lam_t is [B, H]; give it a last axis (lam_t[..., None]) so it "
                                    "multiplies every one of the S numbers of its head"}


def _step(low=0.05, high=0.95):
    return lambda g, B, H, S, **_: (rand(g, B, H, S), gates(g, B, H, low=low, high=high), rand(g, B, H, S))


def lam(lam_t):  # [B, H] -> [B, H, 1]: one gate per channel of the state
    return lam_t.unsqueeze(-1)


def check_running_state_step(student):
    """Task 1: one token of the recurrence, against ``running_state_step``."""
    cases = [case("a random token", 0, _step()), case("gates near 1", 1, _step(0.9, 0.999)),
             case("gates near 0", 2, _step(0.001, 0.1))]
    mistakes = [
        Mistake("the gates are swapped: lam_t keeps the OLD state s_{t-1}, (1 - lam_t) scales the new write a_t",
                lambda a, lt, s: (1 - lam(lt)) * s + lam(lt) * a),
        Mistake("forgot the (1 - lam_t) factor on the write a_t", lambda a, lt, s: lam(lt) * s + a),
        Mistake("forgot lam_t on the previous state: without it the state never forgets",
                lambda a, lt, s: s + (1 - lam(lt)) * a),
        Mistake("the result ignores the previous state s_prev", lambda a, lt, s: (1 - lam(lt)) * a),
    ]
    return check_function("01.1 running_state_step", student, running_state_step, cases, mistakes,
                          todo="Task 1: equation (1) of the Recap for one token; Task 1 gives every argument's shape",
                          what="one token, 3 random cases (ordinary, near-1 and near-0 gates)", on_error=BROADCAST)


def _seq(T: int, with_s0: bool, low=0.05, high=0.95):
    def make(g, B, H, S, **_):
        a, lam = rand(g, B, T, H, S), gates(g, B, T, H, low=low, high=high)
        return (a, lam, rand(g, B, H, S)) if with_s0 else (a, lam)
    return make


def _loop(a, lam, s0=None):
    return running_state(a, lam, s0, mode="loop")


def check_running_state(student):
    """Task 2: the whole sequence, against ``running_state(mode="loop")``."""
    cases = [case("T = 5, no s0", 10, _seq(5, False)), case("T = 1", 11, _seq(1, False)),
             case("T = 7 with an initial state s0", 12, _seq(7, True)),
             case("T = 13, gates near 1", 13, _seq(13, True, 0.95, 0.999))]
    mistakes = [
        Mistake("off by one in time: s[:, t] must be the state AFTER token t (s_t); you stored the state "
                "before it (s_{t-1})", lambda a, lam, s0=None: previous_states(_loop(a, lam, s0), s0)),
        Mistake("the initial state s0 is ignored: when it is given, s_{-1} = s0 (zeros only when s0 is None)",
                lambda a, lam, s0=None: _loop(a, lam)),
        Mistake("time is on the wrong axis: stack the states along dim=1, the result is [B, T, H, S]",
                lambda a, lam, s0=None: _loop(a, lam, s0).transpose(0, 1)),
        Mistake("the gates are swapped: lam_t keeps s_{t-1}, (1 - lam_t) scales a_t",
                lambda a, lam, s0=None: _loop(a, 1 - lam, s0)),
        Mistake("forgot the (1 - lam_t) factor on a_t",
                lambda a, lam, s0=None: _loop(a / (1 - lam[..., None]), lam, s0)),
    ]
    return check_function("01.2 running_state_loop", student, _loop, cases, mistakes,
                          todo="Task 2: equation (1) of the Recap, token after token, from s_{-1} (Task 2 says what "
                               "s0=None means)",
                          what="4 sequences: T = 5, T = 1, T = 7 with s0, T = 13 with gates near 1",
                          on_error=BROADCAST)


check_impulse_prediction = prediction_check(
    "01.3", "replace None by your predicted value of s_5 (a number)",
    doc="Task 3: the impulse response, s_5 for a_0 = 1, a_t = 0 after, lam = 0.8, s_{-1} = 0.")


def half_life(lam: torch.Tensor) -> torch.Tensor:
    """Reference: n with lam^n = 1/2, i.e. n = log(1/2) / log(lam) (tokens until a write halves)."""
    return math.log(0.5) / torch.log(lam)


def check_half_life(student, lam: torch.Tensor | None = None):
    """Task 4: the half-life of a keep gate; ``lam`` (optional) adds a trained model's gates as a case."""
    cases = [case("random gates [2, 7, 3]", 20, lambda g, **_: (gates(g, 2, 7, 3, low=0.01, high=0.99),)),
             case("one gate [1]", 21, lambda g, **_: (gates(g, 1, low=0.01, high=0.99),))]
    if lam is not None:
        cases.append(Case("the trained model's gates", lambda: (lam.detach().double().clamp(1e-6, 1 - 1e-6),)))
    mistakes = [
        Mistake("that is the mean memory length 1 / (1 - lam), not the half-life: solve lam^n = 1/2 for n",
                lambda g: 1 / (1 - g)),
        Mistake("upside down: solve lam^n = 1/2, so n = log(1/2) / log(lam)", lambda g: torch.log(g) / math.log(0.5)),
        Mistake("the sign is wrong: log(lam) < 0 and log(1/2) < 0, so the half-life is positive",
                lambda g: -math.log(0.5) / torch.log(g)),
        Mistake("that is the weight left after one token (lam itself), not a number of tokens", lambda g: g),
    ]
    return check_function("01.4 half_life", student, half_life, cases, mistakes,
                          todo="Task 4 defines the half-life: solve that definition for the number of tokens",
                          what=f"{len(cases)} cases"
                          + (" including the trained model's gates" if lam is not None else ""))
