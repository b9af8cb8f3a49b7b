# %% [markdown]
# # 00 · Start here
#
# This repository teaches one family of recurrent sequence models, from the paper *Generic
# Triple-Latent Compression with Gated Associative Retrieval* (arXiv 2606.05175), one idea per
# notebook. Each notebook shows the idea as an equation, as a short function of the `tl_minimal`
# library (imported, never re-implemented), as a plot, as a trained model, and as something to play
# with.
#
# This first notebook checks your set-up: which device the notebooks will use, which versions are
# installed, and where the data comes from.

# %%
import torch

import tl_minimal
from tl_minimal import config, device

# %% [markdown]
# ## Which device?
#
# `tl_minimal.device.get_device()` picks Apple **MPS** first, then **CUDA**, then the **CPU**. Every
# notebook calls it once. To force a device, set the environment variable `TL_DEVICE=cpu` (or pass
# `"cpu"`, `"cuda"`, `"mps"`) before starting JupyterLab.

# %%
# NBVAL_IGNORE_OUTPUT
info = device.describe()
for key, value in info.items():
    print(f"{key:12s} {value}")
print(f"{'tl_minimal':12s} {tl_minimal.__version__}")

# %% [markdown]
# Asking for a device that is not there is an error that says what *is* there:

# %%
# NBVAL_IGNORE_OUTPUT
missing = [kind for kind in ("cuda", "mps") if kind not in device.available_devices()]
for kind in missing:
    try:
        device.get_device(kind)
    except RuntimeError as err:
        print(f"get_device({kind!r}) -> {err}")

# %% [markdown]
# ## Smoke mode
#
# The notebooks train real models. With the environment variable `TL_SMOKE=1` they cut steps,
# seeds and sizes so that the whole test suite (`make test`) finishes in minutes; without it they
# run the paper's protocols. One switch, read in one place:

# %%
# NBVAL_IGNORE_OUTPUT
print("smoke mode:", config.smoke())
print("local data directory (TL_MINIMAL_DATA):", config.data_dir())
