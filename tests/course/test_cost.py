"""The cost counts of notebooks 01b and 03b against PyTorch's flop counter on the library's forward (issue 50).

``tl_minimal.course.cost`` counts the multiply-adds of the fast forms term by term; the notebooks'
prose gives the closed forms. ``torch.utils.flop_counter.FlopCounterMode`` counts the matmuls of the
library's own ``running_state(mode="fast")`` and ``pair_readout(mode="fast")`` (2 flops a multiply-add).
Both counts must agree with it at two sizes, the term-by-term count exactly, the prose's closed form
within 5%; the term-by-term count also at a length that is not a multiple of C. A change to the fast forms that
changes their arithmetic fails here until the count and the notebooks follow.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from tl_minimal import running_state
from tl_minimal.course import cost
from tl_minimal.readout import pair_readout

# (T, S, C): the notebooks' size and a second one with S != C, where the prose's closed form holds (T a
# multiple of C^2); and a length that is not a multiple of C, where only the term-by-term count does (the
# closed form leaves out the padding: 300 tokens are computed as 304, their 19 chunk ends as 32)
SIZES = [(2048, 16, 16), (1024, 8, 16)]
PADDED = [(300, 8, 16)]


def counted_madds(fn, *args, heads: int = 1, **kwargs) -> float:
    """Multiply-adds of fn's matmuls per head, by the flop counter."""
    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter.get_total_flops() / 2 / heads


def running_state_closed_form(T, S, C):
    """01b's prose: (T C S + T C^2 + T S)(1 + 1/C + ...) = (...) C / (C - 1); the T S is elementwise."""
    return (T * C * S + T * C**2) * C / (C - 1)


def readout_closed_form(T, S, C):
    """03b's prose: T C^2 + 2 T C S + 3 T S^2 + T C (+ T S^2 / C, elementwise), plus the carry's carry (~1/C)."""
    carry = (T * S**2 + T * C) * C / (C - 1)
    return T * C**2 + 2 * T * C * S + 2 * T * S**2 + carry


@pytest.mark.parametrize("T, S, C", SIZES + PADDED)
def test_running_state_count_matches_the_flop_counter(T, S, C):
    g = torch.Generator().manual_seed(0)
    a, lam = torch.randn(2, T, 3, S, generator=g), torch.rand(2, T, 3, generator=g)
    counted = counted_madds(running_state, a, lam, mode="fast", chunk_size=C, heads=2 * 3)
    assert cost.matmul_total(cost.running_state_cost, T, S, C) == counted
    if (T, S, C) in SIZES:
        assert running_state_closed_form(T, S, C) == pytest.approx(counted, rel=0.05)


@pytest.mark.parametrize("T, S, C", SIZES + PADDED)
def test_readout_count_matches_the_flop_counter(T, S, C):
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(2, T, 3, S, generator=g) for _ in range(4)]
    gam = torch.rand(2, T, 3, generator=g)
    counted = counted_madds(pair_readout, xs[0], xs[1], gam, xs[2], xs[3], mode="fast", chunk_size=C, heads=2 * 3)
    assert cost.matmul_total(cost.readout_cost, T, S, C) == counted
    if (T, S, C) in SIZES:
        assert readout_closed_form(T, S, C) == pytest.approx(counted, rel=0.05)


def test_the_old_counts_were_low():
    """What issue 50 found: the carry costs ~T S^2 (not T S^2 / C), and 01b's count was ~6% low."""
    T, S, C = 2048, 16, 16
    old_readout = 2 * T * C * S + T * C**2 + 2 * T * S**2 + T * S**2 // C
    old_state = T * C * S + T * S + T * S // C + T * C**2
    assert cost.readout_cost(T, S, C)["carry"] > T * S**2 > old_readout * 0.1
    assert sum(cost.readout_cost(T, S, C).values()) / old_readout > 1.2
    assert sum(cost.running_state_cost(T, S, C).values()) / old_state > 1.05
    with pytest.raises(ValueError, match="at least 1"):
        cost.readout_cost(0, S, C)
