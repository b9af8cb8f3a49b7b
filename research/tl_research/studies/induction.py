"""Induction on real text: the experiments task ``induction`` (data: data/induction.py).

    python -m tl_research induction --variants transformer gated_hybrid_repaired --seeds 0 1 2   # 80 steps
    python -m tl_research induction --variants transformer gated_hybrid_repaired --seeds 0 1 2 --steps 2000

Each run trains exactly as ``lm`` does (byte-level WikiText-2, the paper's protocol, the same
recipe: :func:`tl_minimal.training.recipes.fit`), then reads held-out text twice. The
default ``--steps`` is the paper's 80, where no model has learned much; the same command with
``--steps 2000`` measures models that have (table 3b of notebook 07 trains the same runs).

The measurement, for ``eval_examples`` sequences x, y [N, 2L] of :mod:`tl_research.tasks.induction_data`
(a span of L bytes, then the same span again; position i of the second copy is byte a_i again)::

    bits[t]   = mean over the N sequences of -log2 p(y[n, t] | x[n, :t+1])     [2L]
    first     = bits[:L]     the span read for the first time: what language knowledge buys
    second    = bits[L:]     the same bytes, with the first copy in view: what copying adds
    ratio     = mean(second) / mean(first)

A model that ignores the first copy has ratio 1 (any context-free predictor, e.g. the unigram,
has exactly 1 on text) up to what the position does to it, measured by a control with a different
span in the second half; a perfect copier has ratio 0 (bits[L + i] -> 0). On uniform random bytes
the first copy costs at least 8 bits for any predictor, so a ratio well below the control's there
is copying and nothing else.

A run record is the experiments record (``value`` = the ratio on text) plus::

    text, random   {"first_bits", "second_bits", "ratio", "curve_first", "curve_second"}: mean bits per
                   byte of each copy, their ratio, and the curves over the L positions (all L points,
                   4 decimals: small enough not to downsample at L = 64)
    text_control, random_control   the same when the second half is a different span: what the
                   position alone does (a model that cannot copy has ratio = its control ratio)
    <kind>_read_off   (gated hybrids only) each of the four with the key-value read switched off
                   (:func:`read_switched_off`): what the read itself contributes
    bpb            bits per byte on the lm protocol's validation chunks (read it beside table 3b)
    chance         reference lines: no copying (ratio 1), the unigram's bits on the text spans,
                   log2(256) = 8 bits on random bytes
    loss_curve     training loss (nats) averaged over windows of ``loss_curve_every`` steps
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from tl_minimal.checks import checked_ids
from tl_minimal.data import text as data_text
from tl_minimal.training.evaluate import evaluating, mean_token_loss, unigram_bits
from tl_minimal.training.recipes import fit
from tl_minimal.training.train import TrainConfig

from ..checkpoint import unwrap
from ..tasks import induction_data as data_induction
from ..tasks.common import FORWARD_BATCH, ConfigError, Task, in_batches, loss_curve, run_record, windows
from ..tasks.paper import load_lm
from .diagnose_recall import is_gated_model, require_gated

CURVE_DIGITS = 4


# ----------------------------------------------------------------------------- the measurement
def position_bits(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = FORWARD_BATCH
                  ) -> torch.Tensor:
    """Cross-entropy in bits at every position, averaged over the sequences: x, y [N, T] -> [T] (CPU, float32).

    Eval mode, no gradients; the model's mode is restored afterwards.
    """
    if x.shape != y.shape or x.dim() != 2:
        raise ValueError(f"x and y must be [N, T] of the same shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    device = next(model.parameters()).device
    total = torch.zeros(x.shape[1], device=device)  # [T]
    with evaluating(model):
        for i in range(0, len(x), batch_size):
            xb, yb = x[i : i + batch_size], y[i : i + batch_size]  # [b, T]
            with checked_ids(model, xb):
                logits = model(xb.to(device)).float()  # [b, T, V]
            nats = F.cross_entropy(logits.transpose(1, 2), yb.to(device), reduction="none")  # [b, T]
            total += nats.sum(0)
    return (total / len(x) / math.log(2)).cpu()  # [T]


def copy_summary(bits: torch.Tensor, span_len: int) -> dict:
    """bits [2L] (from :func:`position_bits`) -> the first and second copy's mean bits, their ratio, the curves."""
    if bits.dim() != 1 or len(bits) != 2 * span_len:
        raise ValueError(f"bits must be [2 * span_len] = [{2 * span_len}], got {tuple(bits.shape)}")
    first, second = bits[:span_len], bits[span_len:]  # [L] each
    f, s = float(first.mean()), float(second.mean())
    return {"first_bits": f, "second_bits": s, "ratio": s / f if f > 0 else float("nan"),
            "curve_first": [round(float(v), CURVE_DIGITS) for v in first],
            "curve_second": [round(float(v), CURVE_DIGITS) for v in second]}


def copy_losses(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, span_len: int,
                batch_size: int = FORWARD_BATCH) -> dict:
    """:func:`copy_summary` of :func:`position_bits`: how much cheaper the second copy of a span is."""
    return copy_summary(position_bits(model, x, y, batch_size), span_len)


def induction_sets(p, eval_tokens: torch.Tensor, seed: int) -> dict:
    """Seed's evaluation sequences, (x, y) [eval_examples, 2 span_len] for each of data_induction.KINDS:
    "text", "random" (a span read twice) and "text_control", "random_control" (two different spans)."""
    sets = {}
    for kind in data_induction.KINDS:
        kw = {"span_len": p.span_len, "seq_len": p.seq_len, "control": kind.endswith("_control"),
              "generator": data_induction.eval_generator(seed, kind)}
        sets[kind] = (data_induction.repeated_spans(eval_tokens, p.eval_examples, **kw) if kind.startswith("text")
                      else data_induction.repeated_random(p.eval_examples, **kw))
    return sets


def evaluate_induction(model: torch.nn.Module, sets: dict, span_len: int) -> dict:
    """:func:`copy_losses` of every set of :func:`induction_sets`: {"text": {...}, "random": {...}, ...}."""
    return {kind: copy_losses(model, x, y, span_len) for kind, (x, y) in sets.items()}


@contextmanager
def read_switched_off(model: torch.nn.Module):
    """Inside the block a gated hybrid's key-value read returns nothing: m_t = 0, so its fused vector
    is z_t = LN(W_m 0), the LayerNorm's bias (a constant), instead of LN(W_m g_t m_t).

    What the read adds to a measurement is the measurement with it minus the one inside this block.
    A model without a key-value memory (no ``.kv``) is a ValueError.
    """
    require_gated(model, "read_switched_off")
    kv = unwrap(model).kv
    if kv.gate_outside_norm:
        raise ValueError("read_switched_off supports the read gate inside the LayerNorm (gate_outside_norm=False)")

    def nothing_read(module, args, out):
        z, state = out  # z [B, T, d]
        m = z.new_zeros(*z.shape[:-1], module.key.out_features)  # [B, T, D_kv]: the read returns nothing
        return module.norm(module.out(m)), state

    handle = kv.register_forward_hook(nothing_read)
    try:
        yield model
    finally:
        handle.remove()


# ----------------------------------------------------------------------------- the task
def load_induction(p, data_dir=None, jsonl=None):
    """The lm task's data: training windows, validation chunks (BPB) and the validation split (the spans)."""
    try:
        data_induction.check_span(p.span_len, p.seq_len)
    except ValueError as exc:
        raise ConfigError(f"induction: {exc}") from exc
    data = load_lm(p, data_dir)
    data.source += (f"; induction: {p.eval_examples} spans of {p.span_len} bytes of the {p.eval_split} split "
                    "read twice, and as many of random bytes")
    return data


def run_induction(p, data, variant: str, seed: int, overrides: dict | None, config: TrainConfig) -> dict:
    t0 = time.perf_counter()
    model, history = fit(variant, p, seed, sampler=windows(p, seed, data.train), overrides=overrides, config=config)
    model = unwrap(model)
    bpb = mean_token_loss(model, in_batches(*data.eval)) / math.log(2)
    sets = induction_sets(p, data.eval_tokens, seed)
    result = evaluate_induction(model, sets, p.span_len)
    if is_gated_model(model):  # a gated hybrid: the same with its key-value read switched off
        with read_switched_off(model):
            result.update({f"{kind}_read_off": r for kind, r in evaluate_induction(model, sets, p.span_len).items()})
    # the same in both copies
    unigram = unigram_bits(data.train, sets["text"][1][:, : p.span_len], data_text.VOCAB_SIZE)
    every = max(1, history["steps"] // 100)
    return run_record(variant, seed, model, p, result["text"]["ratio"], history, time.perf_counter() - t0,
                      config.device, **result, bpb=bpb, span_len=p.span_len, eval_examples=p.eval_examples,
                      chance={"no_copy_ratio": 1.0, "unigram_text_bits": unigram,
                              "random_bytes_bits": math.log2(data_induction.N_BYTES)},
                      loss_curve=loss_curve(history["loss"], every), loss_curve_every=every)


INDUCTION_TASKS = {"induction": Task("induction", load_induction, run_induction)}
