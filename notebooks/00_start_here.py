# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

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
from tl_minimal.training import config, device

# %% [markdown]
# ## Which device?
#
# `tl_minimal.training.device.get_device()` picks Apple **MPS** first, then **CUDA**, then the **CPU**. Every
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

# %% [markdown]
# ## The three data sources, as bytes and tokens
#
# Models only ever see integers. Each data source turns text (or a made-up task) into a sequence
# of ids in a different way; the pictures below show the same idea three times.

# %%
import matplotlib.pyplot as plt

from tl_minimal.data import recall as data_recall, text as data_text, tokenized as data_tokenized
from tl_minimal.views import plots

# %% [markdown]
# ### 1. Byte-level WikiText-2
#
# The paper's language-modelling numbers are measured on WikiText-2 (raw), read one **byte** at a
# time: every UTF-8 byte is one token (ids 0-255), plus three specials, `PAD` = 256, `BOS` = 257
# (begin), `EOS` = 258 (end), so the vocabulary has 259 ids. `data_text.load_split` finds the text
# (the local directory `TL_MINIMAL_DATA` first, then Hugging Face `datasets`), strips each line,
# drops the empty ones and joins them with newlines. Its `source` says where the text came from.

# %%
# NBVAL_IGNORE_OUTPUT
valid = data_text.load_split("validation")
print(valid)
print(f"{len(valid.text):,} characters -> {len(valid.tokens):,} byte tokens (BOS + bytes + EOS)")
print(repr(valid.text[:300]))

# %% [markdown]
# A byte is not a character: letters of the English alphabet take one byte each, but `é` takes
# two and `—` three, so a model reading bytes must learn to spell. `encode` and `decode` go back
# and forth; the picture shows the first bytes of the validation split (␣ is a space, ⏎ a newline).

# %%
print("vocabulary size:", data_text.VOCAB_SIZE)
for word in ["cat", "café", "a—b"]:
    ids = data_text.encode(word)
    print(f"{word!r:8} -> {ids.tolist()} -> {data_text.decode(ids)!r}")

# %%
# NBVAL_IGNORE_OUTPUT
head = valid.tokens[:48]
plots.token_strip(plots.token_labels(head), head.tolist(), per_row=24,
                  title="the first 48 byte tokens of the WikiText-2 validation split (id below each box)")
plt.show()

# %% [markdown]
# ### 2. The MiniMind tokenizer
#
# The paper's second language-modelling benchmark uses the MiniMind tokenizer: byte-level BPE with
# 6,400 ids, where frequent pieces of words get one id. The same sentence becomes far fewer tokens
# than bytes (the `Ġ` / ␣ marks a piece that starts with a space).

# %%
tokenizer = data_tokenized.load_tokenizer()
sentence = "The pair memory remembers which write followed which context."
encoding = tokenizer.encode(sentence)
print(f"vocabulary size: {tokenizer.get_vocab_size():,}")
print(f"{len(sentence.encode('utf-8'))} bytes -> {len(encoding.ids)} MiniMind tokens")
print("ids:   ", encoding.ids)
print("pieces:", encoding.tokens)

# %%
# NBVAL_IGNORE_OUTPUT
pieces = [tokenizer.decode([i]).replace(" ", "␣") for i in encoding.ids]
plots.token_strip(pieces, encoding.ids, title="one sentence, MiniMind tokens (id below each box)")
plt.show()

# %% [markdown]
# ### 3. Associative recall (generated, no download)
#
# The paper's retrieval test: four key-value pairs at the start, filler, then a question. The
# vocabulary has 64 ids: specials `PAD BOS SEP QUERY ANSWER` (0-4), keys `k5`-`k12`, values
# `v13`-`v20`, filler `f0`-`f9` (ids 21-30). Only the last position is scored: after
# `QUERY k ANSWER` the model must output the value that followed `k` in the context. Every example
# comes from a seeded generator, so this one is the same on every machine.

# %%
x, y = data_recall.recall_batch(1, generator=torch.Generator().manual_seed(0))
print("x:", x.shape, x.dtype, " y:", y.shape, "(-100 = not scored)")
print(data_recall.describe(x[0], y[0]))

# %%
# NBVAL_IGNORE_OUTPUT
plots.recall_strip(x[0], y[0])
plt.show()

# %% [markdown]
# A model that always answers the same value scores 1/8 (12.5%); one that picks one of the four
# values in the context at random scores 1/4. Notebook 06 asks which models do better than that.
#
# ## How to use the notebooks
#
# - **Order.** `01_running_state` → `02_pair_memory` → `03_readout` → `04_slots` →
#   `05_convolution` → `06_kv_gated_fusion`, each beside its library file (the README's learning
#   path); then `07_paper_reproduction` and `08_speed`. Exercises are in `notebooks/exercises/`.
# - **Smoke mode.** Every notebook has one config cell near the top, e.g.
#   `STEPS = config.pick(80, 3)`: the paper's setting normally, a tiny one under `TL_SMOKE=1`.
#   Numbers from a smoke run mean nothing; they only show that the code runs.
# - **Widgets.** Sliders and text boxes (`tl_minimal.views.widgets`) redraw a picture when you move them;
#   they need a running kernel. The committed notebooks show a static figure beside each widget,
#   because widgets do not survive on GitHub. Outside Jupyter a widget helper draws that figure.
# - **Pairs.** Each notebook is a pair, `NN_name.ipynb` (with outputs, for reading) and
#   `NN_name.py` (for diffs). JupyterLab with jupytext keeps them in step; otherwise run `make sync`.
# - **Tests.** `make test` runs every notebook top to bottom in smoke mode (`pytest --nbval`) and
#   compares the printed results of the cells that check math; cells marked `# NBVAL_IGNORE_OUTPUT`
#   (training logs, timings, random samples) only have to run.
#
# Here is a widget to try: the slider sets λ, the keep gate of the running state of notebook 01,
# and the picture shows how long the state remembers one input. First the static picture (what
# GitHub shows), then the widget (what a live kernel shows).

# %%
# NBVAL_IGNORE_OUTPUT
plots.pulse_memory([0.5, 0.9])
plt.show()

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal.views import widgets

widgets.pulse_memory_widget(lam=0.9)
