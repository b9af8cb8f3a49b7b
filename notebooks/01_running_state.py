# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · The running state
#
# Step 1 of the triple-latent layer. Every symbol is in the [glossary of notebook
# 00](00_start_here.ipynb#glossary) (section 4), and the layer is drawn in its section 2.
#
# **Learning goals.** After this notebook you can
# - compute the running state $s_t$ by hand and with the library's three forms (loop, fast, step);
# - derive the **chunked algorithm** that makes the fast form linear in the sequence length, count
#   its cost, and check a hand-written version against the loop;
# - turn a keep gate $\lambda$ into a memory length (the half-life, in tokens);
# - write the key lines of the training loop, check them against the library's `train()`, and
#   train a model with one call;
# - read the gates of a trained model and say what its running state remembers.
#
# **Prerequisites.** Notebook 00 (the layer figure and the glossary). PyTorch: broadcasting,
# `torch.cumprod`, batched matrix products.
#
# **Time.** About 115 minutes: 112 of reading (3536 words at 100 a minute, 283 lines of code at 4,
# 11 figures at half a minute each) and a run of every cell in default mode, measured at 84 s (CPU
# 20 s, peak 622 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
#
# ## 1. Where the running state sits, and what it computes
#
# The layer starts from its LayerNormed input $n_t = \mathrm{LN}(x_t)$ (width $d$), the same for
# all heads. From it, each head makes a write vector and a keep gate:
#
# $$
# a_t = \tanh(W_a n_t) \in (-1, 1)^S, \qquad \lambda_t = \sigma(W_\lambda n_t + c_\lambda) \in (0, 1)
# $$
#
# and keeps a **running state**, a moving average of its writes that forgets at a rate the token
# itself chooses:
#
# $$
# s_t = \lambda_t\, s_{t-1} + (1 - \lambda_t)\, a_t, \qquad s_{-1} = 0
# $$
#
# $\lambda_t$ near 1 keeps the past; near 0 it replaces the state by $a_t$. Steps 2 and 3 of the
# layer use $s$ as a summary of the context (notebooks 02, 03).

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((p for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), "tl-minimal")
    raise SystemExit(f'tl_minimal is not installed for this kernel; run this in a cell, then restart the '
                     f'kernel:  %pip install -e "{clone}"') from None

import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tl_minimal import views
from tl_minimal.data import text as data_text
from tl_minimal.running_state import DEFAULT_CHUNK, causal_decay, log_gate, running_state, running_state_step
from tl_minimal.training import config
from tl_minimal.training.device import get_device, synchronize
from tl_minimal.training.evaluate import unigram_bits
from tl_minimal.views import diagrams, plots, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

diagrams.layer_diagram(highlight="s")
plt.show()

# %% [markdown]
# In the figure, look for the highlighted box: the running state $s_t$, the first of the layer's
# three steps, fed by the normalized input and read by the two steps after it.
#
# | symbol | code (`tl_minimal/running_state.py`) | shape | meaning |
# |---|---|---|---|
# | $a_t$ | `a` | `[B, T, H, S]` | what token $t$ writes |
# | $\lambda_t$ | `lam` | `[B, T, H]` | keep gate, one number in (0, 1) per head and token |
# | $s_t$ | `s` | `[B, T, H, S]` | the state after token $t$ |
# | $s_{-1}$ | `s0` | `[B, H, S]` | the initial state (zeros when `None`) |
#
# One config cell: the paper's setting normally, a tiny one when `TL_SMOKE=1` (see notebook 00).
# The chunk size $C$ of the fast form is a library constant; it is printed here, never typed in.

# %%
# NBVAL_IGNORE_OUTPUT
STEPS = config.pick(80, 3)  # training steps of the byte-level protocol (the paper: 80)
TIMING_T = config.pick(2048, 256)  # sequence length for the loop-vs-fast timing
DEVICE = get_device()
C = DEFAULT_CHUNK  # tokens per chunk in the fast form
print(f"smoke mode: {config.smoke()}   training steps: {STEPS}   device: {DEVICE}   chunk size C = {C}")

# %% [markdown]
# ## 2. The recurrence by hand
#
# A toy with one head and a state of size one: a pulse of height 1 at $t = 0$, another of
# height 2 at $t = 5$, and a constant gate $\lambda = 0.5$. Eight lines of plain Python:

# %%
a_toy = [1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0]
lam_toy = 0.5

s = 0.0  # s_{-1} = 0
by_hand = []
for a_t in a_toy:
    s = lam_toy * s + (1 - lam_toy) * a_t  # s_t = lambda s_{t-1} + (1 - lambda) a_t
    by_hand.append(s)

print(" t   a_t      s_t")
for t, (a_t, s_t) in enumerate(zip(a_toy, by_hand, strict=True)):
    print(f"{t:2d}  {a_t:4.1f}  {s_t:8.5f}")

# %% [markdown]
# Each pulse enters at half its height ($1 - \lambda$) and then halves at every token. The
# library's `running_state` takes the model's layout `[B, T, H, S]` (batch, time, heads, state
# size) and a gate per head `[B, T, H]`; its `mode="loop"` is the same for-loop over time:

# %%
a = torch.tensor(a_toy, dtype=torch.float64).view(1, -1, 1, 1)  # [B=1, T=8, H=1, S=1]
lam = torch.full((1, len(a_toy), 1), lam_toy, dtype=torch.float64)  # [B, T, H]
s_lib = running_state(a, lam, mode="loop")[0, :, 0, 0]  # [T]
print("library (mode='loop') equals the hand computation:",
      torch.allclose(s_lib, torch.tensor(by_hand, dtype=torch.float64)))

# %% [markdown]
# ## 3. The same numbers without a loop: one T x T matrix
#
# Unroll the recurrence: every earlier write survives, shrunk by every gate applied since.
#
# $$
# s_t = \sum_{\tau \le t} \underbrace{\Big(\prod_{u=\tau+1}^{t} \lambda_u\Big)(1-\lambda_\tau)}_{W_{t\tau}}\; a_\tau
# $$
#
# So the whole sequence of states is one matrix product, $s = W a$, with a lower-triangular
# $T \times T$ matrix $W$. The products of gates are computed as
# $\exp\big(\sum_{u=\tau+1}^{t} \log \lambda_u\big)$: `causal_decay` takes the log-gates and
# returns exactly that matrix (zeros above the diagonal). Here with gates that change from token
# to token: $\lambda_2 = 0.05$ almost wipes the state, $\lambda = 0.95$ later holds it.

# %%
lam_vary = torch.tensor([0.5, 0.5, 0.05, 0.5, 0.95, 0.95, 0.95, 0.5], dtype=torch.float64)  # [T]
decay = causal_decay(log_gate(lam_vary))  # [T, T]: prod_{u=tau+1..t} lambda_u
W = decay * (1 - lam_vary)[None, :]  # [T, T]: W[t, tau]
s_matrix = W @ torch.tensor(a_toy, dtype=torch.float64)  # [T]
s_loop = running_state(a, lam_vary.view(1, -1, 1), mode="loop")[0, :, 0, 0]
print("W @ a equals the loop:", torch.allclose(s_matrix, s_loop))
print("s_t:", [round(v, 4) for v in s_loop.tolist()])

# %%
# NBVAL_IGNORE_OUTPUT
labels = [f"{t}\n{v:.2f}" for t, v in enumerate(lam_vary.tolist())]
plots.matrix_heatmap(W, xlabels=labels, ylabels=list(range(len(a_toy))), annot=True, center=None, vmin=0,
                     cmap="Blues", title="W[t, τ]: how much of write a_τ is in s_t",
                     xlabel="write τ (its gate λ_τ below)", ylabel="state s_t")
plt.show()

# %% [markdown]
# Read a row to see what one state is made of; read a column to see how one write fades. Column 0
# is emptied at $t = 2$ by the small gate; columns 4-6 fade slowly.
#
# This form has no loop, but it is **quadratic**: $W$ has $T^2$ entries and $s = Wa$ costs
# $T^2 S$ multiply-adds. At $T = 8{,}192$ that is 67 million entries per head. The library never
# builds it; the next section shows what it does instead.
#
# ## 4. The chunked algorithm: C x C blocks and a carried state
#
# Cut time into chunks of $C$ tokens. Take a token $t$ in the chunk that starts at position $c$,
# and unroll the recurrence only back to the chunk's start instead of back to $t = 0$:
#
# $$
# s_t \;=\; \underbrace{\Big(\prod_{u=c}^{t} \lambda_u\Big)\, s_{c-1}}_{\text{(ii) the state entering the chunk, decayed}}
# \;+\; \underbrace{\sum_{\tau=c}^{t} \Big(\prod_{u=\tau+1}^{t} \lambda_u\Big)(1-\lambda_\tau)\, a_\tau}_{\text{(i) the chunk on its own, from a zero state}}
# $$
#
# 1. **Inside a chunk**, term (i) is the matrix of section 3 for a sequence of length $C$: a
#    lower-triangular $C \times C$ matrix per chunk. Chunks do not depend on each other here, so all
#    $T/C$ of them are one batched matrix product. These are the diagonal blocks of the big $W$.
# 2. **Between chunks**, nothing is built: term (ii) needs only the state $s_{c-1}$ at the end of
#    the previous chunk, scaled by the running product of gates since the chunk's start (one number
#    per token). That replaces every block below the diagonal of $W$.
# 3. **The chunk-end states** follow from the same formula at the chunk's last token:
#    $s_{c+C-1} = \big(\prod_{u=c}^{c+C-1} \lambda_u\big)\, s_{c-1} + \text{(i)}_{c+C-1}$. That is a
#    recurrence of the same kind, but over $T/C$ chunk-end states instead of $T$ tokens.
#
# The picture for four chunks of the library's $C$:

# %%
diagrams.chunk_diagram(T=4 * C, C=C)
plt.show()

# %% [markdown]
# Look for the two kinds of block: the blue $C \times C$ triangles on the diagonal are all that is
# ever built (the hatched blocks never are), and the arrows from chunk to chunk are the only
# sequential part.
#
# The whole algorithm for one head, written out (a teaching toy: $T$ a multiple of $C$; the loop over
# chunks is step 3):

# %%
def running_state_chunked_toy(a, lam, C):
    """s_t = lam_t s_{t-1} + (1 - lam_t) a_t, s_{-1} = 0, for one head: a [T, S], lam [T], T a multiple of C."""
    T, S = a.shape
    N = T // C                                                  # number of chunks
    a_c, lam_c = a.view(N, C, S), lam.view(N, C)                # [N, C, S], [N, C]
    # (i) inside each chunk, from a zero state: one C x C matrix per chunk, all chunks in one matmul
    inside = causal_decay(log_gate(lam_c)) * (1 - lam_c).unsqueeze(1)  # [N, C(t), C(tau)]
    local = inside @ a_c                                        # [N, C, S]
    # (ii) how much of the entering state survives to each token: prod_{u=c..t} lambda_u
    from_start = torch.cumprod(lam_c, dim=1)                    # [N, C]
    # (iii) between chunks: carry the state at each chunk's end, N = T / C sequential steps
    s_enter, chunks = torch.zeros(S, dtype=a.dtype), []         # s_{-1} = 0
    for n in range(N):
        s_n = local[n] + from_start[n].unsqueeze(-1) * s_enter  # [C, S]
        chunks.append(s_n)
        s_enter = s_n[-1]                                       # the chunk-end state travels on
    return torch.cat(chunks)                                    # [T, S]


gen = torch.Generator().manual_seed(0)
a_r = torch.randn(8 * C, 4, generator=gen, dtype=torch.float64)  # T = 8 chunks, S = 4
lam_r = torch.rand(8 * C, generator=gen, dtype=torch.float64)    # weak and strong gates
s_toy = running_state_chunked_toy(a_r, lam_r, C)
s_ref = running_state(a_r.view(1, -1, 1, 4), lam_r.view(1, -1, 1), mode="loop")[0, :, 0]  # [T, S]
print(f"T = {8 * C}, C = {C}: the chunked toy equals the library's loop:", torch.allclose(s_toy, s_ref, rtol=1e-12))

# %% [markdown]
# **What it costs.** Count multiply-adds per head for a state of size $S$ (the paper's $S = 16$):
#
# - the **loop**: $T S$, but in $T$ steps that each wait for the previous one, each far too small
#   to keep a GPU (or a CPU's vector units) busy;
# - the **full matrix** of section 3: $T^2 S$, all in parallel, but quadratic;
# - the **chunked** form: $T C S$ inside chunks (each of the $T/C$ chunks costs $C^2 S$), plus
#   $T S$ to add the entering states, plus $(T/C) S$ for the carry; and the **decay mask** itself.
#   `causal_decay` builds each chunk's $C \times C$ matrix of segment sums
#   $\sum_{u=\tau+1}^{t} \log\lambda_u$ as one matmul of the chunk's $C$ log-gates with a constant
#   0/1 matrix of shape $[C, C^2]$ (column $(t, \tau)$ has a 1 in each row $\tau + 1, \dots, t$): $C \cdot C^2 = C^3$
#   per chunk, $T C^2$ in all. With $C = S$ that term is as large as the $T C S$ of the chunks'
#   products, so it doubles the chunked count. Linear in $T$ all the same, with only $T/C$ sequential
#   steps.

# %%
S_paper = 16
print(f"multiply-adds per head, S = {S_paper}, C = {C}")
print(f"{'T':>6s} {'loop':>10s} {'full matrix':>14s} {'chunked':>10s} {'of it, mask':>12s}   "
      f"sequential steps: loop, chunked")
for T in (128, 2048, 8192):
    loop_cost = T * S_paper
    full_cost = T * T * S_paper
    mask_cost = (T // C) * C**3  # causal_decay: [C] log-gates @ [C, C^2] 0/1 matrix, per chunk
    chunk_cost = T * C * S_paper + T * S_paper + (T // C) * S_paper + mask_cost
    print(f"{T:>6,} {loop_cost:>10,} {full_cost:>14,} {chunk_cost:>10,} {mask_cost:>12,}   {T:>6,}, {T // C:>4,}")
print(f"chunked / loop: {chunk_cost / loop_cost:.1f}; without the mask term it would be "
      f"{(chunk_cost - mask_cost) / loop_cost:.1f}")

# %% [markdown]
# The chunked form does about $C + C^2/S$ times the loop's arithmetic ($2C$ when $C = S$: the ratio
# printed last), in $C$ times fewer sequential steps, and far less than the full matrix.
#
# **Why the mask is built with a $C^3$ matmul.** There is a cheaper way to get every segment sum:
# take the running sum of the log-gates once ($C$ additions) and subtract: the sum from
# $\tau + 1$ to $t$ is the running sum at $t$ minus the running sum at $\tau$ (in the code below,
# `G_t - G_tau`). Same numbers in exact arithmetic, and the forward pass in float32 is nearly as
# good. The trouble is the gradient. A gate near 0 has a log-gate of -10, -20 or less, so the
# running sum grows large in a few tokens, and the difference of two large numbers keeps only the
# rounding error of each; the backward pass of the difference sums gradients of both signs into the
# same running sums, which cancel the same way. The chain rule of
# $\log\lambda$ then divides that absolute error by $\lambda$: for a gate near 0 it is larger than
# the gradient itself. Summing each segment directly, as the 0/1 matmul does, never forms the large
# running sums. The cell below builds both forms and compares their float32 gradients with respect
# to the gates against float64 ($C$ as above, gates $\sigma(z)$ with $z \sim 8\,\mathcal{N}(0, 1)$,
# so many sit near 0 or 1; a random weighted sum of the decays as the loss):

# %%
# NBVAL_IGNORE_OUTPUT
def segment_sums_by_difference(log_lam):  # [..., C] -> decay [..., C, C] via G_t - G_tau
    G = torch.cumsum(log_lam, dim=-1)  # [..., C]
    seg = G.unsqueeze(-1) - G.unsqueeze(-2)  # [..., C(t), C(tau)]
    above = torch.ones(seg.shape[-1], seg.shape[-1], dtype=torch.bool).triu(1)
    return torch.exp(seg.masked_fill(above, float("-inf")))  # zeros above the diagonal


def gate_gradient(form, z, weights, dtype):
    lam_g = torch.sigmoid(z.to(dtype)).detach().requires_grad_()  # the gates, [N, C]
    (form(log_gate(lam_g)) * weights.to(dtype)).sum().backward()
    return lam_g.grad.double()


z_gate = 8 * torch.randn(256, C, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
loss_weights = torch.randn(256, C, C, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
exact = gate_gradient(causal_decay, z_gate, loss_weights, torch.float64)
log_lam64 = log_gate(torch.sigmoid(z_gate))  # [N, C]
print("float64: the two forms give the same decays:",
      torch.allclose(segment_sums_by_difference(log_lam64), causal_decay(log_lam64)))
used = exact != 0  # the first gate of a chunk is in no segment: its gradient is exactly 0 in both forms
lam_used = torch.sigmoid(z_gate)[used]
for name, form in (("direct sums (causal_decay)", causal_decay), ("difference G_t - G_tau", segment_sums_by_difference)):
    g32 = gate_gradient(form, z_gate, loss_weights, torch.float32)[used]
    rel = (g32 - exact[used]).abs() / exact[used].abs()
    bad = rel > 0.01
    typical = f"; their median gate {lam_used[bad].median():.0e}" if bad.any() else ""
    print(f"float32, {name:27s}: {int(bad.sum()):5,} of {rel.numel():,} gate gradients off by more "
          f"than 1%; worst relative error {rel.max():.1e}{typical}")

# %% [markdown]
# Read the last two lines: with direct sums no float32 gradient is off by more than 1%; with the
# difference form hundreds are, the worst by orders of magnitude, and they belong to gates near 0
# (their median is printed), the gates that forget, whose gradient decides when to keep instead.
# That is worth $T C^2$ multiply-adds, which are cheap ones: a single batched matmul with a constant
# matrix. (A middle way, summing short sub-chunks directly and combining them in log space, would
# cost less; the library keeps the one simple form.)
#
# The library's `mode="fast"` is this
# algorithm for all batches and heads at once (`running_state.decayed_cumsum`), with two
# refinements. A length that is not a multiple of $C$ is padded with tokens that keep the state
# and write nothing. And the recurrence over chunk ends (step 3) is not a Python loop: it is the
# same chunked function called on the $T/C$ chunk-end states, which calls itself again on *their*
# chunk ends, until one chunk is left. So the library's sequential part is not $T/C$ steps but a
# few levels of recursion, each a handful of batched operations. Watch it: the cell below counts the
# calls of `decayed_cumsum` and the length each one works on.

# %%
import importlib

running_state_module = importlib.import_module("tl_minimal.running_state")  # the file, not the function


def recursion_lengths(T):
    """The sequence length of every decayed_cumsum call that mode="fast" makes for a length-T input."""
    original, lengths = running_state_module.decayed_cumsum, []

    def counted(log_decay, x, *args, **kwargs):  # the recursion calls the module's name: counted
        lengths.append(x.shape[2])  # x [B, H, T, D]: the length this level works on
        return original(log_decay, x, *args, **kwargs)

    running_state_module.decayed_cumsum = counted
    try:
        running_state(torch.zeros(1, T, 1, 1), torch.full((1, T, 1), 0.5), mode="fast")
    finally:
        running_state_module.decayed_cumsum = original
    return lengths


for T in (128, 2048, 8192):
    lengths = recursion_lengths(T)
    print(f"T = {T:5,}: {len(lengths)} levels, lengths " + " -> ".join(f"{n:,}" for n in lengths))

# %% [markdown]
# Each level cuts the length by $C$ (padding it up to a multiple of $C$ first), so the number of
# levels grows like $\log_C T$, printed above. Notebook 03b applies the same idea to the pair
# memory's readout, and the optional speed notebook 08 (outside the 00-07 path) times all forms.
#
# ### 4.1 The associative scan: the same recursion with chunks of two
#
# One token's step multiplies the state by $\lambda_t$ and adds $(1-\lambda_t)\,a_t$: a step is a
# pair (multiplier, addition). Two consecutive steps make one step of the same kind:
#
# $$
# s_t = \lambda_t \lambda_{t-1}\, s_{t-2} + \big[\lambda_t (1-\lambda_{t-1})\, a_{t-1} + (1-\lambda_t)\, a_t\big],
# $$
#
# the multiplier $\lambda_t \lambda_{t-1}$ and the addition in brackets. Combining (multiplier,
# addition) pairs this way is **associative**: any bracketing of a run of steps gives the same step. Any
# associative operation has a parallel prefix **scan** (Blelloch, 1990). Combine neighbouring tokens
# in pairs ($T/2$ combinations, all independent), solve the half-length problem the same way, then
# fill in each even position from its left neighbour ($T/2$ more). Each level halves the length,
# so the **work** is about $T + T/2 + T/4 + \dots \approx 2T$ combinations of $S + 1$
# multiply-adds, $O(TS)$ like the loop, and the **depth** (rounds that must wait for each other) is
# $2 \log_2 T$, $O(\log T)$. The library's recursion is this scan with chunks of $C$ instead of pairs:
# $C$ times more arithmetic, but in matmuls that hardware does at full speed, and $\log_C T$ levels
# instead of $\log_2 T$. Written out, and counted:

# %%
def scan_in_pairs(lam, add, count):
    """s_t = lam_t s_{t-1} + add_t, s_{-1} = 0, by pairwise combination: lam [T], add [T, S], T a power of 2."""
    T, S = add.shape
    if T == 1:
        return add.clone()
    count["rounds"] += 2  # one round combining pairs, one filling in
    # steps 2k and 2k+1 combined: (multiplier, addition) from s_{2k-1} straight to s_{2k+1}
    lam_pair = lam[1::2] * lam[0::2]  # [T/2]
    add_pair = lam[1::2, None] * add[0::2] + add[1::2]  # [T/2, S]
    s = torch.empty_like(add)
    s[1::2] = scan_in_pairs(lam_pair, add_pair, count)  # the odd positions: the half-length problem
    s[0] = add[0]
    s[2::2] = lam[2::2, None] * s[1:-1:2] + add[2::2]  # each even position from its left neighbour
    count["madds"] += (T // 2) * (S + 1) + (T // 2 - 1) * S
    return s


for T in (128, 2048, 8192):
    a_r = torch.randn(T, S_paper, generator=gen, dtype=torch.float64)  # [T, S]
    lam_r = torch.rand(T, generator=gen, dtype=torch.float64)  # [T]
    count = {"rounds": 0, "madds": 0}
    s_scan = scan_in_pairs(lam_r, (1 - lam_r)[:, None] * a_r, count)  # addition (1 - lambda_t) a_t
    same = torch.allclose(s_scan, running_state(a_r.view(1, T, 1, S_paper), lam_r.view(1, T, 1), mode="loop")[0, :, 0])
    print(f"T = {T:5,}: equals the loop: {same};  multiply-adds {count['madds']:>8,} "
          f"= {count['madds'] / (T * S_paper):.2f} x the loop's T S;  rounds {count['rounds']} = 2 log2 T")

# %% [markdown]
# The scan does about twice the loop's arithmetic, whatever $T$, in a number of rounds that grows
# only like $\log_2 T$: 26 rounds instead of 8,192 steps at $T = 8{,}192$ (the last line). On a GPU
# with thousands of cores that is the better trade for very long sequences; Mamba's kernels use
# such a scan. For the short chunks of this course, matmuls win.
#
# ## 5. Loop, fast and step: three forms, one set of numbers
#
# The library holds the three forms equal (`tests/model/test_running_state.py`); here is the check once
# more, on random inputs with 4 heads of size 8, in float64 on the CPU, for lengths that are not
# multiples of $C$. `running_state_step` is the form a model uses while generating: one token, the
# previous state in, the next state out.

# %%
def relative_error(x, y):
    return ((x - y).norm() / y.norm()).item()


for T in (1, 7, 64, 129, 300):
    a_r = torch.randn(2, T, 4, 8, generator=gen, dtype=torch.float64)  # [B, T, H, S]
    lam_r = torch.rand(2, T, 4, generator=gen, dtype=torch.float64)  # [B, T, H], weak and strong gates
    s_loop = running_state(a_r, lam_r, mode="loop")
    s_fast = running_state(a_r, lam_r, mode="fast")
    s_t, steps = torch.zeros(2, 4, 8, dtype=torch.float64), []  # s_{-1} = 0
    for t in range(T):
        s_t = running_state_step(a_r[:, t], lam_r[:, t], s_t)
        steps.append(s_t)
    s_step = torch.stack(steps, dim=1)
    print(f"T = {T:3d}: fast vs loop rel. error < 1e-12: {relative_error(s_fast, s_loop) < 1e-12}, "
          f"step vs loop < 1e-12: {relative_error(s_step, s_loop) < 1e-12}")

# %% [markdown]
# The notebooks' models run in float32 on the chosen device; there the forms agree to float32
# precision:

# %%
a32 = torch.randn(2, 257, 4, 8, generator=gen).to(DEVICE)
lam32 = torch.rand(2, 257, 4, generator=gen).to(DEVICE)
err = relative_error(running_state(a32, lam32, mode="fast"), running_state(a32, lam32, mode="loop"))
print(f"float32 on the device: fast vs loop rel. error < 1e-5: {err < 1e-5}")

# %% [markdown]
# A taste of the timing (best of five; which form wins, and by how much, depends on the machine and
# how busy it is: read the two lines and their ratio; the optional speed notebook 08, outside the
# 00-07 path, measures the forms properly):

# %%
# NBVAL_IGNORE_OUTPUT
a_long = torch.randn(8, TIMING_T, 4, 16, device=DEVICE)
lam_long = torch.rand(8, TIMING_T, 4, device=DEVICE)
timings = {}
for mode in ("loop", "fast"):
    running_state(a_long, lam_long, mode=mode)  # warm-up
    best = float("inf")
    for _ in range(5):  # best of five: the machine may be busy with other work
        t0 = time.perf_counter()
        running_state(a_long, lam_long, mode=mode)
        synchronize(DEVICE)  # on a GPU, wait for the work to finish before reading the clock
        best = min(best, time.perf_counter() - t0)
    print(f"{mode:8s} T = {TIMING_T}: {1000 * best:8.1f} ms")
    timings[mode] = best
print(f"loop / fast: {timings['loop'] / timings['fast']:.1f}")

# %% [markdown]
# ## 6. What λ means: a memory length in tokens
#
# Feed one pulse, $a_0 = 1$ and $a_t = 0$ afterwards, with a constant gate. The recurrence gives
# $s_t = (1 - \lambda)\lambda^t$: the pulse enters at height $1 - \lambda$ and shrinks by $\lambda$
# per token. It has halved after $H_{1/2}$ tokens, where $\lambda^{H_{1/2}} = \tfrac12$:
#
# $$
# H_{1/2} = \frac{\ln(1/2)}{\ln \lambda}
# $$
#
# This **half-life** is what the course calls the memory length. A gate of 0.5 remembers for one
# token, 0.9 for about 6.6, 0.99 for about 69. (Another number you may meet, $1/(1-\lambda)$, is
# the *mean lifetime* of a write: 2 tokens at $\lambda = 0.5$, counting the token itself.) There is
# a trade-off in the same formula: the larger $\lambda$, the less each token writes ($1 - \lambda$).
# `plots.pulse_response` runs `running_state` on the pulse; the check compares it with the formula.

# %%
print("  λ      half-life   (1-λ)λ^t matches the library's pulse")
for lam_v in (0.5, 0.8, 0.9, 0.95, 0.99):
    h = math.log(0.5) / math.log(lam_v)
    s_pulse = plots.pulse_response(lam_v, T=200).double()
    closed = torch.tensor([(1 - lam_v) * lam_v**t for t in range(200)], dtype=torch.float64)
    print(f"{lam_v:5.2f}   {h:8.2f}      {relative_error(s_pulse, closed) < 1e-5}")

# %%
# NBVAL_IGNORE_OUTPUT
plots.pulse_memory([0.5, 0.8, 0.95], T=40)
plt.show()

# %% [markdown]
# Look at where each curve crosses half its starting height: after about one token for
# $\lambda = 0.5$, far later for 0.95, which also starts lower (it writes only $1 - \lambda$).
#
# **At initialization every gate is about 0.5.** The model computes $\lambda_t = \sigma(W_\lambda
# n_t + c_\lambda)$ with small random $W_\lambda$ and $c_\lambda = 0$ (the reference code's
# initialization), so $\lambda_t \approx \sigma(0) = 0.5$: a half-life of about **one token**.
# Training has to move the gates a long way before the state remembers anything far back. Try it
# with the slider (live kernel only; the picture above is the static version):

# %%
# NBVAL_IGNORE_OUTPUT
widgets.pulse_memory_widget(lam=0.9)

# %% [markdown]
# Drag $\lambda$ towards 1 and look at where the curve crosses half its height: it moves slowly at
# first, then fast, since $\ln(1/2)/\ln\lambda$ grows like $\ln 2/(1-\lambda)$ near 1.
#
# ## 7. Training a model: the loop, once
#
# Every notebook trains its models the same way, and this is the one place the training loop is
# written out. Five lines do the work: **forward** (logits for every position), **loss** (mean
# cross-entropy of the next byte, in nats), **backward**, **clip** (scale the gradient down if its
# norm exceeds 1), **step** (AdamW). The data is the paper's byte-level protocol (`protocol("lm")`,
# `docs/paper.md` section 4.1): each step, 16 random 128-byte windows of WikiText-2, the target of
# each byte being the next one.
#
# Below, the loop runs 3 steps by hand, and the library's recipe `fit` (seed, build the model,
# make the sampler, then `train()`: the same loop plus a progress bar, checkpoints and a stop on a
# NaN loss) runs the same 3 steps from the same seed. The losses must agree.
#
# Two helpers in the loop only make it fast on every device; leave them out and nothing changes but
# the speed. `checked_ids(model, x)` checks that every byte id is in the vocabulary while `x` is still
# on the CPU, and tells the model not to check again on the GPU (a check there would make the CPU
# wait for the GPU at every step). `clip_options(DEVICE)` asks `clip_grad_norm_` for its faster
# all-parameters-at-once ("foreach") path where torch has one (the CPU and CUDA, not MPS).

# %%
from tl_minimal.checks import checked_ids
from tl_minimal.training.protocols import chunk_eval_set, protocol
from tl_minimal.training.recipes import build, fit, make_sampler
from tl_minimal.training.train import clip_options, make_optimizer, seed_everything

train_split = data_text.load_split("train")
short = protocol("lm", steps=3)

seed_everything(0)
model = build("triple_latent", short).to(DEVICE)  # build_model with the protocol's sizes
sampler = make_sampler(short, seed=0, data=train_split.tokens)  # batch k = sampler(k)
optimizer = make_optimizer(model, short.lr, short.weight_decay, device=DEVICE)  # AdamW (fused on a GPU)
toy_losses = []
for step in range(short.steps):
    x, y = sampler(step)  # [B, T] bytes, [B, T] the next bytes, made on the CPU
    with checked_ids(model, x):  # ids checked here on the CPU, so the GPU never waits for the check
        logits = model(x.to(DEVICE))  # forward: [B, T, V]
    y = y.to(DEVICE)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # loss: mean nats per byte
    optimizer.zero_grad()
    loss.backward()  # backward
    torch.nn.utils.clip_grad_norm_(model.parameters(), short.grad_clip, **clip_options(DEVICE))  # clip
    optimizer.step()  # step
    toy_losses.append(loss.detach())  # kept on the device: no wait for the GPU at every step
toy_losses = torch.stack(toy_losses).tolist()  # read once (train() reads every log_every steps)

_, short_history = fit("triple_latent", short, seed=0, device=DEVICE, data=train_split.tokens, progress=False)
same = all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(toy_losses, short_history["loss"], strict=True))
print("the loop above and fit() give the same losses:", same)

# %%
# NBVAL_IGNORE_OUTPUT
print("step   loop above   fit()      (bits per byte = nats / ln 2)")
for k, (mine, lib) in enumerate(zip(toy_losses, short_history["loss"], strict=True)):
    print(f"{k:4d}   {mine / math.log(2):10.4f}   {lib / math.log(2):8.4f}")

# %% [markdown]
# Now the real run: `fit` with the paper's 80 steps (`STEPS`). The history it returns is in nats
# per byte; we divide by $\ln 2$ to get **bits per byte** and draw the unigram baseline of notebook
# 00 beside the curve (a model that predicts each byte from its frequency alone, ignoring context).
# We also keep a copy of the model at initialization (the same seed gives the same weights) to
# compare its gates with the trained ones.

# %%
# NBVAL_IGNORE_OUTPUT
lm = protocol("lm", steps=STEPS)
valid_split = data_text.load_split("validation")
UNIGRAM_BPB = unigram_bits(train_split.tokens, valid_split.tokens[1:], data_text.VOCAB_SIZE)

seed_everything(0)
untrained = build("triple_latent", lm).to(DEVICE)  # the weights fit() starts from
model, history = fit("triple_latent", lm, seed=0, device=DEVICE, data=train_split.tokens, progress=False)
bits = [v / math.log(2) for v in history["loss"]]  # nats -> bits per byte
print(f"{history['steps']} steps in {history['seconds']:.0f} s; training loss {bits[0]:.3f} -> {bits[-1]:.3f} "
      f"bits per byte (unigram baseline on the validation split: {UNIGRAM_BPB:.3f})")

# %%
# NBVAL_IGNORE_OUTPUT
fig = plots.loss_curves({"triple_latent": history}, bits=True, title="training loss of the model we look at")
fig.axes[0].axhline(UNIGRAM_BPB, color="gray", ls="--", label=f"unigram baseline {UNIGRAM_BPB:.2f}")
fig.axes[0].legend(fontsize=9)
plt.show()

# %% [markdown]
# Look at the end of the curve against the dashed line. After 80 steps (a small part of the
# training text, seen once: notebook 00, section 7.1, prints how much) the training loss has fallen
# fast but is still *above* the unigram line: the model has not yet learned even the byte frequencies as
# well as a count would, let alone much context. Keep that in mind when reading what its gates do.
#
# ## 8. The gates of a trained model
#
# Eighty steps is a very short training, so we also look at a model trained 25 times longer: the
# same `triple_latent`, the same seed and protocol, 2,000 steps, exactly as the committed
# 2,000-step runs of notebook 07 (`data/results/lm_2000steps.json`). Training it takes minutes on a
# CPU, so the repository ships it (`data/checkpoints/`), made by the command printed below;
# `shipped_or_retrained` reads it with its record (how it was made, its training losses, its
# validation BPB). Set `RETRAIN = True` to retrain it here instead (its training time is printed).

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal.course.shipped import shipped_or_retrained

RETRAIN = False  # True: train the 2,000-step model here instead of loading the shipped one
long_model, long_record = shipped_or_retrained("triple_latent", RETRAIN, train_split.tokens, DEVICE)
LONG = long_record["steps"]
print(f"made by: {long_record['command']}  ({long_record['train_seconds'] / 60:.1f} min of training on "
      f"{long_record['threads']} CPU thread)")
# its validation BPB scores the protocol's first chunks: the unigram baseline on those same bytes (notebook 00, 7.1)
record_chunks = protocol("lm", eval_batches=long_record["protocol"]["eval_batches"],
                         eval_batch_size=long_record["protocol"]["eval_batch_size"])
UNIGRAM_CHUNKS = unigram_bits(train_split.tokens, chunk_eval_set(valid_split.tokens, record_chunks)[1],
                              data_text.VOCAB_SIZE)
print(f"{LONG} steps: training loss {long_record['loss_log']['loss'][-1] / math.log(2):.3f} bits per byte at the "
      f"last step, validation BPB {long_record['val_bpb']:.3f} (unigram baseline on the same "
      f"{record_chunks.eval_batches * record_chunks.eval_batch_size:,} chunks: {UNIGRAM_CHUNKS:.3f})")

# %% [markdown]
# We read the running-state gates $\lambda$ on one sentence through `model.internals` (which runs
# the model in eval mode and records every layer's internals), after 80 and after 2,000 steps: one
# heatmap per layer, heads by tokens, on one colour scale from 0 (forget everything) to 1 (keep
# everything).

# %%
# NBVAL_IGNORE_OUTPUT
sentence = "The running state keeps a fading summary of what it has read."
tokens = widgets.byte_prompt(sentence, lm.seq_len)  # BOS + bytes: [T]
labels = plots.token_labels(tokens)
lam_init = plots.model_gates(untrained, tokens, "lam")  # [layers, T, heads]
lam_trained = plots.model_gates(model, tokens, "lam")
lam_long = plots.model_gates(long_model, tokens, "lam")
plots.gate_heatmaps(lam_trained, labels, name="λ", title=f"running-state gate λ after {history['steps']} steps")
plt.show()
plots.gate_heatmaps(lam_long, labels, name="λ", title=f"running-state gate λ after {LONG} steps")
plt.show()

# %% [markdown]
# Look for rows of one colour (a head that keeps the same amount at every token) against rows that
# change with the byte: after 80 steps the colours barely vary along a row; after 2,000 they do.
#
# In half-lives, per layer and head. A head's gate changes from token to token, so which average?
# Over the sentence, a write decays by the product of the gates, $\prod_t \lambda_t =
# \exp(T\, \overline{\ln \lambda})$ with $\overline{\ln \lambda}$ the mean of $\ln\lambda_t$
# over the tokens: the same decay as a constant gate $\exp(\overline{\ln \lambda})$. Its
# half-life, the **half-life of the average decay**, is $\ln(1/2) / \overline{\ln \lambda}$.
# (Averaging the per-token half-lives instead would let one token with $\lambda$ near 1, a
# half-life in the hundreds, outweigh every other.)

# %%
# NBVAL_IGNORE_OUTPUT
def mean_half_life(lam_g):  # [L, T, H] -> [L, H]: ln(1/2) / mean_t ln(lambda_t)
    return math.log(0.5) / log_gate(lam_g).mean(dim=1)


fig, ax = plt.subplots(figsize=(7, 3))
L, _, H = lam_trained.shape
names = [f"L{layer}h{h}" for layer in range(L) for h in range(H)]
for i, (label, lam_g) in enumerate([("initialization", lam_init), (f"{history['steps']} steps", lam_trained),
                                    (f"{LONG} steps", lam_long)]):
    ax.bar([k + 0.27 * i for k in range(L * H)], mean_half_life(lam_g).flatten(), width=0.27, label=label)
ax.set_xticks([k + 0.27 for k in range(L * H)], names, rotation=45)
ax.set_xlabel("layer and head")
ax.set_ylabel("half-life of the mean decay (tokens)")
ax.set_title("how far back each head's running state remembers")
ax.legend(fontsize=9)
plt.show()
for steps, lam_g in ((history["steps"], lam_trained), (LONG, lam_long)):
    for layer in range(L):
        print(f"{steps} steps, layer {layer}: half-life of the mean decay per head",
              [round(v, 2) for v in mean_half_life(lam_g)[layer].tolist()])
    print(f"{steps} steps: λ from {lam_g.min():.2f} to {lam_g.max():.2f}; its spread over the tokens (std, mean "
          f"over heads) per layer {[round(v, 2) for v in lam_g.std(dim=1).mean(1).tolist()]}")

# %% [markdown]
# Look at the bar heights against one token. Training moved the gates, and not towards a longer
# memory. After 80 steps every head's half-life of the mean decay has dropped from about one token to
# 0.49-0.75 tokens: in the first steps the cheapest gain is to predict the next byte from the last one
# or two, and a state that forgets quickly does that well. After 2,000 steps the half-lives are
# *still* below one token (0.22-0.61, layer 2 the shortest): even the longer-trained model does not use its running
# state as a long memory, on average. What 2,000 steps taught is *when* to keep: $\lambda$ now
# depends on the byte being read. Its range over the sentence widens from 0.20-0.65 to 0.01-0.77,
# and its spread over the tokens grows in every layer (printed above); in the heatmap, head 3 of
# layer 2 keeps more at the spaces between words while the other heads of that layer forget almost
# everything. (The gates start at 0.5, where the reference code puts them.)
#
# Finally the state itself, in the 2,000-step model: the $S = 16$ numbers of head 0 in the first
# layer, token by token.

# %%
# NBVAL_IGNORE_OUTPUT
_, record = long_model.internals(tokens[None].to(DEVICE))
s_head = record["layers"][0]["s"][0, :, 0, :].cpu()  # [T, S]
plots.matrix_heatmap(s_head.T, xlabels=labels, title=f"running state s_t of layer 0, head 0 ({LONG} steps)",
                     xlabel="token", ylabel="state entry", figsize=(9.5, 3.6))
plt.show()

# %% [markdown]
# Look at the columns: the state is redrawn at almost every byte instead of holding a value across
# a word, and every space between words ( ␣ ) gives nearly the same column. With half-lives under a
# token, the state describes the last byte or two.
#
# ## 9. Play
#
# Type your own sentence: the heatmaps show the 2,000-step model's gates on it (the menu switches
# between λ and the pair-memory gate γ of notebook 02). Without a live kernel this shows the
# sentence above.

# %%
# NBVAL_IGNORE_OUTPUT
widgets.gate_widget(long_model, sentence, key="lam")

# %% [markdown]
# Look for the bytes where a head's colour jumps: there the gate decides to keep or to forget.
#
# ## Summary
#
# - The running state is a gated moving average, $s_t = \lambda_t s_{t-1} + (1-\lambda_t) a_t$,
#   with $s_{-1} = 0$; one keep gate per head and token.
# - Unrolled, it is one lower-triangular $T \times T$ matrix: parallel but quadratic. The
#   **chunked** form keeps only the $C \times C$ diagonal blocks and carries the state at chunk ends:
#   $T C (S + C)$ work instead of $T^2 S$ (the $T C^2$ builds the decay mask by direct segment sums,
#   which keeps float32 gate gradients accurate), and $T/C$ sequential steps instead of $T$ (the library's fast
#   form recurses over the chunk ends instead, a few levels of about $\log_C T$). Loop, fast and
#   one-token step agree to rounding error. The associative scan reaches the same states in $O(TS)$
#   work and $O(\log T)$ depth.
# - A keep gate $\lambda$ means a memory length (half-life) of $\ln(1/2)/\ln\lambda$ tokens: one
#   token at the initial $\lambda \approx 0.5$.
# - Training is forward, loss, backward, clip, step; `fit` does it in one call. Its history is in
#   nats; the notebooks show bits per byte beside the unigram baseline.
# - After the paper's 80 steps the gates have moved *down*: the running state is a short-range
#   feature, and the model is not yet below the unigram baseline. After 2,000 steps (the shipped
#   model, far below that baseline) the gates are still short on average, but they depend on the
#   byte read: the model has learned when to keep.
#
# **Exercise:** [`exercises/01_running_state.ipynb`](exercises/01_running_state.ipynb) ·
# **Next:** [`02_pair_memory.ipynb`](02_pair_memory.ipynb), step 2 of the layer.
