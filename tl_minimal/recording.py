"""Recording: how a module hands back its internals (gates, states, retrieval weights) for plots,
without a second implementation of the math. A module inherits :class:`Recorder` and either calls
``save_record(**internals)`` in its forward pass or defines ``recorded(*inputs) -> dict``, which
:func:`recording` calls after each forward call (``LanguageModel.internals`` collects the records).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn


class Recorder:
    """Mixin for a module that can save its internals (detached tensors) for plots: ``record_options``
    is None (save nothing) or the current recording's, e.g. {"snapshot_at": (0, 9), "attention": True};
    ``record`` is what the module saved on its last forward call while recording."""

    record_options: dict | None = None
    record: dict | None = None
    recorded = None  # or a method (inputs of forward) -> the record; see the module docstring

    def save_record(self, **internals) -> None:
        """Store ``internals`` (tensors detached) as this module's record, if recording."""
        if self.record_options is not None:
            self.record = {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in internals.items()}


@contextmanager
def recording(module: nn.Module, **options):
    """Inside the block every Recorder in ``module`` (itself included) saves its last record; records
    are cleared on entry and stay readable after the block until the next recording."""
    recorders = [m for m in module.modules() if isinstance(m, Recorder)]
    hooks = []
    for m in recorders:
        m.record_options, m.record = dict(options), None
        if m.recorded is not None:  # it records from its inputs, after each forward call
            hooks.append(m.register_forward_hook(_save_recorded, with_kwargs=True))
    try:
        yield recorders
    finally:
        for hook in hooks:
            hook.remove()
        for m in recorders:
            m.record_options = None


def _save_recorded(module, args, kwargs, output) -> None:
    """Forward hook of a Recorder with ``recorded``: save what it returns for this call's inputs."""
    module.save_record(**module.recorded(*args, **kwargs))
