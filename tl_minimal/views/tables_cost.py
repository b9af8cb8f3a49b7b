"""Printed tables of what generating one token keeps and costs (notebook 00, section 1), and of the
yardsticks of a BPB and which unigram baseline a table uses (notebook 00, section 7.1). Views print what
the notebook computed.

    print_generation_cost   per context length: KV cache, state, and the mixing work of both layers
    print_baselines         the uniform guess's BPB, log2 V, and the unigram's on the validation split
    print_training_text     where the training text came from, and how much of it one run's windows see
    print_two_unigrams      the unigram baseline on the whole validation split and on a table's chunks
"""

from __future__ import annotations

import math


def print_generation_cost(d: int, H: int, S: int, rows: list) -> None:
    """rows: (t, KV cache, state, attention work, triple-latent work) per context length t."""
    for row in rows:
        if len(row) != 5:
            raise ValueError(f"a row is (t, KV cache, state, attention work, triple-latent work); got {row}")
    print(f"d = {d}, H = {H}, S = {S}; per layer, while generating token t:")
    print(f"{'context t':>10s} {'KV cache (2 t d)':>18s} {'state H(S + S^2)':>18s} {'mixing work, attention':>24s} "
          f"{'mixing work, triple-latent':>27s}")
    for t, kv, state, attention, triple in rows:
        print(f"{t:>10,} {kv:>18,} {state:>18,} {attention:>24,} {triple:>27,}")


def print_baselines(vocab_size: int, unigram: float) -> None:
    """The two references of a BPB: uniform over ``vocab_size`` ids (log2 V bits) and the unigram (BPB)."""
    if vocab_size < 2:
        raise ValueError(f"a vocabulary has at least two ids; got {vocab_size}")
    print(f"uniform over {vocab_size} ids: {math.log2(vocab_size):.3f} BPB")
    print(f"unigram (byte frequencies of the train split), on the validation split: {unigram:.3f} BPB")


def print_training_text(source: str, n_train: int, protocol) -> None:
    """source: the train split's ``source``; n_train: its length in bytes; protocol: the lm protocol. One run
    sees steps x batch_size windows x seq_len bytes (windows may overlap)."""
    if n_train <= 0:
        raise ValueError(f"the training text has bytes; got n_train = {n_train}")
    seen = protocol.steps * protocol.batch_size * protocol.seq_len  # bytes in the training windows of one run
    print("training text:", source)
    print(f"one {protocol.steps}-step run sees {protocol.steps} x {protocol.batch_size} windows x "
          f"{protocol.seq_len} bytes = {seen:,} bytes, {seen / n_train:.1%} of the {n_train:,} training bytes "
          "(windows may overlap)")


def print_two_unigrams(whole: float, table: float, protocol) -> None:
    """whole: the baseline on the whole validation split; table: on the protocol's first chunks (BPB)."""
    table_bytes = (f"the first {protocol.eval_batches} x {protocol.eval_batch_size} chunks of {protocol.seq_len} "
                   "bytes (a table's)")
    print(f"unigram on {'the whole validation split':{len(table_bytes)}s}: {whole:.3f} BPB")
    print(f"unigram on {table_bytes}: {table:.3f} BPB")
