# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 08 · Speed: the loop, the chunked form, the one-token step, and a read that stays linear
#
# **Optional.** Outside the 00-07 path, and nothing there depends on it: it measures why the course's
# triple-latent models are not 30-100 times slower than attention, as the paper's were.
# It imports the research package `tl_research` (the repository's `research/` folder, installed beside
# the course by `python run.py setup` in a clone; `pip install tl-minimal` alone does not bring it).
#
# The paper reports its models running **32.7x** (triple_hybrid) and **106.5x** (gated hybrid)
# slower than its Transformer (T = 64, Apple MPS). Its FLOP count says the opposite should
# happen: triple_hybrid does about 0.80x the Transformer's work at T = 128. The reason is the
# code, not the model: every layer of the reference loops over time in Python, one small
# kernel launch per token per operation.
#
# **Learning goals**
# - see that the loop, the chunked (fast) form and the one-token step compute the same numbers,
#   and what each costs, for one op and for whole models;
# - read a speed benchmark: ratios measured in one run, CPU time on a shared machine, spread;
# - follow how the gated hybrid's key-value read keeps a top-$K$ **block by block**, why that is
#   exact, and what it does to memory (quadratic before, linear after);
# - know what still bounds the recurrent layers at short lengths.
#
# **Prerequisites:** notebooks 01-03b (the recurrences and their chunked form) and 06 (the
# key-value read).
#
# **Time.** About 90 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 44 s (CPU 42 s, peak 952 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# Every recurrence in `tl_minimal` comes in three forms, held equal by the tests:
#
# | form | what it is | used for |
# |---|---|---|
# | `mode="loop"` | a Python for-loop over time, the equation as written | the specification |
# | `mode="fast"` (default) | a few large matrix products per chunk of tokens | training, scoring a text |
# | `*_step` / `model.step` | one token with an explicit carried state | generation, O(1) per token |
#
# The benchmark command `python -m tl_research speed` measures whole models; its
# committed runs (this repository's CPU) are `data/results/speed_cpu*.json`, and
# `data/results/SPEED.md` is the full write-up: the table over three runs, the method, the
# per-op profiles and what bounds each number.

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import json
import statistics

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tl_minimal import build_model, views
from tl_minimal.blockwise_topk import KEY_BLOCK, QUERY_BLOCK, top_k_read
from tl_minimal.kv_fusion import kv_read, kv_read_loop, kv_read_step
from tl_minimal.readout import pair_readout
from tl_minimal.results import results_dir
from tl_minimal.running_state import previous_states, running_state
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.views import palette
from tl_research.bench import speed
from tl_research.bench.timing import TrainStep, interleaved, peak_step_memory_mb

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

palette.apply()  # the colour-blind-safe colours (Okabe-Ito) for every plot below

# %% [markdown]
# One config cell: full mode times longer sequences and reruns a bigger benchmark; `TL_SMOKE=1`
# keeps everything under a minute. The timings use one torch thread: on a CPU shared with other
# busy processes a second thread mostly waits for a core, and every small op then waits for it
# (on this repository's 2-core machine that made tiny kernels 100x slower). With one thread on
# the CPU the timings read the process's CPU time (`CLOCK = "cpu"`), which leaves out the time
# spent waiting for a core; on a GPU, or with more threads, elapsed time. On your own machine,
# set `THREADS = None` to time with torch's default.

# %%
# NBVAL_IGNORE_OUTPUT
OP_LENGTHS = config.pick([16, 64, 256, 1024], [16, 64])  # T for the loop-vs-chunked op timing
MEM_LENGTHS = config.pick([128, 512, 1024, 2048, 4096], [64, 128])  # T for the memory plot (section 4)
CACHE_SIZES = config.pick([256, 1024, 4096, 16384], [256, 1024])  # entries for the kv step timing
RERUN_VARIANTS = config.pick(list(speed.DEFAULT_VARIANTS), ["transformer", "triple_latent"])
RERUN_LENGTHS = config.pick([64, 128, 256, 512], [32, 64])
RERUN_TOKENS = config.pick(2048, 128)  # tokens per training step in the rerun
RERUN_LOOP = config.pick(True, False)  # also time the loop form (T <= 128)
THREADS = 1  # torch threads for the timings here (None: torch's default)
DEVICE = get_device()
if THREADS:
    torch.set_num_threads(THREADS)
CLOCK = "cpu" if DEVICE.type == "cpu" and torch.get_num_threads() == 1 else "wall"
RESULTS = results_dir() / "speed_cpu.json"  # the clone's data/results, or the installed copy
RUNS = [*sorted(RESULTS.parent.glob("speed_cpu_run*.json")), RESULTS]  # the three committed runs
print(f"smoke mode: {config.smoke()}   device: {DEVICE}   threads: {torch.get_num_threads()}   clock: {CLOCK}")

# %% [markdown]
# ## 1. One op: the same numbers, different times
#
# The triple-latent layer's two recurrences are the running state
# $s_t = \lambda_t s_{t-1} + (1-\lambda_t) a_t$ and the pair-memory readout
# $r_t = (P_t^\top q^l_t) \odot q^r_t$ with $P_t = \gamma_t P_{t-1} + (1-\gamma_t)\, s_{t-1} b_t^\top$.
# First, the loop and the chunked form give the same result (in float64, so the comparison
# is about the algebra, not rounding):

# %%
g = torch.Generator().manual_seed(0)
B, T, H, S = 2, 77, 4, 16
a, b, ql, qr = (torch.randn(B, T, H, S, generator=g, dtype=torch.float64) for _ in range(4))
lam, gam = (torch.rand(B, T, H, generator=g, dtype=torch.float64) for _ in range(2))


def layer(mode):
    s = running_state(a, lam, mode=mode)
    return pair_readout(previous_states(s), b, gam, ql, qr, mode=mode)


r_loop, r_fast = layer("loop"), layer("fast")
rel = ((r_fast - r_loop).norm() / r_loop.norm()).item()
print(f"T = {T}: relative difference chunked vs loop < 1e-12: {rel < 1e-12}")


# %% [markdown]
# Now the time of one forward pass of the two recurrences, batch 8, 4 heads, S = 16, in
# float32. `interleaved` (from the benchmark) times the forms in alternating rounds, so a busy
# machine slows both alike.


# %%
class Call:
    """Wrap a function as a benchmark job (an object with .run())."""

    def __init__(self, fn):
        self.run = fn


def op_inputs(T, device):
    g = torch.Generator().manual_seed(0)
    x = [torch.randn(8, T, 4, 16, generator=g).to(device) for _ in range(4)]
    gates = [torch.rand(8, T, 4, generator=g).to(device) for _ in range(2)]
    return x, gates


def op_job(mode, x, gates):
    a, b, ql, qr = x
    lam, gam = gates

    @torch.no_grad()
    def run():
        s = running_state(a, lam, mode=mode)
        pair_readout(previous_states(s), b, gam, ql, qr, mode=mode)

    return Call(run)


op_ms = {"loop": [], "fast": []}
for T in OP_LENGTHS:
    x, gates = op_inputs(T, DEVICE)
    times = interleaved({m: op_job(m, x, gates) for m in op_ms}, DEVICE, warmup=1, reps=3, clock=CLOCK)
    for m in op_ms:
        op_ms[m].append(1000 * statistics.median(times[m]))

# %%
# NBVAL_IGNORE_OUTPUT
print(f"{'T':>6} {'loop ms':>10} {'chunked ms':>11} {'loop / chunked':>15}")
for T, lo, ch in zip(OP_LENGTHS, op_ms["loop"], op_ms["fast"], strict=True):
    print(f"{T:>6} {lo:>10.2f} {ch:>11.2f} {lo / ch:>15.1f}")
fig, ax = plt.subplots(figsize=(5, 3.5))
for m, marker in (("loop", "o"), ("fast", "s")):
    ax.loglog(OP_LENGTHS, op_ms[m], marker=marker, label=m)
ax.set(xlabel="sequence length T", ylabel="ms per forward pass",
       title="running state + pair readout, batch 8")
ax.legend()
plt.show()

# %% [markdown]
# On one CPU thread, forward only, the chunked form is only about 1.5-2.5x faster here: each loop
# step is a few small matrix products, which a CPU runs without much overhead, and the chunked
# form's work also grows linearly in T (16 tokens per matrix product, one S x S memory carried
# from chunk to chunk). The gap widens in training, where the loop's backward replays every step
# (4-6x the Transformer's step at T = 64-128 in section 8's rerun), and on GPUs and Apple MPS,
# where each of the loop's many tiny kernels also pays a launch latency: the paper's 33-107x.

# %% [markdown]
# ## 2. Whole models: the benchmark
#
# `python -m tl_research speed` builds every variant at the paper's byte-level size
# (d = 64, 3 layers, 4 heads, S = 16; the gated hybrid S = 8) and measures, at each length T:
#
# - **train_ms**: the median time of a training step (forward, cross-entropy, backward, AdamW)
#   at batch max(1, 2048 // T), so every step sees about 2048 tokens; steps of all variants are
#   interleaved, and `ratio_vs_transformer` divides by the Transformer of the same run;
# - **loop_train_ms**: the same step with `mode="loop"` (short T only, unless `--no-loop`);
# - **fwd_tokens_per_s**: the paper's throughput protocol (eval, no_grad, batch 8, 5 + 20 passes);
# - **gen_ms_per_token**: one `model.step` after a prompt of T tokens, state carried;
# - **peak_mem_mb**: peak bytes allocated during one training step (on the CPU, from the
#   allocation events torch.profiler records; CUDA's own counter on a GPU).
#
# The committed runs (the command is printed below) used one torch thread and the process's
# CPU time on a 2-core machine shared with other busy jobs: elapsed time there mostly measures
# waiting for a core. Only ratios within one run are compared. The last run, then the range of
# every ratio over the three runs:

# %%
# NBVAL_IGNORE_OUTPUT
saved = json.loads(RESULTS.read_text(encoding="utf-8"))
rows = saved["rows"]
env = saved["environment"]
print(f"device {env['device']}, torch {env['torch']}, {env['threads']} threads, load average "
      f"{env['load_average_start'][0]:.1f} at start, {env['load_average_end'][0]:.1f} at the end, "
      f"took {env['seconds']:.0f} s")
print(f"command: {env['command']}\n")
print(speed.format_table(rows))
runs = [json.loads(f.read_text(encoding="utf-8"))["rows"] for f in RUNS if f.exists()]
print(f"\nratio to the Transformer's training step, range over {len(runs)} runs:")
for r in rows:
    if r["variant"] != "transformer":
        got = [x["ratio_vs_transformer"] for run in runs for x in run
               if x["variant"] == r["variant"] and x["seq_len"] == r["seq_len"]]
        print(f"  T={r['seq_len']:>5} {r['variant']:14s} {min(got):.2f}-{max(got):.2f}x")

# %%
# NBVAL_IGNORE_OUTPUT
variants = list(dict.fromkeys(r["variant"] for r in rows))
lengths = sorted({r["seq_len"] for r in rows})


def series(variant, key):
    got = {r["seq_len"]: r[key] for r in rows if r["variant"] == variant and r.get(key) is not None}
    return [T for T in lengths if T in got], [got[T] for T in lengths if T in got]


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.8))
for v in variants:
    line, = ax1.loglog(*series(v, "train_ms"), marker="o", label=v)
    Ts, loop = series(v, "loop_train_ms")
    if loop:
        ax1.loglog(Ts, loop, marker="x", linestyle=":", color=line.get_color())
    ax2.semilogx(*series(v, "ratio_vs_transformer"), marker="o", label=v)
ax1.set(xlabel="T (batch = 2048 // T)", ylabel="ms per training step", title="training step")
ax2.axhline(1.0, color="gray", linewidth=0.8)
ax2.set(xlabel="T", ylabel="train step / Transformer's", title="ratio to the Transformer, same run")
ax1.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# Read the left plot along a line: with about 2048 tokens per step, a model whose cost is
# linear in T has a flat line, and the Transformer's attention, quadratic in T, makes its line
# rise. At T = 128 every recurrent variant is still slower than the Transformer (section 6 says
# why); by T = 2048 the triple variants are well below it, and by T = 4096 at about half of it or
# less. The gated hybrid carries the key-value read on top of its stack, whose cost grows with T
# (every query scores every earlier entry): it ends between the two. The loop form (run the
# benchmark without `--no-loop` to time it) was 2-5.5x the Transformer's step on this CPU in
# round 1: the paper's 33-107x were measured on Apple MPS, where each of the loop's many tiny
# kernels also pays a launch latency.

# %% [markdown]
# ## 3. Generation: the cost of the next token
#
# A recurrent model carries a fixed-size state (s, P, the convolution's last inputs), so the
# next token costs the same at any context. The Transformer's state is its key-value cache: the
# next token attends to all T cached keys. The gated hybrid's associative memory also grows
# with the context: one key-value pair per token, and every generated token scores all of them.

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 4))
for v in variants:
    ax.semilogx(*series(v, "gen_ms_per_token"), marker="o", label=v)
ax.set(xlabel="context length (tokens already seen)", ylabel="ms per generated token (batch 1)",
       title="one-token step with the carried state")
ax.set_ylim(bottom=0)
ax.legend(fontsize=8)
plt.show()
for v in variants:
    Ts, ms = series(v, "gen_ms_per_token")
    if 128 in Ts and Ts[-1] > 128:
        print(f"{v:24s} context {Ts[-1]} / context 128: {ms[-1] / ms[0]:.2f}")

# %% [markdown]
# The key-value read of one generated token, alone: `kv_read_step` scores the query against all
# N cached entries (one [1, A] x [A, N] product and a top-K over N), so its work is O(N A) per
# token, linear in the context. It is the same blockwise read as in training, with one query.

# %%
# NBVAL_IGNORE_OUTPUT
def cache_job(N, A=64, k=8):
    g = torch.Generator().manual_seed(0)
    q, keys, values = (torch.randn(1, n, A, generator=g).to(DEVICE) for n in (1, N, N))
    return Call(torch.no_grad()(lambda: kv_read_step(q[:, 0], keys, values, top_k=k, scale=10.0)))


step_times = interleaved({N: cache_job(N) for N in CACHE_SIZES}, DEVICE, warmup=2, reps=config.pick(21, 3),
                         clock=CLOCK)
for N in CACHE_SIZES:
    ms = 1000 * statistics.median(step_times[N])
    print(f"cache of {N:>6} entries: {ms:7.3f} ms per read")

# %% [markdown]
# ## 4. The key-value read without a T x T matrix
#
# The gated hybrid's read (notebook 06): for each position t, score every visible entry j,
# $\rho_{t,j} = \beta \cos(q_t, k_j)$ (+ $\log\omega_j$ with a write gate), keep the $K$ best,
# $\alpha_t = \mathrm{softmax}$ of the kept scores, $m_t = \sum_j \alpha_{t,j} v_{j+1}$.
#
# Written for all positions at once (`kv_read(..., dense=True)`, the form of round 1) it builds a
# [B, T, N] score matrix, N ~ T entries, runs `topk` on it, and for the weighted sum scatters
# $\alpha$ back into a second dense [B, T, N] matrix; training keeps both for the backward. Per
# sequence that is memory quadratic in T: at T = 4096 the gated hybrid's training step needed
# 5.3x the Transformer's memory.
#
# `kv_read` now keeps the top-$K$ the way flash attention keeps a softmax: **block by block**
# (`tl_minimal/blockwise_topk.py`). For a block of queries (256 positions) it scores one block
# of entries at a time (1024), takes that block's $K$ best, and merges them with the $K$ best
# kept so far:
#
# ```
# for each block of queries:
#     best = K empty slots
#     for each block of entries the queries can see (blocks wholly in their future are skipped):
#         rho  = scores of the block, [q, b], -inf where j is not visible yet
#         best = the K best of (best, the K best of rho)
# alpha = softmax(best);  m = sum alpha v        (the values of the K kept entries only)
# ```
#
# **Why it is exact.** The $K$ best of everything seen so far is all a later block needs: an
# entry of the final top-$K$ is among the $K$ best of every set of entries that contains it, so
# no merge throws it away; an entry outside the final top-$K$ is beaten by $K$ entries that all
# survive. The kept scores are the same numbers as in the dense read, so their softmax, the
# weights, and the read $m_t$ are the same too.
#
# **Ties.** A token that occurs twice writes the same key twice, so two entries can score
# *exactly* the same, and `torch.topk` does not say which of equal scores it keeps. The rule here
# (and in the loop, the specification): among equal scores the entry written first (lower $j$)
# wins and comes first. A block's $K$ best come from one `topk` of $K + 1$ values; when the
# $(K{+}1)$-th equals the $K$-th, a tie straddles the cut and the tied entries are taken in index
# order. Merging two lists of $K$ compares all pairs by (score, index).
#
# **What it costs.** Time: O($T N A$) for the scores, as before (half of it skipped: blocks
# in every query's future), plus a top-$(K{+}1)$ over every score. Memory: O($q\,b$) for one block
# pair plus O($T K$) for the kept scores and indices, linear in T. The backward is a custom
# autograd function that keeps only $\alpha$ and the indices and recomputes per query block
# (gathers of the $K$ kept keys and values, or, while the queries see at most 512 entries, plain
# matrix products on the [q, seen] block), so nothing of size [T, N] or [T, K, A] is stored.
#
# The three forms agree. Small blocks (5 entries, 4 queries) on a short sequence, so that every
# edge case is crossed, against the loop and the dense form:

# %%
g = torch.Generator().manual_seed(0)
B, T, A, K = 2, 40, 8, 4
q = torch.randn(B, T, A, generator=g, dtype=torch.float64)
keys, values = (torch.randn(B, T - 1, A, generator=g, dtype=torch.float64) for _ in range(2))
n_visible = [max(t - 1, 0) for t in range(T)]  # entry j is visible at t when j <= t - 2
m_loop, w_loop, i_loop = kv_read_loop(q, keys, values, n_visible, top_k=K, scale=3.0)
m_dense, w_dense, i_dense = kv_read(q, keys, values, n_visible, top_k=K, scale=3.0, dense=True)
qn, kn = F.normalize(q, dim=-1), F.normalize(keys, dim=-1)
m_blk, w_blk, i_blk = top_k_read(qn, kn, values, n_visible, K, 3.0, key_block=5, query_block=4)
print(f"the model's blocks: {QUERY_BLOCK} queries x {KEY_BLOCK} entries; here 4 x 5")
print("same entries kept (blockwise, dense, loop):", torch.equal(i_blk, i_loop), torch.equal(i_dense, i_loop))
print("same weights and reads to 1e-12:", bool((w_blk - w_loop).abs().max() < 1e-12),
      bool((m_blk - m_loop).abs().max() < 1e-12))

# %% [markdown]
# Ties, with keys that repeat exactly (one-hot vectors: every score is exact). Entries 0, 4, 8,
# ... all hold token 0; a query for token 0 keeps the first $K$ copies, in memory order:

# %%
tokens = torch.tensor([[j % 4 for j in range(30)]])  # tokens 0 1 2 3 0 1 2 3 ...
keys1 = F.one_hot(tokens, 4).double()  # [1, 30, 4]
values1 = torch.randn(1, 30, 3, generator=g, dtype=torch.float64)
query = F.one_hot(torch.tensor([[0]]), 4).double()  # [1, 1, 4]: token 0
for name, (_m, w, i) in {"loop": kv_read_loop(query, keys1, values1, [30], top_k=K, scale=5.0),
                        "blockwise": top_k_read(query, keys1, values1, [30], K, 5.0, key_block=7, query_block=1)}.items():
    print(f"{name:10s} kept entries {i[0, 0].tolist()}, weights {[round(x, 3) for x in w[0, 0].tolist()]}")

# %% [markdown]
# Peak memory of one training step, before (the dense read) and after (blockwise), with the
# Transformer beside them, at about 2048 tokens per step (batch = 2048 // T) as in the benchmark.
# Measured here, now (`peak_step_memory_mb`: allocation events of torch.profiler on the CPU):

# %%
# NBVAL_IGNORE_OUTPUT
def step_memory(variant, T, dense=None):
    torch.manual_seed(0)
    model = build_model(variant, speed.VOCAB, max_seq_len=max(128, T)).to(DEVICE)
    if dense is not None:
        model.kv.dense_read = dense  # the read's form: an attribute, not a setting
    job = TrainStep(model, speed.batch_for(T), T, DEVICE, 3e-4, 0.05)
    job.run()
    return peak_step_memory_mb(job, DEVICE)


memory = {name: [step_memory(v, T, dense) for T in MEM_LENGTHS]
          for name, v, dense in (("transformer", "transformer", None),
                                 ("gated_hybrid_repaired, dense read (before)", "gated_hybrid_repaired", True),
                                 ("gated_hybrid_repaired, blockwise read (after)", "gated_hybrid_repaired", False))}


def fmt(mb):
    return "n/a" if mb is None else f"{mb:.1f} MB"


print(f"{'T':>6}" + "".join(f"{name:>38s}" for name in memory))
for i, T in enumerate(MEM_LENGTHS):
    print(f"{T:>6}" + "".join(f"{fmt(mbs[i]):>38s}" for mbs in memory.values()))

# %%
# NBVAL_IGNORE_OUTPUT
if all(mb is not None for mbs in memory.values() for mb in mbs):
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for (name, mbs), style in zip(memory.items(), ("-o", "--s", "-^"), strict=True):
        ax.loglog(MEM_LENGTHS, mbs, style, label=name)
    ax.set(xlabel="T (batch = 2048 // T: about 2048 tokens per step)", ylabel="peak MB of one training step",
           title="training-step memory, before and after the blockwise read")
    ax.legend(fontsize=8)
    plt.show()
else:
    print("peak memory is not measured on this device")

# %% [markdown]
# With the number of tokens per step fixed, memory linear in the tokens is a flat line, until
# T = 2048, where the batch is 1; at T = 4096 the step holds twice the tokens. The dense read
# rises with T at a fixed number of tokens: it holds B x T x T scores. The blockwise read follows
# the Transformer, at the recurrent stack's ~1.4-1.5x.

# %% [markdown]
# ## 5. Memory of every variant
#
# The committed runs' peak step memory, divided by the tokens in the batch: flat means linear in
# T per sequence (at T = 4096 the batch is 1 and the step holds 4096 tokens).

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 4))
for v in variants:
    Ts, mb = series(v, "peak_mem_mb")
    batch = {r["seq_len"]: r["batch"] for r in rows if r["variant"] == v}
    ax.loglog(Ts, [m / (batch[T] * T) * 1024 for T, m in zip(Ts, mb, strict=True)], marker="o", label=v)
ax.set(xlabel="T", ylabel="peak MB per 1024 tokens of the batch", title="training-step peak memory")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# The recurrent variants hold about 1.4-1.9x the Transformer's memory per token (the chunked
# forms keep their C x C decay and score matrices for the backward); the Transformer is linear
# too (PyTorch's CPU attention kernel never stores the T x T weights); the gated hybrid is now
# linear as well.
#
# ## 6. The targets
#
# Two rounds of work on speed set targets for this 2-core CPU. `speed.targets`
# checks them against the committed rows (the last of the three runs; data/results/SPEED.md
# gives the range over all three).

# %%
# NBVAL_IGNORE_OUTPUT
for check in speed.targets(rows):
    value = "not measured" if check["value"] is None else f"{check['value']:.2f}"
    status = "n/a   " if check["met"] is None else "met   " if check["met"] else "MISSED"
    print(f"{status}  {check['target']:66s} {value}")

# %% [markdown]
# ## 7. Where the time goes at T = 128
#
# All variants share the embedding, the feed-forward blocks, the LayerNorms, the head, the
# dropout and AdamW; they differ only in the time mixer. So the ratio at T = 128 is set by one
# layer's mixer, forward plus backward, against the Transformer's attention: one fused
# `scaled_dot_product_attention` call (about 5-6 ms of CPU time per layer, forward and backward,
# in the per-op profiles of data/results/SPEED.md), and three Linear layers.
#
# The triple-latent mixer runs four tanh projections, the running state and one chunked
# gated-linear-attention readout: about 15 small batched matrix products (512 matrices of
# 16 x 16 per call) and some 60 elementwise passes over [B, H, T, S]-sized tensors, forward and
# backward, at 40-100 microseconds each on this CPU. No single op dominates; the cost is their
# number. The slot mixer runs the same plus a second readout, because its left and right slot
# memories have different keys and queries (it is not a low-rank P).
#
# Round 2 removed what the profiles showed as waste: torch.exp's slow path on -inf (the masked
# future of every decay matrix), the rebuilding of constant matrices on every call, a tanh trick
# that an older PyTorch needed, layout copies before and after the chunked forms, and
# torch.softmax over the 8 slot weights (4x slower than the same softmax written out). Tried and
# measured without gain: a hand-written backward for the chunked readout, and the slot layer's
# two readouts stacked into one call. The timing below is this machine's, now:

# %%
from tl_minimal.readout import TripleLatentMixer
from tl_minimal.slots import SlotMixer
from tl_minimal.transformer import CausalSelfAttention


class MixerStep:
    """Forward + backward of one time mixer on a [B, T, d] input (a benchmark job)."""

    def __init__(self, mixer, B, T, d=64):
        g = torch.Generator().manual_seed(0)
        self.mixer = mixer.to(DEVICE)
        self.x = torch.randn(B, T, d, generator=g).to(DEVICE).requires_grad_()
        self.grad = torch.randn(B, T, d, generator=g).to(DEVICE)

    def run(self):
        self.mixer(self.x)[0].backward(self.grad)


mixers = {"attention": CausalSelfAttention(64, 4), "triple-latent": TripleLatentMixer(64, 4, 16),
          "slot (K = 8)": SlotMixer(64, 4, 16, num_slots=8)}
mixer_times = interleaved({k: MixerStep(m, config.pick(16, 4), 128) for k, m in mixers.items()}, DEVICE,
                          warmup=2, reps=config.pick(21, 3), clock=CLOCK)

# %%
# NBVAL_IGNORE_OUTPUT
base = statistics.median(mixer_times["attention"])
for name, times in mixer_times.items():
    ms = 1000 * statistics.median(times)
    print(f"{name:14s} {ms:6.1f} ms per layer, forward + backward   ({ms / (1000 * base):.2f}x attention)")

# %% [markdown]
# ## 8. Rerun it here
#
# The same benchmark on this machine, small (a few lengths, fewer repetitions): expect other
# absolute numbers than the committed run; the ratios are what carries over. The committed runs
# used `python -m tl_research speed --threads 1 --clock cpu --no-loop --fwd-seconds 3
# --variants transformer triple_latent triple_slot triple_hybrid gated_hybrid_repaired --seq-lens 128 2048
# 4096 --device cpu --out data/results/speed_cpu.json`.

# %%
# NBVAL_IGNORE_OUTPUT
settings = speed.SpeedSettings(tokens_per_step=RERUN_TOKENS, memory=False, loop_steps=int(RERUN_LOOP),
                              clock=CLOCK).quick()
mine = speed.run_speed(RERUN_VARIANTS, RERUN_LENGTHS, DEVICE, settings, log=lambda *a: None)
print(speed.format_table(mine["rows"]))

# %% [markdown]
# ## Summary
#
# - The loop, the chunked form and the one-token step compute the same numbers; the chunked form
#   is what training uses, the step what generation uses (O(1) per token for the recurrent
#   layers; the Transformer's and the key-value read's grow with the context).
# - Measured as CPU time on one thread, ratios within one run: the triple variants are cheaper
#   than the Transformer from T = 2048 on and about half of it or less at T = 4096; at T = 128
#   they are still slower, bounded by many small kernels rather than by any one of them.
# - The gated hybrid's key-value read keeps its top-$K$ block by block: the same indices and
#   weights as the dense read (equal scores: the earlier entry first), memory linear in T
#   instead of quadratic, and a training step at T = 2048 no longer above the Transformer's.
#
# The full write-up, with the table over three runs, the profiles and what bounds each number:
# `data/results/SPEED.md`. Back to the start: `00_start_here.ipynb`.
