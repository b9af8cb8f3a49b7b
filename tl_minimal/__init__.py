"""tl-minimal: the triple-latent model family, one concept per file.

Read the model in this order (each file one step, each with a notebook):

    running_state.py  1  s_t = lam_t s_{t-1} + (1 - lam_t) a_t
    pair_memory.py    2  P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t)
    readout.py        3  r_t = (P_t^T q^l_t) * q^r_t, and the triple-latent layer
    slots.py          4  K slots instead of the S x S memory
    conv.py           5  the hybrid's causal local convolution
    kv_fusion.py      6  key-value memory, read gate, late logit fusion
    gla.py, h3.py, deltanet.py   relatives: simple GLA / Mamba-2, H3, DeltaNet (the family)
    key_source.py        an ablation: where the pair memory's key comes from; no memory
    transformer.py       the attention baseline
    layers.py, models.py, registry.py   blocks, the language models, build_model

Beside them, three small modules the concept files call, so that they read as the math:
``checks.py`` (input checks: clear errors for bad input), ``kernels.py`` (custom autograd
functions that compute the plain formula faster; the triple-latent layer calls it once) and
``recording.py`` (how a module hands back its internals for plots).

Everything else is grouped by role, in three layers (docs/library.md; a lower layer never
imports a higher one): the course library, this package's top level with ``data/`` (WikiText-2
bytes, MiniMind tokens, recall tasks) and ``training/`` (the paper's lm and recall protocols,
device, smoke switch, the training loop, metrics); the course helpers ``views/`` (plots and
widgets), ``exercises/`` (checkers) and ``course/`` (the shipped checkpoints); at the top,
``instructor/`` (the nbgrader course command) and ``results/`` (the committed results read back).
The research code (the studies, the experiments command, speed, notebook cost and time) is a second
package beside this one, ``tl_research`` in the repository's ``research/`` folder: it imports this
package, this package never imports it, and the course wheel does not hold it.

The stable contract is this package's top level; module paths may change.
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
