"""Pictures, printed tables and widgets. Views read tensors and a model's recorded internals; they never
train a model and never re-implement the math. All draw with the colour-blind-safe ``palette``; in a
notebook every figure carries a text alternative (``alt_text``). Importing this package changes nothing
outside it; a notebook asks for the course's style once, with ``views.use_course_style()``.
"""

from . import alt_text, palette


def use_course_style() -> None:
    """Make the course's palette matplotlib's colour cycle and, inside a Jupyter kernel, give every
    figure's PNG its alt text (:func:`tl_minimal.views.alt_text.install`). Call it once per notebook."""
    palette.apply()
    alt_text.install()


__all__ = ["use_course_style"]
