"""The results tables, computed from the committed results files; the course only reads them back.

The tables the required lessons show (the language-model tables, MQAR, the family's and the calibrated
recall tables, the state-size table) are computed here and written into ``data/results/course_reports.json``
(:mod:`.render`, ``python -m tl_research.results render``), which the course reader
(:mod:`tl_minimal.results`) loads by name. Here too:

- :mod:`.break_tables` (where recall breaks), :mod:`.induction_tables` (copying on text), and
  :mod:`.break_reads` (the read at initialization, notebook 07c);
- :mod:`.diagnosis_reports`: what notebook 07b prints beside the tables (the recall experiments per seed,
  the read at initialization, the lead over the Transformer);
- :mod:`.merge` and :mod:`.index`: the commands that organise the folder
  (``python -m tl_research.results merge`` / ``index``; ``paired`` / ``rate`` / ``calibrated`` print
  intervals and the calibrated tables).

    from tl_research import results
    print(results.break_markdown(results.break_rows("overwrite")))
"""

from tl_minimal.results import PAPER, load, report, results_dir

from .break_reads import alias_init_markdown, alias_read_markdown, overwrite_init_markdown
from .break_tables import BREAK_RATES, BreakRow, break_chance, break_columns, break_curves, break_markdown, break_rows
from .diagnosis_reports import (
    experiments_markdown,
    init_diagnosis_markdown,
    lead_lines,
    per_seed_recall,
    recall_experiment_panels,
    seeds_at,
    seeds_cell,
)
from .files import ENV, load_runs, provenance
from .induction_tables import InductionRow, induction_markdown, induction_rows, read_off_markdown
from .lm_reports import (
    LOCAL_PATH,
    beside_paper_panels,
    bpb_by_steps,
    data_sources,
    provenance_markdown,
    tables_unigram,
    tokenized_gaps_markdown,
    tokenized_in_bits,
    tokenized_markdown,
)
from .recall_tables import mqar_markdown, mqar_rows, recall_file_reports
from .stats import ORDER
from .tables import TABLES, markdown_table, summarize, sweep_markdown

__all__ = [
    "BREAK_RATES",
    "ENV",
    "LOCAL_PATH",
    "ORDER",
    "PAPER",
    "TABLES",
    "BreakRow",
    "InductionRow",
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
    "experiments_markdown",
    "induction_markdown",
    "induction_rows",
    "init_diagnosis_markdown",
    "lead_lines",
    "load",
    "load_runs",
    "markdown_table",
    "mqar_markdown",
    "mqar_rows",
    "overwrite_init_markdown",
    "per_seed_recall",
    "provenance",
    "provenance_markdown",
    "read_off_markdown",
    "recall_experiment_panels",
    "recall_file_reports",
    "report",
    "results_dir",
    "seeds_at",
    "seeds_cell",
    "summarize",
    "sweep_markdown",
    "tables_unigram",
    "tokenized_gaps_markdown",
    "tokenized_in_bits",
    "tokenized_markdown",
]
