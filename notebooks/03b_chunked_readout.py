# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03b · The readout's fast form: the chunked algorithm, its cost, and its speed
#
# Notebook 03 read the pair memory, $r_t = (P_t^\top q^l_t) \odot q^r_t$, and unrolled it into
# decayed linear attention. The library's `pair_readout` computes it **without ever building
# $P_t$**: this notebook derives that fast form, writes it out, counts what it costs and measures
# where its speed comes from.
#
# **Learning goals.** After this notebook you can
# - write down the readout's fast form (within a chunk, across chunks, the memory carried between
#   them) and implement it;
# - count what it costs against the loop, term by term, the decay mask included;
# - say where its speed comes from: sequential steps, and what autograd keeps for the backward pass.
#
# **Prerequisites.** Notebook 01b (the running state's chunked algorithm, `causal_decay`) and
# notebook 03, sections 3.1 and 3.2 (the readout's attention view: the scores $A_{t\tau}$ and
# weights $w_{t,\tau}$, then the memory $M$).
#
# **Time.** About 45 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 9 s (CPU 4 s, peak 622 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# | symbol | code | shape | meaning |
# |---|---|---|---|
# | $C$ | `C` (`DEFAULT_CHUNK`) | - | tokens per chunk |
# | $c$ | - | - | the position of a chunk's first token |
# | $w_{t,\tau}$ | `decay` (without $1-\gamma_\tau$) | `[N, C, C]` per head | how much of the write at $\tau$ is left at $t$ (notebook 03, section 3.1) |
# | $P_{c-1}$ | `P_enter` (`M_enter` in `decayed_attention`) | `[S, S]` per head | the memory entering the chunk |

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

from functools import partial

import torch
from torch.utils.flop_counter import FlopCounterMode

from tl_minimal import views
from tl_minimal.course.cost import matmul_total, readout_cost
from tl_minimal.readout import pair_readout
from tl_minimal.running_state import DEFAULT_CHUNK, causal_decay, log_gate
from tl_minimal.training import config
from tl_minimal.training.device import get_device

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %%
# NBVAL_IGNORE_OUTPUT
DEVICE = get_device()
C = DEFAULT_CHUNK  # tokens per chunk in the fast forms
gen = torch.Generator().manual_seed(0)  # the random toys below
print(f"smoke mode: {config.smoke()}   device: {DEVICE}   C = {C}")

# %% [markdown]
# Notebook 01b cut the running state's $T \times T$ matrix into $C \times C$ blocks inside chunks
# and carried the state $s$ from chunk to chunk. The scores $A_{t\tau}$ of notebook 03, section 3.1, form the
# same kind of lower-triangular $T \times T$ matrix, and the same cut works. The difference is
# what travels between chunks: not an $S$-vector but the pair memory itself, an $S \times S$
# matrix per head.
#
# ## 1. Three equations
#
# Cut time into chunks of $C$ tokens ($C$ = `DEFAULT_CHUNK`, printed above). Take a token $t$ in
# the chunk that starts at position $c$ (so $c \le t \le c + C - 1$), and unroll $P_t$ only back to
# the chunk's start: $P_t = \big(\prod_{u=c}^{t} \gamma_u\big) P_{c-1} + \sum_{\tau=c}^{t} w_{t,\tau}\,
# s_{\tau-1} b_\tau^\top$, with the weights $w_{t,\tau} = (1-\gamma_\tau)\prod_{u=\tau+1}^{t}\gamma_u$
# of notebook 03, section 3.1. Here $P_{c-1}$ is the pair memory after the last token of the previous chunk,
# **the memory entering the chunk** ($P_{-1}$, zeros unless given, for the first chunk). Read it
# with $q^l_t$ and gate with $q^r_t$:
#
# $$
# r_t \;=\; q^r_t \odot \Big[\; \underbrace{\sum_{\tau=c}^{t} w_{t,\tau}\,\big(q^l_t \cdot s_{\tau-1}\big)\, b_\tau}_{\text{(i) within the chunk}}
# \;+\; \underbrace{\Big(\prod_{u=c}^{t} \gamma_u\Big)\, P_{c-1}^\top q^l_t}_{\text{(ii) across chunks}} \;\Big]
# $$
#
# $$
# P_{c+C-1} \;=\; \underbrace{\Big(\prod_{u=c}^{c+C-1} \gamma_u\Big) P_{c-1} \;+\; \sum_{\tau=c}^{c+C-1} w_{c+C-1,\tau}\; s_{\tau-1}\, b_\tau^\top}_{\text{(iii) the memory carried to the next chunk}}
# $$
#
# 1. **Within the chunk**, term (i) is notebook 03's attention (section 3.1) restricted to the chunk: a masked
#    $C \times C$ score matrix (dot products $q^l_t \cdot s_{\tau-1}$ times decays) times the
#    values $(1-\gamma_\tau) b_\tau$. Chunks do not depend on each other here: all $T/C$ of them
#    are one batched matrix product.
# 2. **Across chunks**, term (ii) reads the entering memory $P_{c-1}$ with the query, scaled by
#    how much of it survives to $t$: everything written before the chunk, in one $S \times S$
#    matrix instead of all the blocks of $A$ left of the diagonal.
# 3. **The memory carried**, equation (iii), is the unrolled $P_t$ of the paragraph above at the
#    chunk's last token $t = c + C - 1$: a recurrence of the running state's kind, over $T/C$ chunk-end memories of
#    $S^2$ numbers instead of over $T$ tokens.
#
# The library's `readout.decayed_attention` is this algorithm written for any decayed linear
# attention (query, key, value, log-decay); its code calls the entering memory `M_enter`, the
# memory of notebook 03's linear attention (section 3.2), which in the readout **is** $P_{c-1}$. Its docstring
# writes the decays as $\exp(\sum \log \gamma)$, which is $\prod \gamma$ kept finite.
#
# ## 2. The algorithm, written out
#
# One head, $P_{-1} = 0$, and (a teaching toy) $T$ a multiple of $C$; the loop over chunks is
# equation (iii):

# %%
def pair_readout_chunked_toy(s_prev, b, gam, q_left, q_right, C):
    """r_t = (P_t^T q^l_t) * q^r_t, P_{-1} = 0, one head: s_prev, b, q_left, q_right [T, S], gam [T]; T = N C."""
    T, S = b.shape
    N = T // C                                                      # number of chunks
    keys, queries = s_prev.view(N, C, S), q_left.view(N, C, S)      # s_{tau-1}, q^l_t  [N, C, S]
    values = ((1 - gam).unsqueeze(-1) * b).view(N, C, S)            # (1 - gamma_tau) b_tau  [N, C, S]
    decay = causal_decay(log_gate(gam.view(N, C)))                  # [N, C(t), C(tau)]: prod_{u=tau+1..t} gamma_u
    # (i) within each chunk: masked C x C scores times the values, all chunks in one matmul
    scores = (queries @ keys.transpose(1, 2)) * decay               # [N, C, C]: w_{t,tau} (q^l_t . s_{tau-1}) / (1 - gamma_tau)
    within = scores @ values                                        # [N, C, S]
    # (ii) how much of the entering memory survives to token t: prod_{u=c..t} gamma_u
    from_start = torch.cumprod(gam.view(N, C), dim=1)               # [N, C]
    # (iii) what each chunk adds to the memory: sum_tau w_{end,tau} s_{tau-1} b_tau^T (last row of decay)
    added = (keys * decay[:, -1, :].unsqueeze(-1)).transpose(1, 2) @ values  # [N, S, S]
    P_enter, chunks = torch.zeros(S, S, dtype=b.dtype), []          # P_{-1} = 0
    for n in range(N):                                              # T / C sequential steps
        across = from_start[n].unsqueeze(-1) * (queries[n] @ P_enter)  # [C, S]: row t is (P_{c-1}^T q^l_t)^T, decayed
        chunks.append(within[n] + across)
        P_enter = from_start[n, -1] * P_enter + added[n]            # P_{c+C-1}, the next chunk's entering memory
    return torch.cat(chunks) * q_right, P_enter                     # r [T, S], P_{T-1} [S, S]


T_toy, S_toy = 8 * C, 4                                             # 8 chunks, one head of size 4
toy = [torch.randn(T_toy, S_toy, generator=gen, dtype=torch.float64) for _ in range(4)]  # s_prev, b, q^l, q^r
gam_toy = torch.rand(T_toy, generator=gen, dtype=torch.float64)     # weak and strong gates
r_toy, P_toy = pair_readout_chunked_toy(toy[0], toy[1], gam_toy, toy[2], toy[3], C)
as_library = [x.view(1, T_toy, 1, S_toy) for x in toy]              # [B, T, H, S] = [1, T, 1, S]
for mode in ("loop", "fast"):
    r_lib, P_lib = pair_readout(as_library[0], as_library[1], gam_toy.view(1, T_toy, 1), as_library[2],
                                as_library[3], mode=mode, return_state=True)
    print(f"T = {T_toy}, C = {C}: the chunked toy equals pair_readout(mode={mode!r}):",
          torch.allclose(r_toy, r_lib[0, :, 0], rtol=1e-12), " final memory too:", torch.allclose(P_toy, P_lib[0, 0]))

# %% [markdown]
# The library's `mode="fast"` differs from the toy in two ways, both from notebook 01b: a length that
# is not a multiple of $C$ is padded with tokens that keep the memory ($\gamma = 1$) and write
# nothing; and the loop over chunks (equation iii) is not a Python loop but `decayed_cumsum`, the
# running state's own chunked function, applied to the $S^2$ numbers of each chunk's memory, so the
# sequential part shrinks to a few levels of recursion. The forms agree on lengths that are not
# multiples of $C$ too (`tests/model/test_readout.py` checks many more cases, and gradients):

# %%
def relative_error(x, y):
    return ((x - y).norm() / y.norm()).item()


for T_check in (1, 7, 129):
    xs = [torch.randn(2, T_check, 4, 8, generator=gen, dtype=torch.float64) for _ in range(4)]
    g = torch.rand(2, T_check, 4, generator=gen, dtype=torch.float64)
    err = relative_error(pair_readout(*xs[:2], g, *xs[2:], mode="fast"), pair_readout(*xs[:2], g, *xs[2:], mode="loop"))
    print(f"T = {T_check:3d}: fast vs loop rel. error < 1e-12: {err < 1e-12}")

# %% [markdown]
# ## 3. What it costs: more arithmetic, not less
#
# Count the multiply-adds per head of every operation on an $S \times S$ matrix or a $C \times C$
# block, in both forms alike; what is left out is elementwise work on vectors (order $TS$ or $TC$
# in both forms).
#
# - the **loop** (the specification): per token the memory is scaled, $\gamma_t P_{t-1}$ ($S^2$),
#   one outer product $s_{t-1} b_t^\top$ is added into it ($S^2$), and it is read once,
#   $P_t^\top q^l_t$ ($S^2$): $3TS^2$, in $T$ steps that each wait for the previous one;
# - the **chunked** form: term (i) costs $C^2 S$ for the scores and $C^2 S$ for scores times values
#   per chunk, $2TCS$ for the $T/C$ chunks (the masked half of each $C \times C$ block is computed
#   too); the decay mask those scores are multiplied by is built by `causal_decay` as in notebook 01b,
#   a matmul of the chunk's $C$ log-gates with a constant $[C, C^2]$ 0/1 matrix, $C^3$ per chunk or
#   $TC^2$ in all; term (ii) reads the entering memory once per token, $TS^2$; equation (iii) builds
#   each chunk's addition, $CS^2$ per chunk or $TS^2$ in all, and carries the memory from chunk to
#   chunk. Walked one chunk at a time (the toy's loop) the carry would cost $S^2$ per chunk, $TS^2/C$;
#   the library instead hands the $T/C$ chunk-end memories to the running state's chunked function
#   (`decayed_cumsum`, notebook 01b), each memory as $S^2$ numbers. Its products within chunks cost
#   $C S^2$ per chunk-end memory, $TS^2$ in all, plus its own mask ($TC$) and entering memories
#   ($TS^2/C$), and $1/C$ of all that again for its own carry. So the carry buys few sequential
#   steps with as much arithmetic as the loop's per-token scaling of $P$.
#
# So the chunked form costs about $TC^2 + 2TCS + 3TS^2 + TC + TS^2/C$ (plus a few percent for the
# carry's own carry) against the loop's $3TS^2$: the $TC^2 + 2TCS$ of the chunks' mask and scores and
# the $TC + TS^2/C$ of the chunked carry are extra. The cell counts every term the way the library's
# code computes it (`tl_minimal.course.cost`), with the paper's $S = 16$ and the library's $C$, then
# lets PyTorch's flop counter count the matmuls of `pair_readout(mode="fast")` itself:

# %%
S_paper = 16
print(f"multiply-adds per head, S = {S_paper}, C = {C}")
print(f"{'T':>6s} {'loop 3TS^2':>12s} {'chunked':>12s} {'of it, mask':>12s} {'carry':>10s} {'ratio':>6s}   "
      f"sequential steps: loop, chunked (T/C)")
for T_cost in (128, 2048, 8192):
    loop_cost = 3 * T_cost * S_paper**2  # scale P, add the outer product, read: S^2 each, per token
    terms = readout_cost(T_cost, S_paper, C)  # mask, scores, weighted, added, carry, across
    chunk_cost = sum(terms.values())
    print(f"{T_cost:>6,} {loop_cost:>12,} {chunk_cost:>12,} {terms['mask']:>12,} {terms['carry']:>10,} "
          f"{chunk_cost / loop_cost:>6.2f}   {T_cost:>6,}, {T_cost // C:>4,}")
print(f"chunked / loop without the mask term: {(chunk_cost - terms['mask']) / loop_cost:.2f}")
with FlopCounterMode(display=False) as flops:  # counts matmuls: a multiply and an add each
    xs = [torch.randn(1, 2048, 1, S_paper) for _ in range(4)]
    pair_readout(xs[0], xs[1], torch.rand(1, 2048, 1), xs[2], xs[3], mode="fast")
print(f"T = 2,048, matmuls of pair_readout(mode='fast') by torch's flop counter: {flops.get_total_flops() // 2:,} "
      f"multiply-adds; the count's matmul terms: {matmul_total(readout_cost, 2048, S_paper, C):,}")

# %% [markdown]
# Read the ratio column: the chunked form does more arithmetic than the loop, at every length. The
# mask column is the mask's share of it, the carry column the chunked carry's, and the line below the
# table gives the ratio without the mask. Notebook 01b says why the mask is built this way anyway:
# summed directly, the segments keep float32 gate gradients accurate. The last line checks the count:
# PyTorch's flop counter, run on the library's own forward, finds exactly the multiply-adds of the
# count's matmul terms (the carry's entering memories are elementwise, which it does not count;
# `tests/course/test_cost.py` holds the two equal at other sizes).

# %% [markdown]
# ## 4. Where the speed comes from, measured
#
# If the chunked form does more arithmetic, why is it the fast form? Two reasons, neither of them
# arithmetic.
#
# - **Fewer sequential steps, each a big matrix product.** The loop's $T$ steps each do $S^2$ work
#   (256 numbers at $S = 16$) and must wait for the step before; that is too little to keep a GPU,
#   or a CPU's vector units, busy, and every step pays Python's and PyTorch's fixed cost per
#   operation. The chunked form does its work in a handful of large batched matrix products over
#   all chunks, batches and heads at once, and only the carry is sequential.
# - **$P_t$ is never stored for every token.** To train, autograd keeps what the backward pass
#   needs. The loop builds a new $S \times S$ memory at every token and keeps each one: $TS^2$
#   numbers per head. The chunked form keeps the $C \times C$ scores ($TC$ numbers), the $T/C$
#   chunk memories ($TS^2/C$) and the inputs.
#
# Both, measured on this machine for 8 sequences and 4 heads of $S = 16$. Notebook 08 times all
# forms properly.
#
# <details><summary>Implementation note: how the cell below measures</summary>
#
# In float32 on the chosen device; the forward pass only for the time, best of three; the numbers
# autograd saves for the backward pass counted with `torch.autograd.graph.saved_tensors_hooks`.
#
# </details>

# %%
# NBVAL_IGNORE_OUTPUT
import time

from tl_minimal.training.device import synchronize


def saved_for_backward(fn):
    """Run fn() and count the numbers autograd keeps for the backward pass (each tensor once)."""
    seen = {}
    def keep(x):
        seen[(x.data_ptr(), x.shape, x.stride())] = x.numel()
        return x
    with torch.autograd.graph.saved_tensors_hooks(keep, lambda x: x):
        fn()
    return sum(seen.values())


def best_time(fn, repeats=3):
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):  # best of three: the machine may be busy with other work
        t0 = time.perf_counter()
        fn()
        synchronize(DEVICE)  # on a GPU, wait for the work to finish before reading the clock
        best = min(best, time.perf_counter() - t0)
    return best


print(f"{'T':>6s} {'loop ms':>9s} {'fast ms':>9s} {'loop / fast':>12s}   numbers saved: {'loop':>11s} {'fast':>11s} {'loop / fast':>12s}")
for T_time in config.pick((128, 512, 2048), (64, 128)):
    xs = [torch.tanh(torch.randn(8, T_time, 4, 16, generator=gen)).to(DEVICE) for _ in range(4)]
    g = torch.rand(8, T_time, 4, generator=gen).to(DEVICE)
    ms, saved = {}, {}
    for mode in ("loop", "fast"):
        with torch.no_grad():
            ms[mode] = 1000 * best_time(partial(pair_readout, xs[0], xs[1], g, xs[2], xs[3], mode=mode))
        inputs = [x.clone().requires_grad_() for x in xs]
        saved[mode] = saved_for_backward(partial(pair_readout, inputs[0], inputs[1], g, inputs[2], inputs[3], mode=mode))
    print(f"{T_time:>6,} {ms['loop']:>9.1f} {ms['fast']:>9.1f} {ms['loop'] / ms['fast']:>12.1f}   "
          f"{'':15s}{saved['loop']:>11,} {saved['fast']:>11,} {saved['loop'] / saved['fast']:>12.1f}")

# %% [markdown]
# Read the numbers saved first: they do not depend on the machine. The loop keeps a fresh
# $S \times S$ memory for every token, $TS^2$ numbers per head on top of its inputs; the fast form
# keeps its inputs, the $C \times C$ scores and the chunk memories, and the gap widens as $S$ grows
# against $C$. The times show how the two forms compare on this machine, all arithmetic included:
# the fast form's handful of large operations against the loop's $T$ small ones. That ratio
# depends on the device and on how busy it is (notebook 08 measures the forms with care); what
# does not depend on the machine is the count of sequential steps, $T$ against $T/C$ or fewer.

# %% [markdown]
# ## Summary
#
# - The fast form is the chunked algorithm of notebook 01b with an $S \times S$ carried memory
#   $P_{c-1}$ and $C \times C$ scores inside chunks: three equations (within, across, carried).
# - It does *more* arithmetic than the loop (about $TC^2 + 2TCS + 3TS^2 + TC + TS^2/C$, the $TC^2$ for
#   the decay mask and a $TS^2$ for the chunked carry, against the loop's $3TS^2$); its speed comes
#   from $T/C$ sequential steps of large matrix products instead of $T$ small ones, and from never
#   storing $P_t$ for every token.
#
# **Next:** [`03c_trained_model.ipynb`](03c_trained_model.ipynb), the layer trained and the whole model in
# one page.
