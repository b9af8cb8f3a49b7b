"""nbgrader's settings for the classroom edition (imported by a course directory's nbgrader_config.py).

``release`` puts two lines calling :func:`configure` on top of the course's ``nbgrader_config.py``,
so every ``nbgrader`` command run there (ours, or a TA's) uses the same settings: the release is
blanked with our markers (:class:`BlankSolutions`), so it reads exactly like the self-study blank;
a cell may run ``TL_CELL_TIMEOUT`` seconds before nbgrader interrupts it, and a kernel that ignores
the interrupt for ``TL_INTERRUPT_GRACE`` seconds more stops that student's grading
(:class:`GuardedExecute`: "not graded", the others get fresh kernels); the feedback shows the
hidden tests' verdicts, not their source (:class:`HideHiddenTests`). Needs nbgrader.
"""

from __future__ import annotations

import os
from queue import Empty

from nbconvert.preprocessors import Preprocessor
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.preprocessors import ClearSolutions, Execute
from traitlets import Bool

from .blanks import BEGIN_HIDDEN, END_HIDDEN, blank_cell

DEFAULT_TIMEOUT = 120  # seconds per cell: the tiny models of tasks 4 train for a few seconds in full mode
DEFAULT_GRACE = 10  # seconds a kernel has to stop after the interrupt
IGNORED_INTERRUPT = "kernel ignored the interrupt"  # the course command looks for these words in the log


class BlankSolutions(ClearSolutions):
    """ClearSolutions that also applies the blank notebooks' markers (see blanks.py)."""

    def _replace_solution_region(self, cell, language):
        # hidden tests stay: nbgrader records the test cells next (SaveCells), then removes them
        source, found = blank_cell(cell.source, markdown=cell.cell_type == "markdown", keep_hidden=True)
        cell.source = source
        return found


class KernelIgnoredInterrupt(RuntimeError):
    """A cell ran past its timeout and went on running after the interrupt."""


class GuardedExecute(Execute):
    """nbgrader's Execute, which gives an interrupted kernel a grace period, then gives up on it.

    nbclient interrupts a cell at its timeout and moves on; a kernel that swallowed the
    interrupt is still running that cell, so every later cell would wait behind it. Here the
    kernel must answer within the grace period, else grading this notebook stops with
    :data:`IGNORED_INTERRUPT` (nbclient then shuts the kernel down; the next student gets a new one).
    """

    async def _async_handle_timeout(self, timeout, cell=None):
        self.log.error("Timeout waiting for execute reply (%is): interrupting the kernel", timeout)
        await self.km.interrupt_kernel()
        grace = float(os.environ.get("TL_INTERRUPT_GRACE", DEFAULT_GRACE))
        try:
            await self.kc.shell_channel.get_msg(timeout=grace)  # the interrupted cell's reply
        except Empty:
            self.log.error("%s: the cell went on running %.0f s after the interrupt", IGNORED_INTERRUPT, grace)
            raise KernelIgnoredInterrupt(IGNORED_INTERRUPT) from None
        return {"content": {**self.error_on_timeout, "status": "error"}}


class HideHiddenTests(Preprocessor):
    """In the feedback: a test cell's hidden tests become one comment line, and an error they raised
    shows its message without the traceback (whose context lines would quote the tests' source)."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled; nbgrader's own are on

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and BEGIN_HIDDEN in cell.source:
            lines, kept, hidden = cell.source.split("\n"), [], False
            for line in lines:
                if line.strip() == BEGIN_HIDDEN:
                    hidden = True
                    kept.append("# (hidden tests: their verdicts are in the output below)")
                elif line.strip() == END_HIDDEN:
                    hidden = False
                elif not hidden:
                    kept.append(line)
            cell.source = "\n".join(kept)
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


def configure(c) -> None:
    """Put the classroom edition's settings into nbgrader's config object ``c``."""
    steps = GenerateAssignment.class_traits()["preprocessors"].default()
    c.GenerateAssignment.preprocessors = [BlankSolutions if step is ClearSolutions else step for step in steps]
    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    c.Autograde.autograde_preprocessors = [GuardedExecute if step is Execute else step for step in steps]
    c.GenerateFeedback.preprocessors = [*GenerateFeedback.class_traits()["preprocessors"].default(), HideHiddenTests]
    c.Execute.timeout = int(os.environ.get("TL_CELL_TIMEOUT", DEFAULT_TIMEOUT))
    c.Execute.interrupt_on_timeout = True
