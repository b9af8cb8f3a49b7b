"""tl-minimal: the triple-latent model family, one concept per file.

Read the model in this order (each file one step, each with a notebook):

    running_state.py  1  s_t = lam_t s_{t-1} + (1 - lam_t) a_t
    pair_memory.py    2  P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t)
    readout.py        3  r_t = (P_t^T q^l_t) * q^r_t, and the triple-latent layer
    slots.py          4  K slots instead of the S x S memory
    conv.py           5  the hybrid's causal local convolution
    kv_fusion.py      6  key-value memory, read gate, late logit fusion
    gla.py, h3.py, deltanet.py, retnet.py   the relatives (the family); key_source.py, ladder.py ablations
    transformer.py, models.py, registry.py   the baseline, the models and their config, build_model

Helpers the concept files call: ``checks.py`` (input checks), ``kernels.py`` (the same formulas,
faster) and ``recording.py`` (internals for plots). The rest is grouped by role in layers
(docs/library.md). The stable contract is this package's top level.
"""

from .pair_memory import pair_memory
from .readout import pair_readout
from .registry import VARIANTS, build_model, default_config
from .running_state import running_state
from .training.device import get_device

__version__ = "2.0.0"  # the only place the version is written (pyproject reads it)

__all__ = [
    "VARIANTS",
    "__version__",
    "build_model",
    "default_config",
    "get_device",
    "pair_memory",
    "pair_readout",
    "running_state",
]
