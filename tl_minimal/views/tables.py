"""The printed numbers under the figures of notebooks 00-04: views print what the notebook computed.
Losses come in nats (the library's history) and are printed in bits per byte, nats / ln 2."""

from __future__ import annotations

import math

import torch


def _rounded(values, digits: int) -> list:
    return [round(v, digits) for v in values.tolist()]


# --- notebook 00: what generating keeps and costs, the yardsticks of a BPB -----------------------

def print_generation_cost(d: int, H: int, S: int, rows: list) -> None:
    """rows: (t, KV cache, state, attention work, triple-latent work) per context length t."""
    print(f"d = {d}, H = {H}, S = {S}; per layer, while generating token t:")
    print(f"{'context t':>10s} {'KV cache (2 t d)':>18s} {'state H(S + S^2)':>18s} {'mixing work, attention':>24s} "
          f"{'mixing work, triple-latent':>27s}")
    for t, kv, state, attention, triple in rows:
        print(f"{t:>10,} {kv:>18,} {state:>18,} {attention:>24,} {triple:>27,}")


def print_baselines(vocab_size: int, unigram: float) -> None:
    """The two references of a BPB: uniform over ``vocab_size`` ids (log2 V bits) and the unigram (BPB)."""
    print(f"uniform over {vocab_size} ids: {math.log2(vocab_size):.3f} BPB")
    print(f"unigram (byte frequencies of the train split), on the validation split: {unigram:.3f} BPB")


def print_training_text(source: str, n_train: int, protocol) -> None:
    """source: the train split's ``source``; n_train: its length in bytes; protocol: the lm protocol. One run
    sees steps x batch_size windows x seq_len bytes (windows may overlap)."""
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


# --- training runs (notebooks 01, 02 and 03c) -----------------------------------------------------

def print_loop_against_fit(mine: list, fit_losses: list) -> None:
    """Two columns of losses in bits per byte, one row per step; both lists in nats, of one length."""
    print("step   loop above   fit()      (bits per byte = nats / ln 2)")
    for k, (a, b) in enumerate(zip(mine, fit_losses, strict=True)):
        print(f"{k:4d}   {a / math.log(2):10.4f}   {b / math.log(2):8.4f}")


def print_bpb_table(params: dict, seconds: dict, bpb: dict, paper: dict, unigram: float, vocab_size: int) -> None:
    """One row per model ({name: value} each): parameters, training seconds, our BPB, the paper's; then the
    unigram and uniform baselines (bits per byte)."""
    print(f"{'model':14s} {'params':>8s} {'training s':>10s} {'BPB (ours)':>11s} {'BPB (paper)':>12s}")
    for name in params:
        theirs = f"{paper[name]:.3f}" if name in paper else "-"
        print(f"{name:14s} {params[name]:>8,} {seconds[name]:>10.1f} {bpb[name]:>11.3f} {theirs:>12s}")
    print(f"{'unigram':14s} {'':>8s} {'':>10s} {unigram:>11.3f}   (byte frequencies, no context)")
    print(f"{'uniform':14s} {'':>8s} {'':>10s} {math.log2(vocab_size):>11.3f}   (all {vocab_size} ids equally likely)")


def print_short_run(history: dict, unigram: float, where: str) -> None:
    """history: fit()'s (``steps``, ``seconds``, ``loss`` in nats); unigram: the baseline (BPB) on ``where``."""
    bits = [v / math.log(2) for v in history["loss"]]  # nats -> bits per byte
    print(f"{history['steps']} steps in {history['seconds']:.0f} s; training loss {bits[0]:.3f} -> {bits[-1]:.3f} "
          f"bits per byte (unigram baseline on {where}: {unigram:.3f})")


def _chunks_phrase(record: dict, unigram: float, n_chunks: int) -> str:
    return (f"validation BPB {record['val_bpb']:.3f} (unigram baseline on the same {n_chunks:,} chunks: "
            f"{unigram:.3f})")


def print_shipped_record(record: dict, unigram: float, n_chunks: int) -> None:
    """How a shipped model (its ``record``) was made, then its last training loss and validation BPB beside the
    baseline on the same chunks (``course.shipped.unigram_on_record_chunks``'s unigram, n_chunks)."""
    scored = _chunks_phrase(record, unigram, n_chunks)
    print(f"made by: {record['command']}  ({record['train_seconds'] / 60:.1f} min of training on "
          f"{record['threads']} CPU thread)")
    print(f"{record['steps']} steps: training loss {record['loss_log']['loss'][-1] / math.log(2):.3f} bits per byte "
          f"at the last step, {scored}")


def print_shipped_bpb(record: dict, unigram: float, n_chunks: int) -> None:
    """As :func:`print_shipped_record`, in one line and without the training loss."""
    scored = _chunks_phrase(record, unigram, n_chunks)
    print(f"{record['steps']} steps (made by: {record['command']}, {record['train_seconds'] / 60:.1f} min of "
          f"training): {scored}")


# --- gates and slots (notebooks 01, 02 and 04) -----------------------------------------------------

def print_half_lives(runs: dict) -> None:
    """runs {training steps: (half-lives [L, H], gates [L, T, H])}: one line per layer, one summary per run."""
    for steps, (half_lives, lam) in runs.items():
        for layer in range(half_lives.shape[0]):
            print(f"{steps} steps, layer {layer}: half-life of the mean decay per head",
                  _rounded(half_lives[layer], 2))
        spread = torch.as_tensor(lam).std(dim=1).mean(1)  # [L]: std over tokens, mean over heads
        print(f"{steps} steps: λ from {lam.min():.2f} to {lam.max():.2f}; its spread over the tokens (std, mean "
              f"over heads) per layer {_rounded(spread, 2)}")


def print_gate_means(gates: dict, name: str = "γ") -> None:
    """Notebook 02, section 4: gates {steps: [L, T, H]}; per run the mean per layer and the spread over tokens."""
    for steps, g in gates.items():
        print(f"{steps:5d} steps: mean {name} per layer", _rounded(g.mean(dim=(1, 2)), 3),
              "; spread over tokens (std, mean over heads)", _rounded(g.std(dim=1).mean(1), 2))


def print_slot_choices(entropy: dict, largest: dict) -> None:
    """Notebook 04, section 4: entropy {steps: [L, H]} of the slot weights and largest {steps: [L]} weight."""
    for steps, ent in entropy.items():
        for i in range(ent.shape[0]):
            print(f"{steps:5d} steps, layer {i}: mean entropy per head {_rounded(ent[i], 3)}, "
                  f"largest weight on average {largest[steps][i]:.3f}")


# --- notebook 02's pair toy: which write each memory returns for a context -------------------------

def _own_write(table: torch.Tensor) -> int:
    return int((table.argmax(dim=1) == torch.arange(table.shape[0])).sum())


def print_cosine_table(name: str, table: torch.Tensor) -> None:
    """table [n, n]: the cosine of the answer to 'what followed δ_i?' (row i) with write b_j (column j)."""
    right = _own_write(table)
    print(f"{name}: cosine of the answer to 'what followed δ_i?' with b_j (rows i, columns j); "
          f"{right} of {table.shape[0]} answered with their own write\n{table.numpy().round(2)}")


def print_many_pairs(table: torch.Tensor, S: int) -> None:
    """table [n, n] for n pairs stored in a memory of size S: the count right and the range of own cosines."""
    right, own = _own_write(table), table.diagonal()
    n = table.shape[0]
    print(f"{n} pairs in S = {S}: {right} of {n} answered with their own write; cosine with it from "
          f"{own.min():.2f} to {own.max():.2f} (1 for a clean read)")


def print_recall_at(curves: dict, n_pairs: int) -> None:
    """curves: {S: recall [n_pairs]}, recall[n - 1] the fraction answered right with n pairs stored."""
    for S, recall in curves.items():
        print(f"S = {S:2d}: recall with {S} pairs {recall[S - 1]:.0%}, with {n_pairs} pairs {recall[-1]:.0%}")
