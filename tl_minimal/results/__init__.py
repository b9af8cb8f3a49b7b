"""Committed results, read back: the course's reader of the result files the required lessons show.

The research package's command (``python -m tl_research``, in a clone) writes one JSON file per suite
(one task under one set of settings; layout in ``tl_research.suite``). ``data/results/`` holds one
such file per table or row group, named by its settings (``lm.json``, ``lm_S12.json``,
``alias_200steps.json``); ``data/results/README.md`` is the index. The wheel ships the folder, so
this reader needs no clone. The modules here, in reading order:

- :mod:`.files`: :func:`results_dir` (the one place that knows where the files are), :func:`load`,
  :func:`load_runs`, :func:`provenance`;
- :mod:`.stats`: what every table shares (row order, numbers over seeds, the parameter check, markdown);
- :mod:`.paper_numbers`: the paper's numbers (:data:`PAPER`);
- :mod:`.tables` (the language-model tables and :data:`TABLES`), :mod:`.mqar` (table 5);
- :mod:`.intervals` (paired differences, binomial intervals), :mod:`.family_table` and
  :mod:`.calibrated_table` (notebook 06b's tables), :mod:`.state_size_table` (recall against state size);
- :mod:`.lm_reports`, :mod:`.recall_reports`: what notebooks 07 and 07b print beside the tables (where
  each file came from, table 6 in bits, the recall files per seed).

The tables of the optional notebook 07c and the commands that organise the folder are research code
(``tl_research.results``).

    from tl_minimal import results
    print(results.TABLES["lm_matched_width"].markdown())
"""

from .files import ENV, expand, load, load_runs, override_label, provenance, results_dir
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
    "ENV",
    "ORDER",
    "PAPER",
    "PAPER_PARAMS",
    "PAPER_SOURCE",
    "TABLES",
    "RecallRow",
    "Row",
    "Table",
    "beside_paper_panels",
    "bpb_by_steps",
    "data_sources",
    "expand",
    "experiments_markdown",
    "fmt",
    "init_diagnosis_markdown",
    "lead_lines",
    "load",
    "load_runs",
    "markdown",
    "markdown_table",
    "mqar_markdown",
    "mqar_rows",
    "override_label",
    "per_seed_recall",
    "provenance",
    "provenance_markdown",
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
