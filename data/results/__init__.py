"""The committed results, shipped in a wheel as the package data ``tl_minimal.results_files``.

Nothing to import here: this file only makes the folder a package for ``pip install .``, so that
``tl_minimal.results.results_dir()`` finds these files with ``importlib.resources`` in an
installed copy. In a clone the folder is read directly (see data/results/README.md).
"""
