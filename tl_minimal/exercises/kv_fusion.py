"""Checkers for exercise 06, the key-value memory, its read gate and late fusion (gated_hybrid_repaired).

    rho_{t,j} = cos(q_t, k_j) (beta = 1 here); keep the top K; alpha_t = softmax(kept); m_t = sum_j alpha_{t,j} v_{j+1}

Tasks (notebooks/exercises/06_kv_gated_fusion.ipynb)
    1  cosine_scores(q [B, T, D_kv], keys [B, N, D_kv]) -> [B, T, N]
    2  topk_read(scores [B, T, N], values [B, N, D_kv], k) -> m [B, T, D_kv]
    3  a prediction: which entries may position t read?
    4  top_entry(weights, index [B, T, K]) -> [B, T], the memory position read most (then on a trained model)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .answers import prediction_check
from .harness import Case, Mistake, case, check_function, rand

T, N = 5, 9  # queries and memory entries of the visible cases


def _ref_scores(q, keys):
    return F.normalize(q, dim=-1) @ F.normalize(keys, dim=-1).transpose(1, 2)  # [B, T, N]


def check_cosine_scores(student):
    """Task 1: cosine similarity of every query with every key."""
    def make(t, n):
        return lambda g, B, D_KV, **_: (3 * rand(g, B, t, D_KV), 3 * rand(g, B, n, D_KV))
    mistakes = [
        Mistake("that is the dot product: divide by both lengths |q| |k| (normalize first) to get the cosine",
                lambda q, k: q @ k.transpose(1, 2)),
        Mistake("only the queries are normalized: normalize the keys too",
                lambda q, k: F.normalize(q, dim=-1) @ k.transpose(1, 2)),
        Mistake("only the keys are normalized: normalize the queries too",
                lambda q, k: q @ F.normalize(k, dim=-1).transpose(1, 2)),
        Mistake("no softmax yet: this task returns the raw cosine scores",
                lambda q, k: _ref_scores(q, k).softmax(-1)),
        Mistake("the axes are swapped: the result is [B, T, N], one row of scores per query",
                lambda q, k: _ref_scores(q, k).transpose(1, 2)),
    ]
    return check_function("06.1 cosine_scores", student, _ref_scores,
                          [case("T = 5, N = 9", 0, make(T, N)), case("T = 1, N = 1", 1, make(1, 1)),
                           case("T = 4, N = 7", 2, make(4, 7))], mistakes,
                          todo="Task 1: the cosine of equation (1) of the Recap, for every query and key",
                          what="3 cases incl. a single query and a single key")


def _ref_read(scores, values, k):
    kept, idx = scores.topk(min(k, scores.shape[-1]), dim=-1)  # [B, T, K]
    alpha = kept.softmax(-1)  # [B, T, K]
    picked = values.unsqueeze(1).expand(-1, scores.shape[1], -1, -1)  # [B, T, N, D_kv]
    picked = picked.gather(2, idx.unsqueeze(-1).expand(-1, -1, -1, values.shape[-1]))  # [B, T, K, D_kv]
    return (alpha.unsqueeze(-1) * picked).sum(2)  # [B, T, D_kv]


def _weighted(w, idx, values):
    dense = torch.zeros(*w.shape[:2], values.shape[1], dtype=w.dtype).scatter(-1, idx, w)  # [B, T, N]
    return dense @ values


def check_topk_read(student):
    """Task 2: keep the top k scores, softmax over them, mix the values."""
    def make(k, n=N):
        return lambda g, B, D_KV, **_: (2 * rand(g, B, T, n), rand(g, B, n, D_KV), k)
    mistakes = [
        Mistake("no top-k: keep only the k best scores and give every other entry weight 0",
                lambda s, v, k: s.softmax(-1) @ v),
        Mistake("that is what the draft computes: its bug is still there (compare what it does with "
                "equation (1) on a small case with k < N)", lambda s, v, k: _weighted(*s.softmax(-1).topk(k, -1), v)),
        Mistake("that reads only the single best entry; mix the top k with softmax weights",
                lambda s, v, k: _ref_read(s, v, 1)),
        Mistake("the weights ignore the scores: softmax over the kept scores, not a plain average",
                lambda s, v, k: _weighted(torch.full((*s.shape[:2], k), 1.0 / k, dtype=s.dtype), s.topk(k, -1)[1], v)),
    ]
    return check_function("06.2 topk_read", student, _ref_read,
                          [case("k = 3 of 9 entries", 10, make(3)), case("k = 1", 11, make(1)),
                           case("k = 4 of 4 entries", 12, make(4, 4))], mistakes,
                          todo="Task 2: equation (1) of the Recap after the scores (keep the top k, softmax, "
                               "weighted sum)",
                          what="3 cases incl. k = 1 and k = N")


check_visible_prediction = prediction_check(
    "06.3", "replace None by the letter of your answer", "abc",
    doc="Task 3: which memory entries position t may read (a letter)")


def top_entry(weights, index):
    best = weights.argmax(-1, keepdim=True)  # [B, T, 1]
    top = index.gather(-1, best)[..., 0]  # [B, T]
    return torch.where(weights.sum(-1) > 0, top, torch.full_like(top, -1))


def check_top_entry(student, weights: torch.Tensor | None = None, index: torch.Tensor | None = None):
    """Task 4: the memory position with the largest weight (-1 where nothing could be read)."""
    def make(g, B, **_):
        w = torch.softmax(3 * rand(g, B, T, 4), -1)  # [B, T, K]
        idx = torch.stack([torch.randperm(N, generator=g)[:4] for _ in range(B * T)]).view(B, T, 4)
        w[:, 0], idx[:, 0] = 0.0, -1  # the first position has nothing to read
        return w, idx
    cases = [case("random weights, nothing to read at t = 0", 20, make), case("other weights", 21, make)]
    if weights is not None:
        trained = (weights.detach().double(), index.detach())
        cases.append(Case("the trained model's retrieval", lambda: (trained[0].clone(), trained[1].clone())))
    rank = "that is the rank among the kept entries (0 .. K-1), not the memory position: look it up in index"
    mistakes = [
        Mistake(rank, lambda w, i: torch.where(w.sum(-1) > 0, w.argmax(-1), torch.full_like(w.argmax(-1), -1))),
        Mistake(rank, lambda w, i: w.argmax(-1)),
    ]
    return check_function("06.4 top_entry", student, top_entry, cases, mistakes,
                          todo="Task 4 defines the position read most; Task 2 says where the kept entries come from",
                          what=f"{len(cases)} cases" + (" incl. the trained model" if weights is not None else ""))
