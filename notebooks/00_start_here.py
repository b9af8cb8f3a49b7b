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
# Triple-Latent Compression with Gated Associative Retrieval* (arXiv 2606.05175; our notes on it:
# `docs/paper.md`), one idea per notebook. Each notebook shows the idea as an equation, as a short
# function of the `tl_minimal` library (imported, never re-implemented), as a plot, as a trained
# model, and as something to play with.
#
# **Learning goals.** After this notebook you can
# - say why a layer with a fixed-size state is worth studying next to attention (what it saves,
#   what it may lose);
# - read the drawn triple-latent layer and the model around it, and name every symbol in them;
# - find the symbols of notebooks 00-03 in one glossary (section 4), and every symbol of the course
#   in `docs/glossary.md`;
# - check your set-up (device, smoke mode, data) and know the yardstick every bits-per-byte
#   number is read against.
#
# **Prerequisites.** Python and PyTorch (tensors, `nn.Module`, autograd); softmax attention
# (queries, keys, values) as in a small Transformer; matrix-vector and outer products. Nothing
# about linear attention or state-space models: the course builds it.
#
# **Time.** About 60 minutes: 59 of reading (3895 words at 100 a minute, 67 lines of code at 4, 7
# figures at half a minute each) and a run of every cell in default mode, measured at 17 s (CPU 6 s,
# peak 447 MiB) on a 2-core CPU (`docs/notebook_cost.json`).

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

import tl_minimal
from tl_minimal import default_config, views
from tl_minimal.course import setup
from tl_minimal.training.protocols import chunk_eval_set, protocol
from tl_minimal.views import diagrams, plots, plots_cost, tables_cost, tables_tokens, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# ## 1. Why this family: a state that does not grow
#
# A Transformer that generates text keeps, in every layer, the key and the value of every token
# it has seen (the **KV cache**): $2\,t\,d$ numbers per layer after $t$ tokens, for model width
# $d$. Each new token compares its query with all $t$ keys, so the memory *and* the work per token
# grow with the length of the text.
#
# A recurrent layer keeps a **fixed-size state** instead and updates it once per token. The
# triple-latent layer carries, per head, a running state $s_t$ ($S$ numbers) and a pair memory
# $P_t$ ($S \times S$ numbers); both are defined in section 2. The state is the same size at token
# 10 and at token 100,000, and so is the work to produce the next token: O(1) in the length. The
# price is that everything the model knows about the past must fit into that state; notebooks 02,
# 03 and 06 look at what it keeps and what it cannot.
#
# The count below reads the sizes from the library's defaults (the paper's byte-level models);
# it counts only the part that depends on the context (the KV cache against the state), per layer.

# %%
tf, tl = default_config("transformer"), default_config("triple_latent")
d, H, S = tf["d_model"], tl["n_heads"], tl["state_dim"]
state_numbers = H * (S + S * S)  # s_t: H x S, P_t: H x S x S
# per context length t: KV cache 2 t d; the state; the mixing work of attention (t scores q . k of d
# each, and a weighted sum of t values of d each); of triple-latent (update s: S, update P: S x S,
# read P^T q^l: S x S, per head)
rows = [(t, 2 * t * d, state_numbers, 2 * t * d, H * (S + 2 * S * S)) for t in (128, 1_024, 8_192, 65_536)]
tables_cost.print_generation_cost(d, H, S, rows)

# %%
lengths = [2**k for k in range(4, 18)]
plots_cost.numbers_kept(lengths, [2 * t * d for t in lengths], state_numbers)  # log-log axes
plt.show()

# %% [markdown]
# These are counts, not timings. The optional notebook 08 (after the course) measures them: on
# our CPU the next token of `triple_latent` costs the same at context 2,048 as at 128
# (`docs/paper.md` section 6.5). The
# same layer also trains fast on whole sequences, through a *chunked* form that notebook 01b
# derives.
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
# - The layer input $x_t$ (a vector of width $d$, the residual stream) is LayerNormed:
#   $n_t = \mathrm{LN}(x_t)$.
# - Six linear maps of $n_t$: four **tanh projections** $a_t, b_t, q^l_t, q^r_t$ (each $S$
#   numbers per head, each entry in $(-1, 1)$) and two **keep gates** $\lambda_t, \gamma_t$ (one
#   number in $(0, 1)$ per head, through a sigmoid $\sigma$).
# - **Step 1, the running state** (notebook 01): $s_t = \lambda_t s_{t-1} + (1 - \lambda_t) a_t$,
#   a moving average of the writes $a$: a summary of the recent context.
# - **Step 2, the pair memory** (notebook 02): $P_t = \gamma_t P_{t-1} + (1 - \gamma_t)\, s_{t-1}
#   b_t^\top$, an $S \times S$ matrix that pairs the context *before* token $t$ ($s_{t-1}$) with what
#   token $t$ writes ($b_t$).
# - **Step 3, the readout** (notebook 03): $r_t = (P_t^\top q^l_t) \odot q^r_t$. Step 2 stored each
#   context $s_{\tau-1}$ paired with the write $b_\tau$ that followed it; the left query $q^l_t$ is
#   compared (by a dot product) with those stored contexts, and gets back their writes, each in
#   proportion to how well its context matched and how little it has faded. The right query
#   $q^r_t$ then scales each of the $S$ entries of the result.
# - $o_t = W_o\,\mathrm{vec}(r_t)$ maps the $H \times S$ readout back to width $d$ and is added to
#   the residual stream.
#
# **The name.** The layer compresses *triples*: a context ($s_{\tau-1}$), the write that followed
# it ($b_\tau$), and a later query ($q^l_t$) that reads how the two were paired (`docs/paper.md`
# section 1). The course teaches it in three steps, one library file each: `running_state.py`,
# `pair_memory.py`, `readout.py`. Only $s$ and $P$ are carried from token to token (dashed arrows):
# they are the layer's whole state. The readout is computed afresh at every token.
#
# ## 3. The whole model, drawn
#
# The layer replaces attention inside an otherwise ordinary pre-LayerNorm language model:

# %%
diagrams.model_diagram()
plt.show()

# %% [markdown]
# Bottom to top: each token id picks a row of the embedding $E$, $e_t = E[\mathrm{token}_t]$; a
# learned position vector is added, $x_t = e_t + pos_t$; `n_layers` pre-LN blocks each add the
# mixer's output $o_t$ and then a feed-forward network (FFN) to $x_t$; a final LayerNorm gives
# $h_t$; the head, **tied** to the embedding (the same matrix $E$, no bias), turns $h_t$ into one
# score per vocabulary entry, $\mathrm{logits}_t = E\,h_t$, the prediction of token $t+1$.
# Two variants add a part (dashed): `triple_hybrid` and `gated_hybrid_repaired` run a causal convolution
# before the blocks (notebook 05); `transformer_plus_triple` and `gated_hybrid_repaired` add a second memory's
# output $z_t$ after the final LayerNorm, "late fusion" (notebooks 06 and 07). `docs/paper.md` section 3
# lists every variant; notebook 03c assembles this whole model from the library's functions in
# about a page of code and checks it against `build_model`.
#
# <a id="glossary"></a>
#
# ## 4. Glossary: one symbol, one meaning
#
# Every notebook uses these symbols with these meanings, and no symbol has two (a test,
# `tests/course/test_glossary.py`, reads the notebooks' math and holds them to this table). Here
# are the symbols of notebooks 00-03; notebooks 01-03 link here instead of redefining them, and
# later notebooks open with their own. "Where" is the notebook and section that introduces the
# symbol.
#
# **Sizes, time and indices**
#
# | symbol | meaning | code | where |
# |---|---|---|---|
# | $B, T, H, S, d, V$ | batch, time (sequence length), heads, state size per head, model width, vocabulary size | `B, T, H, S`, `d_model`, `vocab_size` | 00 §1-2 |
# | $t$ | the current position (token $t$ is the $(t+1)$-th token; counting starts at 0) | `t` | 00 §1 |
# | $\tau$ | an earlier position, where something was written; $\tau$ **only** means time ($\tau'$ a second one) | `tau` | 00 §2 |
# | $u$ | a position inside a product or sum over time, as in $\prod_{u=\tau+1}^{t} \lambda_u$ (only time) | - | 01 §3 |
# | $i, j$ | indices into a vector or matrix ($P_t[i, j]$); in notebook 06, $j$ is also the position of a key-value entry | `i, j` | 02 §1 |
# | $C$ | chunk size of the fast forms: `running_state.DEFAULT_CHUNK` (notebook 01b prints it) | `chunk_size` | 01b §1 |
# | $c$ | the first position of a chunk (only that) | - | 01b §1 |
# | $O$ | order of growth: $O(T)$ grows like $T$ | - | 03 §10 |
#
# **The model** (section 3)
#
# | symbol | meaning | code | where |
# |---|---|---|---|
# | $\mathrm{token}_t$ | the input id at position $t$ | `tokens[:, t]` | 00 §3 |
# | $E$ | embedding matrix $[V, d]$, also the output head (tied) | `embed.weight` = `head.weight` | 00 §3 |
# | $e_t$ | token embedding $E[\mathrm{token}_t]$ (only that) | `e` | 00 §3 |
# | $pos_t$, $W_{pos}$ | learned position vector of position $t$, the row $t$ of $W_{pos}$ (never "P") | `pos` | 00 §3 |
# | $x_t$ | residual stream, the input of a layer | `x` | 00 §2 |
# | $n_t$ | LayerNormed layer input $\mathrm{LN}(x_t)$ (only that) | `n` | 00 §2 |
# | $o_t$ | the mixer's output, added to $x_t$ | `o` | 00 §2 |
# | $h_t$ | final LayerNorm of the last block's output | `h` | 00 §3 |
# | $z_t$ | late-fusion term added to $h_t$ | `z` | 00 §3, 06 §1 |
# | $\mathrm{logits}_t$ | $E\,h_t$: one score per vocabulary entry, predicting token $t+1$ | `logits` | 00 §3 |
# | $\sigma$ | the sigmoid, $\sigma(x) = 1/(1 + e^{-x})$ (never an index) | `torch.sigmoid` | 00 §2 |
#
# **The triple-latent layer** (section 2; notebooks 01-03)
#
# | symbol | meaning | code | where |
# |---|---|---|---|
# | $a_t, b_t, q^l_t, q^r_t$ | the four tanh projections of $n_t$: write into the running state, write into the pair memory, left query, right query ($[B, T, H, S]$) | `a, b, q_left, q_right` | 00 §2 |
# | $W_a, W_b, W_{ql}, W_{qr}$ | their weight matrices, $d \to HS$, no bias | `mixer.proj` | 01 §1, 02 §1, 03 §1 |
# | $\lambda_t, \gamma_t$ | keep gates of the running state / pair memory, one number in $(0, 1)$ per head ($[B, T, H]$) | `lam, gam` | 00 §2 |
# | $W_\lambda, c_\lambda, W_\gamma, c_\gamma$ | gate weights and biases | `mixer.to_gates` | 01 §1, 02 §1 |
# | $s_t$ | running state after token $t$; $s_{t-1}$ the state before token $t$ | `s`, `s_prev` | 00 §2, 01 |
# | $s_{-1}$ | the initial state (zeros unless given); never written "$s_0$", which is the state after token 0 | `s0` | 01 §1 |
# | $P_t$ | pair memory after token $t$, $S \times S$ per head; $P_{-1}$ its initial value. $P$ **only** means the pair memory; $P_{c-1}$ is the memory entering the chunk that starts at $c$ | `P`, `P0` | 00 §2, 02 |
# | $r_t$ | readout $(P_t^\top q^l_t) \odot q^r_t$ | `r` | 00 §2, 03 §1 |
# | $W_o$ | output projection $HS \to d$ | `mixer.out` | 00 §2 |
# | $w_{t,\tau}$ | weight of the write at $\tau$ inside $P_t$ (the unrolled sum) | `w` | 02 §3 |
# | $W_{t\tau}$ | weight of the write $a_\tau$ in the running state $s_t$: the lower-triangular $T \times T$ matrix ($C \times C$ inside a chunk) | `W` (`running_state.py`) | 01 §3 |
# | $A$ | a $T \times T$ (or $C \times C$) matrix of attention scores, row $t$, column $\tau$ | `A`, `attn` | 03 §3.1 |
# | $H_{1/2}$ | **half-life** of a keep gate $\lambda$: $\ln(1/2) / \ln \lambda$ tokens. "Memory length" always means the half-life; $1/(1-\lambda)$ is the mean lifetime and is called that | - | 01 §6 |
# | $\delta_i$ | the unit vector with a 1 at entry $i$, zeros elsewhere | `torch.eye` | 02 §2 |
#
# **Attention and related layers** (notebook 03)
#
# | symbol | meaning | code | where |
# |---|---|---|---|
# | $q_t, k_\tau, v_\tau$ | query, key and value vectors of attention (in notebook 06, of the key-value memory) | `q, k, v` | 03 §3.2 |
# | $D$ | size of one attention head's keys and values | `D` | 03 §3.2 |
# | $M_t$ | the fixed $D \times D$ memory of attention without a softmax (linear attention) | `M` | 03 §3.2 |
# | $\phi$ | linear attention's feature map | - | 03 §10 |
# | $\eta_t$ | DeltaNet's write strength (`beta` in `deltanet.py`) | - | 03 §10, 06b §3 |
# | $\bar k_\tau$ | H3's shifted key: a short causal filter of the last keys | `kbar` (`h3.py`) | 03 §10, 06b §2.3 |
# | $N$ | number of H3's decayed states per head | `n_modes` (`h3.py`) | 03 §10, 06b §2.3 |
#
# **Later notebooks.** Notebooks 04-06 open with a table of the symbols they introduce: 04 the
# slots, 05 the convolution, 06 the key-value memory and its read gate; 07 defines its two (the
# output of `transformer_plus_triple`'s side layer and a factor μ on the logits) in its section 1.
# All the course's symbols, these and the ones above, are on one page,
# [`docs/glossary.md`](../docs/glossary.md).
#
# **Units.** Losses are cross-entropies. The library's training history is in nats (natural log);
# the notebooks print and plot **bits**: bits per byte (BPB) for the byte-level models, the nats
# divided by $\ln 2$. Every BPB stands beside the unigram baseline of section 7.
#
# ## 5. The learning path: what each notebook needs and how long it takes
#
# Times are a measure, not a guess: reading at 100 words and 4 lines of code a minute and half a
# minute per figure, plus the wall time of running every cell in default mode, measured on a 2-core
# CPU and recorded in `docs/notebook_cost.json` (`python -m tl_research.notebook_cost notebooks`
# remeasures, `python -m tl_research.notebook_time --write` rewrites these times). Each notebook's
# **Time** line gives its parts.
#
# | notebook | what you learn | needs | time |
# |---|---|---|---|
# | `00_start_here` | why a fixed-size state; the layer and model drawn; glossary; set-up | - | 60 min (runs in 17 s) |
# | `01_running_state` | the gated moving average, by hand and as one matrix; half-lives; the training loop; a trained model's gates | 00 | 60 min (runs in 55 s) |
# | `01b_chunked_running_state` | the fast form: the chunked algorithm, its cost, the associative scan; the three forms checked | 01 | 50 min (runs in 9 s) |
# | `02_pair_memory` | outer products as a memory of pairs; the unrolled weights; a trained model's $P_t$ | 01 | 60 min (runs in 79 s) |
# | `03_readout` | the readout as linear attention, in both directions; why the design; the whole layer; related work | 02 | 55 min (runs in 19 s) |
# | `03b_chunked_readout` | the readout's fast form: chunks with the pair memory carried between them; its cost, term by term; its speed, measured | 03 | 40 min (runs in 9 s) |
# | `03c_trained_model` | trained against a Transformer; what a trained layer reads; the whole model in a page | 03 | 45 min (runs in 146 s) |
# | `04_slots` | a cheaper memory with a few slots, and what it loses | 03 | 60 min (runs in 99 s) |
# | `05_convolution` | the hybrid's local convolution, and the leak in the paper's version | 03 | 55 min (runs in 48 s) |
# | `06_kv_gated_fusion` | an exact key-value memory beside the compressed state: its read gate, late fusion, what its read costs; why a tied query-key projection finds an exact repeat before training | 03, 05 | 55 min (runs in 27 s) |
# | `06a_kv_recall` | the same memory trained on associative recall: where it reads; what a trained `triple_latent` keeps across the filler; optional: induction heads | 06 | 60 min (runs in 73 s) |
# | `06b_family` | the relatives (simple GLA / Mamba-2, H3, DeltaNet) and the key-source ablations beside the layer; the delta rule's chunked form; what the triple structure buys, paired over seeds | 03, 05 | 60 min (runs in 5 s) |
# | `07_paper_reproduction` | which of the paper's claims hold: one verdict per claim with the runs that decide it; our numbers beside the paper's, paired over seeds | 03-06 | 60 min (runs in 5 s) |
# | `07b_diagnoses` | optional: what `transformer_plus_triple`'s 80-step lead measures; why the paper's gated hybrid does not recall, seed by seed | 07 | 55 min (runs in 53 s) |
# | `07c_recall_breaks` | optional: where the repaired read breaks (overwritten keys, aliases, distance) and induction on real text | 07 | 45 min (runs in 10 s) |
# | `08_speed` | optional: loop, fast and step forms timed; the cost of the next token | 01-03 | 85 min (runs in 44 s) |
#
# Exercises 01-06 (`notebooks/exercises/`) follow the notebook of the same number; each takes
# about 25-35 minutes (each states its own). Their worked solutions are in `notebooks/exercises/solutions/`.
#
# ## 6. Your set-up: device and smoke mode
#
# `tl_minimal.training.device.get_device()` picks Apple **MPS** first, then **CUDA**, then the **CPU**. Every
# notebook calls it once. To force a device, set the environment variable `TL_DEVICE=cpu` (or pass
# `"cpu"`, `"cuda"`, `"mps"`) before starting JupyterLab.

# %%
# NBVAL_IGNORE_OUTPUT
setup.print_device(tl_minimal.__version__)  # device.describe(): the device get_device() picks, and what it is

# %% [markdown]
# Asking for a device that is not there is an error that says what *is* there:

# %%
# NBVAL_IGNORE_OUTPUT
setup.print_missing_devices()  # device.get_device(kind) for CUDA and MPS, where missing: the RuntimeError's text

# %% [markdown]
# **Smoke mode.** The notebooks train real models. With the environment variable `TL_SMOKE=1` they cut steps,
# seeds and sizes so that the whole test suite (`python run.py test`) finishes in minutes; without it they
# run the paper's protocols. One switch, read in one place:

# %%
# NBVAL_IGNORE_OUTPUT
setup.print_smoke_and_data()  # config.smoke() and config.data_dir(): TL_SMOKE and TL_MINIMAL_DATA

# %% [markdown]
# ## 7. The data, as bytes and tokens
#
# Models only ever see integers. Each data source turns text (or a made-up task) into a sequence
# of ids in a different way; the pictures below show the same idea three times.

# %%
from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.data import tokenized as data_tokenized
from tl_minimal.training.evaluate import unigram_bits

# %% [markdown]
# ### 7.1 Byte-level WikiText-2
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
head = valid.tokens[:44]
plots.token_strip(plots.token_labels(head), head.tolist(), per_row=22,
                  title="the first 44 byte tokens of the WikiText-2 validation split (id below each box)")
plt.show()

# %% [markdown]
# **The yardstick for bits per byte.** A language model is scored by its cross-entropy on the
# validation text, in bits per byte (BPB): the average number of bits it needs to encode the next
# byte. Two references make a BPB readable. Guessing uniformly over the 259 ids costs
# $\log_2 259 = 8.017$ bits. The **unigram** model, which predicts every byte from how often it
# occurs in the training text and ignores the context entirely, costs the number printed below:
# a model must get below that to have learned anything about context. `unigram_bits` computes
# it; every BPB in the notebooks stands beside it.

# %%
# NBVAL_IGNORE_OUTPUT
train = data_text.load_split("train")
UNIGRAM_BPB = unigram_bits(train.tokens, valid.tokens[1:], data_text.VOCAB_SIZE)
tables_cost.print_baselines(data_text.VOCAB_SIZE, UNIGRAM_BPB)  # uniform: log2 V; then the unigram

# %% [markdown]
# **The data setup, once for the course.** Every byte-level run in notebooks 01-07 follows the
# paper's protocol (`docs/paper.md` section 4.1): `STEPS` AdamW steps, each on a batch of random
# 128-byte windows of the training text, then BPB on the first chunks of the validation split.
# Two facts decide how to read their numbers, and both are read from the code here, not written
# down: how much text the training windows come from (the whole train split if `datasets` or a full
# local copy finds it; the first 1,000,000 bytes when the local directory holds only that head, as
# an offline copy does: `train.source` says which), and how much of it 80 steps see.

# %%
# NBVAL_IGNORE_OUTPUT
lm = protocol("lm")  # the paper's byte-level protocol, as every notebook builds it
tables_cost.print_training_text(train.source, len(train.tokens), lm)  # one run: steps x batch x seq_len bytes
_, y_table = chunk_eval_set(valid.tokens, lm)  # the validation bytes a BPB table scores
unigram_table = unigram_bits(train.tokens, y_table, data_text.VOCAB_SIZE)
tables_cost.print_two_unigrams(UNIGRAM_BPB, unigram_table, lm)  # whole split, then a table's chunks

# %% [markdown]
# **Which unigram baseline a table uses, and why they differ.** The baseline is always the byte
# frequencies of the training text above, scored on *the same validation bytes as the models it
# stands beside*. Notebooks 01 and 02 score the whole validation split; notebooks 03-06 score the
# protocol's first chunks (fewer in a notebook that evaluates fewer batches, and notebook 05 also a
# smaller set of chunks prefix by prefix). Different bytes have different frequencies, so the
# baseline moves by a few hundredths from table to table, as the two lines above show; and with
# only the head of the train split the frequencies are those of the head. Compare a model with the
# baseline printed beside it, never with another table's.

# %% [markdown]
# ### 7.2 The MiniMind tokenizer
#
# The paper's second language-modelling benchmark uses the MiniMind tokenizer: byte-level BPE with
# 6,400 ids, where frequent pieces of words get one id. The same sentence becomes far fewer tokens
# than bytes (the `Ġ` / ␣ marks a piece that starts with a space).

# %%
tokenizer = data_tokenized.load_tokenizer()
sentence = "The pair memory remembers which write followed which context."
encoding = tokenizer.encode(sentence)  # .ids and .tokens (the pieces)
tables_tokens.print_encoding(tokenizer, sentence, encoding)  # vocabulary size, bytes -> tokens, ids, pieces

# %%
# NBVAL_IGNORE_OUTPUT
pieces = [tokenizer.decode([i]).replace(" ", "␣") for i in encoding.ids]
plots.token_strip(pieces, encoding.ids, title="one sentence, MiniMind tokens (id below each box)")
plt.show()

# %% [markdown]
# ### 7.3 Associative recall (generated, no download)
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
plots.recall_strip(x[0], y[0], per_row=22)
plt.show()

# %% [markdown]
# A model that always answers the same value scores 1/8 (12.5%); one that picks one of the four
# values in the context at random scores 1/4. Notebook 06 asks which models do better than that.
# Notebooks 06b and 07 also use **MQAR** (multi-query associative recall, the form of the Zoology
# study): several key-value pairs, then every key is asked in turn, and every answer is scored.
#
# ## 8. How to use the notebooks
#
# - **Order.** The table of section 5, top to bottom, each notebook beside its library file (the
#   README's learning path); 08 is optional. Exercises are in `notebooks/exercises/`.
# - **Smoke mode.** Every notebook has one config cell near the top, e.g.
#   `STEPS = config.pick(80, 3)`: the paper's setting normally, a tiny one under `TL_SMOKE=1`.
#   Numbers from a smoke run mean nothing; they only show that the code runs.
# - **Widgets.** Sliders, menus and text boxes (`tl_minimal.views.widgets`) redraw a picture when you
#   change them; they need a running kernel. Before a notebook runs (and on GitHub) each widget
#   shows a picture of its starting view instead. Each input states its rule beside it, and a bad
#   input gets a message under the controls. Outside Jupyter a widget helper draws that picture.
# - **Pairs.** Each notebook is a pair, `NN_name.ipynb` (with outputs, for reading) and
#   `NN_name.py` (for diffs). JupyterLab with jupytext keeps them in step; otherwise run `python run.py sync`.
# - **Results.** A comparison in notebooks 06-07 rests on several seeds; a rate of wins ("0 of 25
#   seeds") comes with its **Clopper-Pearson interval**: the range of true win rates that such a
#   count does not rule out (exact, at 95 in 100 confidence).
# - **Tests.** `python run.py test` runs every notebook top to bottom in smoke mode (`pytest --nbval`) and
#   compares the printed results of the cells that check math; cells marked `# NBVAL_IGNORE_OUTPUT`
#   (training logs, timings, random samples) only have to run.
#
# Here is a widget to try: the slider sets $\lambda$, the keep gate of the running state, and the
# picture shows how much of one input $a_0 = 1$ the state still holds $t$ tokens later (notebook 01
# derives it: $(1-\lambda)\lambda^t$; the right panel shows the share still left, $\lambda^t$). The
# $\lambda = 0.5$ curve stays as a reference; try $\lambda = 0.995$ and watch the time axis grow.

# %%
# NBVAL_IGNORE_OUTPUT
widgets.pulse_memory_widget(lam=0.9)

# %% [markdown]
# ## Summary
#
# - A Transformer's KV cache, and its work per generated token, grow with the context; the
#   triple-latent layer carries a fixed-size state, $s_t$ ($S$ numbers per head) and $P_t$
#   ($S \times S$), and does O(1) work per token.
# - The layer: LayerNorm, four tanh projections $a, b, q^l, q^r$ and two keep gates
#   $\lambda, \gamma$; then the running state $s$, the pair memory $P$ (context before a token
#   paired with its write) and the readout $r$; then $W_o$ and the residual add. It replaces
#   attention in an ordinary pre-LN language model with a tied head.
# - Section 4 is the glossary of notebooks 00-03 (`docs/glossary.md` holds every symbol); section 5 the path, with times.
# - BPB is read against the unigram baseline (section 7.1, recomputed on each table's own bytes) and
#   uniform guessing (8.017 bits); section 7.1 also prints how much training text a run sees.
#
# **Next:** [`01_running_state.ipynb`](01_running_state.ipynb), step 1 of the layer.
