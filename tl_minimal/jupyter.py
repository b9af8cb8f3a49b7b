"""Whether this code runs inside a Jupyter kernel: a neutral module that views/ and training/ both ask."""

from __future__ import annotations


def in_jupyter_kernel() -> bool:
    """True when this code runs inside a Jupyter kernel (a notebook, nbclient, nbval)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config
