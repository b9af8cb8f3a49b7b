"""The research tables, beside the course's reader of the committed results (:mod:`tl_minimal.results`).

The course package reads what the required lessons show (the language-model tables, MQAR, the
family's and the calibrated recall tables); the tables of the optional notebook 07c and the commands
that organise the results folder live here. This package hands on the course reader's names too, so
that research code and the optional notebooks read every table from one place:

- :mod:`.break_tables` (where recall breaks), :mod:`.induction_tables` (copying on text), and
  :mod:`.break_reads` (the read at initialization, notebook 07c);
- :mod:`.merge` and :mod:`.index`: the commands that organise the folder
  (``python -m tl_research.results merge`` / ``index``).

    from tl_research import results
    print(results.break_markdown(results.break_rows("overwrite")))
"""

from tl_minimal.results import (
    ENV,
    ORDER,
    PAPER,
    PAPER_PARAMS,
    PAPER_SOURCE,
    TABLES,
    RecallRow,
    Row,
    Table,
    beside_paper_panels,
    bpb_by_steps,
    data_sources,
    expand,
    experiments_markdown,
    fmt,
    init_diagnosis_markdown,
    lead_lines,
    load,
    load_runs,
    markdown,
    markdown_table,
    mqar_markdown,
    mqar_rows,
    override_label,
    per_seed_recall,
    provenance,
    provenance_markdown,
    recall_experiment_panels,
    recall_file_reports,
    results_dir,
    same_params,
    seeds_at,
    seeds_cell,
    spread,
    summarize,
    sweep_markdown,
    tables_unigram,
    tokenized_gaps_markdown,
    tokenized_in_bits,
    tokenized_markdown,
    variant_rank,
)

from .break_reads import alias_init_markdown, alias_read_markdown, overwrite_init_markdown
from .break_tables import BREAK_RATES, BreakRow, break_chance, break_columns, break_curves, break_markdown, break_rows
from .induction_tables import InductionRow, induction_markdown, induction_rows, read_off_markdown

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
