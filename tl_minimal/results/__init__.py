"""Committed results, read back: the course's reader of the result files that notebooks 06b and 07 show.

``data/results/`` (shipped in the wheel) holds one JSON file per suite and ``course_reports.json``, the
tables and plot points the lessons show, written from those files by ``python -m tl_research.results
render``; ``data/results/README.md`` is the index. Beside the reader, :mod:`.paper_numbers` holds the
paper's numbers (notebooks 03c and 04); the intervals are the lab's (``tl_research.results.intervals``).

    from tl_minimal import results
    print(results.report("tables")["lm_matched_width"]["markdown"])
"""

from .files import load, report, results_dir
from .paper_numbers import PAPER

__all__ = ["PAPER", "load", "report", "results_dir"]
