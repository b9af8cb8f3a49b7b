"""Why does the gated hybrid's recall work for one seed and collapse for the next? Measurements.

The paper's gated hybrid answers the recall question (``... QUERY key ANSWER`` -> value) by
reading its key-value memory at the ANSWER position: the query is built from the previous
token (the asked key), and the right memory entry is j = key_pos, the place where that key was
written, whose value is the token after it. These functions look at that one read, on a batch
of examples, without a second implementation of the model: they call the model's own
``internals`` (and, for the full ranking, the same model with ``top_k = "all"``).

Glossary (per example, at the last supervised position t = T - 1)
    key_pos        int      memory entry holding the answer: x[key_pos] = asked key
    answer_rank    int      how many entries score above it (0 = best), over ALL visible entries
    in_kept        bool     the answer entry survived the top-k (answer_rank < k)
    answer_weight  float    its softmax weight after the top-k (0 when it was cut)
    filler_share   float    fraction of the kept slots whose key token is a filler token
    entropy        float    entropy of the kept weights in nats (log k = uniform, 0 = one entry)
    read_gate      float    g_t at the answer position
    value_rank     int      rank of the right value among the 8 value ids in the memory's own
                            logit contribution W_vocab z_t (0 = the memory alone points at it)
    correct        bool     the model's argmax over the whole vocabulary is the right value

:func:`constant_guess` gives the collapse line: a model that ignores the context can at best
always answer the most frequent value, 1/n_values in expectation (12.5% on the paper's task).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from tl_minimal.data import recall as data_recall
from tl_minimal.data.recall import IGNORE, PAPER_LAYOUT, RecallLayout
from tl_minimal.models import GatedHybridLM
from tl_minimal.training.evaluate import evaluating
from tl_minimal.training.recipes import seeded_model
from tl_minimal.training.train import lm_loss

from ..checkpoint import unwrap
from ..protocols import protocol


def is_gated_model(model: torch.nn.Module) -> bool:
    """Whether ``model`` (or the model inside DDP) is a gated hybrid (has the key-value memory)."""
    return isinstance(unwrap(model), GatedHybridLM)


def require_gated(model: torch.nn.Module, who: str) -> None:
    """A ValueError naming ``who`` unless ``model`` is a gated hybrid: the read it measures is the kv read."""
    if not is_gated_model(model):
        raise ValueError(f"{who} needs a gated hybrid (a model with .kv), got {type(unwrap(model)).__name__}")


def answer_entries(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(t, key_pos): the last supervised position of each row and the memory entry of its answer.

    x, y [B, T]; every row must have its last label at the same position t. key_pos [B] is the
    first earlier position (before the QUERY token at t - 2) holding the asked key x[t - 1].
    """
    labelled = y != IGNORE  # [B, T]
    if not labelled.any(1).all():
        raise ValueError("every row needs at least one supervised position")
    last = labelled.int().cumsum(1).argmax(1)  # [B] first position reaching the row's final count
    if not torch.all(last == last[0]):
        raise ValueError("rows must have their last label at the same position")
    t = int(last[0])
    key = x[:, t - 1]  # [B] the asked key
    hits = x[:, : t - 2] == key[:, None]  # [B, t-2]
    if not hits.any(1).all():
        raise ValueError("the asked key does not occur before the question in some row")
    return t, hits.int().argmax(1)


@contextmanager
def read_top_k(model, value):
    """Temporarily read the model's key-value memory with another top_k."""
    old = model.kv.top_k
    model.kv.top_k = value
    try:
        yield
    finally:
        model.kv.top_k = old


def retrieval_report(model, x: torch.Tensor, y: torch.Tensor, layout: RecallLayout = PAPER_LAYOUT,
                     key_pos: torch.Tensor | None = None) -> dict:
    """Per-example measurements of the memory read at the answer (see the module glossary).

    Returns a dict of [B] tensors plus "t" and "top_k". ``model`` must be a gated hybrid
    (it has ``model.kv``); it is run in eval mode, without gradients. ``key_pos`` [B] names
    the answer entry when it is not an earlier copy of the asked token (the alias task: the
    position of the alias the pair was written with); by default :func:`answer_entries` finds it.
    """
    require_gated(model, "retrieval_report")
    if key_pos is None:
        t, key_pos = answer_entries(x, y)
    else:
        t = int((y != IGNORE).int().cumsum(1).argmax(1)[0])
    B = x.shape[0]
    rows = torch.arange(B)
    device = next(model.parameters()).device
    xd = x.to(device)
    with evaluating(model):
        logits, info = model.internals(xd)
        r = info["retrieval"]
        w, idx = r["weights"][:, t].cpu(), r["index"][:, t].cpu()  # [B, K]
        with read_top_k(model, "all"):
            _, info_all = model.internals(xd)
        w_all = info_all["retrieval"]["weights"][:, t].cpu()  # [B, N] in memory order
        # the memory's own contribution to the logits: W_vocab z_t
        z, _ = model.kv(model.embed(xd))  # [B, T, d]
        mem_logits = model.head(z[:, t]).cpu()  # [B, V]
    n_visible = t - 1 if model.kv.query_align == "previous" else t
    w_all = w_all[:, :n_visible]
    answer_score = w_all[rows, key_pos]  # [B]
    answer_rank = (w_all > answer_score[:, None]).sum(1)  # [B]
    kept = idx >= 0  # [B, K]
    hit = (idx == key_pos[:, None]) & kept
    key_tokens = x.gather(1, idx.clamp_min(0))  # [B, K]: the key token of each kept entry
    is_filler = (key_tokens >= layout.first_filler) & (key_tokens < layout.first_filler + layout.n_filler)
    p = w.clamp_min(1e-30)
    entropy = -(w * p.log()).sum(1)
    values = torch.arange(layout.first_value, layout.first_value + layout.n_values)
    target = y[:, t]
    v_logits = mem_logits[:, values]  # [B, n_values]
    value_rank = (v_logits > mem_logits[rows, target][:, None]).sum(1)
    return {"t": t, "top_k": model.kv.top_k, "key_pos": key_pos, "answer_rank": answer_rank,
            "in_kept": hit.any(1), "answer_weight": (w * hit).sum(1),
            "filler_share": (is_filler & kept).sum(1) / kept.sum(1).clamp_min(1),
            "entropy": entropy, "kept": kept.sum(1), "read_gate": r["read_gate"][:, t].cpu(),
            "value_rank": value_rank, "correct": logits[:, t].argmax(-1).cpu() == target}


def summarize(report: dict) -> dict:
    """Means (and the median answer rank) of a :func:`retrieval_report`, as plain floats."""
    f = {k: float(report[k].float().mean()) for k in ("in_kept", "answer_weight", "filler_share", "entropy",
                                                     "read_gate", "correct")}
    f["uniform_entropy"] = float(report["kept"].float().clamp_min(1).log().mean())
    f["answer_rank_median"] = float(report["answer_rank"].float().median())
    f["answer_top1"] = float((report["answer_rank"] == 0).float().mean())
    f["value_top1"] = float((report["value_rank"] == 0).float().mean())
    return {k: round(v, 4) for k, v in f.items()}


def constant_guess(y: torch.Tensor, layout: RecallLayout = PAPER_LAYOUT, n_pairs: int = 4) -> dict:
    """The accuracy of answering without reading the context, on the labels y [N, T].

    "expected": 1 / n_values, the best constant guess when values are uniform (the task's
    design); "best_on_set": the most frequent value of this set (chosen after seeing it, so
    slightly optimistic); "in_context_pick": 1 / n_pairs, guessing among the values in context.
    """
    labels = y[y != IGNORE]
    counts = torch.bincount(labels, minlength=layout.vocab_size)
    return {"expected": 1.0 / layout.n_values, "best_on_set": round(float(counts.max()) / len(labels), 4),
            "most_frequent": int(counts.argmax()), "n": len(labels), "in_context_pick": 1.0 / n_pairs}


def at_initialization(variant: str, seeds, n_examples: int = 256, overrides: dict | None = None,
                      n_pairs: int = 4, seq_len: int = 128, device="cpu") -> list[dict]:
    """:func:`summarize` of freshly initialized models, one per seed (cheap: two forward passes).

    Uses the recall protocol's model settings (``tl_research`` builds the model the
    same way), so the numbers describe step 0 of ``python -m tl_research recall``.
    """
    p = protocol("recall", seq_len=seq_len)
    x, y = data_recall.eval_set(n_examples, 0, n_pairs=n_pairs, seq_len=seq_len)
    out = []
    for seed in seeds:
        model = seeded_model(variant, p, seed, overrides).to(device)
        out.append({"seed": seed, **summarize(retrieval_report(model, x, y))})
    return out


def read_gate_gradient(model, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Gradient norms of the recall loss w.r.t. the read gate (w_g, b_g) and the value map W_v.

    In the paper's fusion LN(g_t m_t) the LayerNorm divides the gate's scale back out once the
    variance of m_t is well above the LayerNorm epsilon (1e-5); while m_t is tiny (at the
    N(0, 0.02) init it is about that size) the epsilon dominates and the gate still acts as a
    scale. With ``gate_outside_norm`` (g_t LN(m_t)) it always does. Model left in train mode.
    """
    require_gated(model, "read_gate_gradient")
    device = next(model.parameters()).device
    model.train()
    model.zero_grad(set_to_none=True)
    lm_loss(model(x.to(device)), y.to(device)).backward()
    gate = torch.cat([p.grad.flatten() for p in model.kv.read_gate.parameters()])
    out = {"read_gate_grad": float(gate.norm()), "value_grad": float(model.kv.value.weight.grad.norm())}
    model.zero_grad(set_to_none=True)
    return out
