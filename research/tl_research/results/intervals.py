"""Confidence intervals behind the course's comparisons: paired differences over seeds, rates of wins.

Runs with the same seed share their batches, so model A is compared with model B per seed: a Student
t interval for the mean of d_i = a_i - b_i (:func:`paired_difference`). k wins in n seeds get the exact
(Clopper-Pearson) binomial interval (:func:`clopper_pearson`). Both distributions are regularized
incomplete beta functions I_x(a, b) (:func:`betainc`, by its continued fraction; no scipy), inverted by bisection.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


# ----------------------------------------------------------------------------- special functions
def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (modified Lentz's method); converges for x < (a+1)/(a+b+2)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d

    def lentz(num: float, c: float, d: float) -> tuple[float, float]:
        """One step of the fraction with the term ``num``: the new (c, d); h is multiplied by d * c."""
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        return (c if abs(c) > tiny else tiny), d

    for m in range(1, 10_000):
        # even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
        c, d = lentz(m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), c, d)
        h *= d * c
        # odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        c, d = lentz(-(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)), c, d)
        step = d * c
        h *= step
        if abs(step - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    """I_x(a, b) = B(x; a, b) / B(a, b), the regularized incomplete beta function, for a, b > 0."""
    if a <= 0 or b <= 0:
        raise ValueError(f"betainc needs a, b > 0, got a={a}, b={b}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc needs 0 <= x <= 1, got {x}")
    if x in (0.0, 1.0):
        return x
    # x^a (1-x)^b / (a B(a, b)), in logs
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - log_beta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b  # I_x(a, b) = 1 - I_{1-x}(b, a)


def _bisect(f, lo: float, hi: float, iterations: int = 200) -> float:
    """The root of an increasing function f on [lo, hi] (f(lo) <= 0 <= f(hi))."""
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def t_cdf(t: float, dof: float) -> float:
    """P(T <= t), Student's t with ``dof`` degrees of freedom.

    P(T > |t|) = I_{dof/(dof+t^2)}(dof/2, 1/2) / 2
    """
    if dof <= 0:
        raise ValueError(f"t distribution needs dof > 0, got {dof}")
    tail = 0.5 * betainc(dof / 2.0, 0.5, dof / (dof + t * t))  # P(T > |t|)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(q: float, dof: float) -> float:
    """The t with P(T <= t) = q (e.g. t_quantile(0.975, 2) = 4.3027)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile needs 0 < q < 1, got {q}")
    if q < 0.5:
        return -t_quantile(1.0 - q, dof)
    hi = 1.0
    while t_cdf(hi, dof) < q:
        hi *= 2.0
    return _bisect(lambda t: t_cdf(t, dof) - q, 0.0, hi)


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p) = I_{1-p}(n - k, k + 1) (k < n)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return betainc(n - k, k + 1, 1.0 - p) if 0.0 < p < 1.0 else float(p == 0.0)


# ----------------------------------------------------------------------------- intervals
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact interval for a rate from k successes in n trials: [p_lo, p_hi] with
    P(X >= k | p_lo) = alpha / 2 and P(X <= k | p_hi) = alpha / 2 (p_lo = 0 when k = 0, p_hi = 1 when k = n).

    e.g. 0 wins in 35 -> [0, 0.1000]; 1 in 3 -> [0.0084, 0.9057].
    """
    if isinstance(k, bool) or isinstance(n, bool) or not (isinstance(k, int) and isinstance(n, int)):
        raise TypeError(f"k and n are counts (int), got {k!r}, {n!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    alpha = 1.0 - confidence
    lo = 0.0 if k == 0 else _bisect(lambda p: (1.0 - binomial_cdf(k - 1, n, p)) - alpha / 2, 0.0, 1.0)
    hi = 1.0 if k == n else _bisect(lambda p: alpha / 2 - binomial_cdf(k, n, p), 0.0, 1.0)
    return lo, hi


@dataclass(frozen=True)
class PairedDifference:
    """Mean of d_i = a_i - b_i over shared seeds, its t interval and two-sided p-value."""

    seeds: tuple
    differences: tuple
    mean: float
    sd: float
    t: float
    dof: int
    low: float
    high: float
    p_value: float
    confidence: float


def paired_difference(a: dict, b: dict, confidence: float = 0.95) -> PairedDifference:
    """``a``, ``b``: {seed: value}. Differences a - b over the seeds both have (at least 2).

    d_bar +- t_{1-alpha/2, n-1} * s_d / sqrt(n)
    """
    seeds = tuple(sorted(set(a) & set(b)))
    if len(seeds) < 2:
        raise ValueError(f"a paired interval needs >= 2 shared seeds, got {list(seeds)}")
    d = tuple(a[s] - b[s] for s in seeds)
    n = len(d)
    mean, sd = statistics.fmean(d), statistics.stdev(d)
    half_width = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * sd / math.sqrt(n)
    t = mean / (sd / math.sqrt(n)) if sd > 0 else math.copysign(math.inf, mean) if mean else 0.0
    p_value = 2.0 * (1.0 - t_cdf(abs(t), n - 1)) if math.isfinite(t) else 0.0
    low, high = mean - half_width, mean + half_width
    return PairedDifference(seeds, d, mean, sd, t, n - 1, low, high, p_value, confidence)
