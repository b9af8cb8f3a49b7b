"""The set-up checks of notebook 00, section 6: which device a run gets, the error for one that is not
there, smoke mode and the local data directory. Each prints what the library reports; nothing here picks
a device or reads an environment variable itself (``tl_minimal.training.device`` and ``.config`` do).

    print_device            device.describe(), one line a field, and the library's version
    print_missing_devices   the error get_device() raises for each of CUDA and MPS that this machine lacks
    print_smoke_and_data    smoke mode (TL_SMOKE) and whether TL_MINIMAL_DATA names a local data folder
"""

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
