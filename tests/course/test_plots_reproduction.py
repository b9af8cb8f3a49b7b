"""The reader of the rendered reports and the figures of notebooks 06b and 07 drawn from them: a report
is found by name, a missing or old-shaped file says which command writes it, and each figure draws."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from tl_minimal import results
from tl_minimal.views import plots_reproduction


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_the_figures_of_notebook_07_draw_from_the_reports():
    panels = results.report("beside_paper")
    fig = plots_reproduction.beside_paper(panels, 4.6)
    assert len(fig.axes) == len(panels) == 3
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [r["label"] for r in panels[0]["rows"]]
    assert plots_reproduction.bpb_against_steps(results.report("bpb_by_steps"), 4.6, "t").axes[0].get_xscale() == "log"
    mqar = results.report("mqar")
    ax = plots_reproduction.mqar_accuracy(mqar["points"], mqar["order"]).axes[0]
    legend = sorted(t.get_text() for t in ax.get_legend().get_texts())
    assert legend == sorted([*mqar["order"], "chance (constant guess)"])


def test_the_family_figure_has_three_panels_a_row_per_variant():
    rows = results.report("family_80")["rows"]
    fig = plots_reproduction.family_figure(rows, title="t")
    assert len(fig.axes) == 3
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert [lab.split(" (")[0] for lab in labels] == [r["variant"] for r in rows]


def test_a_report_missing_or_of_an_old_shape_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_MINIMAL_RESULTS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"tl_research\.results render"):
        results.report("mqar")
    (tmp_path / results.files.REPORTS).write_text(json.dumps({"mqar": {}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"old shape.*tl_research\.results render"):
        results.report("mqar")
    (tmp_path / results.files.REPORTS).write_text(json.dumps({"reports": {"mqar": {}}}), encoding="utf-8")
    with pytest.raises(KeyError, match=r"no report 'tables'.*tl_research\.results render"):
        results.report("tables")
    assert results.report("mqar") == {}
