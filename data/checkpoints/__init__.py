"""The shipped checkpoints, in a wheel as the package data ``tl_minimal.checkpoint_files``.

Nothing to import here: this file only makes the folder a package for ``pip install .``, so that
``tl_minimal.course.shipped`` finds these files with ``importlib.resources`` in an installed
copy. In a clone the folder is read directly (see README.md beside this file).
"""
