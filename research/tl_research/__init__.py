"""The research package: the paper's protocols and tasks, the research studies, the speed bench, the results.

A second package beside the course (``tl_minimal``), installed in a clone by ``python run.py setup`` and
never in the course wheel (research/README.md); it imports the course, the course never imports it.

    python -m tl_research lm --variants transformer triple_hybrid --seeds 0 1 2
    python -m tl_research recall --steps 500 --seeds 1 2 3 --out runs/recall.json
    python -m tl_research study train --variants gated_hybrid_repaired --eval-at 200 500
    python -m tl_research speed --quick

From Python (a notebook)::

    from tl_research import run_experiment, protocol
    results = run_experiment("recall", ["transformer", "gated_hybrid_repaired"], seeds=[0], steps=50)

Read in this order:

``protocols``   every hyperparameter of each task, as dataclasses (the paper's numbers, and what is assumed);
                the recall studies' length curriculum and pair pools (``recall_schedule``)
``tasks/``      the paper's tasks (``paper``: lm, recall, mqar, tokenized; its corpus: ``tokenized_data``) and
                what every task shares (``common``)
``runner``      every (variant, seed) of a task: the table, the results file (``suite``: filled run by
                run, resumable), where it came from (``provenance``), torchrun and DDP (``distributed``)
``cli``         the one command line (its parsers: ``arguments``); ``__main__`` runs it
``studies/``    where recall breaks and why: ``breaks``, ``induction``, ``diagnose_recall``, ``recall_study``
``bench/``      the speed benchmark: ``speed``, ``timing``
``results/``    every results table, the folder's merge and index commands, and ``render``: what notebooks
                06b and 07 show, written for the course's reader (``tl_minimal.results.report``)
``views/``      the pictures of the optional notebooks 07b and 07c
``variants``, ``ladder``   the research variants, registered in the course's registry on import
``ship_checkpoint``, ``convert``   the shipped checkpoints' maker, the 1.x model-file converter
``notebook_time``, ``notebook_cost``, ``prose_numbers``   the repository's checks of the notebooks
``recall_study`` (this folder) only says where its commands moved (``study ...``)
"""

from . import variants  # noqa: F401  (first: registers the research variants in the course's registry)
from .protocols import (
    PROTOCOLS,
    LMProtocol,
    MQARProtocol,
    Protocol,
    RecallProtocol,
    TokenizedProtocol,
    protocol,
)
from .runner import Experiment, format_table, run, run_experiment, write_json

__all__ = [
    "PROTOCOLS",
    "Experiment",
    "LMProtocol",
    "MQARProtocol",
    "Protocol",
    "RecallProtocol",
    "TokenizedProtocol",
    "format_table",
    "protocol",
    "run",
    "run_experiment",
    "write_json",
]
