"""Committed results, read back: the course's reader of the result files that notebooks 06b and 07 show.

``data/results/`` holds one JSON file per suite (one task under one set of settings, written by the
research package's command); ``data/results/README.md`` is the index. The wheel ships the folder, so
this reader needs no clone. The modules, in reading order: :mod:`.files` (where the files are, loading
them), :mod:`.stats` (what every table shares), :mod:`.paper_numbers`, :mod:`.tables` (the
language-model tables, :data:`TABLES`), :mod:`.recall_tables` (tables 4 and 5), :mod:`.intervals`,
:mod:`.family_table`, :mod:`.calibrated_table`, :mod:`.state_size_table`, and :mod:`.lm_reports`
(what notebook 07 prints beside the tables). The optional notebooks' tables are research code
(``tl_research.results``).

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
