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
# This course teaches one family of recurrent sequence models, from the paper *Generic
# Triple-Latent Compression with Gated Associative Retrieval* (our notes on it: `docs/paper.md`).
# Each notebook shows one idea as an equation, as a short function of the `tl_minimal` library, as
# a plot and as a trained model.
#
# **Learning goals.** After this notebook you can
# - say why a layer with a fixed-size state is worth studying next to attention;
# - read the drawn triple-latent layer and the model around it, and name every symbol in them;
# - check your set-up (device, smoke mode, data) and read a bits-per-byte number against its
#   yardstick.
#
# **Prerequisites.** Python and PyTorch (tensors, `nn.Module`, autograd); softmax attention
# (queries, keys, values); matrix-vector and outer products. Nothing about linear attention or
# state-space models: the course builds it.
#
# **Time.** About 45 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 17 s (CPU 6 s, peak 447 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import matplotlib.pyplot as plt
import torch

from tl_minimal import default_config, views
from tl_minimal.course import setup
from tl_minimal.training.protocols import chunk_eval_set, protocol
from tl_minimal.views import diagrams, plots, plots_training, tables, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# ## 1. Why this family: a state that does not grow
#
# A Transformer that generates text keeps, in every layer, the key and the value of every token
# it has seen (the **KV cache**): $2\,t\,d$ numbers per layer after $t$ tokens, for model width
# $d$. Each new token compares its query with all $t$ keys. So the memory *and* the work per token
# grow with the length of the text.
#
# A recurrent layer keeps a **fixed-size state** instead and updates it once per token. The
# triple-latent layer carries, per head, a running state $s_t$ ($S$ numbers) and a pair memory
# $P_t$ ($S \times S$ numbers); section 2 defines both. The state has the same size at every token,
# and so has the work for the next token: O(1) in the length of the text. The price: everything the
# model knows about the past must fit into that state.
#
# The count below uses the library's default sizes (the paper's byte-level models). Per layer, it
# counts only what grows with the context.

# %%
tf, tl = default_config("transformer"), default_config("triple_latent")
d, H, S = tf["d_model"], tl["n_heads"], tl["state_dim"]
state_numbers = H * (S + S * S)  # s_t: H x S, P_t: H x S x S
# per context length t: KV cache 2 t d; the state; the mixing work of attention (t scores q . k of d
# each, and a weighted sum of t values of d each); of triple-latent (update s: S, update P: S x S,
# read P^T q^l: S x S, per head)
rows = [(t, 2 * t * d, state_numbers, 2 * t * d, H * (S + 2 * S * S)) for t in (128, 1_024, 8_192, 65_536)]
tables.print_generation_cost(d, H, S, rows)

# %%
lengths = [2**k for k in range(4, 18)]
plots_training.numbers_kept(lengths, [2 * t * d for t in lengths], state_numbers)  # log-log axes
plt.show()

# %% [markdown]
# These are counts, not timings; the optional notebook 08 times them. The same layer also trains
# fast on whole sequences, through a *chunked* form that notebook 01b derives.
#
# ## 2. The triple-latent layer, drawn
#
# One layer at token $t$, for one head (the model runs $H$ heads side by side):

# %%
diagrams.layer_diagram()
plt.show()

# %% [markdown]
# Read it from left to right.
#
# - The layer input $x_t$ (width $d$, the residual stream) is LayerNormed: $n_t = \mathrm{LN}(x_t)$.
# - Six linear maps of $n_t$: four **tanh projections** $a_t, b_t, q^l_t, q^r_t$ ($S$ numbers per
#   head each, every entry in $(-1, 1)$) and two **keep gates** $\lambda_t, \gamma_t$ (one number in
#   $(0, 1)$ per head, through a sigmoid $\sigma$).
# - **Step 1, the running state** (notebook 01): $s_t = \lambda_t s_{t-1} + (1 - \lambda_t) a_t$,
#   a moving average of the writes $a$: a summary of the recent context.
# - **Step 2, the pair memory** (notebook 02): $P_t = \gamma_t P_{t-1} + (1 - \gamma_t)\, s_{t-1}
#   b_t^\top$, an $S \times S$ matrix. It pairs the context *before* token $t$ ($s_{t-1}$) with what
#   token $t$ writes ($b_t$).
# - **Step 3, the readout** (notebook 03): $r_t = (P_t^\top q^l_t) \odot q^r_t$. The left query
#   $q^l_t$ is compared (a dot product) with the stored contexts $s_{\tau-1}$ and gets back the
#   writes $b_\tau$ that followed them, more of a write whose context matches well. The right query
#   $q^r_t$ then scales each entry of the result.
# - $o_t = W_o\,\mathrm{vec}(r_t)$ maps the readouts of the $H$ heads back to width $d$.
#
# **The name.** The layer compresses *triples*: a context ($s_{\tau-1}$), the write that followed
# it ($b_\tau$), and a later query ($q^l_t$) that reads how the two were paired. Only $s$ and $P$
# are carried from token to token (dashed arrows): they are the layer's whole state.
#
# ## 3. The whole model, drawn
#
# The layer replaces attention inside an otherwise ordinary pre-LayerNorm language model:

# %%
diagrams.model_diagram()
plt.show()

# %% [markdown]
# Bottom to top: each token id picks a row of the embedding $E$, $e_t = E[\mathrm{token}_t]$, and a
# learned position vector is added, $x_t = e_t + pos_t$. Then `n_layers` pre-LN blocks each add the
# mixer's output $o_t$, and then a feed-forward network (FFN), to $x_t$. A final LayerNorm gives
# $h_t$. The head is **tied** to the embedding (the same matrix $E$): it turns $h_t$ into one score
# per vocabulary entry, $\mathrm{logits}_t = E\,h_t$, the prediction of token $t+1$.
# Some variants add a part (dashed): a causal convolution before the blocks (notebook 05), or a
# second memory whose output $z_t$ is added after the final LayerNorm, "late fusion" (notebook 06).
#
# <a id="glossary"></a>
#
# ## 4. Glossary: the symbols of the layer
#
# Each symbol has one meaning in every notebook. Here are the symbols of the drawn layer; later
# notebooks define each new symbol where they first use it. The full glossary, with code names and
# the terms of the recall experiments, is [`docs/glossary.md`](../docs/glossary.md).
#
# | symbol | meaning |
# |---|---|
# | $B, T, H, S, d, V$ | batch, time (sequence length), heads, state size per head, model width, vocabulary size |
# | $t$ | the current position (token $t$ is the $(t+1)$-th token; counting starts at 0) |
# | $\tau$ | an earlier position, where something was written; $\tau$ **only** means time ($\tau'$ a second one) |
# | $x_t$ | residual stream, the input of a layer |
# | $n_t$ | LayerNormed layer input $\mathrm{LN}(x_t)$ (only that) |
# | $o_t$ | the mixer's output, added to $x_t$ |
# | $\sigma$ | the sigmoid, $\sigma(x) = 1/(1 + e^{-x})$ (never an index) |
# | $a_t, b_t, q^l_t, q^r_t$ | the four tanh projections of $n_t$: write into the running state, write into the pair memory, left query, right query ($[B, T, H, S]$) |
# | $\lambda_t, \gamma_t$ | keep gates of the running state / pair memory, one number in $(0, 1)$ per head ($[B, T, H]$) |
# | $s_t$ | running state after token $t$; $s_{t-1}$ the state before token $t$ |
# | $P_t$ | pair memory after token $t$, $S \times S$ per head; $P_{-1}$ its initial value. $P$ **only** means the pair memory |
# | $r_t$ | readout $(P_t^\top q^l_t) \odot q^r_t$ |
# | $W_o$ | output projection $HS \to d$ |
#
# ## 5. The learning path and the time measure
#
# Read the notebooks in this order; the optional ones come after the course.
#
# **How the times are measured.** Reading takes a minute for every 100 words and for every 4 lines
# of code, 4 seconds for every number in the prose, and half a minute for every figure. To that
# comes the run: the wall time of every cell in default mode on a 2-core CPU
# (`docs/notebook_cost.json`). Each notebook's **Time** line gives its total.
#
# | notebook | what you learn | time |
# |---|---|---|
# | `00_start_here` | why a fixed-size state; the layer drawn; set-up | 45 min (runs in 17 s) |
# | `01_running_state` | the running state; how long a gate remembers | 60 min (runs in 55 s) |
# | `01b_chunked_running_state` | its fast, chunked form | 55 min (runs in 9 s) |
# | `02_pair_memory` | the pair memory | 55 min (runs in 79 s) |
# | `03_readout` | the readout as linear attention; the whole layer | 55 min (runs in 19 s) |
# | `03b_chunked_readout` | the readout's chunked form | 45 min (runs in 9 s) |
# | `03c_trained_model` | a trained layer against a Transformer | 45 min (runs in 146 s) |
# | `04_slots` | a cheaper memory with slots | 60 min (runs in 99 s) |
# | `05_convolution` | the hybrid's local convolution | 55 min (runs in 48 s) |
# | `06_kv_gated_fusion` | an exact key-value memory beside the state | 60 min (runs in 27 s) |
# | `06a_kv_recall` | the key-value memory trained on recall | 60 min (runs in 73 s) |
# | `06b_family` | the relatives: GLA, H3, DeltaNet | 55 min (runs in 5 s) |
# | `07_paper_reproduction` | which of the paper's claims hold | 60 min (runs in 5 s) |
# | `07b_diagnoses` | optional: two results of 07, diagnosed | 65 min (runs in 53 s) |
# | `07c_recall_breaks` | optional: where recall breaks | 65 min (runs in 10 s) |
# | `08_speed` | optional: the forms timed | 90 min (runs in 44 s) |
#
# Exercises 01-06 (`notebooks/exercises/`, worked solutions in its `solutions/`) follow the
# notebook of the same number.
#
# ## 6. Your set-up: device and smoke mode
#
# `tl_minimal.training.device.get_device()` picks Apple **MPS** first, then **CUDA**, then the
# **CPU**. Every notebook calls it once. To force a device, set the environment variable
# `TL_DEVICE=cpu` (or `cuda`, `mps`) before you start JupyterLab.

# %%
# NBVAL_IGNORE_OUTPUT
setup.print_device(tl_minimal.__version__)  # device.describe(): the device get_device() picks, and what it is

# %% [markdown]
# Asking for a device that is not there is an error that says what *is* there:

# %%
# NBVAL_IGNORE_OUTPUT
setup.print_missing_devices()  # device.get_device(kind) for CUDA and MPS, where missing: the RuntimeError's text

# %% [markdown]
# **Smoke mode.** With the environment variable `TL_SMOKE=1` the notebooks cut steps, seeds and
# sizes, so that the test suite finishes in minutes; without it they run the paper's protocols.
# Numbers from a smoke run mean nothing; they only show that the code runs.

# %%
# NBVAL_IGNORE_OUTPUT
setup.print_smoke_and_data()  # config.smoke() and config.data_dir(): TL_SMOKE and TL_MINIMAL_DATA

# %% [markdown]
# ## 7. The data, as bytes and tokens
#
# Models only see integers: each data source turns text (or a made-up task) into a sequence of ids.

# %%
from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.training.evaluate import unigram_bits

# %% [markdown]
# ### 7.1 Byte-level WikiText-2
#
# The paper's language-modelling numbers are measured on WikiText-2, read one **byte** at a time:
# every byte of its UTF-8 encoding is one token, plus three specials, `PAD`, `BOS` (begin) and `EOS`
# (end). `data_text.load_split` finds the text (in the local directory `TL_MINIMAL_DATA` first, then
# with Hugging Face `datasets`); its `source` says where it came from. `data/README.md` gives the
# preprocessing, and the word-piece tokenizer of the paper's second benchmark.

# %%
# NBVAL_IGNORE_OUTPUT
valid = data_text.load_split("validation")
print(valid)
print(repr(valid.text[:300]))

# %% [markdown]
# A byte is not a character: `é` takes two bytes and `—` three, so a model that reads bytes must
# learn to spell. `encode` and `decode` go back and forth:

# %%
for word in ["cat", "café", "a—b"]:
    ids = data_text.encode(word)
    print(f"{word!r:8} -> {ids.tolist()} -> {data_text.decode(ids)!r}")

# %% [markdown]
# **The yardstick for bits per byte.** A language model is scored by its cross-entropy on the
# validation text in **bits per byte** (BPB): the average number of bits it needs to encode the next
# byte (the library's history is in nats; the notebooks divide by $\ln 2$). Guessing uniformly over
# the $V$ ids costs $\log_2 V$ bits. The **unigram** model predicts every byte from how often it
# occurs in the training text, ignoring the context. A model must get below it to have learned
# anything about context, so every BPB in the notebooks stands beside it.

# %%
# NBVAL_IGNORE_OUTPUT
train = data_text.load_split("train")
UNIGRAM_BPB = unigram_bits(train.tokens, valid.tokens[1:], data_text.VOCAB_SIZE)
tables.print_baselines(data_text.VOCAB_SIZE, UNIGRAM_BPB)  # uniform: log2 V; then the unigram

# %% [markdown]
# **How much text a run sees.** Every byte-level run follows the paper's protocol (`docs/paper.md`
# section 4.1): `STEPS` AdamW steps, each on a batch of random 128-byte windows of the training
# text, then BPB on the first chunks of the validation split. The cell below prints where the
# training text came from (the whole train split, or only its head in an offline copy) and how much
# of it one run sees.

# %%
# NBVAL_IGNORE_OUTPUT
lm = protocol("lm")  # the paper's byte-level protocol, as every notebook builds it
tables.print_training_text(train.source, len(train.tokens), lm)  # one run: steps x batch x seq_len bytes
_, y_table = chunk_eval_set(valid.tokens, lm)  # the validation bytes a BPB table scores
unigram_table = unigram_bits(train.tokens, y_table, data_text.VOCAB_SIZE)
tables.print_two_unigrams(UNIGRAM_BPB, unigram_table, lm)  # whole split, then a table's chunks

# %% [markdown]
# **Which unigram baseline a table uses.** The baseline is scored on *the same validation bytes as
# the models beside it*: the whole split in some notebooks, the protocol's first chunks in others.
# So it moves by a few hundredths from table to table, as the two lines above show. Compare a model
# with the baseline printed beside it, never with another table's.
#
# ### 7.2 Associative recall (generated, no download)
#
# The paper's retrieval test: four key-value pairs at the start, filler, then a question. After
# `QUERY k ANSWER` the model must output the value that followed `k` in the context; only that last
# position is scored. The generator is seeded, so this example is the same on every machine.

# %%
x, y = data_recall.recall_batch(1, generator=torch.Generator().manual_seed(0))
print("x:", x.shape, x.dtype, " y:", y.shape, "(-100 = not scored)")
print(data_recall.describe(x[0], y[0]))

# %%
# NBVAL_IGNORE_OUTPUT
plots.recall_strip(x[0], y[0], per_row=22)
plt.show()

# %% [markdown]
# A model that always answers the same value scores 1/8; one that picks one of the four values in
# the context at random scores 1/4. Notebook 06 asks which models do better than that. Notebooks 06b
# and 07 also use **MQAR** (multi-query associative recall, the form of the Zoology study): several
# key-value pairs, then every key is asked in turn, and every answer is scored.
#
# ## 8. How to use the notebooks
#
# - **Pairs.** `NN_name.ipynb` (with outputs) and `NN_name.py` (for diffs) hold the same notebook;
#   `python run.py sync` keeps them in step.
# - **Results.** A rate of wins over seeds comes with its **Clopper-Pearson interval**: the range
#   of true win rates that the count does not rule out (at 95 in 100 confidence).
# - **Tests.** `python run.py test` runs every notebook in smoke mode (`pytest --nbval`) and
#   compares the printed results of the cells that check math; cells marked `# NBVAL_IGNORE_OUTPUT`
#   (training logs, timings) only have to run.
#
# Here is a widget to try (it moves in a running kernel). The slider sets $\lambda$, the keep gate
# of the running state; the picture shows how much of one input $a_0 = 1$ the state still holds $t$
# tokens later, $(1-\lambda)\lambda^t$ (notebook 01 derives it). The share left, $\lambda^t$, halves
# every **half-life**, a fixed number of tokens that grows with $\lambda$. The $\lambda = 0.5$ curve
# stays as a reference; try $\lambda = 0.995$ and watch the time axis grow.

# %%
# NBVAL_IGNORE_OUTPUT
widgets.pulse_memory_widget(lam=0.9)

# %% [markdown]
# ## Summary
#
# - A Transformer's KV cache, and its work per token, grow with the context; the triple-latent
#   layer carries a fixed-size state, $s_t$ and $P_t$, and does O(1) work per token.
# - The layer: four tanh projections and two keep gates; the running state $s$, the pair memory $P$
#   and the readout $r$. It replaces attention in an ordinary language model.
# - Section 4 names the layer's symbols, [`docs/glossary.md`](../docs/glossary.md) all of them. A
#   BPB is read against the unigram baseline printed beside it.
#
# **Next:** [`01_running_state.ipynb`](01_running_state.ipynb), step 1 of the layer.
