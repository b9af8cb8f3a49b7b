"""The notebook-cost benchmark (tl_research.notebook_cost) measures a real run and records it.

A two-cell notebook that sleeps and burns CPU runs in a fresh kernel; the measured wall time must
cover the sleep, the CPU time the busy loop, and the record must merge into an existing file.
No assertion on how fast anything is beyond those lower bounds.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from tl_research import notebook_cost


def _write_notebook(path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.mark.slow
def test_a_run_is_measured_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_SMOKE", "1")  # the benchmark must run the default mode anyway
    path = tmp_path / "00_tiny.ipynb"
    _write_notebook(path, [
        "import os, time\nassert 'TL_SMOKE' not in os.environ, 'smoke mode leaked into the kernel'\ntime.sleep(0.5)",
        "t0 = time.process_time()\nwhile time.process_time() - t0 < 0.3:\n    pass",
    ])
    cost = notebook_cost.run_notebook(path, timeout=120)
    assert cost["wall_s"] >= 0.5 and cost["cpu_s"] >= 0.3 and cost["mode"] == "default"
    assert cost["peak_mb"] is None or cost["peak_mb"] > 1
    assert nbformat.read(path, as_version=4).cells[-1].source.startswith("t0"), "the notebook file must not change"

    out = tmp_path / "cost.json"
    out.write_text(json.dumps({"notebooks": {"zz.ipynb": {"wall_s": 1.0}}}), encoding="utf-8")
    data = notebook_cost.record({"00_tiny.ipynb": cost}, out)
    assert list(data["notebooks"]) == ["00_tiny.ipynb", "zz.ipynb"]  # merged, sorted
    assert json.loads(out.read_text(encoding="utf-8"))["machine"]["cpu_count"] >= 1


def test_targets_and_clear_errors(tmp_path):
    for name in ("01_a.ipynb", "notes.ipynb"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    (tmp_path / "exercises" / "solutions").mkdir(parents=True)
    (tmp_path / "exercises" / "solutions" / "01_a_solutions.ipynb").write_text("{}", encoding="utf-8")
    assert [p.name for p in notebook_cost.notebooks_in(tmp_path)] == ["01_a.ipynb", "01_a_solutions.ipynb"]
    (tmp_path / "x.py").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"expected a \.ipynb"):
        notebook_cost.notebooks_in(tmp_path / "x.py")
    with pytest.raises(FileNotFoundError, match="no such notebook"):
        notebook_cost.notebooks_in(tmp_path / "missing")
