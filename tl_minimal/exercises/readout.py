"""Checkers for exercise 03, the readout  r_t[j] = (sum_i P_t[i, j] q^l_t[i]) q^r_t[j].

Tasks (notebooks/exercises/03_readout.ipynb)
    1  readout_step(P [B, H, S, S], q_left, q_right [B, H, S]) -> r_t [B, H, S]
    2  readout_loop(s_prev, b, gam, q_left, q_right) -> r [B, T, H, S]   (write P_t first, then read it)
    3  a prediction: what is r_1?
    4  readout_scores(s_prev, gam, q_left) -> A [B, H, T, T], the attention-like weights (then on a trained model)
"""

from __future__ import annotations

import torch

from ..pair_memory import pair_memory, unrolled_weights
from ..readout import pair_readout
from .answers import prediction_check
from .harness import Case, Mistake, case, check_function, gates, rand


def _ref_step(P, ql, qr):
    return (ql.unsqueeze(-2) @ P).squeeze(-2) * qr  # [B, H, S]


def _step(g, B, H, S, **_):
    return rand(g, B, H, S, S), rand(g, B, H, S), rand(g, B, H, S)


def check_readout_step(student):
    """Task 1: read one memory, against r[j] = (P^T q^l)[j] q^r[j]."""
    mistakes = [
        Mistake("P instead of P^T: q^l reads the ROWS of P (the state index i), r[j] = sum_i P[i, j] q^l[i]; "
                "you computed sum_j P[i, j] q^l[j]", lambda P, ql, qr: (P @ ql.unsqueeze(-1)).squeeze(-1) * qr),
        Mistake("forgot to multiply by q^r_t (elementwise, at the end)",
                lambda P, ql, qr: (ql.unsqueeze(-2) @ P).squeeze(-2)),
        Mistake("q^l and q^r are swapped: q^l contracts with P, q^r multiplies the result",
                lambda P, ql, qr: (qr.unsqueeze(-2) @ P).squeeze(-2) * ql),
        Mistake("P q^l with q^r: both the transpose and the queries are off",
                lambda P, ql, qr: (P @ qr.unsqueeze(-1)).squeeze(-1) * ql),
    ]
    return check_function("03.1 readout_step", student, _ref_step,
                          [case("a random memory", 0, _step), case("another memory", 1, _step)], mistakes,
                          todo="Task 1: equation (1) of the Recap for one memory, per head; Task 1 gives the shapes",
                          what="2 random memories")


def _seq(T, low=0.05, high=0.95):
    return lambda g, B, H, S, **_: (rand(g, B, T, H, S), rand(g, B, T, H, S), gates(g, B, T, H, low=low, high=high),
                                    rand(g, B, T, H, S), rand(g, B, T, H, S))


def _loop(s_prev, b, gam, ql, qr):
    return pair_readout(s_prev, b, gam, ql, qr, mode="loop")


def _read_before_write(s_prev, b, gam, ql, qr):
    P = pair_memory(s_prev, b, gam, mode="loop")  # [B, T, H, S, S]
    P_before = torch.cat([torch.zeros_like(P[:, :1]), P[:, :-1]], dim=1)
    return (ql.unsqueeze(-2) @ P_before).squeeze(-2) * qr


def check_readout_loop(student):
    """Task 2: the readout of a whole sequence, against ``readout.pair_readout(mode="loop")``."""
    mistakes = [
        Mistake("off by one in time: read P_t AFTER writing token t's pair (you read P_{t-1})", _read_before_write),
        Mistake("P instead of P^T: r[j] = sum_i P[i, j] q^l[i]", lambda s, b, g, ql, qr: _loop(b, s, g, ql, qr)),
        Mistake("forgot the (1 - gam_t) factor when writing the memory",
                lambda s, b, g, ql, qr: _loop(s, b / (1 - g[..., None]), g, ql, qr)),
        Mistake("forgot to multiply by q^r_t", lambda s, b, g, ql, qr: _loop(s, b, g, ql, torch.ones_like(qr))),
        Mistake("time is on the wrong axis: stack along dim=1, the result is [B, T, H, S]",
                lambda *args: _loop(*args).transpose(0, 1)),
    ]
    cases = [case("T = 5", 10, _seq(5)), case("T = 1", 11, _seq(1)), case("T = 9", 12, _seq(9)),
             case("T = 7, gates near 1", 13, _seq(7, 0.95, 0.999))]
    return check_function("03.2 readout_loop", student, _loop, cases, mistakes,
                          todo="Task 2: for every token, write the memory (exercise 02, equation (1)), then read it "
                               "with equation (1) of the Recap",
                          what="4 sequences: T = 5, T = 1, T = 9, T = 7 with gates near 1")


check_first_readout_prediction = prediction_check(
    "03.3", "replace None by the letter of your answer", "abcd", doc="Task 3: what is r_0? (a letter)")


def scores_reference(s_prev, gam, ql):
    """A[b, h, t, tau] = w_{t,tau} (q^l_t . s_{tau-1}), with w from ``pair_memory.unrolled_weights``."""
    w, _ = unrolled_weights(gam)  # [B, T(rows t), T(tau), H]
    dots = torch.einsum("bthi,buhi->bhtu", ql, s_prev)  # [B, H, T, T]: q^l_t . s_{tau-1}
    return w.permute(0, 3, 1, 2) * dots


def _no_mask(s_prev, gam, ql):
    """Wrong on purpose: w = (1 - gam_tau) C_t / C_tau with C the cumulative product, for every (t, tau)."""
    c = torch.cumsum(torch.log(gam), dim=1)  # [B, T, H]
    w = (1 - gam).unsqueeze(1) * torch.exp(c.unsqueeze(2) - c.unsqueeze(1))  # [B, t, tau, H]
    return w.permute(0, 3, 1, 2) * torch.einsum("bthi,buhi->bhtu", ql, s_prev)


def check_readout_scores(student, inputs: dict | None = None):
    """Task 4: the attention-like weights of the readout; ``inputs`` (optional) from a trained model."""
    def make(T):
        return lambda g, B, H, S, **_: (rand(g, B, T, H, S), gates(g, B, T, H), rand(g, B, T, H, S))
    cases = [case("T = 6", 30, make(6)), case("T = 1", 31, make(1)), case("T = 11", 32, make(11))]
    if inputs is not None:
        trained = tuple(inputs[k].detach().double() for k in ("s_prev", "gam", "q_left"))
        cases.append(Case("the trained model's layer 0", lambda: tuple(x.clone() for x in trained)))
    mistakes = [
        Mistake("leaks the future: A[t, tau] must be 0 for tau > t (token t cannot read later writes)", _no_mask),
        Mistake("forgot the (1 - gam_tau) factor in w_{t,tau}",
                lambda s, g, ql: scores_reference(s, g, ql) / (1 - g).permute(0, 2, 1)[:, :, None, :]),
        Mistake("off by one: the product of gates runs over u = tau+1 .. t, not from tau",
                lambda s, g, ql: scores_reference(s, g, ql) * g.permute(0, 2, 1)[:, :, None, :]),
        Mistake("the rows and columns are swapped: A[..., t, tau] has the query time t first",
                lambda s, g, ql: scores_reference(s, g, ql).transpose(-1, -2)),
    ]
    return check_function("03.4 readout_scores", student, scores_reference, cases, mistakes,
                          todo="Task 4 defines A: unroll the memory as in exercise 02's Task 4, then read it with "
                               "equation (1)",
                          what=f"{len(cases)} cases incl. T = 1" + (" and the trained model" if inputs else ""))
