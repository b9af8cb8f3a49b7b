"""Notebook 02's toy: what the pair memory can store that the running state cannot, and how many pairs.

Glossary (symbol in notebook 02 -> code name -> shape)
    c_i         contexts   [n, S]   the context before pair i's write (the pair memory's s_{t-1})
    b_i         writes     [n, S]   pair i's write
    s           state      [S]      the running state after the n writes (notebook 01)
    P           P          [S, S]   the pair memory after the n pairs (notebook 02)
    gamma       gam        float    the pair memory's keep gate, the same at every token
    lambda      lam        float    the running state's keep gate, the same at every token

Recall of pair i is right when, of the n stored writes, b_i has the largest cosine with the read P^T c_i.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..pair_memory import pair_memory
from ..running_state import running_state


def store_pairs(contexts: torch.Tensor, writes: torch.Tensor, gam: float, lam: float):
    """Run both memories over n tokens: token i has context c_i and writes b_i. -> (s [S], P [S, S])."""
    n, S = writes.shape
    as_layout = lambda x: x.view(1, n, 1, S)                       # noqa: E731  [n, S] -> [B=1, T=n, H=1, S]
    gates = lambda g: torch.full((1, n, 1), g, dtype=writes.dtype)  # noqa: E731  [B, T, H]
    # s_t = lambda s_{t-1} + (1 - lambda) b_t: the running state sees the writes
    s = running_state(as_layout(writes), gates(lam))[0, -1, 0]      # [S]
    # P_t = gamma P_{t-1} + (1 - gamma) c_t b_t^T: the pair memory sees each write beside its context
    P = pair_memory(as_layout(contexts), as_layout(writes), gates(gam))[0, -1, 0]  # [S, S]
    return s, P


def read_both(contexts: torch.Tensor, writes: torch.Tensor, gam: float, lam: float) -> dict:
    """Ask both memories "what followed c_i?" for every stored context: {name: reads [n, S]}."""
    s, P = store_pairs(contexts, writes, gam, lam)
    return {"running state": s.expand_as(writes),                  # [n, S]: one vector, whatever the question
            "pair memory": contexts @ P}                           # [n, S]: row i is (P^T c_i)^T


def cosine_table(reads: torch.Tensor, writes: torch.Tensor) -> torch.Tensor:
    """[..., n, n]: cosine similarity of read i with stored write j (1 on the diagonal is a perfect recall)."""
    return F.normalize(reads, dim=-1, eps=1e-30) @ F.normalize(writes, dim=-1, eps=1e-30).transpose(-1, -2)


def spread_contexts(n: int, S: int, generator: torch.Generator | None = None, trials: int | None = None,
                    dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """n unit contexts in R^S as far apart as S allows (orthonormal for n <= S, a tight frame beyond): columns
    of a random orthogonal matrix of size max(n, S), cut to S entries, length 1. -> [n, S] or [trials, n, S]."""
    m = max(n, S)
    batch = () if trials is None else (trials,)
    Q, _ = torch.linalg.qr(torch.randn(*batch, m, m, generator=generator, dtype=dtype))  # [..., m, m] orthogonal
    c = Q[..., :S, :n].transpose(-1, -2)                            # [..., n, S]
    return c / c.norm(dim=-1, keepdim=True)


def recall_curve(S: int, n_max: int, trials: int = 200, gam: float = 0.999, seed: int = 0) -> torch.Tensor:
    """Recall of the pair memory after storing n = 1..n_max pairs of size S -> [n_max] in [0, 1]: ``trials``
    draws of ``spread_contexts`` and Gaussian writes, kept with ``gam`` near 1 (interference, not forgetting);
    pair i is right when b_i is the stored write most similar to the read P^T c_i."""
    gen = torch.Generator().manual_seed(seed)
    recall = torch.zeros(n_max, dtype=torch.float64)
    for n in range(1, n_max + 1):
        contexts = spread_contexts(n, S, gen, trials=trials)        # [trials, n, S]
        writes = torch.randn(trials, n, S, generator=gen, dtype=torch.float64)  # [trials, n, S]
        gates = torch.full((trials, n, 1), gam, dtype=torch.float64)  # [B, T, H]
        P = pair_memory(contexts.unsqueeze(2), writes.unsqueeze(2), gates)[:, -1, 0]  # [trials, S, S]
        reads = contexts @ P                                        # [trials, n, S]: row i is (P^T c_i)^T
        similar = cosine_table(reads, writes)                       # [trials, n(read), n(write)]
        recall[n - 1] = (similar.argmax(dim=-1) == torch.arange(n)).double().mean()
    return recall
