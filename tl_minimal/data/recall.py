"""Associative recall: can the model look up a value it saw once, far back in the context?

Glossary (the paper's task; ids are fixed by :class:`RecallLayout`)
    PAD 0, BOS 1, SEP 2, QUERY 3, ANSWER 4     special tokens
    keys 5-12, values 13-20, filler 21-30      the vocabulary is 64 (ids 31-63 never occur)
    x       [B, T] int64   the input sequence, T = 128
    y       [B, T] int64   the target at each position; IGNORE (-100) where nothing is asked
    pairs   P = 4          key-value pairs written at the start of each sequence
    queries Q              questions at the end: Q = 1 in the paper's task, Q > 1 in MQAR

The paper's task (:func:`recall_batch`), one sequence of T = 128 tokens:

    BOS, P x (key value SEP), filler ..., QUERY key ANSWER
    target = the queried key's value, at the LAST position only

Worked example, ``recall_batch(1, seq_len=20, generator=torch.Generator().manual_seed(0))``
(T = 20 to keep it short; names from :func:`describe`, f0-f9 are the filler ids 21-30):

    position  0    1   2   3    4   5   6    7   8   9    10  11  12   13 14 15 16   17    18  19
    x         BOS  k7  v17 SEP  k8  v18 SEP  k9  v19 SEP  k11 v15 SEP  f6 f8 f4 f3   QUERY k9  ANSWER
    y         -    -   -   -    -   -   -    -   -   -    -   -   -    -  -  -  -    -     -   v19

The key k9 was written once, at position 7, followed by its value v19; at the last position
(ANSWER) the model must output v19 (argmax over the whole vocabulary of 64). Keys within a
sequence are distinct, values too; filler is uniform over the 10 filler ids. A constant guess
scores 1/8; picking one of the four values in context at random scores 1/4.

MQAR (:func:`mqar_batch`, multi-query associative recall, with its own worked example) asks Q questions;
Q = 1 is the paper's task. Every random choice comes from one ``torch.Generator`` the caller seeds;
evaluation uses other seeds (:func:`eval_seed`), so its examples are fresh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

IGNORE = -100  # cross-entropy's ignore_index: positions with no target
EVAL_SEED_OFFSET = 1_000_000_007  # eval_seed(s) = s + this: never equal to a training seed s' < 10^9


@dataclass(frozen=True)
class RecallLayout:
    """Where each kind of token lives in the vocabulary (the paper's numbers by default)."""

    n_keys: int = 8
    n_values: int = 8
    n_filler: int = 10
    vocab_size: int = 64
    PAD: int = 0
    BOS: int = 1
    SEP: int = 2
    QUERY: int = 3
    ANSWER: int = 4
    first_key = 5  # (not a field) the keys start after the five specials

    @property
    def first_value(self) -> int:
        return self.first_key + self.n_keys

    @property
    def first_filler(self) -> int:
        return self.first_value + self.n_values

    def __post_init__(self):
        if (need := self.first_filler + self.n_filler) > self.vocab_size:
            raise ValueError(f"layout needs {need} ids but vocab_size is {self.vocab_size}")

    def name(self, token: int) -> str:
        """Readable name of one id: BOS, k5, v13, f0 (filler index), ..."""
        token = int(token)
        specials = {self.PAD: "PAD", self.BOS: "BOS", self.SEP: "SEP", self.QUERY: "QUERY", self.ANSWER: "ANSWER"}
        if token in specials:
            return specials[token]
        if self.first_key <= token < self.first_value:
            return f"k{token}"
        if self.first_value <= token < self.first_filler:
            return f"v{token}"
        if self.first_filler <= token < self.first_filler + self.n_filler:
            return f"f{token - self.first_filler}"
        return f"<{token}>"


PAPER_LAYOUT = RecallLayout()


def layout_for(n_pairs: int) -> RecallLayout:
    """The paper's layout for <= 8 pairs; otherwise n_pairs keys and n_pairs values, 10 filler ids, and
    the vocabulary rounded up to a multiple of 64 (MQAR with more pairs than the paper's 8 keys)."""
    if n_pairs <= PAPER_LAYOUT.n_keys:
        return PAPER_LAYOUT
    vocab = 64 * math.ceil((5 + 2 * n_pairs + 10) / 64)
    return RecallLayout(n_keys=n_pairs, n_values=n_pairs, n_filler=10, vocab_size=vocab)


def eval_seed(seed: int) -> int:
    """The seed of the evaluation examples that belong to training seed ``seed``."""
    return seed + EVAL_SEED_OFFSET


def distinct_ids(batch: int, k: int, n: int, g: torch.Generator) -> torch.Tensor:
    """k distinct integers from range(n), per row: [B, k]."""
    return torch.rand(batch, n, generator=g).argsort(dim=1)[:, :k]


def mqar_batch(
    batch_size: int,
    n_queries: int = 4,
    n_pairs: int = 4,
    seq_len: int = 128,
    layout: RecallLayout = PAPER_LAYOUT,
    generator: torch.Generator | None = None,
    hide_answers: bool = False,
    answer_at_key: bool = False,
):
    """Multi-query recall: x, y [B, T]; labels only at the Q ANSWER positions (see module docstring).

        BOS, P x (key value SEP), filler ..., QUERY k_a ANSWER v_a, ..., QUERY k_z ANSWER

    ``hide_answers``: the token after each ANSWER is a filler id instead of the answer (the labels and
    the random draws before it do not change). ``answer_at_key``: each label moves one position left,
    onto the asked key, as Zoology labels MQAR (the input does not change).

    Worked example, ``mqar_batch(1, n_queries=2, seq_len=24, generator=torch.Generator().manual_seed(1))``::

        x[0] = [1, 9, 18, 2, 6, 14, 2, 11, 20, 2, 7, 19, 2, 23, 22, 23, 27, 3, 6, 4, 14, 3, 7, 4]
               BOS k9 v18 SEP k6 v14 SEP k11 v20 SEP k7 v19 SEP (4 filler) QUERY k6 ANSWER v14 QUERY k7 ANSWER
        y[0] = -100 everywhere except y[0, 19] = 14 (v14) and y[0, 23] = 19 (v19)
    """
    L = layout
    if not 1 <= n_pairs <= min(L.n_keys, L.n_values):
        raise ValueError(f"n_pairs must be in 1..{min(L.n_keys, L.n_values)} for this layout, got {n_pairs}")
    if not 1 <= n_queries <= n_pairs:
        raise ValueError(f"n_queries must be in 1..n_pairs={n_pairs}, got {n_queries}")
    n_filler = seq_len - (1 + 3 * n_pairs) - (4 * n_queries - 1)
    if n_filler < 0:
        raise ValueError(f"seq_len={seq_len} is too short for {n_pairs} pairs and {n_queries} queries")
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    B = batch_size
    keys = L.first_key + distinct_ids(B, n_pairs, L.n_keys, g)  # [B, P]
    values = L.first_value + distinct_ids(B, n_pairs, L.n_values, g)  # [B, P]
    filler = L.first_filler + torch.randint(0, L.n_filler, (B, n_filler), generator=g)  # [B, F]
    asked = distinct_ids(B, n_queries, n_pairs, g)  # [B, Q] which pairs are asked, in order

    sep = torch.full((B, n_pairs), L.SEP)
    context = torch.stack([keys, values, sep], dim=2).reshape(B, 3 * n_pairs)  # k v SEP k v SEP ...
    q_keys, q_values = keys.gather(1, asked), values.gather(1, asked)  # [B, Q]
    # what follows each ANSWER in the input: the answer itself, or (hidden) a filler id
    shown = L.first_filler + torch.randint(0, L.n_filler, (B, n_queries), generator=g) if hide_answers else q_values
    questions = torch.stack(
        [torch.full((B, n_queries), L.QUERY), q_keys, torch.full((B, n_queries), L.ANSWER), shown], dim=2
    ).reshape(B, 4 * n_queries)
    x = torch.cat([torch.full((B, 1), L.BOS), context, filler, questions[:, :-1]], dim=1)  # [B, T]

    y = torch.full_like(x, IGNORE)
    answer_at = seq_len - 1 - 4 * torch.arange(n_queries - 1, -1, -1) - int(answer_at_key)  # [Q]: T-1 last
    y[:, answer_at] = q_values
    return x, y


def recall_batch(
    batch_size: int,
    n_pairs: int = 4,
    seq_len: int = 128,
    layout: RecallLayout = PAPER_LAYOUT,
    generator: torch.Generator | None = None,
):
    """The paper's task (the module docstring's worked example): x, y [B, T]; y is IGNORE except
    y[:, -1] = the queried key's value. Without ``generator``: one seeded with 0 (to train: RecallSampler)."""
    return mqar_batch(batch_size, 1, n_pairs, seq_len, layout, generator)


class RecallSampler:
    """``sampler(step) -> (x, y)``: training batches, a function of (seed, step) only: resumes are exact.

    ``options``: :func:`mqar_batch`'s sizes, layout and switches, the same for every batch
    (the research samplers vary them per step through :meth:`options`).
    """

    def __init__(self, batch_size: int, seed: int, n_queries: int = 1, **options):
        self.batch_size, self.seed, self.kw = batch_size, seed, {"n_queries": n_queries, **options}

    def options(self, step: int) -> dict:
        """The keywords of :func:`mqar_batch` for batch ``step``."""
        return self.kw

    def __call__(self, step: int):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + step)
        return mqar_batch(self.batch_size, generator=g, **self.options(step))


def eval_set(n_examples: int = 2048, seed: int = 0, n_queries: int = 1, **options):
    """``n_examples`` fresh examples for training seed ``seed`` (drawn with :func:`eval_seed`);
    ``options``: :func:`mqar_batch`'s sizes, layout and switches."""
    g = torch.Generator().manual_seed(eval_seed(seed))
    return mqar_batch(n_examples, n_queries, generator=g, **options)


# ----------------------------------------------------------------------------- for people
def locate(x: torch.Tensor, y: torch.Tensor, layout: RecallLayout = PAPER_LAYOUT) -> list[dict]:
    """For one sequence x, y [T]: each question's positions (query, key in context, its value, answer)."""
    out = []
    for a in (y != IGNORE).nonzero().flatten().tolist():
        key = int(x[a - 1])
        key_pos = int((x[: a - 2] == key).nonzero()[0])
        out.append({"answer_pos": a, "query_pos": a - 2, "key": key, "key_pos": key_pos, "value": int(y[a]),
                    "value_pos": key_pos + 1})
    return out


def describe(x: torch.Tensor, y: torch.Tensor, layout: RecallLayout = PAPER_LAYOUT, width: int = 16) -> str:
    """A readable picture of one example: names per position, runs of filler shortened, targets marked."""
    names = [layout.name(t) for t in x.tolist()]
    parts, i = [], 0
    while i < len(names):
        j = i
        while j < len(names) and names[j].startswith("f"):
            j += 1
        if j - i > width:
            parts.append(f"[{j - i} filler]")
            i = j
            continue
        tok = names[i]
        if int(y[i]) != IGNORE:
            tok += f" -> {layout.name(int(y[i]))}"
        parts.append(tok)
        i += 1
    lines = [" ".join(parts)]
    for q in locate(x, y, layout):
        lines.append(f"  asks {layout.name(q['key'])} (written at {q['key_pos']}, value {layout.name(q['value'])} "
                     f"at {q['value_pos']}); answer due at position {q['answer_pos']}")
    return "\n".join(lines)
