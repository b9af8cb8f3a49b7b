"""Committed results: find them, load them, summarize over seeds, set them beside the paper.

The experiments command (``python -m tl_minimal.experiments``) writes one JSON file per suite (one
task under one set of settings; layout in :mod:`tl_minimal.experiments.suite`). ``data/results/``
holds one such file per table or row group, named by its settings (``lm.json``, ``lm_S12.json``,
``alias_200steps.json``); ``data/results/README.md`` is the index. The modules here, in reading order:

- :mod:`.files`: :func:`results_dir` (the one place that knows where the files are), :func:`load`,
  :func:`load_runs`, :func:`provenance`;
- :mod:`.stats`: what every table shares (row order, numbers over seeds, the parameter check, markdown);
- :mod:`.paper_numbers`: the paper's numbers (:data:`PAPER`);
- :mod:`.tables` (the language-model tables and :data:`TABLES`), :mod:`.mqar` (table 5),
  :mod:`.break_tables` (where recall breaks), :mod:`.induction_tables` (copying on text);
- :mod:`.merge` and :mod:`.index`: the commands that organise the folder
  (``python -m tl_minimal.experiments.results merge`` / ``index``).

    from tl_minimal.experiments import results
    print(results.TABLES["lm_matched_width"].markdown())
"""

from .break_tables import (
    BREAK_RATES,
    BreakRow,
    break_chance,
    break_columns,
    break_curves,
    break_markdown,
    break_rows,
)
from .files import ENV, expand, load, load_runs, override_label, provenance, results_dir
from .induction_tables import InductionRow, induction_markdown, induction_rows, read_off_markdown
from .mqar import RecallRow, mqar_markdown, mqar_rows
from .paper_numbers import PAPER, PAPER_PARAMS, PAPER_SOURCE
from .stats import ORDER, fmt, markdown, same_params, spread, variant_rank
from .tables import TABLES, Row, Table, markdown_table, summarize, sweep_markdown

__all__ = [
    "BREAK_RATES", "ENV", "ORDER", "PAPER", "PAPER_PARAMS", "PAPER_SOURCE", "TABLES",
    "BreakRow", "InductionRow", "RecallRow", "Row", "Table",
    "break_chance", "break_columns", "break_curves", "break_markdown", "break_rows", "expand", "fmt",
    "induction_markdown", "induction_rows", "load", "load_runs", "markdown", "markdown_table", "mqar_markdown",
    "mqar_rows", "override_label", "provenance", "read_off_markdown", "results_dir", "same_params", "spread",
    "summarize", "sweep_markdown", "variant_rank",
]
