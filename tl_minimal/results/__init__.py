"""Committed results, read back: the course's reader of the result files that notebooks 06b and 07 show.

``data/results/`` (shipped in the wheel) holds one JSON file per suite and ``course_reports.json``, the
tables and plot points the lessons show, written from those files by ``python -m tl_research.results
render``; ``data/results/README.md`` is the index. The course keeps two concepts beside the reader:
:mod:`.intervals` (the paired t interval, notebook 06b) and :mod:`.paper_numbers` (the paper's numbers).

    from tl_minimal import results
    print(results.report("tables")["lm_matched_width"]["markdown"])
"""

from .files import load, report, results_dir
from .paper_numbers import PAPER

__all__ = ["PAPER", "load", "report", "results_dir"]
