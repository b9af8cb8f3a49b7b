# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 · The pair memory
#
# Step 2 of the triple-latent layer. Every symbol is in notebook 00's
# [glossary](00_start_here.ipynb#glossary).
#
# **Learning goals.** After this notebook you can
# - build the pair memory $P_t$ token by token from outer products, by hand and with the library;
# - explain why it is a memory of *pairs*: which write followed which context;
# - unroll it into a weighted sum of outer products and evaluate it at chosen positions only;
# - read $P_t$ and its gate $\gamma$ inside a trained model, and say what it holds.
#
# **Prerequisites.** Notebook 01 (the running state $s_t$, the unrolled sum, `fit`). The outer
# product of two vectors.
#
# **Time.** About 55 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 79 s (CPU 23 s, peak 584 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# ## 1. Where the pair memory sits, and what it computes
#
# From the same LayerNormed input $n_t$ as the running state, each head makes a second write
# vector and a second keep gate,
#
# $$
# b_t = \tanh(W_b n_t) \in (-1, 1)^S, \qquad \gamma_t = \sigma(W_\gamma n_t + c_\gamma) \in (0, 1),
# $$
#
# and keeps an $S \times S$ matrix that adds, at every token, the outer product of the running
# state *before* that token with the token's write, while the whole memory fades by $\gamma_t$:
#
# $$
# P_t = \gamma_t\, P_{t-1} + (1 - \gamma_t)\; s_{t-1} b_t^\top, \qquad
# (s_{t-1} b_t^\top)_{ij} = s_{t-1}[i]\; b_t[j], \qquad P_{-1} = 0
# $$
#
# Row index $i$ belongs to the context $s_{t-1}$, column index $j$ to the write $b_t$. Why the
# state *before* the token: $s_{t-1}$ summarizes what came before token $t$, so $P$ records "after
# a context like this, this was written" (the next notebook turns that into a read).
#
# | symbol | code (`tl_minimal/pair_memory.py`) | shape | meaning |
# |---|---|---|---|
# | $s_{t-1}$ | `s_prev` | `[B, T, H, S]` | running state before token $t$ (`running_state.previous_states`) |
# | $b_t$ | `b` | `[B, T, H, S]` | what token $t$ writes into the pair memory |
# | $\gamma_t$ | `gam` | `[B, T, H]` | keep gate of the pair memory, in (0, 1) |
# | $P_t$ | `P` | `[B, T, H, S, S]` | the memory: row $i$ indexed by the state, column $j$ by the write |
#
# One head holds $S \times S$ numbers ($16 \times 16 = 256$ in the paper's model) instead of the
# running state's $S$: still a fixed size, whatever the length of the text.

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import matplotlib.pyplot as plt
import torch

from tl_minimal import views
from tl_minimal.data import text as data_text
from tl_minimal.pair_memory import pair_memory, pair_memory_at, pair_memory_step, unrolled_weights
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import unigram_bits
from tl_minimal.views import diagrams, plots, plots_capacity, plots_training, tables, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

diagrams.layer_diagram(highlight="P")
plt.show()

# %% [markdown]
# In the figure, the highlighted box is the pair memory $P_t$, fed by $s_{t-1}$ and $b_t$.

# %%
# NBVAL_IGNORE_OUTPUT
STEPS = config.pick(80, 3)  # training steps of the byte-level protocol (the paper: 80)
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   training steps: {STEPS}   device: {DEVICE}")

# %% [markdown]
# ## 2. Outer products, token by token
#
# A toy with one head and $S = 3$. The three states before each token, the "contexts", are the
# unit vectors $\delta_0, \delta_1, \delta_2$ ($\delta_i$ has a one at entry $i$, zeros elsewhere);
# the writes are three different vectors; the gate is $\gamma = 0.5$. Written out with `torch.outer`
# (the [linear-algebra page](../docs/linear_algebra.md) explains the outer product):

# %%
s_prev_toy = torch.eye(3, dtype=torch.float64)  # s_{t-1} for t = 0, 1, 2: delta_0, delta_1, delta_2
b_toy = torch.tensor([[1.0, -1.0, 0.0],
                      [0.0, 1.0, 1.0],
                      [-1.0, 0.0, 1.0]], dtype=torch.float64)  # b_t for t = 0, 1, 2
gam_toy = 0.5

P = torch.zeros(3, 3, dtype=torch.float64)  # P_{-1} = 0
P_by_hand = []
for t in range(3):
    P = gam_toy * P + (1 - gam_toy) * torch.outer(s_prev_toy[t], b_toy[t])
    P_by_hand.append(P)
    print(f"P_{t} =\n{P.numpy().round(3)}")

# %% [markdown]
# Row $i$ of $P$ holds (a faded copy of) the write that followed context $\delta_i$: the last row is
# half of $b_2$, the middle row a quarter of $b_1$, the first an eighth of $b_0$. The library's
# `pair_memory` (loop and fast forms) and the one-token `pair_memory_step` give the same matrices:

# %%
s_prev = s_prev_toy.view(1, 3, 1, 3)  # [B=1, T=3, H=1, S=3]
b = b_toy.view(1, 3, 1, 3)
gam = torch.full((1, 3, 1), gam_toy, dtype=torch.float64)  # [B, T, H]
P_loop = pair_memory(s_prev, b, gam, mode="loop")[0, :, 0]  # [T, S, S]
P_fast = pair_memory(s_prev, b, gam, mode="fast")[0, :, 0]
P_step = pair_memory_step(pair_memory_step(None, s_prev[:, 0], b[:, 0], gam[:, 0]), s_prev[:, 1], b[:, 1], gam[:, 1])
print("loop equals the hand computation:   ", torch.allclose(P_loop, torch.stack(P_by_hand)))
print("fast equals the loop:               ", torch.allclose(P_fast, P_loop))
print("two pair_memory_step calls give P_1:", torch.allclose(P_step[0, 0], P_loop[1]))

# %%
# NBVAL_IGNORE_OUTPUT
plots.outer_product_step(s_prev_toy[2], b_toy[2], P_by_hand[1], P_by_hand[2], gam_toy, t=2)
plt.show()

# %% [markdown]
# Look at the last row of the new memory: the outer product $\delta_2 b_2^\top$ is zero elsewhere,
# so this token changes only that row, while $\gamma$ halves the rows written before.
#
# **Why this is a memory of pairs.** Multiply $P$ from the left by a context, $\delta_i^\top P_t$: with
# orthogonal contexts that picks out row $i$, the write that followed $\delta_i$, scaled by how much
# it has faded. Written as a column, that is $P_t^\top \delta_i$: the form the code uses. Notebook 03
# builds the layer's readout on this product, with a learned query $q^l_t$ in place of $\delta_i$.

# %%
P2 = P_by_hand[-1]
for i in range(3):
    read = P2.T @ s_prev_toy[i]  # P^T delta_i
    print(f"P_2^T δ_{i} = {read.numpy().round(3)}   = {read.norm().item() / b_toy[i].norm().item():.3f} x b_{i}")

# %% [markdown]
# ### 2.1 What the running state cannot store
#
# Give the same three pairs to both memories of the layer (`tl_minimal.course.pair_toy` calls
# `running_state` and `pair_memory`): the running state reads the writes $b_0, b_1, b_2$, the
# pair memory reads each write beside its context $\delta_i$. Then ask each, for every context,
# "what followed $\delta_i$?". The running state is one vector, so its answer is the same whatever
# is asked; the pair memory answers with $P^\top \delta_i$. Each table gives the cosine of the
# answer to question $i$ (rows) with the stored write $b_j$ (columns); a perfect memory has ones
# on the diagonal.

# %%
from tl_minimal.course import pair_toy

reads = pair_toy.read_both(s_prev_toy, b_toy, gam=gam_toy, lam=0.5)  # {name: [3 questions, S]}
for name, answer in reads.items():
    tables.print_cosine_table(name, pair_toy.cosine_table(answer, b_toy))  # [question i, write j]

# %% [markdown]
# The running state's three rows are identical: it holds a blend of the writes, weighted towards
# the latest, and cannot say which one followed which context. The pair memory's diagonal is all
# ones: each context brings back its own write. That is what the extra $S \times S$ numbers buy.
#
# ### 2.2 How many pairs fit: interference
#
# At most $S$ contexts can be orthogonal: store more pairs than $S$ and the reads mix. Store 20
# pairs in a memory of $S = 8$, with contexts as far apart as possible (`pair_toy.spread_contexts`)
# and a gate near one so that nothing fades, and ask for each pair:

# %%
gen = torch.Generator().manual_seed(0)
contexts_20 = pair_toy.spread_contexts(20, 8, gen)  # [n = 20, S = 8] unit contexts
writes_20 = torch.randn(20, 8, generator=gen, dtype=torch.float64)  # [20, 8]
table_20 = pair_toy.cosine_table(pair_toy.read_both(contexts_20, writes_20, gam=0.999, lam=0.5)["pair memory"],
                                 writes_20)  # [20 questions, 20 writes]
tables.print_many_pairs(table_20, S=8)

# %% [markdown]
# `pair_toy.recall_curve` repeats this for every number of pairs up to 20, over many random
# draws, and counts the fraction of pairs recalled, for $S = 8$ and for the paper's $S = 16$:

# %%
# NBVAL_IGNORE_OUTPUT
N_PAIRS, TRIALS = 20, config.pick(200, 20)
curves = {S_toy: pair_toy.recall_curve(S_toy, N_PAIRS, trials=TRIALS) for S_toy in (8, 16)}
plots_capacity.recall_vs_pairs(curves)
plt.show()
tables.print_recall_at(curves, N_PAIRS)  # each curve at S pairs and at 20

# %% [markdown]
# Each line leaves perfect recall right after its dashed line, where the pairs number $S$. Up to
# $S$ pairs the contexts are orthogonal and every read is clean; beyond, every extra pair blurs all
# the others. The capacity of the pair memory is about $S$ cleanly separable pairs per head, set by
# its size (a model's contexts are not chosen to be this far apart).
#
# ## 3. The unrolled sum, and memory at chosen positions
#
# Unrolling the recurrence, as for the running state:
#
# $$
# P_t = \sum_{\tau \le t} w_{t,\tau}\; s_{\tau-1} b_\tau^\top, \qquad
# w_{t,\tau} = (1-\gamma_\tau) \prod_{u=\tau+1}^{t} \gamma_u
# $$
#
# `unrolled_weights` computes the $w_{t,\tau}$, and `pair_memory_at` uses them to evaluate $P_t$
# at a few positions only, without building all $T$ memories: this is how the models take
# snapshots for the plots below. Checked against the loop on random inputs:

# %%
def relative_error(x, y):
    return ((x - y).norm() / y.norm()).item()


gen = torch.Generator().manual_seed(0)
for T in (1, 7, 129):
    s_r = torch.randn(2, T, 4, 8, generator=gen, dtype=torch.float64)  # [B, T, H, S]
    b_r = torch.randn(2, T, 4, 8, generator=gen, dtype=torch.float64)
    g_r = torch.rand(2, T, 4, generator=gen, dtype=torch.float64)
    P_l = pair_memory(s_r, b_r, g_r, mode="loop")
    P_c = pair_memory(s_r, b_r, g_r, mode="fast")
    at = sorted({0, T // 2, T - 1})
    P_a = pair_memory_at(s_r, b_r, g_r, at)  # [B, n, H, S, S]
    print(f"T = {T:3d}: fast vs loop rel. error < 1e-12: {relative_error(P_c, P_l) < 1e-12}; "
          f"pair_memory_at{at} vs loop < 1e-12: {relative_error(P_a, P_l[:, at]) < 1e-12}")

# %%
g5 = torch.tensor([0.9, 0.5, 0.9, 0.1, 0.9], dtype=torch.float64).view(1, 5, 1)  # [B, T, H]
w, Gamma = unrolled_weights(g5, positions=[4])  # w [B, n=1, T, H]; Gamma = weight of P_-1
print("gates gamma_0..4:     ", g5.flatten().tolist())
print("weights w_{4, tau}:   ", [round(v, 4) for v in w[0, 0, :, 0].tolist()])
print("sum of the weights + weight of P_-1 = 1:", round(w[0, 0, :, 0].sum().item() + Gamma[0, 0, 0].item(), 10))

# %% [markdown]
# The weights add up to one together with the weight of $P_{-1}$: $P_t$ is a weighted average of
# outer products. A small gate ($\gamma_3 = 0.1$) makes the memory forget almost everything written
# before it. The pair memory is a running state one level up, whose "entries" are the $S \times S$
# outer products: its fast form is notebook 01b's chunked algorithm applied to them.
#
# ## 4. The pair memory of a trained model
#
# Now `triple_latent` trained with the paper's byte-level protocol for `STEPS` steps, with `fit`.
# `model.internals(tokens, snapshot_at=[...])` records $P_t$ of every layer at the positions asked
# for; `plots.model_pair_memories` reads them, one dict per layer.
#
# That training is very short, so beside it we look at the same model trained 25 times longer
# (2,000 steps), as in notebook 01. The repository ships it; `shipped_or_retrained` reads it. Set
# `RETRAIN = True` to train it here instead.

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal.course.shipped import shipped_or_retrained, unigram_on_record_chunks
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import fit

lm = protocol("lm", steps=STEPS)
train_split = data_text.load_split("train")
valid_split = data_text.load_split("validation")
UNIGRAM_BPB = unigram_bits(train_split.tokens, valid_split.tokens[1:], data_text.VOCAB_SIZE)

model, history = fit("triple_latent", lm, seed=0, device=DEVICE, data=train_split.tokens, progress=False)
RETRAIN = False  # True: train the 2,000-step model here instead of loading the shipped one
long_model, long_record = shipped_or_retrained("triple_latent", RETRAIN, train_split.tokens, DEVICE)
LONG = long_record["steps"]
tables.print_short_run(history, UNIGRAM_BPB, "the whole validation split")  # history in nats, / ln 2
# its validation BPB scores the protocol's first chunks: the unigram baseline on those same bytes (notebook 00, 7.1)
UNIGRAM_CHUNKS, n_chunks = unigram_on_record_chunks(train_split.tokens, valid_split.tokens, long_record)
tables.print_shipped_bpb(long_record, UNIGRAM_CHUNKS, n_chunks)  # how it was made, its validation BPB

# %% [markdown]
# The memory of the first layer, per head (columns), after reading the token named in each
# panel's title (rows), first for the short training, then for the long one. One colour scale for
# all panels of a grid: red positive, blue negative.

# %%
# NBVAL_IGNORE_OUTPUT
sentence = "The pair memory remembers which write followed which context."
tokens = widgets.byte_prompt(sentence, lm.seq_len)  # BOS + bytes: [T]
labels = plots.token_labels(tokens)
positions = [4, 20, 40, len(tokens) - 1]  # a few places in the sentence
snap_trained = plots.model_pair_memories(model, tokens, positions)[0]  # layer 0
plots.pair_memory_grid(snap_trained, labels, title=f"P_t of layer 0 after {history['steps']} training steps")
plt.show()
snap_long = plots.model_pair_memories(long_model, tokens, positions)[0]
plots.pair_memory_grid(snap_long, labels, title=f"P_t of layer 0 after {LONG} training steps")
plt.show()

# %% [markdown]
# Look at the pattern inside each panel: a single stripe (one column pattern times one row pattern)
# is a memory of one pair; a patchwork is several pairs at once. The effective rank below counts it.

# %% [markdown]
# How many directions does a memory use? Its singular values say: one large and the rest near zero
# is a rank-one memory (one outer product), several of similar size a memory that holds several
# pairs. One number sums them up, the **effective rank**: the exponential of the entropy of the
# singular values divided by their sum (one for rank one, $S$ for $S$ equal ones; see the
# [linear-algebra page](../docs/linear_algebra.md)). Per layer, the mean over heads and over every
# position of the sentence:

# %%
# NBVAL_IGNORE_OUTPUT
all_positions = list(range(len(tokens)))


def effective_rank(P):  # [..., S, S] -> [...]: exp(entropy of the normalized singular values)
    sv = torch.linalg.svdvals(P.double())
    p = sv / sv.sum(-1, keepdim=True).clamp_min(1e-30)
    return torch.exp(-(p * p.clamp_min(1e-30).log()).sum(-1))


snaps, ranks = {}, {}
for steps, m in ((history["steps"], model), (LONG, long_model)):
    snaps[steps] = plots.model_pair_memories(m, tokens, all_positions)  # one dict {t: P_t} per layer
    ranks[steps] = torch.stack([effective_rank(torch.stack([layer[t] for t in all_positions])).mean(0)
                                for layer in snaps[steps]])  # [L, H]: mean over the sentence
    print(f"{steps:5d} steps: effective rank of P_t per layer", [round(r, 2) for r in ranks[steps].mean(1).tolist()])

plots_training.per_head_bars({f"{steps} steps": r for steps, r in ranks.items()}, "effective rank of P_t",
                             "how many directions each head's pair memory uses (mean over the sentence)", figsize=(7, 2.8))
plt.show()

# %% [markdown]
# Compare the two bars of each head: the taller the bar, the more pairs that head's memory holds at
# once. After the short training the memory is close to rank one: each $P_t$ is dominated by the
# latest outer product $s_{t-1} b_t^\top$, which is why the first grid shows stripes. After the
# long training every layer uses more directions, and the panels are no longer single stripes.
# Still only a few of the $S$ directions: this model keeps a handful of recent pairs, not a long
# table.
#
# How large is the memory, token by token? The Frobenius norm $\lVert P_t \rVert$ per head and
# layer over the sentence, for the long-trained model:

# %%
# NBVAL_IGNORE_OUTPUT
norms = torch.stack([torch.stack([layer[t].flatten(1).norm(dim=1) for t in all_positions])
                     for layer in snaps[LONG]])  # [L, T, H]: the Frobenius norm of each head's P_t
plots_training.per_head_lines(norms, labels, "‖P_t‖", f"size of the pair memory along the sentence ({LONG} steps)")
plt.show()

# %% [markdown]
# Look for whether a line climbs along the sentence, a memory that accumulates, or rises and falls
# with the tokens, a memory that keeps only the last few pairs.
#
# The gate that decides this, $\gamma_t$, per layer, head and token of the long-trained model, and
# its mean per layer for both trainings:

# %%
# NBVAL_IGNORE_OUTPUT
gam_trained = plots.model_gates(model, tokens, "gam")  # [layers, T, heads]
gam_long = plots.model_gates(long_model, tokens, "gam")
plots.gate_heatmaps(gam_long, labels, name="γ", title=f"pair-memory gate γ after {LONG} steps")
plt.show()
tables.print_gate_means({history["steps"]: gam_trained, LONG: gam_long})  # per layer; spread over tokens

# %% [markdown]
# In the heatmap, look for differences between the layers (rows of panels) and for columns that
# change colour with the byte. Like the running-state gate, $\gamma$ starts near $\sigma(0) = 0.5$,
# and the short training moves it *down* in every layer, nearly the same at every token. After the
# long training the layers differ (the first back near its start, the last lower still), and the
# gate varies with the byte read: its spread over the tokens is several times larger (printed
# above). Either way the pair memory keeps the last few pairs, not the sentence: its size rises
# and falls with the tokens instead of accumulating.
#
# ## 5. Play
#
# Step through the sentence with the slider: $P_t$ of the first layer for every head after
# reading token $t$ (it needs a live kernel or the course website).

# %%
# NBVAL_IGNORE_OUTPUT
widgets.pair_memory_widget(snaps[LONG][0], labels, title=f"P_t of layer 0 ({LONG} steps)")

# %% [markdown]
# Look at how much each head's panel changes from one token to the next: a memory that keeps little
# is redrawn at almost every step.
#
# ## Summary
#
# - The pair memory adds, at every token, the outer product of the context before the token
#   ($s_{t-1}$) and the token's write ($b_t$), and fades by a keep gate $\gamma_t$:
#   $P_t = \gamma_t P_{t-1} + (1-\gamma_t) s_{t-1} b_t^\top$, $S \times S$ numbers per head.
# - With orthogonal contexts, $P_t^\top \delta_i$ returns the write that followed context $\delta_i$: a
#   memory of pairs. Real contexts overlap, and $S$ rows must hold every pair: compression.
# - Unrolled, $P_t$ is a weighted average of outer products with weights $w_{t,\tau}$;
#   `pair_memory_at` evaluates it at chosen positions only.
# - After the paper's short training $\gamma$ has moved down from its start: the memory holds the
#   last one or two pairs, nearly rank one. After 2,000 steps it uses a few more directions, and
#   $\gamma$ depends on the byte read: still a short memory.
#
# **Exercise:** [`exercises/02_pair_memory.ipynb`](exercises/02_pair_memory.ipynb) ·
# **Next:** [`03_readout.ipynb`](03_readout.ipynb), step 3: reading the memory, and the whole model.
