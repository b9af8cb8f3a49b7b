# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 · The readout, the attention view, and the whole model
#
# Step 3 of the triple-latent layer, and the layer put together. Every symbol is in notebook 00's
# [glossary](00_start_here.ipynb#glossary).
#
# **Learning goals.** After this notebook you can
# - read the pair memory, $r_t = (P_t^\top q^l_t) \odot q^r_t$, by hand and with the library's forms;
# - derive the attention view in both directions: the readout is decayed linear attention with key
#   $s_{\tau-1}$ and value $b_\tau$, and any attention *without a softmax* folds into a fixed-size
#   matrix that replaces the growing KV cache;
# - say why the key is the *previous* running state, and what $q^r$, the tanh and the convex
#   $(1-\lambda)$, $(1-\gamma)$ mixing are for;
# - put the three steps together in one layer, and place the layer among related ones (linear
#   attention, RetNet, GLA, Mamba-2, DeltaNet).
#
# **Prerequisites.** Notebooks 01 (running state) and 02 (pair memory). Softmax attention:
# queries, keys, values, the KV cache.
#
# **Time.** About 55 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 19 s (CPU 4 s, peak 425 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# ## 1. Where the readout sits, and what it computes
#
# From the LayerNormed input $n_t$ each head makes two more tanh projections, the left and right
# queries $q^l_t = \tanh(W_{ql} n_t)$ and $q^r_t = \tanh(W_{qr} n_t)$. The left query is contracted
# with the memory's *state* index $i$ (the rows of $P$), and the right query scales the result
# entry by entry:
#
# $$
# r_t = \big(P_t^\top q^l_t\big) \odot q^r_t, \qquad
# r_t[j] = \Big(\sum_i P_t[i, j]\; q^l_t[i]\Big)\; q^r_t[j], \qquad
# o_t = W_o\, \mathrm{vec}(r_t)
# $$
#
# | symbol | code (`tl_minimal/readout.py`) | shape | meaning |
# |---|---|---|---|
# | $q^l_t, q^r_t$ | `q_left`, `q_right` | `[B, T, H, S]` | left query (reads $P$'s rows), right query |
# | $P_t$ | (never built in the fast form) | `[B, H, S, S]` | the pair memory after token $t$ |
# | $r_t$ | `r` | `[B, T, H, S]` | readout |
# | $W_o$ | `out` | `Linear(H*S, d)` | $o_t = W_o\,\mathrm{vec}(r_t)$ goes back into the residual stream |

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
from tl_minimal.pair_memory import pair_memory, unrolled_weights
from tl_minimal.readout import TripleLatentMixer, pair_readout, pair_readout_step
from tl_minimal.running_state import previous_states, running_state
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.views import diagrams, plots

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

diagrams.layer_diagram(highlight="r")
plt.show()

# %%
# NBVAL_IGNORE_OUTPUT
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   device: {DEVICE}")

# %% [markdown]
# ## 2. Reading the memory by hand
#
# A small random toy: build every $P_t$ with `pair_memory`, read it with the formula above, and
# compare with the library's `pair_readout`, which gets the same $r_t$ **without ever building
# $P_t$** (its fast form), and with the one-token `pair_readout_step` used for generation.

# %%
gen = torch.Generator().manual_seed(0)
B, T, H, S = 1, 6, 1, 4
s_prev, b, q_left, q_right = (torch.randn(B, T, H, S, generator=gen, dtype=torch.float64) for _ in range(4))
gam = torch.rand(B, T, H, generator=gen, dtype=torch.float64)

P = pair_memory(s_prev, b, gam)  # [B, T, H, S, S]: every P_t, for checking
r_by_hand = (P.transpose(-1, -2) @ q_left.unsqueeze(-1)).squeeze(-1) * q_right  # (P_t^T q^l_t) * q^r_t
r_loop = pair_readout(s_prev, b, gam, q_left, q_right, mode="loop")
r_fast = pair_readout(s_prev, b, gam, q_left, q_right, mode="fast")
P_t, steps = None, []
for t in range(T):
    r_t, P_t = pair_readout_step(P_t, s_prev[:, t], b[:, t], gam[:, t], q_left[:, t], q_right[:, t])
    steps.append(r_t)
print("loop equals (P_t^T q^l_t) * q^r_t:", torch.allclose(r_loop, r_by_hand))
print("fast equals the loop:             ", torch.allclose(r_fast, r_loop))
print("step by step equals the loop:     ", torch.allclose(torch.stack(steps, dim=1), r_loop))

# %% [markdown]
# ## 3. The attention view, in both directions
#
# ### 3.1 From the memory to attention
#
# Put the unrolled pair memory, $P_t = \sum_{\tau \le t} w_{t,\tau}\, s_{\tau-1}
# b_\tau^\top$, into the readout:
#
# $$
# r_t = q^r_t \odot \sum_{\tau \le t} \underbrace{w_{t,\tau}\,\big(q^l_t \cdot s_{\tau-1}\big)}_{A_{t\tau}}\; b_\tau,
# \qquad w_{t,\tau} = (1 - \gamma_\tau) \prod_{u=\tau+1}^{t} \gamma_u
# $$
#
# This is attention with **query** $q^l_t$, **key** $s_{\tau-1}$ (the running state before token
# $\tau$), **value** $b_\tau$, and scores $A_{t\tau}$ that are a plain dot product times a decay:
# no softmax, no normalization. The check: build $A$ from `unrolled_weights` and compare
# $q^r \odot (A\, b)$ with `pair_readout`.

# %%
w, _ = unrolled_weights(gam)  # [B, T(t), T(tau), H]: w_{t,tau}, zero for tau > t
scores = torch.einsum("bths,buhs->btuh", q_left, s_prev)  # q^l_t . s_{tau-1}: [B, T, T, H]
A = w * scores  # [B, T(t), T(tau), H]
r_attention = q_right * torch.einsum("btuh,buhs->bths", A, b)  # q^r_t * sum_tau A[t, tau] b_tau
print("q^r * (A b) equals pair_readout:", torch.allclose(r_attention, r_fast))

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8))
plots.matrix_heatmap(w[0, :, :, 0], ax=axes[0], center=None, vmin=0, cmap="Blues", annot=True,
                     title="decay weights w[t, τ]", xlabel="written at τ", ylabel="read at t")
plots.matrix_heatmap(A[0, :, :, 0], ax=axes[1], annot=True, title="scores A[t, τ] = w[t, τ] (q^l_t · s_(τ-1))",
                     xlabel="written at τ (key s_(τ-1), value b_τ)", ylabel="read at t (query q^l_t)")
fig.tight_layout()
plt.show()

# %% [markdown]
# Unlike softmax attention, a row of scores can be negative and need not sum to one, and its
# size is set by the gates: with $\gamma \approx 0.5$ the weights halve with every token back,
# whatever the query asks for.
#
# ### 3.2 From attention to a memory: drop the softmax
#
# Now start from attention. For one query $q_t$ over keys $k_\tau$ and values $v_\tau$ (vectors of
# $D$ numbers each, one attention head), *without* a softmax, move the scalar
# $q_t \cdot k_\tau = k_\tau^\top q_t$ to the right of $v_\tau$ and pull the query out of the sum
# (the [linear-algebra page](../docs/linear_algebra.md) checks this identity):
#
# $$
# \sum_{\tau \le t} (q_t \cdot k_\tau)\, v_\tau
# \;=\; \sum_{\tau \le t} v_\tau\, k_\tau^\top q_t
# \;=\; \Big(\sum_{\tau \le t} k_\tau v_\tau^\top\Big)^{\!\top} q_t
# \;=\; M_t^\top q_t, \qquad M_t = M_{t-1} + k_t v_t^\top .
# $$
#
# The left side must keep every key and value, the KV cache: $2 t D$ numbers that grow with $t$.
# The right side keeps one $D \times D$ matrix $M_t$, updated by an outer product per token, and
# gives exactly the same outputs. That is the whole trick of linear attention (Katharopoulos et
# al.). With a softmax it fails: $\exp(q \cdot k)$ is not a product of something of $q$ and
# something of $k$ of fixed size, so the sum cannot be folded, and softmax attention must keep the
# cache. Checked on random vectors:

# %%
T_kv, D = 50, 8
q, k, v = (torch.randn(T_kv, D, generator=gen, dtype=torch.float64) for _ in range(3))
with_cache = torch.stack([((q[t] @ k[: t + 1].T)[:, None] * v[: t + 1]).sum(0) for t in range(T_kv)])  # keeps k, v
M, folded = torch.zeros(D, D, dtype=torch.float64), []
for t in range(T_kv):
    M = M + torch.outer(k[t], v[t])  # M_t = M_{t-1} + k_t v_t^T: a fixed D x D
    folded.append(M.T @ q[t])
print("sum_tau (q_t . k_tau) v_tau equals M_t^T q_t:", torch.allclose(with_cache, torch.stack(folded)))
print(f"numbers kept at t = {T_kv}: KV cache 2 t D = {2 * T_kv * D}, memory D^2 = {D * D} (at any t)")

# %% [markdown]
# Put a keep gate into the update, $M_t = \gamma_t M_{t-1} + (1 - \gamma_t)\, k_t v_t^\top$, and
# the weights of section 3.1 appear. With $q = q^l$, $k_\tau = s_{\tau-1}$ and $v_\tau = b_\tau$,
# $M_t$ **is** the pair memory $P_t$: the pair memory is a KV cache folded into an $S \times S$
# matrix, with keys that are running states. Read in one direction, the layer is attention
# without a softmax; read in the other, it is a fixed-size memory, which is why generating a token
# costs the same at every position.
#
# ### 3.3 Why the key is the previous running state
#
# The memory pairs *what came before* token $\tau$ (the context $s_{\tau-1}$) with *what token
# $\tau$ wrote* ($b_\tau$). A query $q^l_t$ that resembles a stored context gets back the writes
# that *followed* contexts like it: "after a context like this, this came next", the kind of fact
# next-token prediction needs. With the key $s_\tau$ instead, key and value would describe the
# same token, as in plain linear attention. Two consequences: keys describe contexts, not single
# tokens (how many tokens back is set by $\lambda$), and the first token's write has the key
# $s_{-1} = 0$ and is never read. Check it: change $b_0$ and no readout moves.

# %%
s_prev_model = torch.cat([torch.zeros_like(s_prev[:, :1]), s_prev[:, 1:]], dim=1)  # s_{-1} = 0, as in the model
b_changed = b.clone()
b_changed[:, 0] = torch.randn(B, H, S, generator=gen, dtype=torch.float64)  # a different first write
r_same = pair_readout(s_prev_model, b, gam, q_left, q_right)
r_changed = pair_readout(s_prev_model, b_changed, gam, q_left, q_right)
print("with s_{-1} = 0, changing the first write b_0 changes no readout:", torch.equal(r_changed, r_same))

# %% [markdown]
# ## 4. Why the design: tanh, convex mixing, and the right query
#
# The paper does not ablate these choices; here is what each one does, checked where it can be.
#
# **tanh and the convex mixing keep everything bounded.** Every entry of $a, b, q^l, q^r$ lies in
# $(-1, 1)$. The running state is a *convex combination* (weights $\lambda_t$ and $1 - \lambda_t$
# that add up to one) of a state and a write that both lie in $[-1, 1]$, so it stays there
# forever; the same holds for every entry of $P_t$. So $|r_t[j]| \le S$ at any length, without
# the normalizer that linear attention divides by. Compare three ways to add the same outer
# product $k v^\top$ at every token:

# %%
# NBVAL_IGNORE_OUTPUT
T_long = 300
fig, ax = plt.subplots(figsize=(7, 3.2))
for g_keep, style in ((0.9, "-"), (0.99, "--")):
    plain, decay_only, convex = [], [], []
    m_plain = m_decay = m_convex = 0.0  # one entry of the memory, the written entry = 1 every token
    for _ in range(T_long):
        m_plain = m_plain + 1.0  # linear attention: M_t = M_{t-1} + k v^T
        m_decay = g_keep * m_decay + 1.0  # decay only: M_t = g M_{t-1} + k v^T
        m_convex = g_keep * m_convex + (1 - g_keep) * 1.0  # this layer: M_t = g M_{t-1} + (1 - g) k v^T
        plain.append(m_plain), decay_only.append(m_decay), convex.append(m_convex)
    if g_keep == 0.9:
        ax.semilogy(plain, color="gray", label="plain sum: grows like t")
    ax.semilogy(decay_only, color="C1", ls=style, label=f"decay only, γ = {g_keep}: up to 1/(1-γ)")
    ax.semilogy(convex, color="C2", ls=style, label=f"convex (this layer), γ = {g_keep}: at most 1")
ax.set_xlabel("tokens written")
ax.set_ylabel("one memory entry")
ax.set_title("the convex write keeps the memory's scale fixed, whatever the gate", fontsize=10)
ax.legend(fontsize=9)
plt.show()

# %% [markdown]
# With a decay but no $(1-\gamma)$, the scale of the memory depends on the gate ($1/(1-\gamma)$: 10
# at $\gamma = 0.9$, 100 at $\gamma = 0.99$), so layers of that kind normalize their output. With the convex
# write the gate only decides *how far back* the average reaches, not how large it is. The price:
# a long memory (large $\gamma$) means faint writes ($1-\gamma$ small). The bound holds in the
# library's layer for any inputs, here extreme ones (gate biases of 4, so the gates keep about $\sigma(4) \approx 0.98$ per token, and
# inputs large enough to saturate most tanh):

# %%
torch.manual_seed(0)
n_extreme = 100 * torch.randn(2, 500, 64, dtype=torch.float64)  # [B, T, d]: most tanh saturate near +-1
mixer = TripleLatentMixer(d_model=64, n_heads=4, state_dim=16, lam_bias=4.0, gam_bias=4.0).double()  # long memories
with torch.no_grad():
    a_, b_, ql_, qr_, lam_, gam_ = mixer.project(n_extreme)
    s_ = running_state(a_, lam_)
    P_ = pair_memory(previous_states(s_), b_, gam_)
print("max |s_t| <= 1:", s_.abs().max().item() <= 1, "  max |P_t| <= 1:", P_.abs().max().item() <= 1)

# %% [markdown]
# **The right query** $q^r_t$ gates the read entry by entry: the current token decides which of the
# $S$ features it read to pass on, and with which sign. Without it, the current token would
# influence the readout only through the dot products $q^l_t \cdot s_{\tau-1}$. Related layers
# gate their output too (GLA and Mamba, section 10); $q^r$ is this layer's version.
#
# ## 5. The paper's text and its code: $P_t q^l_t$ or $P_t^\top q^l_t$?
#
# The paper's text writes the read as $P_t q^l_t$; its reference code contracts $q^l$ with the
# state index, $P_t^\top q^l_t$, and the library follows the code (`docs/paper.md` section 2.2).
# The two are different layers: $P_t q^l_t$ swaps the roles, making the write $b_\tau$ the key and
# the state $s_{\tau-1}$ the value. On the toy above:

# %%
r_text = (P @ q_left.unsqueeze(-1)).squeeze(-1) * q_right  # (P_t q^l_t) * q^r_t
print("P q^l gives the same readout as P^T q^l:", torch.allclose(r_text, r_fast))


# %% [markdown]
# ## 6. The fast form: notebook 03b
#
# The toy above checked that `pair_readout(mode="fast")` gives the loop's $r_t$ without building
# $P_t$. How it does it, and what it costs, is
# [`03b_chunked_readout.ipynb`](03b_chunked_readout.ipynb), to read after this one.
#
# ## 7. The whole layer
#
# `TripleLatentMixer` puts the three steps together: from $n_t$ it makes the four tanh projections
# and the two gates, runs the running state, the pair memory and its readout, and projects
# $o_t = W_o\,\mathrm{vec}(r_t)$.
# Its state between calls is $\{s, P\}$: a fixed size, whatever the length. Calling it on a whole
# sequence equals calling it token by token with the carried state:

# %%
torch.manual_seed(0)
mixer = TripleLatentMixer(d_model=64, n_heads=4, state_dim=16).double()
n = torch.randn(2, 20, 64, dtype=torch.float64)  # [B, T, d]
o_all, state_all = mixer(n)
state, outs = None, []
for t in range(20):
    o_t, state = mixer(n[:, t:t + 1], state)
    outs.append(o_t)
print("output:", tuple(o_all.shape), " state: s", tuple(state["s"].shape), "P", tuple(state["P"].shape))
print("whole sequence equals token by token:", torch.allclose(torch.cat(outs, dim=1), o_all))
print("final states equal:", torch.allclose(state["P"], state_all["P"]) and torch.allclose(state["s"], state_all["s"]))

# %% [markdown]
# ## 8-9. Trained, and the whole model in one page: notebook 03c
#
# Training `triple_latent` against a Transformer, what one trained layer reads, and the whole model
# written as one function are [`03c_trained_model.ipynb`](03c_trained_model.ipynb), to read after
# 03b.
#
# ## 10. Related work: where this layer sits
#
# Section 3.2 showed the common root: attention without a softmax folds into a fixed-size memory.
# The layers below differ in what they store, how they forget, and how they read. Per head, $D$ is
# the key and value size ($S$ here), $t$ the position of the token being generated. Notebook
# `06b_family.ipynb` builds GLA, H3 and DeltaNet and trains them. Each reference, with its arXiv
# number, is in `docs/paper.md` section 7.
#
# | layer | stores | forgets | reads | cost per generated token | reference |
# |---|---|---|---|---|---|
# | softmax attention (the `transformer` baseline) | every key and value: the KV cache, $2tD$ | never (a window, if any, drops old tokens) | softmax of $q \cdot k_\tau / \sqrt{D}$ over all $t$ keys, weighted sum of values | $O(tD)$ time and memory, growing | Vaswani et al. 2017 |
# | linear attention | $M = \sum_\tau \phi(k_\tau) v_\tau^\top$ ($D \times D$; $\phi$ a fixed positive feature map, e.g. $\operatorname{elu}(\cdot) + 1$) and a normalizer $\sum_\tau \phi(k_\tau)$ | never: a plain sum | $M^\top \phi(q)$ divided by $\phi(q) \cdot \sum_\tau \phi(k_\tau)$ | $O(D^2)$ | Katharopoulos et al. 2020 |
# | RetNet | $M$ ($D \times D$) | a fixed decay per head, the same for every token | $M^\top q$, with $q$ and $k$ rotated by their positions (xPos: each query and key rotated by an angle that grows with its position, as in rotary embeddings, and scaled so that far-apart tokens weigh less), then a normalization and a gate | $O(D^2)$ | Sun et al. 2023; xPos: Sun et al. 2022 |
# | H3 | $N$ states of shifted keys times values, $\bar k_\tau v_\tau^\top$ (a diagonal state-space model) | a fixed decay per state, the same for every token | the states read with $q$ (a multiplicative read), summed | $O(N D^2)$ | Fu et al. 2023 |
# | GLA (gated linear attention) | $M$ ($D \times D$, or keys and values of different sizes) | a data-dependent decay per key dimension (a vector gate) | $M^\top q$, then an output gate | $O(D^2)$ | Yang et al. 2023 |
# | Mamba-2 / SSD (state-space duality: the same recurrence computed token by token as a state, or as one masked, attention-like matrix product) | a state matrix per head (state size times head width, the same shape as $M$) | a data-dependent *scalar* decay per head (`exp(Δ A)`: Mamba's discretized decay, e to the power of a learned, token-dependent step size `Δ` times a learned negative rate `A`, so always in $(0, 1)$) | the state read with a query-like projection (Mamba-2's names: the query is `C`, the key `B`, the value `x`) | $O(D^2)$ | Dao and Gu 2024; Mamba: Gu and Dao 2023 |
# | DeltaNet | $M$ ($D \times D$) | no decay: a write *replaces* what is stored under its key (delta rule, $M \leftarrow M + \eta_t\, k_t (v_t - M^\top k_t)^\top$, with a write strength $\eta_t \in (0, 1)$) | $M^\top q$ | $O(D^2)$ | Yang et al. 2024; fast weights: Schlag et al. 2021 |
# | **triple-latent** (this course) | $s$ ($S$) and $P$ ($S \times S$) | data-dependent scalar keep gates $\lambda_t, \gamma_t$ per head, convex writes | $(P^\top q^l) \odot q^r$ | $O(S^2)$ | arXiv:2606.05175; `docs/paper.md` |
#
# **What the triple-latent layer shares, and what is its own.**
# - *The key comes from earlier tokens*, $s_{\tau-1}$, so the memory pairs a context with its
#   continuation (section 3.3). Not new: H3 shifts its keys; Mamba, Mamba-2 and
#   flash-linear-attention's DeltaNet put a short causal convolution on their inputs, and so does
#   Based (Arora et al.); RWKV uses a token shift (Peng et al.). Particular here: the key is a
#   *gated running state*, its length learned through $\lambda_t$.
# - *Convex writes and tanh keep it bounded* without a normalizer (section 4). Convex writes are
#   also the GRU's (Cho et al.), minGRU's (Feng et al.) and HGRN's and HGRN2's (Qin et al.); Mamba
#   scales its input by about `(1 - exp(Δ A)) / |A|`. Others divide by a normalizer (linear
#   attention), normalize the output (RetNet), or correct the stored value (DeltaNet).
# - *One scalar gate per head*, data-dependent: the granularity of Mamba-2, coarser than GLA's
#   per-dimension gate, unlike RetNet's and H3's fixed decays. Scalar gates are what make the
#   chunked form so simple.
# - *Writes accumulate, nothing is overwritten*: two writes under similar keys are averaged, not
#   replaced as in DeltaNet; notebook 06 adds an exact key-value memory.
# - *Where the gates start.* The paper starts both gates at $\sigma(0) = 0.5$, a half-life of one
#   token. Its relatives start long: GLA divides its log-gate by 16 (a half-life of 16 tokens at
#   the start), RetNet fixes one decay per head between $1 - 1/32$ and nearly one, Mamba draws its
#   step size so that its decay starts near one, HGRN bounds its forget gates from below, and Gated
#   DeltaNet (Yang et al. 2024, arXiv:2412.06464) takes Mamba-2's decay with its start. Notebook
#   06a measures why that matters.
# - *An elementwise right query* $q^r$ gates the read (section 4), like GLA's output gate.
#
# All of them share the two properties this course cares about: a chunked, parallel form for
# training and a constant-size state for generation.
#
# %% [markdown]
# ## Summary
#
# - The readout $r_t = (P_t^\top q^l_t) \odot q^r_t$ reads the pair memory with a left query and
#   gates the result with a right query; the library computes it without building $P_t$.
# - Unrolled, it is decayed linear attention: query $q^l_t$, key $s_{\tau-1}$, value $b_\tau$,
#   scores $w_{t,\tau}(q^l_t \cdot s_{\tau-1})$. Conversely, attention without a softmax folds into a
#   fixed $D \times D$ memory, $\sum_\tau (q \cdot k_\tau) v_\tau = (\sum_\tau k_\tau v_\tau^\top)^\top q$: the
#   pair memory is a KV cache folded into $S \times S$ numbers, with running states as keys.
# - The key is the *previous* state, so the memory pairs a context with what followed it; tanh and
#   convex writes keep every entry of $s$ and $P$ in $[-1, 1]$; $q^r$ gates the read.
# - `TripleLatentMixer` puts the three steps together; its state between calls is $\{s, P\}$, a
#   fixed size. Keys from earlier tokens (H3, short convolutions, a token shift) and convex writes
#   (GRU, HGRN) are shared with related layers: this layer's own is the combination.
#
# **Exercise:** [`exercises/03_readout.ipynb`](exercises/03_readout.ipynb) ·
# **Next:** [`03b_chunked_readout.ipynb`](03b_chunked_readout.ipynb), the readout's fast form; then
# [`03c_trained_model.ipynb`](03c_trained_model.ipynb), the layer trained.

