"""Experiments: the paper's protocols, runnable from a terminal or a notebook.

    python -m tl_minimal.experiments lm --variants transformer triple_hybrid --seeds 0 1 2
    python -m tl_minimal.experiments recall --steps 500 --seeds 1 2 3 --out runs/recall.json

From Python (a notebook)::

    from tl_minimal.experiments import run_experiment, protocol
    results = run_experiment("recall", ["transformer", "gated_hybrid"], seeds=[0], steps=50)

Modules: ``protocols`` (hyperparameters as dataclasses), ``tasks`` (data + train + evaluate
per task), ``runner`` (loops over variants and seeds, table, JSON), ``cli`` (the command
line and its subcommand registry: ``register(name, help, add_arguments, run)``).
"""

from .protocols import (
    PROTOCOLS,
    LMProtocol,
    MQARProtocol,
    Protocol,
    RecallProtocol,
    TokenizedProtocol,
    protocol,
)
from .runner import format_table, run_experiment, write_json

__all__ = [
    "PROTOCOLS",
    "LMProtocol",
    "MQARProtocol",
    "Protocol",
    "RecallProtocol",
    "TokenizedProtocol",
    "format_table",
    "protocol",
    "run_experiment",
    "write_json",
]
