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

from tl_minimal import results as _course
from tl_minimal.results import *  # noqa: F403  (the course reader's names, by its __all__)

from .break_reads import alias_init_markdown, alias_read_markdown, overwrite_init_markdown
from .break_tables import BREAK_RATES, BreakRow, break_chance, break_columns, break_curves, break_markdown, break_rows
from .induction_tables import InductionRow, induction_markdown, induction_rows, read_off_markdown

__all__ = [
    *_course.__all__,
    "BREAK_RATES",
    "BreakRow",
    "InductionRow",
    "alias_init_markdown",
    "alias_read_markdown",
    "break_chance",
    "break_columns",
    "break_curves",
    "break_markdown",
    "break_rows",
    "induction_markdown",
    "induction_rows",
    "overwrite_init_markdown",
    "read_off_markdown",
]
