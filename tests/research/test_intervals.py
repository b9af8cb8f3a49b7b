"""Confidence intervals (results/intervals.py) against closed forms and published values."""

import json
import math

import pytest

from tl_research.results.__main__ import values_by_seed
from tl_research.results.intervals import (
    betainc,
    binomial_cdf,
    clopper_pearson,
    paired_difference,
    t_cdf,
    t_quantile,
)


def test_betainc_closed_forms():
    # I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b
    for x in (0.0, 0.1, 0.5, 0.93, 1.0):
        assert betainc(1, 1, x) == pytest.approx(x, abs=1e-14)
        assert betainc(3.5, 1, x) == pytest.approx(x**3.5, abs=1e-13)
        assert betainc(1, 2.5, x) == pytest.approx(1 - (1 - x) ** 2.5, abs=1e-13)
    with pytest.raises(ValueError):
        betainc(0, 1, 0.5)


def test_t_distribution_closed_forms():
    # dof 1 is the Cauchy distribution, dof 2 has F(t) = 1/2 + t / (2 sqrt(2 + t^2))
    for t in (-7.0, -1.0, 0.0, 0.3, 2.0, 30.0):
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)
        assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)
    # two-sided 95% critical values of the usual t tables
    for dof, value in ((1, 12.7062047), (2, 4.3026527), (4, 2.7764451), (10, 2.2281389), (1000, 1.9623391)):
        assert t_quantile(0.975, dof) == pytest.approx(value, abs=1e-6)
    assert t_quantile(0.025, 4) == pytest.approx(-2.7764451, abs=1e-6)


def test_binomial_cdf_matches_the_sum():
    n, p = 12, 0.3
    for k in range(-1, n + 1):
        exact = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
        assert binomial_cdf(k, n, p) == pytest.approx(exact, abs=1e-12)


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 35)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 35), abs=1e-9)  # 0.1000
    assert round(hi, 3) == 0.100
    lo, hi = clopper_pearson(1, 3)
    assert lo == pytest.approx(1 - 0.975 ** (1 / 3), abs=1e-9)  # 0.0084
    assert (1 - hi) ** 3 + 3 * hi * (1 - hi) ** 2 == pytest.approx(0.025, abs=1e-9)  # P(X <= 1 | hi)
    assert hi == pytest.approx(0.9057, abs=1e-4)
    assert clopper_pearson(5, 10) == pytest.approx((0.187086, 0.812914), abs=1e-6)
    assert clopper_pearson(3, 3)[1] == 1.0
    with pytest.raises(ValueError):
        clopper_pearson(4, 3)


def test_paired_difference_by_hand():
    # d = 1, 2, 3: mean 2, sd 1, t = 2 sqrt(3), half width t_{0.975,2} / sqrt(3);
    # with 2 dof the two-sided p is 1 - t / sqrt(2 + t^2)
    r = paired_difference({0: 11.0, 1: 12.0, 2: 13.0, 9: 5.0}, {0: 10.0, 1: 10.0, 2: 10.0})
    assert r.seeds == (0, 1, 2) and r.differences == (1.0, 2.0, 3.0)
    assert (r.mean, r.sd, r.dof) == (2.0, 1.0, 2)
    half = 4.302652729911275 / math.sqrt(3)
    assert (r.low, r.high) == pytest.approx((2 - half, 2 + half), abs=1e-8)
    t = 2 * math.sqrt(3)
    assert r.t == pytest.approx(t) and r.p_value == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-10)
    with pytest.raises(ValueError):
        paired_difference({0: 1.0}, {0: 2.0})


def test_values_by_seed_reads_a_result_file(tmp_path):
    runs = [{"variant": "a", "seed": 0, "value": 1.5}, {"variant": "a", "seed": 1, "value": None},
            {"variant": "b", "seed": 0, "value": 2.0}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"runs": runs}), encoding="utf-8")
    assert values_by_seed(path, "a") == {0: 1.5}
    with pytest.raises(ValueError):
        values_by_seed(path, "c")
