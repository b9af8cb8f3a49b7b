"""Byte-level WikiText-2: the text the paper's language-modelling numbers are measured on.

Glossary
    byte id        0..255       one UTF-8 byte of the text
    PAD, BOS, EOS  256, 257, 258  specials; VOCAB_SIZE = 259
    split          "train" | "validation" | "test"  (``"valid"`` is accepted too)
    window         x = tokens[i : i+T], y = tokens[i+1 : i+T+1]   [B, T] int64 each
    chunk          a window whose start i is a multiple of T: chunks never overlap, and
                   together their targets cover the split once (evaluation)

Preprocessing, exactly as the paper's reference code: strip every line, drop the empty ones,
join with "\n", encode as UTF-8, and put one BOS ... EOS around the whole split.

Where the text comes from (data/README.md; :attr:`TextSplit.source` says which): a local directory
(``TL_MINIMAL_DATA`` or ``data_dir=``), then Hugging Face ``datasets`` (offline: its cache only), else
:class:`DataUnavailable` naming both ways. Every sampler seeds its own ``torch.Generator``.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from . import offline as _offline

PAD, BOS, EOS = 256, 257, 258
VOCAB_SIZE = 259

HF_NAME, HF_CONFIG = "wikitext", "wikitext-2-raw-v1"
_SPLIT_NAMES = {"train": "train", "validation": "validation", "valid": "validation", "test": "test"}
_LOCAL_FILES = {  # split -> candidate file names inside <dir>/wikitext-2-raw, full split first
    "train": ("wiki.train.raw", "wiki.train.head1MB.txt"),
    "validation": ("wiki.valid.raw",),
    "test": ("wiki.test.raw",),
}


class DataUnavailable(RuntimeError):
    """Neither a local copy nor the Hugging Face hub could provide a data set."""


class Offline(DataUnavailable):
    """Offline (see ``offline.py``) and nothing on this machine holds the data: no request was made.

    ``reason`` says why it was decided offline, in a few words ("TL_OFFLINE=1 is set")."""

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message)
        self.reason = reason


class BadDataFile(DataUnavailable):
    """A data file exists but cannot be used: unreadable, empty, too short, or not what it should be."""


def local_root(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The local data directory: ``data_dir`` if given, else ``TL_MINIMAL_DATA``, else None."""
    if data_dir is not None:
        return Path(data_dir).expanduser().resolve()
    raw = os.environ.get("TL_MINIMAL_DATA", "").strip()
    return Path(raw).expanduser().resolve() if raw else None


# ----------------------------------------------------------------------------- preprocessing
def preprocess(raw: str) -> str:
    """Strip each line, drop empty lines, join with "\\n" (the paper's preprocessing)."""
    return "\n".join(s for s in (line.strip() for line in raw.splitlines()) if s)


def encode(text: str) -> torch.Tensor:
    """UTF-8 bytes of ``text`` wrapped as BOS ... EOS -> int64 tensor [N + 2]."""
    data = bytearray(text.encode("utf-8"))
    body = torch.frombuffer(data, dtype=torch.uint8).long() if data else torch.zeros(0, dtype=torch.long)
    return torch.cat([torch.tensor([BOS]), body, torch.tensor([EOS])])


def decode(ids) -> str:
    """Inverse of :func:`encode` (specials are dropped; broken UTF-8 shows as U+FFFD)."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")


# ----------------------------------------------------------------------------- loading
@dataclass
class TextSplit:
    """One preprocessed split: its text, its byte tokens, and a sentence saying where it came from."""

    name: str
    text: str
    tokens: torch.Tensor  # [N] int64, BOS ... EOS
    source: str
    partial: bool  # True when only the head of the split was available
    path: str | None = None  # the local file it was read from (None: the hub)

    def __repr__(self) -> str:
        return f"TextSplit({self.name!r}, {len(self.tokens):,} tokens, source={self.source!r})"


def read_text_file(path: Path) -> str:
    """The file's text (UTF-8), or a BadDataFile naming the file when it cannot be read or holds none."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadDataFile(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    if not preprocess(raw):
        size = path.stat().st_size
        raise BadDataFile(f"{path} holds no text ({size:,} bytes{', blank lines only' if size else ''}); "
                          "prepare it again with `python data/prepare_wikitext2.py --out DIR`")
    return raw


def _read_local(root: Path, split: str, label: str | None = None) -> tuple[str, str, bool, str] | None:
    """(raw text, source sentence, partial, file path) from ``root``, or None; ``label`` names root in the sentence."""
    folder = root / "wikitext-2-raw" if (root / "wikitext-2-raw").is_dir() else root
    for i, name in enumerate(_LOCAL_FILES[split]):
        path = folder / name
        if path.exists():
            raw = read_text_file(path)
            partial = i > 0
            what = f"head of the {split} split" if partial else f"full {split} split"
            shown = path if label is None else f"{label}/{path.relative_to(root).as_posix()}"
            return raw, f"local {what}, {path.stat().st_size:,} bytes ({shown})", partial, str(path)
    return None


def _read_hub(split: str) -> tuple[str, str, bool, None]:
    why = _offline.offline_reason()  # decided before any request: no 30 s of retries without a network
    if why is not None and not _offline.in_hub_cache("datasets", HF_NAME):
        raise Offline(f"offline ({why}) and no Hugging Face cache of {HF_NAME}: nothing was requested", why)
    import datasets  # imported lazily: slow to import, and not needed with a local directory

    with _offline.hub_offline() if why else contextlib.nullcontext():  # offline: the cache only, no request
        rows = datasets.load_dataset(HF_NAME, HF_CONFIG, split=split)
    where = (f"cache of {HF_NAME}/{HF_CONFIG} ({split}, full split; offline: {why})" if why
             else f"{HF_NAME}/{HF_CONFIG} ({split}, full split)")
    return "".join(rows["text"]), f"Hugging Face datasets {where}", False, None


def load_split(split: str = "train", data_dir: str | os.PathLike | None = None) -> TextSplit:
    """Load one WikiText-2 (raw) split, preprocessed and byte-encoded.

    ``data_dir`` (or ``TL_MINIMAL_DATA``) names a local directory, tried first; an explicit
    ``data_dir`` that lacks the file is an error. Otherwise Hugging Face ``datasets`` is used.
    """
    if split not in _SPLIT_NAMES:
        raise ValueError(f"unknown split {split!r}: expected one of train, validation (or valid), test")
    split = _SPLIT_NAMES[split]
    root = local_root(data_dir)
    # a directory given by TL_MINIMAL_DATA is named by the variable, an explicit one by its path
    label = "$TL_MINIMAL_DATA" if data_dir is None else None
    found = _read_local(root, split, label) if root is not None else None
    if found is None and data_dir is not None:
        raise DataUnavailable(
            f"WikiText-2 {split}: no {' or '.join(_LOCAL_FILES[split])} under {root} "
            "(expected <dir>/wikitext-2-raw/<file>); run `python data/prepare_wikitext2.py --out DIR`"
        )
    if found is None:
        try:
            found = _read_hub(split)
        except Exception as exc:  # no package, no network, no cache: all end here
            tried = f"TL_MINIMAL_DATA={root} has no {_LOCAL_FILES[split][0]}" if root else "TL_MINIMAL_DATA is unset"
            message = (
                f"WikiText-2 {split} is not available. Either point TL_MINIMAL_DATA (or data_dir=) at a "
                f"local directory holding wikitext-2-raw/{_LOCAL_FILES[split][0]} ({tried}), or let Hugging "
                f"Face datasets download {HF_NAME}/{HF_CONFIG} once with internet "
                f"(`python data/prepare_wikitext2.py`). The datasets attempt failed with: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            )
            raise (Offline(message, exc.reason) if isinstance(exc, Offline) else DataUnavailable(message)) from exc
    raw, source, partial, path = found
    text = preprocess(raw)
    return TextSplit(split, text, encode(text), source, partial, path)


# ----------------------------------------------------------------------------- batches
class WindowSampler:
    """``sampler(step) -> (x, y)``: the training batches, a pure function of (seed, stream, step).

    Because batch k depends on k only, a resumed run sees exactly the batches it would have
    seen uninterrupted, and DDP ranks (``stream=rank``) each draw different windows.
    """

    def __init__(self, tokens: torch.Tensor, batch_size: int, seq_len: int, seed: int, stream: int = 0):
        if len(tokens) < seq_len + 1:
            raise ValueError(f"text of {len(tokens)} tokens is too short for windows of {seq_len} (+1)")
        self.tokens, self.batch_size, self.seq_len = tokens, batch_size, seq_len
        self.seed, self.stream = seed, stream

    def __call__(self, step: int):
        """B random windows, starts uniform in [0, N - T - 1]: x, y [B, T] (y = x shifted by one)."""
        seed = (self.seed * 1_000_003 + self.stream * 7_919 + step * 104_729 + 12_345) % (2**63 - 1)  # one per batch
        g = torch.Generator().manual_seed(seed)
        starts = torch.randint(0, len(self.tokens) - self.seq_len, (self.batch_size,), generator=g)  # [B]
        both = self.tokens[starts[:, None] + torch.arange(self.seq_len + 1)]  # [B, T+1]
        return both[:, :-1], both[:, 1:]


def eval_chunks(tokens: torch.Tensor, seq_len: int, max_chunks: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``max_chunks`` (None: all (N - 1) // T) non-overlapping chunks in order: x, y [C, T]."""
    n = (len(tokens) - 1) // seq_len
    if n < 1:
        raise ValueError(f"text of {len(tokens)} tokens holds no chunk of {seq_len} (+1)")
    n = n if max_chunks is None else min(n, max_chunks)
    return tokens[: n * seq_len].view(n, seq_len), tokens[1 : n * seq_len + 1].view(n, seq_len)


def eval_batches(tokens: torch.Tensor, seq_len: int, batch_size: int,
                 max_batches: int | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Evaluation batches of non-overlapping chunks in text order: the first ``max_batches`` batches of
    ``batch_size`` (the paper: 128 batches of 16 chunks of 128 bytes); ``None``: the whole split."""
    x, y = eval_chunks(tokens, seq_len, None if max_batches is None else max_batches * batch_size)
    return [(x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, len(x), batch_size)]
