"""Pictures and widgets. Views read tensors and a model's recorded internals; they never train
a model and never re-implement the math. Each module is named after what it draws:
``diagrams`` (the architecture), ``plots`` (tokens, gates, memories, curves), ``plots_slots``
(the slot layer, notebook 04), ``plots_conv`` (the convolution, notebook 05),
``plots_retrieval`` (predictions and where a recall model reads, notebooks 05-06), ``plots_seeds``
(every seed beside the paper's runs, notebook 07) and
``widgets`` (the interactive controls). Every one of them draws with the colour-blind-safe
palette of ``palette``, set here once as matplotlib's colour cycle; and in a notebook every
figure shown carries a text alternative written from its title and axes (``alt_text``)."""

from .alt_text import install as _install_alt_text
from .palette import apply as _apply_palette

_apply_palette()
_install_alt_text()
