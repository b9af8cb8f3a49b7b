"""Where this code runs: inside a Jupyter kernel or not. A neutral module, so that the pictures
(views/) and the training loop's progress line (training/progress.py) can both ask without
one importing the other."""

from __future__ import annotations


def in_jupyter_kernel() -> bool:
    """True when this code runs inside a Jupyter kernel (a notebook, nbclient, nbval)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config
