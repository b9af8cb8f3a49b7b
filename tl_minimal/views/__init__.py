"""Pictures and widgets. Views read tensors and a model's recorded internals; they never train a
model and never re-implement the math. ``diagrams`` draws the architecture; ``plots`` tokens, gates,
memories and curves (and the helpers the other ``plots_*`` share); ``plots_training`` training runs
and per-head numbers (notebooks 00-04); ``plots_capacity`` how many pairs a memory recalls (02, 07);
``plots_slots`` (04); ``plots_conv`` (05); ``plots_retrieval`` predictions, reads, the key-value memory
and forgetting (05-06a); ``plots_reproduction`` the study's results (06b, 07, 07b); ``tables`` the
printed numbers under the figures (00-04); ``widgets`` the interactive controls. All draw with the
colour-blind-safe ``palette``; in a notebook every figure carries a text alternative (``alt_text``).

Importing this package changes nothing outside it. A notebook asks for the course's style once::

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
