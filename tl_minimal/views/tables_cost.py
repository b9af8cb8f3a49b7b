"""Printed tables of what generating one token keeps and costs (notebook 00, section 1), and of which
unigram baseline a table uses (notebook 00, section 7.1). Views print what the notebook computed.

    print_generation_cost   per context length: KV cache, state, and the mixing work of both layers
    print_two_unigrams      the unigram baseline on the whole validation split and on a table's chunks
"""

from __future__ import annotations


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


def print_two_unigrams(whole: float, table: float, protocol) -> None:
    """whole: the baseline on the whole validation split; table: on the protocol's first chunks (BPB)."""
    table_bytes = (f"the first {protocol.eval_batches} x {protocol.eval_batch_size} chunks of {protocol.seq_len} "
                   "bytes (a table's)")
    print(f"unigram on {'the whole validation split':{len(table_bytes)}s}: {whole:.3f} BPB")
    print(f"unigram on {table_bytes}: {table:.3f} BPB")
