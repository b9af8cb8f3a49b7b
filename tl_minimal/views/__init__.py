"""Pictures and widgets. Views read tensors and a model's recorded internals; they never train
a model and never re-implement the math. Each module is named after what it draws:
``diagrams`` (the architecture), ``plots`` (tokens, gates, memories, curves), ``plots_capacity``
(how many pairs a pair memory recalls, notebook 02), ``plots_slots``
(the slot layer, notebook 04), ``plots_conv`` (the convolution, notebook 05),
``plots_retrieval`` (predictions and where a recall model reads, notebooks 05-06), ``plots_forgetting``
(what a trained ``triple_latent`` keeps of a pair across the recall task's filler, notebook 06a), ``plots_kv``
(the key-value memory, notebooks 06 and 06a), ``plots_seeds``
(every seed beside the paper's runs, notebook 07b), ``plots_reproduction`` (our tables beside the
paper's, notebooks 07 and 07b), ``plots_breaks`` (where recall breaks, induction on text, notebook 07c),
``plots_training`` (a loss curve beside the unigram
line), ``plots_heads`` (one number per layer and head, runs side by side), ``tables_gates`` and
``tables_training`` (the printed numbers under notebooks 01, 02, 03c and 04's figures), ``tables_pairs`` (notebook
02's pair toy), ``plots_cost``, ``tables_cost`` and ``tables_tokens`` (notebook 00's memory and cost counts, a
tokenized sentence), ``plots_scores`` (a
trained layer's scores beside softmax attention, notebook 03c) and
``widgets`` (the interactive controls). Every one of them draws with the colour-blind-safe
palette of ``palette``; and in a notebook every figure shown can carry a text alternative written
from its title and axes (``alt_text``).

Importing this package changes nothing outside it. A notebook asks for the course's style once,
in its import cell::

    from tl_minimal import views
    views.use_course_style()
"""

from . import alt_text, palette


def use_course_style() -> None:
    """Make the course's palette matplotlib's colour cycle and, inside a Jupyter kernel, give every
    figure's PNG its alt text (:func:`tl_minimal.views.alt_text.install`). Call it once per notebook."""
    palette.apply()
    alt_text.install()


__all__ = ["use_course_style"]
