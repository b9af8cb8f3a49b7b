"""The lessons' helpers beside the pictures (``tl_minimal.views``): shipped checkpoints, toys, measures and
committed results the notebooks read. They import the course library; the library never imports them."""
