"""The research code's pictures: ``plots_seeds`` (every seed beside the paper's runs, notebook 07b) and
``plots_breaks`` (where recall breaks, induction on text, notebook 07c). They draw with the course's
palette (:mod:`tl_minimal.views.palette`); the pictures of the required lessons are :mod:`tl_minimal.views`."""
