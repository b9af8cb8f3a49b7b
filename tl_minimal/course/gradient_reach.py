"""How much of the recall loss's gradient reaches the pairs, before any training (notebook 06a).

Glossary (symbol -> code name -> shape)
    x, y        x, y          [B, T]        a batch of the task: tokens, labels (IGNORE where none)
    e_t         (embedding)   [B, T, d]     the token's embedding, the input of the first block
    L           loss          scalar        cross-entropy summed over the labelled positions
    g_t         grads         [B, T]        || dL / de_t ||, the gradient that reaches token t
    k           distance      int           how many tokens back from the labelled position
    reach(k)    reach         [K]           mean over the batch of g_{a-k} / g_a: 1 at k = 0
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..data import recall as data_recall
from ..registry import build_model

# the calibrated recall task (data/results/RECALL_STUDY.md): MQAR in Zoology's form with 4 pairs,
# 4 questions, 128 tokens, answers hidden, each label on the asked key; models at the fan-in scale
TASK = {"n_pairs": 4, "n_queries": 4, "seq_len": 128, "hide_answers": True, "answer_at_key": True}
MODEL = {"init": "fan_in", "dropout": 0.0}


def task_batch(batch_size: int = 16, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """x, y [B, T] of the calibrated recall task (``TASK``), from ``seed``."""
    return data_recall.mqar_batch(batch_size, generator=torch.Generator().manual_seed(seed), **TASK)


def token_gradients(model, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """g [B, T]: the norm of dL/de_t, L = the cross-entropy summed over the labelled positions of y."""
    captured = {}

    def keep(module, inputs, e):  # the embedding's output e [B, T, d], a leaf of what follows
        e.retain_grad()
        captured["e"] = e

    handle = model.embed.register_forward_hook(keep)
    try:
        logits = model(x)                                           # [B, T, V]
    finally:
        handle.remove()
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=data_recall.IGNORE, reduction="sum")
    model.zero_grad(set_to_none=True)
    loss.backward()
    return captured["e"].grad.norm(dim=-1).detach()                 # [B, T]


def reach_by_distance(model, x: torch.Tensor, y: torch.Tensor, max_distance: int | None = None) -> torch.Tensor:
    """reach [K + 1]: the gradient k tokens before the LAST label over the gradient at it, mean over the batch.

    Only the last labelled position's loss is kept, so every distance is measured from one place."""
    last = int((y[0] != data_recall.IGNORE).nonzero().max())        # every row labels the same positions
    y_last = torch.full_like(y, data_recall.IGNORE)
    y_last[:, last] = y[:, last]
    g = token_gradients(model, x, y_last)                           # [B, T]
    K = last if max_distance is None else min(max_distance, last)
    back = g[:, last - torch.arange(K + 1)]                         # [B, K + 1]: distance 0 .. K
    return (back / back[:, :1]).mean(dim=0)                         # [K + 1]


def pair_positions(n_pairs: int) -> torch.Tensor:
    """Where the pairs' keys and values sit: after BOS, each pair is key, value, SEP."""
    return torch.tensor([1 + 3 * i + j for i in range(n_pairs) for j in (0, 1)])


def pair_reach(model, x: torch.Tensor, y: torch.Tensor, n_pairs: int = TASK["n_pairs"]) -> float:
    """The mean gradient at the pairs' tokens over the mean gradient at the questions' labelled tokens."""
    g = token_gradients(model, x, y)                                # [B, T]
    labelled = y != data_recall.IGNORE                              # [B, T]
    return float(g[:, pair_positions(n_pairs)].mean() / g[labelled].mean())


def measure(variant: str, seeds=(0, 1, 2), batch_size: int = 16, max_distance: int = 127, **settings) -> dict:
    """pair reach and reach by distance of ``variant`` at initialization (float32), averaged over ``seeds``;
    ``settings`` go to build_model after ``MODEL`` (e.g. gam_bias=4.0)."""
    pairs, curves = [], []
    for seed in seeds:
        torch.manual_seed(seed)
        model = build_model(variant, data_recall.PAPER_LAYOUT.vocab_size, **{**MODEL, **settings})
        x, y = task_batch(batch_size, seed)
        pairs.append(pair_reach(model, x, y))
        curves.append(reach_by_distance(model, x, y, max_distance))
    return {"variant": variant, "settings": settings, "seeds": list(seeds), "dtype": "float32",
            "pair_reach": sum(pairs) / len(pairs), "pair_reach_per_seed": pairs,
            "reach": torch.stack(curves).mean(dim=0).tolist()}
