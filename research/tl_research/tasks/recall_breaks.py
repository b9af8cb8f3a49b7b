"""Where recall breaks: associative recall made harder in one way at a time.

The paper's task (:mod:`tl_minimal.data.recall`) writes each key once and asks with the very
same token, a few dozen tokens later. That is the easiest case for an exact-match read. Each
task here changes one thing:

    overwrite   a key is written 2-3 times with different values; the answer is the LATEST one
    alias       every key has 2-4 alias tokens; a pair is written with one alias and asked with
                another, so the question never repeats the written token
    distance    the paper's pairs at the start of a LONG sequence (1k-4k tokens), the question at
                the very end: thousands of filler tokens between a write and its question

Glossary (token ids come from a :class:`RecallLayout`, as in the paper's task)
    x, y        [B, T] int64    the sequence and its targets (IGNORE = -100 where nothing is asked)
    P           n_keys/n_pairs  distinct keys written per sequence
    w           writes          how often one key is written (overwrite; the asked key: w >= 2)
    A           aliases         tokens that all mean the same key (alias; 2-4 per key, per seed)
    T           seq_len         sequence length; filler pads every sequence to exactly T
    d           distance        positions from the written key to the asked key (distance)

Every generator takes a ``torch.Generator`` (the caller seeds it) and the samplers make batch k
a pure function of (seed, k), like :class:`tl_minimal.data.recall.RecallSampler`; evaluation
sets use :func:`tl_minimal.data.recall.eval_seed`, so they are fresh examples. The answer is
always determined by the sequence: :func:`latest_value` reads it back from x alone.
"""

from __future__ import annotations

import torch

from tl_minimal.data.recall import IGNORE, PAPER_LAYOUT, RecallLayout, distinct_ids, eval_seed, recall_batch

# overwrite needs more value ids than keys (every write of a sequence gets its own value)
OVERWRITE_LAYOUT = RecallLayout(n_keys=8, n_values=16, n_filler=10, vocab_size=64)
# alias: 8 keys x at most 4 aliases = 32 alias ids (ids 5-36), values 37-44, filler 45-54
ALIAS_LAYOUT = RecallLayout(n_keys=32, n_values=8, n_filler=10, vocab_size=64)


def _sampler_generator(seed: int, step: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1_000_003 + step)


def _question(x_row, layout, key):
    """Append QUERY key ANSWER at the end of a row (in place)."""
    x_row[-3], x_row[-2], x_row[-1] = layout.QUERY, key, layout.ANSWER


# ----------------------------------------------------------------------------- overwrite
def overwrite_batch(batch_size: int, n_keys: int = 4, max_writes: int = 3, seq_len: int = 128,
                    layout: RecallLayout = OVERWRITE_LAYOUT, generator: torch.Generator | None = None):
    """Keys written several times; the target is the asked key's LATEST value. x, y [B, T].

    Each sequence: P = ``n_keys`` distinct keys; the asked key is written w times, w uniform in
    2..max_writes, every other key 1..max_writes times; every write gets its own value (values
    are distinct within a sequence, so "an earlier value" is unambiguous); the writes come in a
    random order, then filler, then the question::

        BOS, (key value SEP) x (all writes, shuffled), filler ..., QUERY key ANSWER

    Worked example, ``overwrite_batch(1, seq_len=44, generator=torch.Generator().manual_seed(2))``
    (keys k5-k12, values v13-v28, f0-f9 the filler ids 29-38)::

        BOS k11 v20 SEP k8 v17 SEP k8 v28 SEP k12 v27 SEP k6 v18 SEP k12 v24 SEP k12 v22 SEP
            [19 filler] QUERY k12 ANSWER  -> v22

    k12 was written three times (v27, v24, v22): the answer is v22, the last; answering v27 or
    v24 is "an earlier value". k8 is written twice too (a decoy), k11 and k6 once each. A constant
    guess scores 1/16; a random pick among the asked key's writes 1/w (5/12 averaged over w).
    """
    L = layout
    if not 1 <= n_keys <= L.n_keys:
        raise ValueError(f"n_keys must be in 1..{L.n_keys} (the layout's key ids), got {n_keys}")
    if max_writes < 2:
        raise ValueError(f"max_writes must be >= 2 (a key has to be overwritten), got {max_writes}")
    if n_keys * max_writes > L.n_values:
        raise ValueError(f"n_keys * max_writes = {n_keys * max_writes} writes need as many distinct values, "
                         f"but the layout has {L.n_values}")
    needed = 1 + 3 * n_keys * max_writes + 3
    if seq_len < needed:
        raise ValueError(f"seq_len={seq_len} is too short: {n_keys} keys written up to {max_writes} times "
                         f"need {needed} tokens (BOS, 3 per write, 3 for the question)")
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    B, T = batch_size, seq_len
    keys = L.first_key + distinct_ids(B, n_keys, L.n_keys, g)  # [B, P]; keys[:, 0] is asked
    writes = torch.randint(1, max_writes + 1, (B, n_keys), generator=g)  # [B, P]
    writes[:, 0] = torch.randint(2, max_writes + 1, (B,), generator=g)
    values = L.first_value + distinct_ids(B, n_keys * max_writes, L.n_values, g)  # [B, P*max_w]
    filler = L.first_filler + torch.randint(0, L.n_filler, (B, T), generator=g)  # [B, T]
    order = torch.rand(B, n_keys * max_writes, generator=g)  # [B, P*max_w] shuffles the writes
    x = filler.clone()
    y = torch.full_like(x, IGNORE)
    for b in range(B):
        ks = keys[b].repeat_interleave(writes[b])  # [W] one key per write
        perm = order[b, : len(ks)].argsort()
        ks, vs = ks[perm], values[b, : len(ks)]  # [W] shuffled keys, distinct values
        context = torch.stack([ks, vs, torch.full_like(ks, L.SEP)], dim=1).flatten()  # [3W]
        x[b, 0] = L.BOS
        x[b, 1 : 1 + len(context)] = context
        _question(x[b], L, keys[b, 0])
        y[b, -1] = vs[ks == keys[b, 0]][-1]  # the latest write of the asked key
    return x, y


def written_values(x_row: torch.Tensor) -> list[int]:
    """Values written under the asked key of one sequence [T], in order (the last is the answer).

    Reads only x: the asked key is x[-2]; every earlier occurrence of it (before the question)
    is a write, and the token after it is the value written.
    """
    key = x_row[-2]
    where = (x_row[:-3] == key).nonzero().flatten()
    return [int(x_row[i + 1]) for i in where]


def latest_value(x_row: torch.Tensor) -> int:
    """The answer of a recall-style sequence [T]: the value after the LAST write of the asked key."""
    values = written_values(x_row)
    if not values:
        raise ValueError("the asked key x[-2] is never written before the question")
    return values[-1]


# ----------------------------------------------------------------------------- alias
def alias_table(seed: int, n_classes: int = 8, min_aliases: int = 2, max_aliases: int = 4,
                layout: RecallLayout = ALIAS_LAYOUT) -> list[list[int]]:
    """Which tokens mean the same key: ``table[c]`` = the alias ids of key c (fixed by ``seed``).

    Key c gets between ``min_aliases`` and ``max_aliases`` alias ids (uniform), drawn without
    replacement from the layout's key ids, so no id belongs to two keys. Worked example,
    ``alias_table(0)`` (8 keys, 2-4 aliases each, ids 5-36)::

        [[27, 14], [9, 35], [25, 18, 32, 15], [5, 13, 28], [31, 23, 22, 36], [33, 6, 7], [21, 29], [26, 11, 8]]

    key 2 may be written as k32 and asked as k18: nothing in the tokens says they match.
    """
    if min_aliases < 1 or max_aliases < min_aliases:
        raise ValueError(f"need 1 <= min_aliases <= max_aliases, got {min_aliases}, {max_aliases}")
    if n_classes < 1:
        raise ValueError(f"n_classes must be >= 1, got {n_classes}")
    if n_classes * max_aliases > layout.n_keys:
        raise ValueError(f"{n_classes} keys x up to {max_aliases} aliases = {n_classes * max_aliases} alias ids, "
                         f"but the layout has {layout.n_keys} key ids")
    g = torch.Generator().manual_seed(seed * 7_919 + 17)
    counts = torch.randint(min_aliases, max_aliases + 1, (n_classes,), generator=g).tolist()
    ids = (layout.first_key + torch.randperm(layout.n_keys, generator=g)).tolist()
    table, i = [], 0
    for c in counts:
        table.append(ids[i : i + c])
        i += c
    return table


def alias_batch(batch_size: int, table: list[list[int]], n_pairs: int = 4, seq_len: int = 128,
                same_alias: bool = False, layout: RecallLayout = ALIAS_LAYOUT,
                generator: torch.Generator | None = None, same_alias_share: float = 0.0):
    """The paper's task with aliases: written with one alias, asked with ANOTHER. x, y [B, T].

    ``BOS, P x (alias value SEP), filler ..., QUERY alias' ANSWER``, target = the value written
    under the asked key; P keys distinct per sequence, values distinct. ``same_alias=True`` asks
    with the written token itself (the control: the same task with identical tokens).

    Worked example, ``alias_batch(1, alias_table(0), seq_len=20, generator=torch.Generator().manual_seed(0))``
    (table of :func:`alias_table`'s example; values v37-v44)::

        BOS k32 v41 SEP k5 v42 SEP k22 v43 SEP k21 v39 SEP f1 f8 f8 f3 QUERY k18 ANSWER  -> v41

    k18 and k32 are both aliases of key 2 ([25, 18, 32, 15]); k32 was written with v41. A constant guess
    scores 1/8, a random pick among the four values in context 1/4.

    ``same_alias_share`` in [0, 1]: that share of the rows (each row by a coin flip) asks with the
    written token, the rest with another alias: a training curriculum (the runs' evaluation sets
    keep 0). At 0 the generator draws exactly what it drew before the option existed.
    """
    L = layout
    if not 0.0 <= same_alias_share <= 1.0:
        raise ValueError(f"same_alias_share must be in [0, 1], got {same_alias_share}")
    n_classes = len(table)
    if not 1 <= n_pairs <= min(n_classes, L.n_values):
        raise ValueError(f"n_pairs must be in 1..{min(n_classes, L.n_values)} (keys in the table, values in "
                         f"the layout), got {n_pairs}")
    if not same_alias and min(len(a) for a in table) < 2:
        raise ValueError("every key needs >= 2 aliases to be asked with a different one (or same_alias=True)")
    needed = 1 + 3 * n_pairs + 3
    if seq_len < needed:
        raise ValueError(f"seq_len={seq_len} is too short for {n_pairs} pairs: need {needed} tokens")
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    B, T = batch_size, seq_len
    classes = distinct_ids(B, n_pairs, n_classes, g)  # [B, P]; classes[:, 0] is asked
    values = L.first_value + distinct_ids(B, n_pairs, L.n_values, g)  # [B, P]
    pick = torch.rand(B, n_pairs, 2, generator=g)  # which alias writes, which asks
    slot = torch.randint(0, n_pairs, (B,), generator=g)  # where the asked pair sits in the context
    x = L.first_filler + torch.randint(0, L.n_filler, (B, T), generator=g)  # [B, T]
    y = torch.full_like(x, IGNORE)
    same = torch.full((B,), same_alias)  # [B] rows asked with the written token
    if same_alias_share > 0:  # drawn only then, so share 0 leaves every earlier draw as it was
        same |= torch.rand(B, generator=g) < same_alias_share
    for b in range(B):
        order = torch.roll(torch.arange(n_pairs), int(slot[b]))  # the asked pair at position slot[b]
        x[b, 0] = L.BOS
        for i, p in enumerate(order.tolist()):
            aliases = table[int(classes[b, p])]
            written = int(pick[b, p, 0] * len(aliases))
            x[b, 1 + 3 * i : 4 + 3 * i] = torch.tensor([aliases[written], int(values[b, p]), L.SEP])
            if p == 0:
                asked = written
                if not same[b]:  # any alias but the written one
                    asked = (written + 1 + int(pick[b, p, 1] * (len(aliases) - 1))) % len(aliases)
                _question(x[b], L, aliases[asked])
                y[b, -1] = values[b, p]
    return x, y


def alias_answer(x_row: torch.Tensor, table: list[list[int]]) -> int:
    """The answer of an alias sequence [T]: the value written under any alias of the asked key."""
    cls = next(c for c, aliases in enumerate(table) if int(x_row[-2]) in aliases)
    where = [i for i in range(1, len(x_row) - 3) if int(x_row[i]) in table[cls]]
    if len(where) != 1:
        raise ValueError(f"the asked key is written {len(where)} times, expected once")
    return int(x_row[where[0] + 1])


# ----------------------------------------------------------------------------- distance
def distance_batch(batch_size: int, seq_len: int, n_pairs: int = 4, layout: RecallLayout = PAPER_LAYOUT,
                   generator: torch.Generator | None = None):
    """The paper's task at length T: the pairs at the START, the question at the very END. x, y [B, T].

    ``BOS, P x (key value SEP), filler ..., QUERY key ANSWER``, target = the asked key's value at
    the last position: :func:`tl_minimal.data.recall.recall_batch` at a long ``seq_len``, with its
    layout (8 keys, 8 values, 10 filler ids, vocabulary 64), so T = 128 is the paper's task. The
    asked key is written at position 1 + 3i (pair i) and asked at T - 2, so the distance between
    write and question is d = T - 3 - 3i: between T - 3P and T - 3 (:func:`distance_of`).

    Worked example, ``distance_batch(1, 1024, generator=torch.Generator().manual_seed(0))``
    (keys k5-k12, values v13-v20, 1,008 filler tokens shortened)::

        BOS k7 v17 SEP k8 v18 SEP k9 v19 SEP k11 v15 SEP [1008 filler] QUERY k8 ANSWER  -> v18

    k8 was written at position 4 and is asked at 1022: d = 1018. A constant guess scores 1/8, a
    random pick among the four values in context 1/4, at every length.
    """
    L = layout
    if not 1 <= n_pairs <= min(L.n_keys, L.n_values):
        raise ValueError(f"n_pairs must be in 1..{min(L.n_keys, L.n_values)} (the layout has {L.n_keys} key ids "
                         f"and {L.n_values} value ids; keys and values are distinct in a sequence), got {n_pairs}")
    needed = 1 + 3 * n_pairs + 3
    if seq_len < needed:
        raise ValueError(f"seq_len={seq_len} is too short for {n_pairs} pairs: need at least {needed} tokens "
                         f"(BOS, 3 per pair, 3 for the question)")
    return recall_batch(batch_size, n_pairs, seq_len, layout, generator)


def distance_of(x_row: torch.Tensor) -> int:
    """Positions from the written key to the asked key in one sequence [T] (read from x alone)."""
    where = (x_row[:-3] == x_row[-2]).nonzero().flatten()
    if len(where) != 1:
        raise ValueError(f"the asked key x[-2] is written {len(where)} times before the question, expected once")
    return len(x_row) - 2 - int(where[0])


class DistanceSampler:
    """``sampler(step) -> (x, y)``: distance batches whose length cycles through ``lengths``.

    Batch k has length ``lengths[k % len(lengths)]`` (every length gets the same number of
    training steps) and is a function of (seed, k) only, like :class:`BreakSampler`.
    """

    def __init__(self, lengths, batch_size: int, seed: int, n_pairs: int = 4):
        self.lengths, self.batch_size, self.seed, self.n_pairs = tuple(lengths), batch_size, seed, n_pairs

    def __call__(self, step: int):
        T = self.lengths[step % len(self.lengths)]
        return distance_batch(self.batch_size, T, self.n_pairs, generator=_sampler_generator(self.seed, step))


def distance_eval_set(n_examples: int, seed: int, seq_len: int, n_pairs: int = 4):
    """``n_examples`` fresh sequences of length ``seq_len`` for training seed ``seed`` (x, y [N, T]).

    Their generator depends on the seed and the length, so each length has its own examples and
    adding a length to a run does not change the examples of the others.
    """
    g = torch.Generator().manual_seed(eval_seed(seed) + 7_919 * seq_len)
    return distance_batch(n_examples, seq_len, n_pairs, generator=g)


# ----------------------------------------------------------------------------- samplers
class BreakSampler:
    """``sampler(step) -> (x, y)`` for one of the tasks above: batch k is a function of (seed, k).

    ``make(batch_size, generator=...)`` builds a batch (a ``functools.partial`` of a generator above).
    """

    def __init__(self, make, batch_size: int, seed: int):
        self.make, self.batch_size, self.seed = make, batch_size, seed

    def __call__(self, step: int):
        return self.make(self.batch_size, generator=_sampler_generator(self.seed, step))


def eval_generator(seed: int) -> torch.Generator:
    """The generator of the evaluation examples of training seed ``seed`` (fresh examples)."""
    return torch.Generator().manual_seed(eval_seed(seed))
