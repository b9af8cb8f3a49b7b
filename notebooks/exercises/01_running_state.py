# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 01 · The running state
#
# **Time:** about 25 minutes of work (our estimate); the worked solution runs top to bottom in 10 s
# (CPU 8 s, peak 419 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
# **Assumes:** notebook `01_running_state` (or the recap below) and
# PyTorch broadcasting. **How it works:** write your code where a cell says `raise
# NotImplementedError`, then run the check cell under it. The checker tries your code on random
# inputs (including one token and odd lengths) and prints `correct: ...` or a hint saying what
# is wrong. The solutions are in `solutions/`: try first, look after.
#
# **Passing:** a check runs your function on float64 inputs and passes when the result's shape is right
# and its relative error against the library's is below $10^{-5}$; the graded hidden tests use other
# sizes too (one with $B = 1$, one with $H = 1$), so do not rely on the visible checks' sizes.
#
# ## Recap
#
# Each head keeps a running state, an exponential moving average with a learned gate:
#
# $$ s_t = \lambda_t \, s_{t-1} + (1 - \lambda_t)\, a_t, \qquad s_{-1} = 0 \text{ or a given initial state (argument \texttt{s0})} \tag{1} $$
#
# | symbol | meaning | shape |
# |---|---|---|
# | $a_t$ | what token $t$ writes | `a[:, t]` is `[B, H, S]` |
# | $\lambda_t$ | keep gate, one number per head, in (0, 1) | `lam[:, t]` is `[B, H]` |
# | $s_t$ | the state after token $t$ | `s[:, t]` is `[B, H, S]` |
#
# The library's version is `tl_minimal/running_state.py`. Do not copy it: write your own, then compare.

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((p for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), "tl-minimal")
    raise SystemExit(f'tl_minimal is not installed for this kernel; run this in a cell, then restart the '
                     f'kernel:  %pip install -e "{clone}"') from None

import matplotlib.pyplot as plt
import torch

from tl_minimal import exercises as ex
from tl_minimal.running_state import running_state

# %% [markdown]
# ## Task 1 · One token
#
# Write `running_state_step`: given the write `a_t [B, H, S]`, the gate `lam_t [B, H]` and the
# previous state `s_prev [B, H, S]`, return $s_t$ `[B, H, S]`. Mind the shapes: one gate per head
# scales all $S$ numbers of that head.

# %% nbgrader={"grade": false, "grade_id": "task1_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def running_state_step(a_t, lam_t, s_prev):
    raise NotImplementedError("Task 1: equation (1) of the Recap for one token; Task 1 gives every argument's shape")


# %% nbgrader={"grade": true, "grade_id": "task1_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_running_state_step(running_state_step)

# %% [markdown]
# ## Task 2 · The whole sequence
#
# Write `running_state_loop(a, lam, s0=None)`: a for-loop over time that returns every state,
# `s[:, t]` $= s_t$, shape `[B, T, H, S]`. Start from `s0` when it is given, from zeros otherwise.
# You may call your `running_state_step`.

# %% nbgrader={"grade": false, "grade_id": "task2_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def running_state_loop(a, lam, s0=None):
    raise NotImplementedError("Task 2: equation (1) of the Recap, token after token, from s_{-1} (Task 2 says what s0=None means)")


# %% nbgrader={"grade": true, "grade_id": "task2_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_running_state(running_state_loop)

# %% [markdown]
# ## Task 3 · Predict before you plot
#
# One head, one number ($S = 1$), gate $\lambda_t = 0.8$ at every token, $s_{-1} = 0$. Token 0
# writes $a_0 = 1$; every later token writes $a_t = 0$. **What is $s_5$?** Work it out on paper,
# then put your number in `my_prediction` and run the check. The plot below shows the answer.

# %% nbgrader={"grade": false, "grade_id": "task3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
my_prediction = None  # your value of s_5, a number

# %% nbgrader={"grade": true, "grade_id": "task3_check", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ex.check_impulse_prediction(my_prediction)

# %%
# NBVAL_IGNORE_OUTPUT
T = 20
impulse = torch.zeros(1, T, 1, 1)
impulse[0, 0] = 1.0  # a_0 = 1, later writes are 0
fig, ax = plt.subplots(figsize=(6, 3))
for keep in (0.5, 0.8, 0.95):
    s = running_state(impulse, torch.full((1, T, 1), keep))  # [1, T, 1, 1]
    ax.plot(s[0, :, 0, 0], marker="o", ms=3, label=f"lam = {keep}")
ax.axvline(5, color="grey", lw=0.5)
ax.set(xlabel="token t", ylabel="s_t", title="impulse response: (1 - lam) lam^t")
ax.legend()
plt.show()

# %% [markdown]
# A larger gate writes less at first ($1 - \lambda$) but forgets more slowly ($\lambda^t$).
#
# ## Task 4 · Half-lives of a trained model's gates
#
# **Derive, then code.** With a constant gate $\lambda$, after how many tokens $n$ has a write lost
# half of its weight? This page gives no formula for it: follow one write $a_\tau$ through
# equation (1) (what multiplies it by the time it reaches $s_{\tau+n}$?) and solve for $n$, which
# need not be a whole number. Write `half_life(lam)`: `lam`, a tensor of gates in (0, 1) of any
# shape -> `n` of the same shape, elementwise. The check also runs it on the keep
# gates of a small model trained for a few seconds on WikiText-2 bytes (its gates start near 0.5).

# %%
# NBVAL_IGNORE_OUTPUT
model, info = ex.tiny_model("triple_latent")  # 2 layers, 2 heads, S = 8; a few seconds of training
tokens = ex.sample_tokens(info)  # [2, 64] bytes of text
_, inside = model.internals(tokens)
lam = inside["layers"][0]["lam"]  # [B, T, H]: the keep gates of layer 0
print(ex.training_note(info))  # the history is in nats; the note shows it in bits


# %% nbgrader={"grade": false, "grade_id": "task4_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def half_life(lam):
    raise NotImplementedError("Task 4 defines the half-life: solve that definition for the number of tokens")


# %% nbgrader={"grade": true, "grade_id": "task4_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_half_life(half_life, lam=lam)

# %% [markdown]
# How long does each trained head remember? The plot uses your `half_life` from task 4, so it
# appears once that task is done. Heads whose half-life stays near 1 token keep almost nothing; a
# head with a long tail has learned to carry context.

# %%
# NBVAL_IGNORE_OUTPUT
try:
    half_lives = [half_life(layer["lam"].double()) for layer in inside["layers"]]  # [B, T, H] per layer
except NotImplementedError:
    half_lives = None
    print("write half_life in task 4 first: this plot uses it")
if half_lives is not None:
    fig, axes = plt.subplots(1, len(half_lives), figsize=(9, 3), sharey=True)
    for layer, (ax, hl) in enumerate(zip(axes, half_lives, strict=True)):
        for h in range(hl.shape[-1]):
            ax.hist(hl[..., h].flatten().clamp(max=20), bins=30, alpha=0.6, label=f"head {h}")
        ax.set(title=f"layer {layer}", xlabel="half-life (tokens, capped at 20)")
    axes[0].legend()
    plt.show()

# %% [markdown]
# **To discuss:** the model starts with every gate near 0.5, a half-life of one token. Which heads
# moved, and which way? What would a head need to remember to help predict the next byte?

# %% [markdown] nbgrader={"grade": true, "grade_id": "discussion1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# YOUR ANSWER HERE
