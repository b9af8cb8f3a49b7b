"""Checkers for exercise 05, the causal local convolution and the future-token leak.

    y_t = GELU(c + sum_{i=0..k-1} W[:, :, i] x_{t-(k-1)+i})      (x_{<0} = 0: pad k-1 zeros on the LEFT)

Tasks (notebooks/exercises/05_convolution.ipynb)
    1  causal_pad(x [B, T, d], k) -> [B, T+k-1, d]
    2  causal_conv(x [B, T, d], weight [d, d, k], bias [d]) -> y [B, T, d]
    3  a prediction: how many future tokens does the paper's symmetric convolution see?
    4  leaks_future(fn, T, d) -> bool: a causality test (then on trained convolutions)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import conv
from .answers import prediction_check
from .harness import Mistake, case, check_function, first_line, generator, guarded, hidden, is_bool, rand, report, sizes


def _pad(x, left, right):
    return torch.cat([x.new_zeros(x.shape[0], left, x.shape[2]), x, x.new_zeros(x.shape[0], right, x.shape[2])], 1)


def check_causal_pad(student):
    """Task 1: k-1 zeros before the first token, none after the last."""
    def make(T, k):
        return lambda g, B, D, **_: (rand(g, B, T, D), k)
    k1, k2 = (4, 2) if hidden() else (5, 3)  # the hidden tests use other kernel sizes
    cases = [case(f"T = 6, k = {k1}", 0, make(6, k1)), case(f"T = 1, k = {k1}", 1, make(1, k1)),
             case(f"T = 7, k = {k2}", 2, make(7, k2))]
    mistakes = [
        Mistake("leaks the future: that pads both sides (the paper's padding); put all k-1 zeros on the LEFT",
                lambda x, k: _pad(x, (k - 1) // 2, (k - 1) // 2)),
        Mistake("the zeros are on the right: position t would then read t+1 .. t+k-1, the future",
                lambda x, k: _pad(x, 0, k - 1)),
        Mistake("off by one: pad k-1 zeros, not k (a kernel of k taps needs k-1 earlier positions)",
                lambda x, k: _pad(x, k, 0)),
        Mistake("padded the wrong axis: time is dim=1 of [B, T, d]", lambda x, k: F.pad(x, (k - 1, 0))),
    ]
    return check_function("05.1 causal_pad", student, lambda x, k: _pad(x, k - 1, 0), cases, mistakes,
                          todo="Task 1: equation (1) of the Recap says which positions before x_0 are read, and that "
                               "they are zero",
                          what=f"3 cases: T = 6, T = 1, k = {k2}")


def _conv(T, k):
    return lambda g, B, D, **_: (rand(g, B, T, D), rand(g, D, D, k), rand(g, D))


def check_causal_conv(student):
    """Task 2: the causal convolution, against ``conv.conv_loop(causal=True)``."""
    def ref(x, w, c):
        return conv.conv_loop(x, w, c, causal=True)

    mistakes = [
        Mistake("leaks the future: position t must read x_{t-k+1} .. x_t only (pad on the left)",
                lambda x, w, c: conv.conv_loop(x, w, c, causal=False)),
        Mistake("the taps are reversed: tap i reads x_{t-(k-1)+i}, so the LAST tap W[:, :, k-1] multiplies x_t",
                lambda x, w, c: ref(x, w.flip(-1), c)),
        Mistake("forgot the GELU at the end", lambda x, w, c: F.conv1d(_pad(x, w.shape[-1] - 1, 0).transpose(1, 2),
                                                                       w, c).transpose(1, 2)),
        Mistake("forgot the bias c", lambda x, w, c: ref(x, w, torch.zeros_like(c))),
        Mistake("W[:, :, i] is [d_out, d_in]: multiply x @ W[:, :, i].T (you used it untransposed)",
                lambda x, w, c: ref(x, w.transpose(0, 1), c)),
        Mistake("off by one in time: position t must include x_t itself (the taps cover t-k+1 .. t)",
                lambda x, w, c: ref(torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], 1), w, c)),
    ]
    k1, k2 = (4, 2) if hidden() else (5, 3)  # the hidden tests use other kernel sizes
    cases = [case(f"T = 8, k = {k1}", 10, _conv(8, k1)), case("T = 1", 11, _conv(1, k1)),
             case(f"T = 7, k = {k2}", 12, _conv(7, k2))]
    return check_function("05.2 causal_conv", student, ref, cases, mistakes,
                          todo="Task 2: equation (1) of the Recap, one tap at a time, on the sequence your "
                               "causal_pad returns",
                          what=f"3 cases: T = 8, T = 1, k = {k2}")


check_leak_prediction = prediction_check(
    "05.3", "replace None by the letter of your answer", "abcd",
    doc="Task 3: how many future tokens the paper's symmetric convolution shows (a letter)")


def _late_leak(start: int):
    """y_t = x_t, plus x_{t+1} at positions t >= start only: a test that stops early misses it."""
    def fn(x):
        t = torch.arange(x.shape[1])[None, :, None]  # [1, T, 1]
        nxt = torch.cat([x[:, 1:], torch.zeros_like(x[:, :1])], 1)  # x_{t+1}, 0 after the last
        return x + (t >= start) * nxt
    return fn


def _functions(extra: dict | None) -> dict:
    """name -> the function to test. Whether each leaks is looked up only after the student's
    verdict (:data:`CAUSAL`), so no frame holds it while the student's code runs."""
    g = generator(7)
    _, D = sizes("B", "D")  # the hidden tests' own sizes inside hidden_tests()
    w, c = rand(g, D, D, 5), rand(g, D)
    cases = {
        "the causal convolution": lambda x: conv.conv_fast(x, w.to(x.dtype), c.to(x.dtype), causal=True),
        "the symmetric (paper's) convolution": lambda x: conv.conv_fast(x, w.to(x.dtype), c.to(x.dtype), causal=False),
        "a running sum (cumsum over time)": lambda x: x.cumsum(1),
        "y_t = x_{t+1} (a shift into the past)": lambda x: torch.cat([x[:, 1:], x[:, -1:]], 1),
        "a function that peeks only at the last token":
            lambda x: x + x[:, -1:] * (torch.arange(x.shape[1]) == 0)[None, :, None],
        "y_t = x_t (identity)": lambda x: x.clone(),
        "a function that leaks only at positions t >= 4": _late_leak(4),
        "a function that leaks only at the second-to-last position": _late_leak(6),
        "a small leak (1e-3 x_{t+1})": lambda x: x + 1e-3 * torch.cat([x[:, 1:], torch.zeros_like(x[:, :1])], 1),
    }
    return {**cases, **{name: spec[0] for name, spec in (extra or {}).items()}}


CAUSAL = {"the causal convolution", "a running sum (cumsum over time)", "y_t = x_t (identity)"}  # the rest leak


def check_leaks_future(student, extra: dict | None = None):
    """Task 4: run the student's test on known causal and leaky functions (T = 8); ``extra`` adds
    more: name -> (fn, leaks) or (fn, leaks, d) where d is the width fn expects."""
    with guarded():
        widths = {name: spec[2] for name, spec in (extra or {}).items() if len(spec) > 2}
        functions, task = _functions(extra), "05.4 leaks_future"
        for name, fn in functions.items():
            try:
                verdict = student(fn, 8, widths.get(name, sizes("D")[0]))
            except NotImplementedError:
                return report(task, False, "not done yet: see Task 4's definition of a leak, and the "
                                           "Recap's equation (1): which inputs may y_t read?")
            except Exception as exc:
                return report(task, False, f"not quite: on {name} your function raised {type(exc).__name__}: "
                                           f"{first_line(exc)}")
            if not is_bool(verdict):
                return report(task, False, f"not quite: return True or False, got {verdict!r}")
            leaks = extra[name][1] if name in (extra or {}) else name not in CAUSAL  # looked up only now
            if bool(verdict) != leaks and leaks:
                return report(task, False, f"not quite: {name} reads the future but your test says it does not; "
                                           "perturb EVERY later position t+1 .. T-1 for EVERY t, and compare all "
                                           "outputs up to t")
            if bool(verdict) != leaks:
                return report(task, False, f"not quite: {name} is causal but your test says it leaks; change "
                                           "only inputs AFTER t and compare outputs at positions <= t (y_t may "
                                           "depend on x_t itself)")
        return report(task, True, f"correct: right verdict on all {len(functions)} functions"
                      + (", including the trained convolutions" if extra else ""))
