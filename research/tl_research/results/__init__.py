"""The research tables, beside the course's reader of the committed results (:mod:`tl_minimal.results`).

The course package reads what the required lessons show (the language-model tables, MQAR, the
family's and the calibrated recall tables); the tables of the optional notebook 07c and the commands
that organise the results folder live here. This package hands on the course reader's names too, so
that research code and the optional notebooks read every table from one place:

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

from tl_minimal import results as _course
from tl_minimal.results import *  # noqa: F403  (the course reader's names, by its __all__)
from tl_minimal.results.files import ENV
from tl_minimal.results.lm_reports import LOCAL_PATH
from tl_minimal.results.tables import markdown_table

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
from .induction_tables import InductionRow, induction_markdown, induction_rows, read_off_markdown

__all__ = [
    *_course.__all__,
    "BREAK_RATES",
    "ENV",
    "LOCAL_PATH",
    "BreakRow",
    "InductionRow",
    "alias_init_markdown",
    "alias_read_markdown",
    "break_chance",
    "break_columns",
    "break_curves",
    "break_markdown",
    "break_rows",
    "experiments_markdown",
    "init_diagnosis_markdown",
    "lead_lines",
    "markdown_table",
    "per_seed_recall",
    "recall_experiment_panels",
    "seeds_at",
    "seeds_cell",
    "induction_markdown",
    "induction_rows",
    "overwrite_init_markdown",
    "read_off_markdown",
]
