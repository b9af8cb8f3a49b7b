"""Notebook 00's set-up checks: the device a run gets, the error for one that is not there, smoke mode and
the local data folder. Each prints what ``tl_minimal.training.device`` and ``.config`` report."""

from __future__ import annotations

from ..training import config, device


def print_device(version: str) -> None:
    """The device every notebook's get_device() picks, what it is, and ``version`` (tl_minimal.__version__)."""
    for key, value in {**device.describe(), "tl_minimal": version}.items():
        print(f"{key:12s} {value}")


def print_missing_devices() -> None:
    """For each of "cuda" and "mps" not available here, the RuntimeError of ``get_device(kind)`` (it names
    the devices that are); nothing is printed on a machine that has both."""
    missing = [kind for kind in ("cuda", "mps") if kind not in device.available_devices()]
    for kind in missing:
        try:
            device.get_device(kind)
        except RuntimeError as err:
            print(f"get_device({kind!r}) -> {err}")


def print_smoke_and_data() -> None:
    """Smoke mode on or off, and the local data folder's name (never its full path, which is the user's)."""
    print("smoke mode:", config.smoke())
    root = config.data_dir()  # print(root) shows the full path on your machine
    where = f"set, a folder named {root.name!r}" if root else "not set, so WikiText-2 comes from Hugging Face datasets"
    print("local data directory (TL_MINIMAL_DATA):", where)
