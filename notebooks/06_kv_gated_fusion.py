# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · The key-value memory, the read gate and late fusion
#
# The triple-latent state compresses the past into a fixed-size matrix per head. The paper's
# **gated hybrid** adds a second, plain memory beside that stack: one entry per token, read by
# exact matching. This notebook takes that memory apart: what it stores, how it reads, what it
# costs, and why one tied projection finds an exact repeat before any training. Recall does not
# need this second memory: notebook 06a shows that the compressed memory recalls on its own once its
# pair gate starts long. What the key-value read buys is a look-up that is right from the first
# step, at the price of a cache that grows with the sequence.
#
# **Symbols of this notebook** (section 1 derives them; code in `tl_minimal/kv_fusion.py`). From
# notebooks 01-03 it uses the keep gates $\lambda_t$ (running state) and $\gamma_t$ (pair memory),
# $d$, $H$ and $S$: their meanings are in the glossary of `00_start_here.ipynb`.
#
# | symbol | meaning | code | shape |
# |---|---|---|---|
# | $e_t$ | raw token embedding (no position) | `e` | `[B, T, d]` |
# | $k_j$, $v_{j+1}$ | key and value of entry $j$ | `keys`, `values` | `[B, N, D_kv]` |
# | $q_t$ | query, from the previous token | `q` | `[B, T, D_kv]` |
# | $W_k, W_v, W_q$; $W_{qk}$ | key, value and query projections; $W_{qk}$ when query and key are tied | `kv.key`, `kv.value`, `kv.query` | $d \to D_{kv}$ |
# | $D_{kv}$, $d_a$ | width of keys, values and queries; $d_a$ is the paper's name for it | `assoc_dim` | 64 |
# | $\hat q, \hat k$ | the query and a key scaled to length 1 | - | `[D_kv]` |
# | $\rho_{t,j}$ | retrieval score | `scores` | `[B, T, N]` |
# | $\beta$ | score scale: multiplies the cosine, so larger is sharper | `score_scale` | scalar |
# | top-k | entries kept per read (not the slot count $K$ of notebook 04) | `top_k` | 8 |
# | $\alpha_{t,j}$ | retrieval weights over the kept entries | `weights` | `[B, T, top_k]` |
# | $m_t$ | the memory's read: the weighted sum of the kept values | `m` | `[B, T, D_kv]` |
# | $g^{\mathrm{read}}_t$, $w_g$, $b_g$ | read gate, its weights and bias (`kv_fusion.py` writes `g_t`) | `read_gate` | `[B, T]`, `[d]`, scalar |
# | $W_{\mathrm{gate}}$ | the read-gate matrix of the paper's printed text (its code has none) | - | - |
# | $z_t$ | the gated, normalized read added to the logits | `z` | `[B, T, d]` |
# | $h_t$, $E$ | the stack's output after its final LayerNorm; the tied embedding, used as the head | - | `[B, T, d]`, `[V, d]` |
#
# **Learning goals.** After this notebook you can
# - say what the key-value memory stores (pairs of raw token embeddings: a token and the token
#   after it) and compute its read by hand: a hard top-k over scaled cosine scores;
# - name five ways in which that read differs from softmax attention, and what it costs: like a
#   KV cache it grows with the sequence;
# - explain why tying the query and key projections makes an exact repeat win before any training.
#
# **Then, in [`06a_kv_recall`](06a_kv_recall.ipynb)** (the second sitting of this lesson), you
# train this memory on associative recall and see where it reads; then you train the compressed
# stack without it, see why it cannot learn recall from the paper's gate start (no gradient reaches
# the pairs) and what start lets it.
#
# **Prerequisites.** Notebooks 01-03 (the triple-latent layer), 05 (the hybrid's convolution:
# the gated hybrid is `triple_hybrid` plus this memory), the associative-recall task of notebook
# 00, and softmax attention (queries, keys, values). The symbols are in the table above.
#
# **Time.** About 60 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 27 s (CPU 5 s, peak 395 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tl_minimal import default_config, views
from tl_minimal.data import recall as data_recall
from tl_minimal.kv_fusion import kv_read, kv_read_loop, kv_read_step
from tl_minimal.training import config
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import build
from tl_minimal.training.train import seed_everything
from tl_minimal.views import plots_retrieval

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# One config cell: the recall protocol (its models' sizes and sequence length) and the configuration
# of `gated_hybrid_repaired`: the paper's gated hybrid with two repairs to this read (sections 4 and
# 5). The paper's own model is `gated_hybrid_paper`. Nothing here trains; notebook 06a does.

# %%
# NBVAL_IGNORE_OUTPUT
RP = protocol("recall")  # batch 32, sequences of 128, AdamW 3e-4, weight decay 0.01
GATED = default_config("gated_hybrid_repaired")
print(f"smoke mode: {config.smoke()}   recall protocol: {RP.n_layers} layers, sequences of {RP.seq_len}")

# %% [markdown]
# ## 1. What the memory stores
#
# The memory is built from the **raw token embeddings** $e_j$ (before positions are added, nothing
# computed by any layer). Token $j$ and the token after it form one entry, a key and a value:
#
# $$
# k_j = W_k e_j, \qquad v_{j+1} = W_v e_{j+1}, \qquad \text{entry } j = (k_j, v_{j+1}), \quad j \le t-2 .
# $$
#
# At position $t$ the query is made from the **previous** token (the paper's alignment), every
# visible entry gets a retrieval score, the `top_k` best are kept, and their values are mixed:
#
# $$
# q_t = W_q e_{t-1}, \qquad \rho_{t,j} = \beta \cos(q_t, k_j), \qquad
# \alpha_t = \operatorname{softmax}\big(\operatorname{top\text{-}k}(\rho_{t,\cdot})\big), \qquad
# m_t = \sum_{j\ \text{kept}} \alpha_{t,j}\, v_{j+1} .
# $$
#
# A read gate scales the result, and the read joins the logits only at the very end, after the
# stack's final LayerNorm $h_t$ ("late fusion", with the tied embedding $E$ as the head):
#
# $$
# g^{\mathrm{read}}_t = \sigma(w_g \cdot e_{t-1} + b_g), \qquad z_t = \operatorname{LN}(g^{\mathrm{read}}_t\, m_t), \qquad
# \text{logits}_t = E\, h_t + E\, z_t .
# $$
#
# The table at the top of the notebook lists these symbols with their names in the code and shapes.
#
# **As coded, not as printed.** These are the equations of the paper's reference code, which this
# library follows. The paper's printed text differs in two places: its score is
# $\exp(\hat q_t^\top \hat k_j / \sqrt{d_a})$ on normalized vectors, i.e. $\beta = 1/\sqrt{64} = 1/8$
# where the code multiplies by 8 again ($\beta = 1$); and its gate is $\sigma(W_{\mathrm{gate}}\, q_t) \odot m_t$ (a matrix $W_{\mathrm{gate}}$ that the code does not have),
# computed from the query, where the code has one scalar $\sigma(w_g \cdot e_{t-1} + b_g)$ from the
# previous token's embedding (`docs/paper.md` section 3.6 gives both sources, line by line).
#
# In the recall task (`... QUERY key ANSWER`) the query at ANSWER is built from the asked key, and
# the right entry is the place $j$ where that key was written: its value $v_{j+1}$ is the answer.
# One example, and the first entries of its memory:

# %%
x_demo, y_demo = data_recall.eval_set(1, seed=0)
name = data_recall.PAPER_LAYOUT.name
demo = x_demo[0].tolist()
t_answer = len(demo) - 1
asked = data_recall.locate(x_demo[0], y_demo[0])[-1]
print(data_recall.describe(x_demo[0], y_demo[0]))
print(f"\nat the ANSWER position t = {t_answer} the memory holds {t_answer - 1} entries (j = 0 .. t-2); the first 8:")
for j in range(8):
    print(f"  entry {j}: key {name(demo[j]):>4s} -> value {name(demo[j + 1])}")
print(f"query: the previous token x_(t-1) = {name(demo[t_answer - 1])}; the entry with that key is "
      f"j = {asked['key_pos']}, and its value {name(demo[asked['key_pos'] + 1])} is the answer")

# %% [markdown]
# The entries after the answer's are (value, SEP), (SEP, next key), and then about a hundred
# (filler, filler) pairs: the memory stores every adjacent pair, useful or not.
#
# ## 2. The read, three ways
#
# `kv_read_loop` scores each position's visible entries one position at a time (the
# specification); `kv_read` does all positions with one masked score matrix and a top-k;
# `kv_read_step` answers one query from a cache (generation). Entry $j$ is visible at $t$ when
# $j < t - 1$ (with the previous-token query: entry $j$ pairs tokens $j$ and $j+1$, and the query comes
# from token $t-1$).

# %%
gen = torch.Generator().manual_seed(0)
B, T, D_kv = 2, 19, 8
q = torch.randn(B, T, D_kv, generator=gen, dtype=torch.float64)
keys = torch.randn(B, T - 1, D_kv, generator=gen, dtype=torch.float64)
values = torch.randn(B, T - 1, D_kv, generator=gen, dtype=torch.float64)
n_visible = [max(t - 1, 0) for t in range(T)]

m_loop, w_loop, idx_loop = kv_read_loop(q, keys, values, n_visible, top_k=4)
m_fast, w_fast, idx_fast = kv_read(q, keys, values, n_visible, top_k=4)
m_step, _, _ = kv_read_step(q[:, -1], keys[:, : n_visible[-1]], values[:, : n_visible[-1]], top_k=4)
print("fast equals loop (reads, weights, kept positions):", torch.allclose(m_fast, m_loop),
      torch.allclose(w_fast, w_loop), torch.equal(idx_fast, idx_loop))
print("step equals loop at the last position:", torch.allclose(m_step, m_loop[:, -1]))
print("no entry visible before t = 2, so m_0 = m_1 = 0:", bool((m_fast[:, :2] == 0).all()))

# %% [markdown]
# ## 3. Why this read is not attention, and what it costs
#
# The memory grows by one entry per token and is read with a softmax, so it looks like attention.
# It is a different read:
#
# | aspect | softmax attention (`tl_minimal/transformer.py`) | the key-value memory (`tl_minimal/kv_fusion.py`) |
# |---|---|---|
# | reads from | hidden states: tokens, positions and all that earlier layers computed | raw token embeddings $e_j$: no positions, nothing computed |
# | an entry is | key and value of the **same** position $\tau$ | key from token $j$, value from the **next** token $j+1$ |
# | weights | softmax of $q_t \cdot k_\tau / \sqrt{D}$ over **all** $\tau \le t$ ($D$ = $d/H$, a head's key size) | a **hard** top-k of $\beta \cos(q_t, k_j)$, softmax over those `top_k` only |
# | the read goes | into the residual stream, on to the next layer | straight into the logits, after the last layer (late fusion) |
# | how many | every head of every layer | one memory for the whole model |
#
# Without positions, two copies of the same token make two entries with the **same** key: the
# memory cannot prefer the recent copy, and a group of equal keys fills the top-k together. With
# the value taken from the next token, the read answers "what came after a token like this?".
# And because the read enters the logits directly, it can only vote for tokens; it never feeds a
# computation in a later layer.
#
# What it shares with attention is the cost. It keeps one key and one value per token, like a KV
# cache: $O(T D_{kv})$ numbers after $T$ tokens. A generated token scores every entry, $O(T)$ work
# per token (times $D_{kv}$), and a whole sequence of $T$ queries against up to $T$ entries is
# $O(T^2 D_{kv})$ work. The straightforward fast form also holds the $T \times T$ score matrix at
# once; scoring the queries block by block avoids holding it, but not the quadratic work. The
# triple-latent stack, by contrast, carries a state whose size does not depend on $T$. Counted
# on fresh models, by stepping through 128 tokens and adding up the numbers in the carried state:

# %%
def stored_numbers(state):
    """How many numbers a carried state holds (every tensor in it, however nested)."""
    if isinstance(state, torch.Tensor):
        return state.numel()
    if isinstance(state, dict):
        return sum(stored_numbers(v) for v in state.values())
    if isinstance(state, (list, tuple)):
        return sum(stored_numbers(v) for v in state)
    return 0


checkpoints = (1, 16, 32, 64, 96, 128)
KV_CACHE = f"transformer: KV cache of {RP.n_layers} layers"
sizes = {KV_CACHE: [], "gated_hybrid_repaired: key-value memory": [],
         "gated_hybrid_repaired: stack + convolution": []}
with torch.no_grad():
    for variant in ("transformer", "gated_hybrid_repaired"):
        seed_everything(0)
        fresh = build(variant, RP).eval()
        state = fresh.init_state(1)
        for t in range(1, RP.seq_len + 1):
            _, state = fresh.step(x_demo[0, t - 1 : t], state)
            if t in checkpoints:
                if variant == "transformer":
                    sizes[KV_CACHE].append(stored_numbers(state["layers"]))
                else:
                    sizes["gated_hybrid_repaired: key-value memory"].append(stored_numbers(state["after"]))
                    sizes["gated_hybrid_repaired: stack + convolution"].append(stored_numbers([state["layers"], state["before"]]))
print("numbers stored after t tokens:", checkpoints)
for what, counts in sizes.items():
    print(f"  {what:36s} {counts}")
print(f"key-value memory: 2 x D_kv = {2 * GATED['assoc_dim']} more per token (D_kv = assoc_dim = {GATED['assoc_dim']})")

# %%
plots_retrieval.state_sizes(checkpoints, sizes)
plt.show()

# %% [markdown]
# Per token the memory adds $2 D_{kv}$ numbers, once for the whole model, where the
# Transformer's cache adds $2d$ per layer; both grow without bound. The stack's state (running
# states, pair memories, the convolution's last inputs) stays the same size at any length. A gated
# hybrid therefore gives up the constant-size state that motivates the triple-latent family, for
# one part of the model.
#
# ## 4. How sharp can the read be? The scale β
#
# Build a memory by hand: 8 entries whose keys are orthogonal unit vectors, and a query equal to
# key 3. Its cosine is 1, every other cosine 0. By hand, the softmax over the 8 kept scores gives
# entry 3 the weight $\exp(\beta) / (\exp(\beta) + 7)$; the library agrees:

# %%
K8 = 8
keys8 = torch.eye(K8, dtype=torch.float64)[None]  # [1, N=8, D_kv=8]: key j = e_j
values8 = torch.eye(K8, dtype=torch.float64)[None]  # value of entry j = e_j, so m_t shows the weights
query8 = keys8[:, 3:4]  # [1, 1, D_kv]: the query IS key 3
for beta in (1.0, 5.0, 20.0):
    m8, _, _ = kv_read(query8, keys8, values8, [8], top_k=8, scale=beta)
    by_hand = math.exp(beta) / (math.exp(beta) + 7)
    print(f"beta = {beta:4.0f}: weight of the matching entry {m8[0, 0, 3].item():.4f}   by hand {by_hand:.4f}")

# %%
betas = torch.linspace(0.5, 25, 60)
best = [kv_read(query8, keys8, values8, [8], top_k=8, scale=float(b))[0][0, 0, 3].item() for b in betas]
plots_retrieval.perfect_match(betas, best, default_config("gated_hybrid_paper")["score_scale"], GATED["score_scale"])
plt.show()

# %% [markdown]
# Cosines lie in $[-1, 1]$, so at $\beta = 1$ even an exact match gets only 28% of the weight
# against seven unrelated entries: the read is always a blur. ("The paper" in the legend is the
# paper's reference code; the formula printed in the paper gives $\beta = 1/8$, blurrier still:
# section 1 above.) The library's `gated_hybrid_repaired` starts
# at $\beta = 10$ and learns it (`score_scale`, `learnable_score_scale` in the registry).
#
# ## 5. One matrix for queries and keys: an exact repeat wins at initialization
#
# The paper projects queries and keys with two independent matrices, $q_t = W_q e_{t-1}$ and
# $k_j = W_k e_j$. At initialization both are random, so the query made from the asked key and the
# key made from **the same token** earlier point in unrelated directions: the exact repeat scores
# like any other token. Tie them, $W_q = W_k = W_{qk}$, and the two vectors are identical, so an
# exact repeat scores $\cos = 1$, the maximum, for any $W_{qk}$, trained or not.
#
# Measured on fresh models (three initializations each, 64 recall examples): at the ANSWER
# position, the cosine between the query and the key of every entry, split into the one entry
# whose key token is the asked key (the exact repeat) and all other entries.

# %%
x_cos, y_cos = data_recall.eval_set(64, seed=1)
key_pos = torch.tensor([data_recall.locate(x_cos[i], y_cos[i])[-1]["key_pos"] for i in range(len(x_cos))])
repeat_cos, other_cos, rank_of_repeat = {}, {}, {}
with torch.no_grad():
    for tied in (True, False):
        label = "tied W_qk" if tied else "independent W_q, W_k"
        repeat_cos[label], other_cos[label], rank_of_repeat[label] = [], [], []
        for seed in range(3):
            seed_everything(seed)
            fresh = build("gated_hybrid_repaired", RP, {"tie_qk": tied}).eval()
            kv, e = fresh.kv, fresh.embed(x_cos)  # the key-value path and the raw embeddings [N, T, d]
            q_answer = (kv.key if kv.query is None else kv.query)(e[:, -2])  # q_t = W_q e_{t-1}: the asked key
            k_all = kv.key(e[:, :-2])  # k_j = W_k e_j for the visible entries j <= t-2: [N, T-2, D_kv]
            cos = F.cosine_similarity(q_answer[:, None], k_all, dim=-1)  # [N, T-2]
            rep = cos[torch.arange(len(x_cos)), key_pos]  # the exact repeat's cosine: [N]
            others = torch.ones_like(cos, dtype=torch.bool)
            others[torch.arange(len(x_cos)), key_pos] = False
            repeat_cos[label].append(rep)
            other_cos[label].append(cos[others])
            rank_of_repeat[label].append((cos > rep[:, None] + 1e-6).sum(1))  # entries scoring higher
        rep, ranks = torch.cat(repeat_cos[label]), torch.cat(rank_of_repeat[label])
        print(f"{label:21s} exact repeat: cos {rep.mean():.3f} (min {rep.min():.3f});   it scores highest in "
              f"{(ranks == 0).float().mean():.0%} of reads; median number of entries above it: {ranks.median()}")

# %%
plots_retrieval.cosines_at_init(repeat_cos, other_cos)
plt.show()

# %% [markdown]
# With a tied $W_{qk}$ every exact repeat sits at $\cos = 1$ (orange spike at the right edge) and
# is the top entry of every read; with independent matrices it is lost among the other entries.
# This matters because the memory's parameters learn only through the entries that are kept: if
# the right entry is not in the top-k at the start, no gradient tells $W_q$ and $W_k$ to align.
# Notebook 06a trains the tied version. The paper's untied read: at the paper's budget, the paper's
# own code won 0 of 25 seeds on our CPU, the seed that won in the paper's run included (95%
# Clopper-Pearson interval [0.00, 0.14]; `recall_reference_code.json`, notebook 07b).
#
# At a budget where the Transformer recalls 4 pairs (notebook 07, section 6), the untied read learns
# part of the task: `gated_hybrid_paper` scores 43.1% over 5 seeds (`recall_calibrated.json`), with
# its compressed stack at the paper's gate start. With a long gate start, the stack alone recalls on
# 6 of 7 seeds and `gated_hybrid_paper` on 4 of 5 (`recall_gate_start.json`); notebook 07
# (section 6) finds no gain from the key-value read that 5 seeds can measure. The tied read's success shows that matching tokens exactly
# solves this task, with a cache that grows with the sequence. It does not show that a fixed-size
# state cannot learn it.

# %% [markdown]
# ## 6. Trained on recall: notebook 06a
#
# The second sitting of this lesson, [`06a_kv_recall`](06a_kv_recall.ipynb), trains the library's
# `gated_hybrid_repaired` (tied $W_{qk}$, $\beta$ learnable from 10) and a Transformer on associative recall
# and shows where the memory reads. Then it trains the compressed stack without this memory: what
# it keeps of a pair, how much of the loss's gradient reaches the pairs before training, and what a
# long gate start changes.
#
# ## Summary
#
# * The key-value memory stores one entry per token, (key of token $j$, value of token $j+1$),
#   from raw embeddings, and reads it with a hard top-k over $\beta \cos(q_t, k_j)$; the read is
#   added to the logits at the end. It is not attention: no positions, next-token values, a hard
#   cut, one memory outside the stack. But it costs like attention's KV cache: $O(T D_{kv})$
#   numbers, $O(T)$ work per generated token, $O(T^2)$ for a whole sequence.
# * At $\beta = 1$ even a perfect match gets 28% of the weight of 8 kept entries; a large $\beta$
#   makes the read exact.
# * A tied $W_{qk}$ makes an exact repeat score $\cos = 1$ before any training; with independent
#   $W_q, W_k$ it scores like any other token.
# * Recall does not need this memory: the compressed stack recalls once its pair gate starts long
#   (notebook 06a, section 1.4). The exact-match read buys a look-up that is right before any
#   training, and pays with a cache that grows with the sequence.
#
# Next: `06a_kv_recall.ipynb`: this memory trained on recall, and the compressed stack's gate start.
