"""Whether the Hugging Face hub can be reached, decided before any request (issue 52; data/README.md).

Offline, ``datasets`` would retry each request for about 30 seconds, so the loaders ask
:func:`offline_reason` first and then read only the cache (inside :func:`hub_offline`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

HUB_HOST, HUB_PORT = "huggingface.co", 443
PROBE_SECONDS = 1.0  # the longest the probe may take; a hub that answers later counts as offline
OFFLINE_VARIABLES = ("TL_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
TRUE_WORDS, FALSE_WORDS = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}  # also TL_SMOKE's
_probed: list[str | None] = []  # the probe's answer, once made: [reason or None]


def _probe(host: str, port: int, seconds: float) -> str | None:
    """None when a TCP connection to host:port opens within ``seconds``, else why not (one short phrase)."""
    outcome: list[str | None] = []

    def connect():
        try:
            socket.create_connection((host, port), timeout=seconds).close()
            outcome.append(None)
        except Exception as exc:  # OSError for every network failure; anything else is no answer either
            outcome.append(f"{host} cannot be reached ({getattr(exc, 'strerror', None) or type(exc).__name__})")

    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    worker.join(seconds)
    return outcome[0] if outcome else f"{host} did not answer within {seconds:g} s"


def offline_reason() -> str | None:
    """Why the hub should not be asked (a phrase such as "TL_OFFLINE=1 is set"), or None to go ahead: one of
    :data:`OFFLINE_VARIABLES` true, or huggingface.co:443 not answering within ``PROBE_SECONDS`` (asked
    once per process); ``TL_OFFLINE=0``: online, no probe."""
    for name in OFFLINE_VARIABLES:
        value = os.environ.get(name, "").strip().lower()
        if value in TRUE_WORDS:
            return f"{name}={os.environ[name].strip()} is set"
    if os.environ.get("TL_OFFLINE", "").strip().lower() in FALSE_WORDS:
        return None
    if not _probed:
        _probed.append(_probe(HUB_HOST, HUB_PORT, PROBE_SECONDS))
    return _probed[0]


def _cache_roots() -> list[Path]:
    """Where huggingface_hub and datasets keep their caches, read from the same variables they read."""
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    hub = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
    data = os.environ.get("HF_DATASETS_CACHE") or os.path.join(home, "datasets")
    return [Path(hub).expanduser(), Path(data).expanduser()]


def in_hub_cache(kind: str, repo: str) -> bool:
    """True when a cache folder of ``repo`` (kind "datasets" or "models") exists: worth a cache-only load
    (only folder names are looked at: a partial download is a false yes, whose load then fails fast)."""
    names = [f"{kind}--{repo.replace('/', '--')}", repo.replace("/", "___"), repo.split("/")[-1]]
    return any((root / name).exists() for root in _cache_roots() for name in names)


@contextlib.contextmanager
def hub_offline():
    """Inside, ``datasets`` and ``huggingface_hub`` use their cache only and make no request.

    Both copy HF_HUB_OFFLINE / HF_DATASETS_OFFLINE into module flags at their first import: they are
    imported first, then flags and variables are set, and all are put back on leaving.
    """
    import datasets.config as datasets_config
    import huggingface_hub.constants as hub_constants

    saved_env = {name: os.environ.get(name) for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    flags = [(module, name, getattr(module, name))
             for module, names in ((hub_constants, ("HF_HUB_OFFLINE",)),
                                   (datasets_config, ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")))
             for name in names if hasattr(module, name)]
    try:
        os.environ.update({name: "1" for name in saved_env})
        for module, name, _ in flags:
            setattr(module, name, True)
        yield
    finally:
        for module, name, old in flags:
            setattr(module, name, old)
        for name, old in saved_env.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
