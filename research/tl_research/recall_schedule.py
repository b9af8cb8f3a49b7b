"""The research recall studies' training schedules: a length curriculum and a pool of pair counts.

    LengthCurriculum(32, 128, 150)   the paper's recall retrain recipe: batches grow from 32 to 128 tokens
    StudySampler(..., pairs_mix=(4, 8, 16), mix_lengths="scaled")   Zoology's MQAR pool of pair counts

Both vary the batches of :class:`tl_minimal.data.recall.RecallSampler` per step (its
:meth:`~tl_minimal.data.recall.RecallSampler.options`); batch k is still a pure function of (seed, k).
:class:`tl_research.protocols.RecallProtocol` builds them from its fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tl_minimal.data.recall import RecallSampler


def min_seq_len(n_pairs: int = 4, n_queries: int = 1) -> int:
    """The shortest sequence that holds the task with no filler: BOS, P x (key value SEP), the questions."""
    return 1 + 3 * n_pairs + 4 * n_queries - 1


@dataclass(frozen=True)
class LengthCurriculum:
    """Training sequences that grow from ``start`` to ``end`` tokens over the first ``steps`` steps.

    The paper's recall retrain recipe (docs/paper.md section 5) trains on length 32 at the first
    step, 128 from step 150 on, in a straight line between; the evaluation is always the full
    task. A shorter sequence is the same task with less filler between the pairs and the question
    (the pairs, the question and the vocabulary are unchanged), as in the paper's reference code.
    At step k (counting from 0):

        L(k) = round(start + (end - start) * min(k, steps - 1) / (steps - 1))

    e.g. ``LengthCurriculum(32, 128, 150)``: L(0) = 32, L(1) = 33 (32.64 rounded), L(74) = 80,
    L(149) = L(500) = 128. (``round`` is Python's: halves go to the even neighbour.) With
    ``steps = 1`` every batch is ``end`` long (the reference code would keep ``start`` for ever).
    """

    start: int
    end: int
    steps: int

    def __post_init__(self):
        for name in ("start", "end", "steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"length curriculum {name} must be a whole number >= 1, got {value!r} "
                                 "(expected START:END:STEPS, e.g. 32:128:150)")
        if self.start > self.end:
            raise ValueError(f"length curriculum: start {self.start} is longer than end {self.end}; "
                             "the sequences grow (expected START <= END, e.g. 32:128:150)")

    @classmethod
    def parse(cls, value) -> LengthCurriculum:
        """``"32:128:150"``, ``(32, 128, 150)`` or a LengthCurriculum -> LengthCurriculum(32, 128, 150)."""
        if isinstance(value, cls):
            return value
        parts = value.split(":") if isinstance(value, str) else value
        try:
            start, end, steps = (int(w) if isinstance(w, str) else w for w in parts)
        except (TypeError, ValueError):
            raise ValueError(f"length curriculum: expected START:END:STEPS of whole numbers, e.g. 32:128:150, "
                             f"got {value!r}") from None
        return cls(start, end, steps)

    def as_tuple(self) -> tuple:
        return (self.start, self.end, self.steps)

    def length(self, step: int) -> int:
        """L(step): the length of training batch ``step`` (counted from 0)."""
        done = min(max(step, 0), self.steps - 1) / (self.steps - 1) if self.steps > 1 else 1.0
        return round(self.start + (self.end - self.start) * done)


class StudySampler(RecallSampler):
    """:class:`~tl_minimal.data.recall.RecallSampler` whose batches follow a length curriculum or a pair pool.

    ``curriculum`` (a :class:`LengthCurriculum`): batch ``step`` is ``curriculum.length(step)``
    tokens long instead of ``seq_len``; without one every batch is ``seq_len`` long.

    ``pairs_mix`` (pair counts, e.g. ``(4, 8, 16)``): batch ``step`` writes
    P = pairs_mix[step % len(pairs_mix)] pairs and asks min(n_queries, P) of them, in ``seq_len``
    tokens (the rest is filler), as Zoology trains MQAR on a pool of pair counts; without it every
    batch has ``n_pairs`` pairs. The layout (the key and value ids) is the same for every batch.
    ``mix_lengths="scaled"``: a batch of P pairs is ceil(seq_len * P / n_pairs) tokens long instead,
    the same density of pairs as the evaluated task (Zoology's pool also puts fewer pairs in shorter
    sequences: 4 pairs in 64 tokens, 16 in 256), e.g. 32, 64 and 128 tokens for 4, 8 and 16 of 16 pairs.
    """

    def __init__(self, batch_size: int, seed: int, n_queries: int = 1, n_pairs: int = 4, seq_len: int = 128,
                 curriculum: LengthCurriculum | None = None, pairs_mix: tuple | None = None,
                 mix_lengths: str = "full", **options):
        super().__init__(batch_size, seed, n_queries=n_queries, n_pairs=n_pairs, seq_len=seq_len, **options)
        self.curriculum = curriculum
        self.pairs_mix = None if pairs_mix is None else tuple(pairs_mix)
        if self.pairs_mix is not None and curriculum is not None:
            raise ValueError("pairs_mix and a length curriculum together are not supported: choose one")
        if mix_lengths not in ("full", "scaled"):
            raise ValueError(f"mix_lengths must be 'full' or 'scaled', got {mix_lengths!r}")
        self.mix_lengths = mix_lengths
        if curriculum is not None and curriculum.start < min_seq_len(n_pairs, n_queries):
            raise ValueError(f"length curriculum: start {curriculum.start} is too short for {n_pairs} pairs and "
                             f"{n_queries} question(s); the shortest is {min_seq_len(n_pairs, n_queries)}")

    def options(self, step: int) -> dict:
        kw = self.kw if self.curriculum is None else {**self.kw, "seq_len": self.curriculum.length(step)}
        if self.pairs_mix is not None:
            pairs = self.pairs_mix[step % len(self.pairs_mix)]
            kw = {**kw, "n_pairs": pairs, "n_queries": min(kw["n_queries"], pairs)}
            if self.mix_lengths == "scaled":  # the evaluated density of pairs: T_P = ceil(T * P / n_pairs)
                kw["seq_len"] = scaled_length(self.kw["seq_len"], pairs, self.kw["n_pairs"])
        return kw


def scaled_length(seq_len: int, pairs: int, n_pairs: int) -> int:
    """The length of a pooled batch of ``pairs`` pairs at the evaluated density: ceil(T * P / n_pairs)."""
    return math.ceil(seq_len * pairs / n_pairs)
