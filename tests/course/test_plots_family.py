"""The family's view (notebook 06b, section 4): one row per variant, two yardsticks, clear errors."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from tl_minimal.experiments.results.family_table import FAMILY_ORDER, YARDSTICKS, family_rows
from tl_minimal.views.plots_family import family_figure, family_markdown


def test_rows_follow_the_order_and_pair_with_both_yardsticks():
    rows = family_rows()
    assert [r.variant for r in rows] == list(FAMILY_ORDER)
    for r in rows:
        assert set(r.vs) == set(YARDSTICKS)
        for y in YARDSTICKS:  # against itself a yardstick has no difference; every other pair has one
            assert (r.vs[y] is None) == (y == r.variant)
        assert len(r.values) == len(r.seeds) >= 5


def test_the_figure_has_three_panels_and_the_table_a_line_per_row():
    rows = family_rows()
    fig = family_figure(rows, title="t")
    assert len(fig.axes) == 3
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert [lab.split(" (")[0] for lab in labels] == [r.variant for r in rows]
    plt.close(fig)
    table = family_markdown(rows).splitlines()
    assert len(table) == 2 + len(rows) and "minus triple_latent" in table[0]


def test_no_rows_is_a_clear_error():
    with pytest.raises(ValueError, match="one row per variant"):
        family_figure([])
    with pytest.raises(ValueError, match="one row per variant"):
        family_markdown([])
