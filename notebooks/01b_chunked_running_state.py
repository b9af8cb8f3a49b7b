# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01b · The running state's fast form: the chunked algorithm, its cost, the scan
#
# Notebook 01 unrolled the running state, $s_t = \lambda_t s_{t-1} + (1 - \lambda_t) a_t$, into one
# lower-triangular $T \times T$ matrix $W$ (its section 3): no loop, but quadratic in $T$. The
# library's `running_state(mode="fast")` never builds $W$: this notebook derives the **chunked
# algorithm** it uses instead, writes it out and checks it against the loop, counts what it costs
# (the decay mask included; an implementation note says why it is built the way it is), shows
# the associative scan that reaches the same states in logarithmic depth, and holds the three
# forms (loop, fast, step) equal.
#
# **Learning goals.** After this notebook you can
# - derive the chunked algorithm that makes the fast form linear in the sequence length, and check
#   a hand-written version against the loop;
# - count its cost term by term, the decay mask's $C^3$ per chunk included;
# - explain the associative scan's work and depth;
# - check the loop, fast and one-token step forms against each other.
#
# **Prerequisites.** Notebook 01, sections 1-3 (the recurrence, `causal_decay`, the matrix $W$).
# PyTorch: `torch.cumprod`, batched matrix products.
#
# **Time.** About 55 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 9 s (CPU 4 s, peak 468 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# | symbol | code | shape | meaning |
# |---|---|---|---|
# | $C$ | `C` (`DEFAULT_CHUNK`) | - | tokens per chunk |
# | $c$ | - | - | the position of a chunk's first token |
# | $s_{c-1}$ | `s_enter` | `[S]` per head | the state entering the chunk |

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import importlib
import time

import matplotlib.pyplot as plt
import torch
from torch.utils.flop_counter import FlopCounterMode

from tl_minimal import views
from tl_minimal.course.cost import matmul_total, running_state_cost
from tl_minimal.running_state import DEFAULT_CHUNK, causal_decay, log_gate, running_state, running_state_step
from tl_minimal.training import config
from tl_minimal.training.device import get_device, synchronize
from tl_minimal.views import diagrams

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %%
# NBVAL_IGNORE_OUTPUT
TIMING_T = config.pick(2048, 256)  # sequence length for the loop-vs-fast timing
DEVICE = get_device()
C = DEFAULT_CHUNK  # tokens per chunk in the fast form
gen = torch.Generator().manual_seed(0)  # the random toys below
print(f"smoke mode: {config.smoke()}   device: {DEVICE}   chunk size C = {C}")

# %% [markdown]
# ## 1. The chunked algorithm: C x C blocks and a carried state
#
# Cut time into chunks of $C$ tokens. Take a token $t$ in the chunk that starts at position $c$,
# and unroll the recurrence only back to the chunk's start instead of back to $t = 0$:
#
# $$
# s_t \;=\; \underbrace{\Big(\prod_{u=c}^{t} \lambda_u\Big)\, s_{c-1}}_{\text{(ii) the state entering the chunk, decayed}}
# \;+\; \underbrace{\sum_{\tau=c}^{t} \Big(\prod_{u=\tau+1}^{t} \lambda_u\Big)(1-\lambda_\tau)\, a_\tau}_{\text{(i) the chunk on its own, from a zero state}}
# $$
#
# 1. **Inside a chunk**, term (i) is the matrix of notebook 01, section 3, for a sequence of length $C$: a
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
# - the **full matrix** of notebook 01, section 3: $T^2 S$, all in parallel, but quadratic;
# - the **chunked** form: $T C S$ inside chunks (each of the $T/C$ chunks costs $C^2 S$), plus
#   $T S$ to add the entering states; and the **decay mask** itself.
#   `causal_decay` builds each chunk's $C \times C$ matrix of segment sums
#   $\sum_{u=\tau+1}^{t} \log\lambda_u$ as one matmul of the chunk's $C$ log-gates with a constant
#   0/1 matrix of shape $[C, C^2]$ (column $(t, \tau)$ has a 1 in each row $\tau + 1, \dots, t$): $C \cdot C^2 = C^3$
#   per chunk, $T C^2$ in all. With $C = S$ that term is as large as the $T C S$ of the chunks'
#   products, so it doubles the chunked count;
# - and the **carry**: the states at the chunk ends are a running state of their own, $T/C$ steps
#   long. The library does not walk them one by one ($(T/C) S$ multiply-adds): it calls the same
#   chunked function on them (the end of this section shows the calls), which costs the same three
#   terms for $T/C$ tokens, $1/C$ of the above, and that call carries its own chunk ends the same way.
#   In all the chunked form costs about $(T C S + T C^2 + T S)(1 + 1/C + 1/C^2 + \dots)$, a factor
#   $C/(C-1)$ on the first level.
#
# The cell counts every term the way the library's code computes it (`tl_minimal.course.cost`, padding
# included), then lets PyTorch's own flop counter count the matmuls of `running_state(mode="fast")`.
# Linear in $T$ all the same, with only $T/C$ sequential steps.

# %%
S_paper = 16
print(f"multiply-adds per head, S = {S_paper}, C = {C}")
print(f"{'T':>6s} {'loop':>10s} {'full matrix':>14s} {'chunked':>10s} {'of it, mask':>12s} {'carry':>8s}   "
      f"sequential steps: loop, chunked")
for T in (128, 2048, 8192):
    loop_cost = T * S_paper
    full_cost = T * T * S_paper
    terms = running_state_cost(T, S_paper, C)  # mask C^3 and within C^2 S per chunk, entering S a token, carry
    chunk_cost = sum(terms.values())
    print(f"{T:>6,} {loop_cost:>10,} {full_cost:>14,} {chunk_cost:>10,} {terms['mask']:>12,} {terms['carry']:>8,}   "
          f"{T:>6,}, {T // C:>4,}")
print(f"chunked / loop: {chunk_cost / loop_cost:.1f}; without the mask term it would be "
      f"{(chunk_cost - terms['mask']) / loop_cost:.1f}")
with FlopCounterMode(display=False) as flops:  # counts matmuls: a multiply and an add each
    running_state(torch.randn(1, 2048, 1, S_paper), torch.rand(1, 2048, 1), mode="fast")
print(f"T = 2,048, matmuls of running_state(mode='fast') by torch's flop counter: {flops.get_total_flops() // 2:,} "
      f"multiply-adds; the count's matmul terms: {matmul_total(running_state_cost, 2048, S_paper, C):,}")

# %% [markdown]
# The chunked form does about $(C + C^2/S + 1)\,C/(C-1)$ times the loop's arithmetic (a little over $2C$
# when $C = S$: the ratio printed), in $C$ times fewer sequential steps, and far less than the full
# matrix. The last line checks the count: PyTorch's flop counter, run on the library's own forward,
# finds exactly the multiply-adds of the count's matmul terms (the entering states' $T S$ are
# elementwise, which it does not count; `tests/course/test_cost.py` holds the two equal at other sizes).
#
# **Why the mask is built with a $C^3$ matmul.** There is a cheaper way to get every segment sum:
# take the running sum of the log-gates once ($C$ additions) and subtract: the sum from
# $\tau + 1$ to $t$ is the running sum at $t$ minus the running sum at $\tau$ (in the code below,
# `G_t - G_tau`). Same numbers in exact arithmetic; but in float32 the difference spoils the
# gradients of gates near 0, the gates that forget, and summing each segment directly does not.
# The note below says why and the cell after it measures it: both are an aside, to skip on a
# first read.
#
# <details><summary>Implementation note: float32 gradients of a difference of sums</summary>
#
# The forward pass in float32 is nearly as good. The trouble is the gradient. A gate near 0 has a
# log-gate of -10, -20 or less, so the running sum grows large in a few tokens, and the difference
# of two large numbers keeps only the rounding error of each; the backward pass of the difference
# sums gradients of both signs into the same running sums, which cancel the same way. The chain
# rule of $\log\lambda$ then divides that absolute error by $\lambda$: for a gate near 0 it is larger than
# the gradient itself. Summing each segment directly, as the 0/1 matmul does, never forms the large
# running sums. The cell below builds both forms and compares their float32 gradients with respect
# to the gates against float64 ($C$ as above, gates $\sigma(\cdot)$ of pre-activations drawn from $8\,\mathcal{N}(0, 1)$,
# so many sit near 0 or 1; a random weighted sum of the decays as the loss).
#
# </details>

# %% tags=["implementation-note"]
# NBVAL_IGNORE_OUTPUT
# Implementation note (optional on a first read): float32 gate gradients of the two forms of the mask
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
# <details><summary>Implementation note, continued: reading the float32 comparison</summary>
#
# Read the last two lines: with direct sums no float32 gradient is off by more than 1%; with the
# difference form hundreds are, the worst by orders of magnitude, and they belong to gates near 0
# (their median is printed), the gates that forget, whose gradient decides when to keep instead.
#
# </details>
#
# Accurate gate gradients are worth $T C^2$ multiply-adds, which are cheap ones: a single batched
# matmul with a constant matrix. (A middle way, summing short sub-chunks directly and combining them in log space, would
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
# ## 2. The associative scan: the same recursion with chunks of two
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
# ## 3. Loop, fast and step: three forms, one set of numbers
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
# Read the ratio on the last line: on this machine, at this length, how many times faster the
# chunked form is than the loop. Its size depends on the machine and its load; the number of
# sequential steps, $T$ against a few levels of length $T/C$ and less, does not.
#
# ## Summary
#
# - The **chunked** form keeps only the $C \times C$ diagonal blocks of notebook 01's matrix $W$
#   and carries the state at chunk ends: $T C (S + C)$ work instead of $T^2 S$ (the $T C^2$ builds
#   the decay mask by direct segment sums, which keeps float32 gate gradients accurate), and $T/C$
#   sequential steps instead of $T$ (the library's fast form recurses over the chunk ends instead,
#   a few levels of about $\log_C T$).
# - The associative scan reaches the same states in $O(TS)$ work and $O(\log T)$ depth.
# - Loop, fast and one-token step agree to rounding error (float64), and to float32 precision on
#   the device.
#
# **Next:** [`02_pair_memory.ipynb`](02_pair_memory.ipynb), step 2 of the layer.
