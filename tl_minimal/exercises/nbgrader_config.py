"""nbgrader's settings for the classroom edition (imported by a course directory's nbgrader_config.py).

``python -m tl_minimal.exercises.course release`` writes into the course directory a
``nbgrader_config.py`` of two lines that calls :func:`configure`, so every ``nbgrader`` command
run there (ours, or an instructor's own ``nbgrader formgrader``) uses the same settings:

- the student release is blanked by :class:`BlankSolutions`, nbgrader's ``ClearSolutions`` with
  our markers (``### BLANK:`` lines, ``<!-- solutions only -->`` notes; blanks.blank_cell), so the
  release reads exactly like the self-study blank notebook;
- each cell of a submission may run ``TL_CELL_TIMEOUT`` seconds (default 120) before nbgrader
  interrupts it and grades it as an error, so a loop that never ends costs that cell, not the
  grading of the other students.

This module needs nbgrader (the ``course`` extra); nothing else in the package imports it.
"""

from __future__ import annotations

import os

from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearSolutions

from .blanks import blank_cell

DEFAULT_TIMEOUT = 120  # seconds per cell: the tiny models of tasks 4 train for a few seconds in full mode


class BlankSolutions(ClearSolutions):
    """ClearSolutions that also applies the blank notebooks' markers (see blanks.py)."""

    def _replace_solution_region(self, cell, language):
        # hidden tests stay: nbgrader records the test cells next (SaveCells), then removes them
        source, found = blank_cell(cell.source, markdown=cell.cell_type == "markdown", keep_hidden=True)
        cell.source = source
        return found


def configure(c) -> None:
    """Put the classroom edition's settings into nbgrader's config object ``c``."""
    steps = GenerateAssignment.class_traits()["preprocessors"].default()
    c.GenerateAssignment.preprocessors = [BlankSolutions if step is ClearSolutions else step for step in steps]
    c.Execute.timeout = int(os.environ.get("TL_CELL_TIMEOUT", DEFAULT_TIMEOUT))
    c.Execute.interrupt_on_timeout = True
