"""nbgrader's settings for the classroom edition (imported by a course's nbgrader_config.py): three
preprocessors replace or join nbgrader's own, and the cell timeout (``TL_CELL_TIMEOUT``)."""

from __future__ import annotations

import os
import re
from queue import Empty

from nbconvert.preprocessors import Preprocessor
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.preprocessors import ClearSolutions, Execute
from traitlets import Bool

from .blanks import BEGIN_HIDDEN, END_HIDDEN, blank_cell

DEFAULT_TIMEOUT = 120  # seconds per cell: the tiny models of tasks 4 train for a few seconds in full mode
DEFAULT_GRACE = 10  # seconds a kernel has to stop after the interrupt
IGNORED_INTERRUPT = "kernel ignored the interrupt"  # the course command looks for these words in the log
# a hidden-test region, from its BEGIN line through its END line (or the end of the cell)
HIDDEN_REGION = re.compile(rf"^[ \t]*{BEGIN_HIDDEN}[ \t]*$(?:.*\n)*?(?:[ \t]*{END_HIDDEN}[ \t]*$|.*\Z)", re.M)


class BlankSolutions(ClearSolutions):
    """ClearSolutions that also applies the blank notebooks' markers (see blanks.py)."""

    def _replace_solution_region(self, cell, language):
        # hidden tests stay: nbgrader records the test cells next (SaveCells), then removes them
        source, found = blank_cell(cell.source, keep_hidden=True)
        cell.source = source
        return found


class GuardedExecute(Execute):
    """nbgrader's Execute, which gives an interrupted kernel a grace period, then gives up on it: a
    kernel that swallowed the interrupt would hold every later cell (and student) behind that cell."""

    async def _async_handle_timeout(self, timeout, cell=None):
        self.log.error("Timeout waiting for execute reply (%is): interrupting the kernel", timeout)
        await self.km.interrupt_kernel()
        grace = float(os.environ.get("TL_INTERRUPT_GRACE", DEFAULT_GRACE))
        try:
            await self.kc.shell_channel.get_msg(timeout=grace)  # the interrupted cell's reply
        except Empty:
            self.log.error("%s: the cell went on running %.0f s after the interrupt", IGNORED_INTERRUPT, grace)
            raise RuntimeError(IGNORED_INTERRUPT) from None
        return {"content": {**self.error_on_timeout, "status": "error"}}


class HideHiddenTests(Preprocessor):
    """In the feedback: a test cell's hidden tests become one comment line, and an error they raised
    shows its message without the traceback (whose context lines would quote the tests' source)."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled; nbgrader's own are on

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and BEGIN_HIDDEN in cell.source:
            cell.source = HIDDEN_REGION.sub("# (hidden tests: their verdicts are in the output below)", cell.source)
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
