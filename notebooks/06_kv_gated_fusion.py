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
# The triple-latent state compresses the past into a fixed-size matrix per head: it cannot hand
# back one exact earlier token. For exact recall the paper's **gated hybrid** puts a second, plain
# memory beside the compressed stack. This notebook takes that memory apart as a concept, then
# trains it on the associative-recall task beside a Transformer, looks at where it reads, and
# measures, from the gates of a `triple_latent` trained on the same task, why the stack alone
# forgets the pairs.
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
# - explain why tying the query and key projections makes an exact repeat win before any training;
# - train the gated hybrid on associative recall and read, from its retrieval weights, which
#   entry it looked up and why a fresh model that already looks there still answers wrong;
# - compute, from the keep gates of a `triple_latent` trained on recall, how much of a stored pair
#   is left after the filler, and so say why recall needs this second memory;
# - (optional, section 8) define an induction head, say which query alignment of the memory is
#   one, and see it at initialization (notebook 07 trains it).
#
# **Prerequisites.** Notebooks 01-03 (the triple-latent layer), 05 (the hybrid's convolution:
# the gated hybrid is `triple_hybrid` plus this memory), the associative-recall task of notebook
# 00, and softmax attention (queries, keys, values). The symbols are in the table above.
#
# **Time.** About 60 minutes: 55 of reading (3467 words at 150 a minute, 259 lines of code at 10, 12
# figures at half a minute each) and a run of every cell in default mode, measured at 192 s (CPU
# 173 s, peak 859 MiB) on a 2-core CPU (`docs/notebook_cost.json`).

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((p for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), "tl-minimal")
    raise SystemExit(f'tl_minimal is not installed for this kernel; run this in a cell, then restart the '
                     f'kernel:  %pip install -e "{clone}"') from None

import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tl_minimal import default_config, views
from tl_minimal.course import forgetting
from tl_minimal.course.shipped import shipped_or_retrained
from tl_minimal.data import recall as data_recall
from tl_minimal.kv_fusion import kv_read, kv_read_loop, kv_read_step
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import recall_accuracy
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import build, count_parameters, fit
from tl_minimal.training.train import seed_everything
from tl_minimal.views import palette, plots, plots_forgetting, plots_retrieval, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# One config cell: the recall protocol's 200 steps normally, a few steps when `TL_SMOKE=1`.

# %%
# NBVAL_IGNORE_OUTPUT
RP = protocol("recall")  # batch 32, sequences of 128, AdamW 3e-4, weight decay 0.01
LP = protocol("lm")  # the byte-level protocol: only its context of 128 bytes is used (section 8)
RECALL_STEPS = config.pick(RP.steps, 3)  # our recall protocol's default: 200 (the paper reports 200 and 500)
EVAL_EXAMPLES = config.pick(1024, 64)  # fresh evaluation examples (the paper: 2,048)
DEVICE = get_device()
GATED = default_config("gated_hybrid")
print(f"smoke mode: {config.smoke()}   recall steps: {RECALL_STEPS}   eval examples: {EVAL_EXAMPLES}   device: {DEVICE}")

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
sizes = {KV_CACHE: [], "gated_hybrid: key-value memory": [],
         "gated_hybrid: stack + convolution": []}
with torch.no_grad():
    for variant in ("transformer", "gated_hybrid"):
        seed_everything(0)
        fresh = build(variant, RP).eval()
        state = fresh.init_state(1)
        for t in range(1, RP.seq_len + 1):
            _, state = fresh.step(x_demo[0, t - 1 : t], state)
            if t in checkpoints:
                if variant == "transformer":
                    sizes[KV_CACHE].append(stored_numbers(state["layers"]))
                else:
                    sizes["gated_hybrid: key-value memory"].append(stored_numbers(state["after"]))
                    sizes["gated_hybrid: stack + convolution"].append(stored_numbers([state["layers"], state["before"]]))
print("numbers stored after t tokens:", checkpoints)
for what, counts in sizes.items():
    print(f"  {what:36s} {counts}")
print(f"key-value memory: 2 x D_kv = {2 * GATED['assoc_dim']} more per token (D_kv = assoc_dim = {GATED['assoc_dim']})")

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.2))
for what, counts in sizes.items():
    ax.plot(checkpoints, counts, marker="o", label=what)
ax.set_xlabel("tokens seen t")
ax.set_ylabel("numbers in the carried state")
ax.set_title("what generation has to carry: the memory grows like a KV cache")
ax.legend(fontsize=8)
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
fig, ax = plt.subplots(figsize=(6.5, 3))
ax.plot(betas, best)
ax.axvline(default_config("gated_hybrid_paper")["score_scale"], color=palette.VERMILLION, ls=":", label="β = 1 (the paper)")
ax.axvline(GATED["score_scale"], color=palette.GREEN, ls="--", label=f"β = {GATED['score_scale']:g} (gated_hybrid's start)")
ax.set_xlabel("β (multiplies the cosine)")
ax.set_ylabel("weight of the perfect match")
ax.set_title("a perfect match among 8 kept entries (the others orthogonal)")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# Cosines lie in $[-1, 1]$, so at $\beta = 1$ even an exact match gets only 28% of the weight
# against seven unrelated entries: the read is always a blur. ("The paper" in the legend is the
# paper's reference code; the formula printed in the paper gives $\beta = 1/8$, blurrier still:
# section 1 above.) The library's `gated_hybrid` starts
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
            fresh = build("gated_hybrid", RP, {"tie_qk": tied}).eval()
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
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
for ax, label in zip(axes, repeat_cos, strict=True):
    ax.hist(torch.cat(other_cos[label]), bins=60, range=(-1, 1), density=True, color="grey", alpha=0.6,
            label="other entries")
    ax.hist(torch.cat(repeat_cos[label]), bins=60, range=(-1, 1), density=True, color="tab:orange", alpha=0.8,
            label="the exact repeat of the asked key")
    ax.set_title(label, fontsize=10)
    ax.set_xlabel("cos(q_t, k_j) at initialization")
    ax.legend(fontsize=8, loc="upper left")
axes[0].set_ylabel("density")
fig.suptitle("at the ANSWER position, before any training", fontsize=11)
fig.tight_layout()
plt.show()

# %% [markdown]
# With a tied $W_{qk}$ every exact repeat sits at $\cos = 1$ (orange spike at the right edge) and
# is the top entry of every read; with independent matrices it is lost among the other entries.
# This matters because the memory's parameters learn only through the entries that are kept: if
# the right entry is not in the top-k at the start, no gradient tells $W_q$ and $W_k$ to align.
# Section 6 trains the tied version; notebooks 07 (section 6) and 07b (section 2) show what the
# untied configuration of the paper does over many seeds: at the paper's budget (500 steps x 32 sequences, one supervised
# token, constant lr 3e-4) the paper's own code won 0 of 11 seeds (95% Clopper-Pearson interval
# [0.00, 0.28]) on our CPU, its one winning seed of the paper's run included, and none of our runs
# of that configuration won either. The tied read's success says that this task is solved by matching tokens exactly
# (a cache that grows with the sequence), not that it recalls better than a fixed-size state.

# %% [markdown]
# ## 6. Train on associative recall
#
# The task (notebook 00): four key-value pairs, filler, then `QUERY key ANSWER`; the target is the
# asked key's value at the last position only. A constant guess scores 1/8 (3 bits per answer
# token), a random pick among the four values in context 1/4. Two models, each trained with the
# recall protocol (`protocol("recall")`, `RECALL_STEPS` steps, seed 0) by `fit`: the library's
# `gated_hybrid` (tied $W_{qk}$, $\beta$ learnable from 10) and, for contrast, the Transformer.

# %%
# NBVAL_IGNORE_OUTPUT
P_recall = RP.replace(steps=RECALL_STEPS)
x_eval, y_eval = data_recall.eval_set(EVAL_EXAMPLES, seed=0)  # fresh: not the training seed's examples
recall_models, recall_hist, accuracy = {}, {}, {}
for variant in ("transformer", "gated_hybrid"):
    model, recall_hist[variant] = fit(variant, P_recall, seed=0, device=DEVICE, progress=False)
    recall_models[variant] = model.eval()
    accuracy[variant] = recall_accuracy(model, x_eval, y_eval)["accuracy"]
    last = sum(recall_hist[variant]["loss"][-10:]) / min(10, len(recall_hist[variant]["loss"])) / math.log(2)
    print(f"{variant:13s} {count_parameters(model):,} parameters, {recall_hist[variant]['seconds']:.0f} s, "
          f"final training loss {last:.2f} bits per answer token, recall accuracy {accuracy[variant]:.1%}")

# %% [markdown]
# `fit` returns the training history in nats (the loss PyTorch computes); the plot divides by
# $\ln 2$ to show bits per answer token.

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
plots.loss_curves(recall_hist, bits=True, ax=axes[0], smooth=10, title="training loss (the answer token only)")
axes[0].axhline(math.log2(data_recall.PAPER_LAYOUT.n_values), color="black", ls=":", lw=1,
                label="constant guess (3 bits)")
axes[0].set_ylabel("bits per answer token")
axes[0].legend(fontsize=8)
axes[1].bar(list(accuracy), list(accuracy.values()), color=["#9ecae1", "#31a354"])
axes[1].axhline(1 / 8, color="black", ls=":", lw=1, label="constant guess 1/8")
axes[1].axhline(1 / 4, color="grey", ls="--", lw=1, label="random value in context 1/4")
axes[1].set_ylim(0, 1.05)
axes[1].set_ylabel("recall accuracy")
axes[1].set_title(f"after {RECALL_STEPS} steps, seed 0")
axes[1].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# Look for which curve falls below the dotted 3-bit line of a constant guess, and which bar rises
# above the 1/4 of a random pick among the four values in context: that model has learned the look-up.
#
# ### Where the memory reads
#
# `plots_retrieval.read_at` takes the retrieval weights $\alpha_t$ at the answer position from
# `model.internals` and spreads them over the memory positions $j$. Orange marks the entry holding
# the asked key, green its value, blue the asked key in the question. Rows: the trained model on
# an example it answers right (and one it answers wrong, if there is one), and the same model
# freshly initialized.

# %%
# NBVAL_IGNORE_OUTPUT
def names_of(x):
    return [name(t) for t in x.tolist()]


x_few, y_few = x_eval[:256], y_eval[:256]
trained_read = plots_retrieval.read_at(recall_models["gated_hybrid"], x_few, y_few)
seed_everything(0)
fresh_gated = build("gated_hybrid", RP).to(DEVICE).eval()
fresh_read = plots_retrieval.read_at(fresh_gated, x_few, y_few)


def panel(read, i):
    on_key = read["weights"][i, data_recall.locate(x_few[i], y_few[i])[-1]["key_pos"]]
    return {"values": read["weights"][i], "names": names_of(x_few[i]), "marks": plots_retrieval.recall_marks(x_few[i], y_few[i]),
            "verdict": bool(read["correct"][i]),
            "title": f"answers {name(int(read['pred'][i]))} (target {name(int(read['target'][i]))}); "
                     f"weight on the key's entry {on_key:.2f}; read gate {read['read_gate'][i]:.2f}"}


panels = {}
for want in (True, False):
    hits = (trained_read["correct"] == want).nonzero().flatten()
    if len(hits):
        panels[f"trained, example {int(hits[0])}"] = [panel(trained_read, int(hits[0]))]
panels["initialized, example 0"] = [panel(fresh_read, 0)]
plots_retrieval.retrieval_grid(panels, title="gated_hybrid: the memory's weights at the answer position")
plt.show()

# %%
# NBVAL_IGNORE_OUTPUT
rows = torch.arange(len(x_few))
key_pos_few = torch.tensor([data_recall.locate(x_few[i], y_few[i])[-1]["key_pos"] for i in range(len(x_few))])
for label, read in (("initialized", fresh_read), ("trained", trained_read)):
    on_key = read["weights"][rows, key_pos_few]
    print(f"{label:12s} accuracy {read['correct'].float().mean():6.1%}   weight on the right entry {on_key.mean():.3f}   "
          f"read gate {read['read_gate'].mean():.3f}")

# %% [markdown]
# Before training the read already lands on the right entry with nearly all its weight (tied
# $W_{qk}$, $\beta = 10$), yet the fresh model answers wrong: the value it reads, $W_v e_{j+1}$,
# still has to be mapped to the right logit, through the LayerNorm and the tied head. That is what
# training learns here, quickly, because the read itself is right from the first step. The read
# gate barely moves from its initial 0.5: it sits inside the LayerNorm, $\operatorname{LN}(g^{\mathrm{read}}_t m_t)$,
# where a factor that multiplies a grown read changes little (the exercise's optional part
# measures how little, on a trained model).
#
# For contrast, the Transformer has no separate memory: its "retrieval" is attention. Its last
# layer's attention at the answer position, per head, on the first evaluation example (green: the
# value it should copy):

# %%
# NBVAL_IGNORE_OUTPUT
tf = recall_models["transformer"]
attn = plots_retrieval.attention_at(tf, x_few[0])  # [H, T]
tf_right = bool(tf(x_few[:1].to(DEVICE))[0, -1].argmax().cpu() == y_few[0, -1])
marks0 = plots_retrieval.recall_marks(x_few[0], y_few[0])
head_panels = [{"values": attn[h], "names": names_of(x_few[0]), "marks": marks0 if h == 0 else None,
                "xlabel": "position attended", "title": f"head {h}", "ylim": None} for h in range(attn.shape[0])]
fig = plots_retrieval.retrieval_grid({"heads 0, 1": head_panels[:2], "heads 2, 3": head_panels[2:]},
                                  title="Transformer, last layer, attention at the answer position", ylabel="attention weight")
fig.suptitle(f"{'RIGHT' if tf_right else 'WRONG'}: Transformer, last layer, attention at the answer position",
             fontsize=12, fontweight="bold", color=palette.RIGHT.colour if tf_right else palette.WRONG.colour)
plt.show()

# %% [markdown]
# In the run saved here no head concentrates on the value or on the key's first occurrence, and
# the accuracy is below that of a random pick among the four values in context. Attention *can* express the
# lookup (section 8: two layers make an induction head); 200 steps with one supervised token per
# sequence are too few for it to be found. The key-value memory does not have to find it.
#
# ### Without the memory: what a trained `triple_latent` keeps across the gap
#
# `triple_latent` alone, trained with the same protocol, does not learn this task (its accuracy at
# 200 steps is printed below; notebook 07 has every seed). Its keep gates say why. The four pairs
# end at position 12, the question starts at position 125, and between them sit 112 filler tokens.
# A pair enters the pair memory as the outer product written when its value arrives, and from then
# on every token multiplies the memory by its $\gamma_u$ (notebook 02, section 3: the write at
# $\tau$ carries the weight $w_{t,\tau} = (1 - \gamma_\tau) \prod_{u=\tau+1}^{t} \gamma_u$ in $P_t$).
# Of what the memory held when the filler began, the filler leaves
#
# $$
# \prod_{u=13}^{124} \gamma_u \qquad \text{(} \gamma^{112} \text{ for a constant gate } \gamma \text{)},
# $$
#
# and likewise $\prod_u \lambda_u$ of what the running state held. The repository ships a
# `triple_latent` trained on this task (the recall protocol, 200 steps, seed 0, made by the command
# printed below); `shipped_or_retrained` loads it, or trains it here with `RETRAIN = True` (about
# a minute and a half of training on a CPU core). Its gates along the sequence, averaged over 256
# fresh examples (`forgetting.recall_gates` reads them from `model.internals`):

# %%
RETRAIN = False  # True: train the 200-step recall model here instead of loading the shipped one
latent, latent_record = shipped_or_retrained("triple_latent", RETRAIN, device=DEVICE, task="recall",
                                             steps=RP.steps)
print(f"{latent_record['command']}\n  {latent_record['steps']} steps, {latent_record['train_seconds']} s of training; "
      f"recall accuracy {latent_record['accuracy']:.1%} on {RP.eval_examples} fresh examples (a constant guess: 1/8)")
x_gap, _ = data_recall.eval_set(256, seed=0)
gates = forgetting.recall_gates(latent, x_gap)  # {"lam", "gam"}: [256, layers, T, heads]
gap = forgetting.filler_gap(x_gap[0])  # (first filler position, one past the last)
print(f"filler: positions {gap[0]} .. {gap[1] - 1}, {gap[1] - gap[0]} tokens")
plots_forgetting.gates_along_recall(gates, gap)
plt.show()

# %% [markdown]
# Look at the level of the lines in the shaded filler: every head of every layer keeps about half
# of its state per token, the value the gates start at (bias 0, $\sigma(0) = 1/2$), and 200 steps
# have not moved them far. Multiplied over the gap, in log space (`forgetting.kept_fraction`
# sums $\log_{10}$ of the gates: some of the products fall below $10^{-38}$, the smallest normal
# float32):

# %%
kept = {key: forgetting.kept_fraction(g, *gap) for key, g in gates.items()}  # log10 of the fraction: [256, L, H]
half = {key: forgetting.half_life(g, *gap) for key, g in gates.items()}  # tokens: [256, L, H]
for key, name_ in (("gam", "pair memory, gamma"), ("lam", "running state, lambda")):
    med = kept[key].median(dim=0).values  # [L, H]: median over the examples
    print(f"{name_}: log10 of the fraction kept after the gap (median over examples), per layer (rows) and head")
    for layer, row in enumerate(med):
        print(f"  layer {layer}: " + "  ".join(f"{v:7.1f}" for v in row.tolist()))
    print(f"  best head: 10^{med.max():.1f};  half-life at the gap's average decay: "
          f"{half[key].median(dim=0).values.min():.2f} to {half[key].median(dim=0).values.max():.2f} tokens")
print(f"a constant gate of 0.5 over the gap: 10^{(gap[1] - gap[0]) * math.log10(0.5):.1f}; keeping half of a pair "
      f"would take a gate of {0.5 ** (1 / (gap[1] - gap[0])):.4f} at every filler token")

# %%
plots_forgetting.kept_across_gap(kept, gap[1] - gap[0])
plt.show()

# %% [markdown]
# Each bar is one head's share of a stored pair that reaches the question; look at how far below
# zero even the tallest bar ends. No head keeps a measurable trace: what the question finds in the
# running states and pair memories was written by the filler, so the model can only guess, and it
# answers at the level of a constant guess. To carry a pair across 112 tokens, a gate would have to
# stay near 1 on every filler token. The gates depend on the token, so a model could learn that
# (keep on filler, overwrite on pairs), but training has to find it through one supervised token
# per sequence, and in 200 steps it has not: the gates sit near where they started. The key-value
# memory needs no such gate: its entries never decay, and the read above finds the asked key's
# entry after the same 112 tokens.
#
# ## 7. Play
#
# Write your own pairs, choose which key to ask, how much filler separates the pairs from the
# question, and whether the trained or the freshly initialized `gated_hybrid` answers. The bars are
# the memory's weights at the answer position. The box states which keys and values exist (read
# from the task's layout), the ask menu offers only the keys you wrote, and a pair it cannot use
# gets a message instead of a picture. First the starting values for both models (pictures that
# stay on the page), then the controls (they move in a running kernel).

# %%
# NBVAL_IGNORE_OUTPUT
PLAY_MODELS = {"gated_hybrid (trained)": recall_models["gated_hybrid"], "gated_hybrid (initialized)": fresh_gated}
for model_name in PLAY_MODELS:
    widgets.recall_widget(PLAY_MODELS, model=model_name, max_len=RP.seq_len, static=True)

# %%
# NBVAL_IGNORE_OUTPUT
widgets.recall_widget(PLAY_MODELS, pairs="k5=v13 k6=v20 k7=v17 k8=v14", ask="k7", filler=60, max_len=RP.seq_len)

# %% [markdown]
# ## 8. Optional: induction heads, and which token asks
#
# *(Optional: nothing else depends on it; notebook 07c, section 4, has the whole study.)* An
# **induction head** (Olsson et al. 2022, `docs/paper.md` section 7), a circuit found in trained
# Transformers, copies what followed an earlier occurrence of the current token: after
# "... A B ... A" it predicts B. It takes two attention layers. The key-value memory makes the same
# look-up in one step when the current token asks (`query_align`):
#
# - `"current"`: $q_t = W_{qk} e_t$ over entries $j \le t-1$: "what followed this token last
#   time?", a guess of $x_{t+1}$, the induction look-up.
# - `"previous"` (the paper's, and the library default): $q_t = W_{qk} e_{t-1}$ over $j \le t-2$:
#   "what followed the previous token?", a guess of $x_t$, which the model already has. It fits
#   the recall task only because a fixed marker sits between key and answer (`docs/paper.md`
#   section 6.3).
#
# First the mechanism, **at initialization** (fresh models, tied $W_{qk}$): on a repeated
# sentence, each row shows the token whose value gets the largest retrieval weight at each
# position; green where it equals the next byte.

# %%
sentence = "the cat ran. the cat ran."
tokens_ind = widgets.byte_prompt(sentence, LP.seq_len)  # BOS + bytes: [T]
T_ind = len(tokens_ind)
read_token, right_next, right_current = {}, {}, {}
second_half = range(T_ind // 2 + 1, T_ind - 1)
for align in ("current", "previous"):
    seed_everything(0)
    fresh = build("gated_hybrid", LP, {"query_align": align}).to(DEVICE)
    _, rec = fresh.internals(tokens_ind[None].to(DEVICE))
    w, idx = rec["retrieval"]["weights"][0].cpu(), rec["retrieval"]["index"][0].cpu()  # [T, top_k] each
    top = idx.gather(-1, w.argmax(-1, keepdim=True))[:, 0]  # memory position of the top entry: [T]
    read = torch.where(top >= 0, tokens_ind[(top + 1).clamp(max=T_ind - 1)], tokens_ind.new_tensor(256))  # its value token
    read_token[f"{align!r} alignment: the value read"] = read
    right_next[align] = sum(int(read[t] == tokens_ind[t + 1]) for t in second_half)
    right_current[align] = sum(int(read[t] == tokens_ind[t]) for t in second_half)
plots_retrieval.prediction_strips(tokens_ind, read_token, per_row=T_ind + 6, title="the memory's read at initialization (tied W_qk)")
plt.show()
for align, hits in right_next.items():
    print(f"{align:8s} second copy of the sentence: the read is the NEXT byte at {hits} of "
          f"{len(second_half)} positions, the CURRENT byte at {right_current[align]}")

# %% [markdown]
# At initialization the current-token query returns the next byte in the second copy, the
# previous-token query the byte already there (PAD: nothing to read). Whether the copying
# survives training is a study of its own, with its own yardstick (a loss ratio on text read
# twice, against a control): the optional notebook 07c's study of induction (section 4) trains both alignments as
# byte-level language models and reads the results there, where the measure is explained.
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
#   $W_q, W_k$ it scores like any other token. So the fresh tied `gated_hybrid` already reads the
#   right entry, yet answers wrong: training maps the value it reads to the right logit, within the
#   recall protocol's few hundred steps (batch 32, constant lr 3e-4), a budget at which the
#   Transformer does not find the look-up either, so it decides nothing about which architecture
#   can learn to recall.
# * A `triple_latent` trained on recall keeps about half of its state per token, so a stored pair
#   is gone after the 112 filler tokens (the product of the trained gates over the gap); the
#   key-value memory's entries do not decay.
# * (Optional.) An induction head copies what followed an earlier occurrence of the current
#   token; the memory with `query_align="current"` makes that look-up keyed on one byte at
#   initialization; notebook 07 measures what training keeps of it.
#
# Exercise: `notebooks/exercises/06_kv_gated_fusion.ipynb` (its optional part: the read gate inside
# the LayerNorm, measured on a trained model) · Next: `07_paper_reproduction.ipynb`, which opens
# with the other model that fuses a side path into the logits, `transformer_plus_triple`, and what
# a fair comparison of models is. (Before it, `06b_family.ipynb`: the layer beside its relatives.)
