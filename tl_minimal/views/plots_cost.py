"""The memory a model keeps while it generates, against the context length (notebook 00, section 1).

Like ``plots.py``, the function draws one picture with labelled axes and a title and returns the
matplotlib ``Figure``; the counts (``2 t d`` for the KV cache, ``H (S + S^2)`` for the state) are
computed in the notebook, where the student reads them.

    numbers_kept   the KV cache per layer against the recurrent state, on log-log axes
"""

from __future__ import annotations

import matplotlib.pyplot as plt


def numbers_kept(lengths: list, kv_cache: list, state: int):
    """kv_cache[i]: numbers a Transformer layer keeps at context lengths[i]; state: the recurrent layer's, fixed."""
    if len(lengths) != len(kv_cache) or not lengths:
        raise ValueError(f"one KV-cache size per length: {len(lengths)} lengths, {len(kv_cache)} sizes")
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.loglog(lengths, kv_cache, marker="o", ms=3, label="Transformer: KV cache 2 t d")
    ax.loglog(lengths, [state] * len(lengths), marker="o", ms=3, label="triple-latent: state H(S + S²)")
    ax.set_xlabel("context length t (tokens)")
    ax.set_ylabel("numbers kept per layer")
    ax.set_title("the KV cache grows with the context; the recurrent state does not", fontsize=10)
    ax.legend(fontsize=9)
    return fig
