# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 08 · Speed: the loop, the chunked form and the one-token step
#
# The paper reports its models running **32.7x** (triple_hybrid) and **106.5x** (gated hybrid)
# slower than its Transformer (T = 64, Apple MPS). Its FLOP count says the opposite should
# happen: triple_hybrid does about 0.80x the Transformer's work at T = 128. The reason is the
# code, not the model: every layer of the reference loops over time in Python, one small
# kernel launch per token per operation.
#
# Every recurrence in `tl_minimal` comes in three forms, held equal by the tests:
#
# | form | what it is | used for |
# |---|---|---|
# | `mode="loop"` | a Python for-loop over time, the equation as written | the specification |
# | `mode="fast"` (default) | a few large matrix products per chunk of tokens | training, scoring a text |
# | `*_step` / `model.step` | one token with an explicit carried state | generation, O(1) per token |
#
# This notebook times them: first one op, then whole models with the benchmark command
# `python -m tl_minimal.experiments speed`, whose measured table (this repository's CPU run)
# is committed in `data/results/speed_cpu.json`.

# %%
import json
import statistics
from pathlib import Path

import matplotlib.pyplot as plt
import torch

import tl_minimal
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.experiments import speed
from tl_minimal.experiments.timing import interleaved
from tl_minimal.readout import pair_readout
from tl_minimal.running_state import previous_states, running_state

# %% [markdown]
# One config cell: full mode times longer sequences and reruns a bigger benchmark; `TL_SMOKE=1`
# keeps everything under a minute. The timings use one torch thread: on a CPU shared with other
# busy processes a second thread mostly waits for a core, and every small op then waits for it
# (on this repository's 2-core machine that made tiny kernels 100x slower). On your own machine,
# set `THREADS = None` to time with torch's default.

# %%
# NBVAL_IGNORE_OUTPUT
OP_LENGTHS = config.pick([16, 64, 256, 1024], [16, 64])  # T for the loop-vs-chunked op timing
RERUN_VARIANTS = config.pick(list(speed.DEFAULT_VARIANTS), ["transformer", "triple_latent"])
RERUN_LENGTHS = config.pick([64, 128, 256, 512], [32, 64])
RERUN_TOKENS = config.pick(2048, 128)  # tokens per training step in the rerun
RERUN_LOOP = config.pick(True, False)  # also time the loop form (T <= 128)
THREADS = 1  # torch threads for the timings here (None: torch's default)
DEVICE = get_device()
if THREADS:
    torch.set_num_threads(THREADS)
RESULTS = Path(tl_minimal.__file__).resolve().parents[1] / "data" / "results" / "speed_cpu.json"
print(f"smoke mode: {config.smoke()}   device: {DEVICE}   threads: {torch.get_num_threads()}")

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
    times = interleaved({m: op_job(m, x, gates) for m in op_ms}, DEVICE, warmup=1, reps=3)
    for m in op_ms:
        op_ms[m].append(1000 * statistics.median(times[m]))

# %%
# NBVAL_IGNORE_OUTPUT
print(f"{'T':>6} {'loop ms':>10} {'chunked ms':>11} {'loop / chunked':>15}")
for T, lo, ch in zip(OP_LENGTHS, op_ms["loop"], op_ms["fast"]):
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
# (4-5x the Transformer's step at T = 128, below), and on GPUs and Apple MPS, where each of the
# loop's many tiny kernels also pays a launch latency: the paper's 33-107x.

# %% [markdown]
# ## 2. Whole models: the benchmark
#
# `python -m tl_minimal.experiments speed` builds every variant at the paper's byte-level size
# (d = 64, 3 layers, 4 heads, S = 16; the gated hybrid S = 8) and measures, at each length T:
#
# - **train_ms**: the median time of a training step (forward, cross-entropy, backward, AdamW)
#   at batch max(1, 2048 // T), so every step sees about 2048 tokens; steps of all variants are
#   interleaved, and `ratio_vs_transformer` divides by the Transformer of the same run;
# - **loop_train_ms**: the same step with `mode="loop"` (short T only);
# - **fwd_tokens_per_s**: the paper's throughput protocol (eval, no_grad, batch 8, 5 + 20 passes);
# - **gen_ms_per_token**: one `model.step` after a prompt of T tokens, state carried;
# - **peak_mem_mb**: peak bytes allocated during one training step (on the CPU, from the
#   allocation events torch.profiler records; CUDA's own counter on a GPU).
#
# The committed run:

# %%
# NBVAL_IGNORE_OUTPUT
saved = json.loads(RESULTS.read_text())
rows = saved["rows"]
env = saved["environment"]
print(f"device {env['device']}, torch {env['torch']}, {env['threads']} threads, "
      f"load average at start {env['load_average_start'][0]:.1f}, took {env['seconds']:.0f} s")
print(f"command: {env['command']}\n")
print(speed.format_table([r for r in rows if r["seq_len"] in (128, 2048)]))

# %%
# NBVAL_IGNORE_OUTPUT
variants = list(dict.fromkeys(r["variant"] for r in rows))
lengths = sorted({r["seq_len"] for r in rows})


def series(variant, key):
    got = {r["seq_len"]: r[key] for r in rows if r["variant"] == variant and r.get(key) is not None}
    return [T for T in lengths if T in got], [got[T] for T in lengths if T in got]


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 4))
for v in variants:
    line, = ax1.loglog(*series(v, "train_ms"), marker="o", label=v)
    Ts, loop = series(v, "loop_train_ms")
    if loop:
        ax1.loglog(Ts, loop, marker="x", linestyle=":", color=line.get_color())
    ax2.semilogx(*series(v, "ratio_vs_transformer"), marker="o", label=v)
ax1.set(xlabel="T (batch = 2048 // T)", ylabel="ms per training step",
        title="training step (dotted, x: loop form)")
ax2.axhline(1.0, color="gray", linewidth=0.8)
ax2.set(xlabel="T", ylabel="train step / Transformer's", title="ratio to the Transformer, same run")
ax1.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# Read the left plot along a line: with about 2048 tokens per step, a model whose cost is
# linear in T has a flat line, and the Transformer's attention, quadratic in T, makes its line
# rise. The recurrent variants cross below the Transformer between T = 256 and 512. The dotted
# lines are the same models in their loop form, 2-5.5x the Transformer's step on this CPU: the
# paper's 33-107x were measured on Apple MPS, where each of the loop's many tiny kernels also
# pays a launch latency.

# %% [markdown]
# ## 3. Generation: the cost of the next token
#
# A recurrent model carries a fixed-size state (s, P, the convolution's last inputs), so the
# next token costs the same at any context. The Transformer's state is its key-value cache: the
# next token attends to all T cached keys. The gated hybrid's associative memory also grows
# with the context (one key-value pair per token, scored at every step).

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
    if 128 in Ts and 2048 in Ts:
        print(f"{v:24s} context 2048 / context 128: {ms[Ts.index(2048)] / ms[Ts.index(128)]:.2f}")

# %% [markdown]
# ## 4. Memory
#
# Peak memory of one training step, divided by the tokens in the batch. With the batch chosen so
# that every step sees about 2048 tokens, memory that is linear in T per sequence shows as a *flat*
# line (at T = 4096 the batch is 1 and the step holds 4096 tokens: still flat per token). Memory
# quadratic in T rises.
#
# In the committed run the recurrent variants are flat, at about 1.7x the Transformer's memory per
# token. The Transformer is flat too: PyTorch's CPU attention kernel never stores the T x T
# weights. The gated hybrid rises: its key-value read scores every pair of positions, a [T, T]
# matrix per sequence.

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 4))
for v in variants:
    Ts, mb = series(v, "peak_mem_mb")
    batch = {r["seq_len"]: r["batch"] for r in rows if r["variant"] == v}
    ax.loglog(Ts, [m / (batch[T] * T) * 1024 for T, m in zip(Ts, mb)], marker="o", label=v)
ax.set(xlabel="T", ylabel="peak MB per 1024 tokens of the batch", title="training-step peak memory")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 5. The targets
#
# The issue that asked for this benchmark set targets for this 2-core CPU. `speed.targets`
# checks them against the rows. The committed run used one thread and CPU time
# (`--threads 1 --clock cpu`): the machine was shared with other busy jobs.

# %%
# NBVAL_IGNORE_OUTPUT
for check in speed.targets(rows):
    value = "not measured" if check["value"] is None else f"{check['value']:.2f}"
    status = "n/a   " if check["met"] is None else "met   " if check["met"] else "MISSED"
    print(f"{status}  {check['target']:58s} {value}")

# %% [markdown]
# ## 6. Where the time goes at T = 128
#
# All variants share the embedding, the feed-forward blocks, the LayerNorms, the head and AdamW;
# they differ only in the time mixer. So the ratio at T = 128 is set by one layer's mixer, forward
# plus backward, against the Transformer's attention (one fused `scaled_dot_product_attention`
# call). The triple-latent mixer runs four tanh projections, the running state and one chunked
# gated-linear-attention readout; the slot mixer runs the same plus a *second* readout, because
# its left and right slot memories have different keys and queries (it is not a low-rank P).
# That second readout is why triple_slot misses the 1.5x target at T = 128 (1.59x in the
# committed run; 1.56-1.64x over three runs) while triple_latent (1.27x) and triple_hybrid
# (1.32x) meet it.


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
                          warmup=2, reps=config.pick(9, 3))

# %%
# NBVAL_IGNORE_OUTPUT
base = statistics.median(mixer_times["attention"])
for name, times in mixer_times.items():
    ms = 1000 * statistics.median(times)
    print(f"{name:14s} {ms:6.1f} ms per layer, forward + backward   ({ms / (1000 * base):.2f}x attention)")

# %% [markdown]
# ## 7. Rerun it here
#
# The same benchmark on this machine, small (a few lengths, fewer repetitions): expect other
# absolute numbers than the committed run; the ratios are what carries over. The full command
# is `python -m tl_minimal.experiments speed --out data/results/speed_cpu.json`.

# %%
# NBVAL_IGNORE_OUTPUT
settings = speed.SpeedSettings(tokens_per_step=RERUN_TOKENS, memory=False, loop_steps=int(RERUN_LOOP)).quick()
mine = speed.run_speed(RERUN_VARIANTS, RERUN_LENGTHS, DEVICE, settings, log=lambda *a: None)
print(speed.format_table(mine["rows"]))
