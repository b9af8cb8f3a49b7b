"""Induction on real text: a span read once, then the same span again.

An *induction head* (Olsson et al. 2022, ``docs/paper.md`` section 7) predicts the next token by
finding where the current context occurred before and copying what followed. The classic test:
show a model a stretch of text it has never seen, then show it the same stretch again. On the
first copy the model can only use what it learned about the language; on the second copy every
byte is written a few dozen positions back, so a model that copies predicts it almost for free.
The loss on the second copy against the loss on the first says how much a model copies.

Glossary
    L           span_len        bytes in one copy of the span (default 64 = seq_len // 2)
    a_1 .. a_L  span            L consecutive bytes of held-out text (or uniform random bytes)
    lead        lead            one token before the first copy: the byte that precedes the span
                                in the text (random bytes: one more random byte)
    stream      [N, 2L + 1]     lead, a_1 .. a_L, a_1 .. a_L
    x, y        [N, 2L] int64   x = stream[:, :-1], y = stream[:, 1:] (y is x shifted by one)
    first copy  y[:, :L]        targets a_1 .. a_L, predicted from lead, a_1 .. a_{i-1}
    second copy y[:, L:]        targets a_1 .. a_L again, predicted with the whole first copy in view

Why this layout. BOS + 2 x 64 would waste nothing either, but the models were trained on random
windows that start in the middle of the text, where BOS never occurs (the split has one, at its
very start). With the preceding byte as the lead the first copy *is* a held-out window of text,
exactly what the model was trained on, so its loss is the honest "no copying possible"
baseline. With L = 64 the stream is 129 tokens: 128 inputs and 128 targets, one training window
of the byte-level protocol (context 128), and every byte of both copies is a target. A span
longer than half the context cannot fit twice and is an error naming the limit.

Worked example, ``repeated_spans(encode("the cat sat on the mat"), 1, span_len=6,
generator=torch.Generator().manual_seed(0))``::

    position  0    1   2   3   4   5   6     7   8   9   10  11
    x         't'  ' ' 's' 'a' 't' ' ' 'o'   ' ' 's' 'a' 't' ' '
    y         ' '  's' 'a' 't' ' ' 'o' ' '   's' 'a' 't' ' ' 'o'
              |------- first copy ------|   |------ second copy -----|

The span " sat o" (text bytes 7-12) follows the "t" of "cat", its lead. The targets at
positions 0-5 are the first copy, at 6-11 the second. At position 8 the model has just read
"s" for the second time: the last "s" was followed by "a", so a copier predicts "a" with
confidence, while a model that only knows English spreads its bet over "a", "t", "h", "o", ...
At position 7 copying is ambiguous: " " occurred twice before, followed once by "s" and once
by "o", so a look-up keyed on the current byte alone returns a mix of both, and the two-byte
context "o " is new (the second copy starts here). The
per-position losses of the two copies, averaged over N spans, are the curves of
:func:`tl_research.studies.induction.copy_losses`.

Random bytes (:func:`repeated_random`): the same layout with a_i uniform in 0..255. Text
statistics are no help there (the first copy costs at least log2(256) = 8 bits per byte for
any predictor); only copying can lower the second copy's loss.

The control (``control=True``): the second half is a *different* span (lead, A, B). Its loss
against the first half's is what position alone does to a model that cannot copy (the models
see the second half at positions L..2L-1, with unrelated text before it); a ratio below the
control's is copying.

Every random choice comes from one ``torch.Generator`` the caller seeds; the experiments draw
evaluation spans with :func:`eval_generator` (the recall tasks' evaluation seed), so a seed's
spans are the same for every variant.
"""

from __future__ import annotations

import torch

from tl_minimal.data.recall import eval_seed

N_BYTES = 256  # random spans draw byte ids 0..255 (never the specials PAD, BOS, EOS)


def check_span(span_len: int, seq_len: int) -> None:
    """ValueError unless 1 <= span_len and two copies fit the context: 2 * span_len <= seq_len."""
    if isinstance(span_len, bool) or not isinstance(span_len, int) or span_len < 1:
        raise ValueError(f"span_len must be a whole number >= 1, got {span_len!r}")
    if 2 * span_len > seq_len:
        raise ValueError(f"span_len={span_len} is longer than half the context: two copies need "
                         f"{2 * span_len} positions, the models see seq_len={seq_len} (span_len <= {seq_len // 2})")


def _repeat(lead: torch.Tensor, span: torch.Tensor, other: torch.Tensor | None = None):
    """lead [N], span [N, L] -> x, y [N, 2L] of the stream lead, span, span (lead, span, other: the control)."""
    stream = torch.cat([lead[:, None], span, span if other is None else other], dim=1)  # [N, 2L + 1]
    return stream[:, :-1], stream[:, 1:]


def repeated_spans(tokens: torch.Tensor, n: int, span_len: int = 64, generator: torch.Generator | None = None,
                   seq_len: int = 128, control: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` random spans of ``tokens`` (BOS, text, EOS), each read twice: x, y [n, 2 span_len].

    A span starts at s uniform in 1 .. len(tokens) - 1 - span_len, so it holds text bytes only
    (never the final EOS) and has a lead, tokens[s - 1] (BOS when s = 1). ``control=True``: the
    second half is ANOTHER span, drawn the same way (the same positions, nothing to copy).
    """
    check_span(span_len, seq_len)
    if n < 1:
        raise ValueError(f"n must be >= 1 (spans to draw), got {n}")
    n_starts = len(tokens) - 1 - span_len  # starts 1 .. len - 1 - span_len
    if n_starts < 1:
        raise ValueError(f"text of {len(tokens)} tokens is too short for a span of {span_len} bytes "
                         f"(needs {span_len + 2}: a lead, the span, the final EOS)")
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    starts = 1 + torch.randint(0, n_starts, (n, 2 if control else 1), generator=g)  # [n, 1 or 2]
    spans = tokens[starts[:, :, None] + torch.arange(span_len)]  # [n, 1 or 2, L]
    return _repeat(tokens[starts[:, 0] - 1], spans[:, 0], spans[:, 1] if control else None)


def repeated_random(n: int, span_len: int = 64, generator: torch.Generator | None = None,
                    seq_len: int = 128, control: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` spans of uniform random bytes 0..255, each read twice (lead: one more random byte): x, y [n, 2L].
    ``control=True``: the second half is other random bytes."""
    check_span(span_len, seq_len)
    if n < 1:
        raise ValueError(f"n must be >= 1 (spans to draw), got {n}")
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    stream = torch.randint(0, N_BYTES, (n, 1 + (2 if control else 1) * span_len), generator=g)  # [n, 1 + L or 2L]
    return _repeat(stream[:, 0], stream[:, 1 : 1 + span_len], stream[:, 1 + span_len :] if control else None)


KINDS = ("text", "random", "text_control", "random_control")  # the evaluation sets of a seed


def eval_generator(seed: int, kind: str = "text") -> torch.Generator:
    """The generator of training seed ``seed``'s evaluation spans of one of :data:`KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return torch.Generator().manual_seed(eval_seed(seed) + KINDS.index(kind))
