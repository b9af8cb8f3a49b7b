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
- :mod:`.lm_reports`, :mod:`.recall_reports`, :mod:`.break_reads`: what notebooks 07, 07b and 07c
  print beside the tables (where each file came from, table 6 in bits, the recall files per seed,
  the read at initialization);
- :mod:`.merge` and :mod:`.index`: the commands that organise the folder
  (``python -m tl_minimal.experiments.results merge`` / ``index``).

    from tl_minimal.experiments import results
    print(results.TABLES["lm_matched_width"].markdown())
"""

from .break_reads import alias_init_markdown, alias_read_markdown, overwrite_init_markdown
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
from .lm_reports import (
    beside_paper_panels,
    bpb_by_steps,
    data_sources,
    lead_lines,
    provenance_markdown,
    tables_unigram,
    tokenized_gaps_markdown,
    tokenized_in_bits,
    tokenized_markdown,
)
from .mqar import RecallRow, mqar_markdown, mqar_rows
from .paper_numbers import PAPER, PAPER_PARAMS, PAPER_SOURCE
from .recall_reports import (
    experiments_markdown,
    init_diagnosis_markdown,
    per_seed_recall,
    recall_experiment_panels,
    recall_file_reports,
    seeds_at,
    seeds_cell,
)
from .stats import ORDER, fmt, markdown, same_params, spread, variant_rank
from .tables import TABLES, Row, Table, markdown_table, summarize, sweep_markdown

__all__ = [
    "BREAK_RATES",
    "ENV",
    "ORDER",
    "PAPER",
    "PAPER_PARAMS",
    "PAPER_SOURCE",
    "TABLES",
    "BreakRow",
    "InductionRow",
    "RecallRow",
    "Row",
    "Table",
    "alias_init_markdown",
    "alias_read_markdown",
    "beside_paper_panels",
    "bpb_by_steps",
    "break_chance",
    "break_columns",
    "break_curves",
    "break_markdown",
    "break_rows",
    "data_sources",
    "expand",
    "experiments_markdown",
    "fmt",
    "induction_markdown",
    "induction_rows",
    "init_diagnosis_markdown",
    "lead_lines",
    "load",
    "load_runs",
    "markdown",
    "markdown_table",
    "mqar_markdown",
    "mqar_rows",
    "override_label",
    "overwrite_init_markdown",
    "per_seed_recall",
    "provenance",
    "provenance_markdown",
    "read_off_markdown",
    "recall_experiment_panels",
    "recall_file_reports",
    "results_dir",
    "same_params",
    "seeds_at",
    "seeds_cell",
    "spread",
    "summarize",
    "sweep_markdown",
    "tables_unigram",
    "tokenized_gaps_markdown",
    "tokenized_in_bits",
    "tokenized_markdown",
    "variant_rank",
]
