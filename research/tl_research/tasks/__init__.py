"""The paper's tasks (``paper``: lm, recall, mqar, tokenized) and what every task shares (``common``).

The research studies add tasks of their own (:mod:`tl_research.studies`); the runner
(:data:`tl_research.runner.TASKS`) holds them all.
"""

from .common import ConfigError, Task, run_record
from .paper import PAPER_TASKS

__all__ = ["PAPER_TASKS", "ConfigError", "Task", "run_record"]
