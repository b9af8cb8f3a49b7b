"""Project-wide switches, read in one place: ``TL_SMOKE=1`` (true, yes, on) turns on *smoke mode* (notebooks
and experiments cut steps, seeds and sizes: :func:`smoke`, :func:`pick`); :func:`data_dir` is
``TL_MINIMAL_DATA``'s local data directory (``data/README.md``) or None."""

from __future__ import annotations

import os

from ..data.offline import FALSE_WORDS, TRUE_WORDS
from ..data.text import local_root as data_dir  # noqa: F401  (data_dir(): TL_MINIMAL_DATA's path, or None)


def smoke() -> bool:
    """True when ``TL_SMOKE`` asks for the short smoke mode (read afresh on every call)."""
    raw = os.environ.get("TL_SMOKE", "").strip().lower()
    words = TRUE_WORDS | FALSE_WORDS | {""}  # "": unset
    if raw not in words:
        raise ValueError(f"environment variable TL_SMOKE={raw!r}: expected one of {sorted(words)}")
    return raw in TRUE_WORDS


def pick(full, smoke_value):
    """``smoke_value`` in smoke mode, ``full`` otherwise: the one idiom for cutting work."""
    return smoke_value if smoke() else full
