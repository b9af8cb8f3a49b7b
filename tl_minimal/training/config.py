"""Project-wide switches, read in one place.

``TL_SMOKE=1`` (or any of ``true``/``yes``/``on``) turns on *smoke mode*: notebooks and
experiments cut steps, seeds and sizes so that the whole suite runs quickly on a 2-core CPU.
Everything that wants to know reads :data:`SMOKE` (or calls :func:`smoke`), never the
environment variable itself.

``TL_MINIMAL_DATA`` names a local directory holding offline copies of the data sets (see
``data/README.md``); :data:`DATA_DIR` is that path or ``None``.
"""

from __future__ import annotations

import os
from pathlib import Path

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def _flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={raw!r}: expected one of {sorted(_TRUE | _FALSE)}")


def smoke() -> bool:
    """True when ``TL_SMOKE`` asks for the short smoke mode (read afresh on every call)."""
    return _flag("TL_SMOKE")


def data_dir() -> Path | None:
    """The local data directory named by ``TL_MINIMAL_DATA``, or None when it is unset."""
    raw = os.environ.get("TL_MINIMAL_DATA", "").strip()
    return Path(raw).expanduser().resolve() if raw else None


SMOKE: bool = smoke()
DATA_DIR: Path | None = data_dir()


def pick(full, smoke_value):
    """``smoke_value`` in smoke mode, ``full`` otherwise: the one idiom for cutting work."""
    return smoke_value if smoke() else full
