"""Committed results, read back: the course's reader of the result files that notebooks 06b and 07 show.

``data/results/`` (shipped in the wheel) holds one JSON file per suite, written by the research package's
command; ``data/results/README.md`` is the index. The optional notebooks' tables: ``tl_research.results``.

    from tl_minimal import results
    print(results.TABLES["lm_matched_width"].markdown())
"""

from .files import load, load_runs, provenance, results_dir
from .lm_reports import (
    beside_paper_panels,
    bpb_by_steps,
    data_sources,
    provenance_markdown,
    tables_unigram,
    tokenized_gaps_markdown,
    tokenized_in_bits,
    tokenized_markdown,
)
from .paper_numbers import PAPER
from .recall_tables import mqar_markdown, mqar_rows, recall_file_reports
from .stats import ORDER
from .tables import TABLES, summarize, sweep_markdown

__all__ = [
    "ORDER",
    "PAPER",
    "TABLES",
    "beside_paper_panels",
    "bpb_by_steps",
    "data_sources",
    "load",
    "load_runs",
    "mqar_markdown",
    "mqar_rows",
    "provenance",
    "provenance_markdown",
    "recall_file_reports",
    "results_dir",
    "summarize",
    "sweep_markdown",
    "tables_unigram",
    "tokenized_gaps_markdown",
    "tokenized_in_bits",
    "tokenized_markdown",
]
