# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 03 · The readout
#
# **Time:** about 35 minutes of work (our estimate); the worked solution runs top to bottom in 11 s
# (CPU 9 s, peak 414 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
# **Assumes:** exercises 01 and 02, `einsum` or batched matmul,
# notebook `03_readout`. **How it works:** write your code where a cell says `raise
# NotImplementedError`, run the check cell under it, read the hint if there is one. The
# solutions are in `solutions/`: try first, look after.
#
# **Passing:** a check runs your function on float64 inputs and passes when the result's shape is right
# and its relative error against the library's is below $10^{-5}$; the graded hidden tests use other
# sizes too (one with $B = 1$, one with $H = 1$), so do not rely on the visible checks' sizes.
#
# ## Recap
#
# Token $t$ reads its pair memory with two queries, a left one contracted with the *state*
# index $i$ of $P_t$ and a right one that multiplies the result:
#
# $$ r_t[j] = \Big(\sum_i P_t[i, j]\, q^l_t[i]\Big)\, q^r_t[j], \qquad\text{i.e.}\quad r_t = (P_t^\top q^l_t) \odot q^r_t \tag{1} $$
#
# Unrolled, this is attention with a decay: $r_t = q^r_t \odot \sum_{\tau \le t} w_{t,\tau}\,
# (q^l_t \cdot s_{\tau-1})\, b_\tau$, with $w_{t,\tau} = (1-\gamma_\tau)\prod_{u=\tau+1}^{t}\gamma_u$
# (exercise 02). The library's version is `tl_minimal/readout.py`.

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
from tl_minimal.readout import triple_latent
from tl_minimal.running_state import previous_states, running_state

# %% [markdown]
# ## Task 1 · Read one memory
#
# Write `readout_step(P, q_left, q_right)`: `P [B, H, S, S]`, queries `[B, H, S]` -> `r_t [B, H, S]`.

# %% nbgrader={"grade": false, "grade_id": "task1_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def readout_step(P, q_left, q_right):
    raise NotImplementedError("Task 1: equation (1) of the Recap for one memory, per head; Task 1 gives the shapes")


# %% nbgrader={"grade": true, "grade_id": "task1_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_readout_step(readout_step)

# %% [markdown]
# ## Task 2 · Write, then read, for every token
#
# Write `readout_loop(s_prev, b, gam, q_left, q_right)` (all `[B, T, H, S]`, `gam [B, T, H]`,
# `s_prev[:, t]` $= s_{t-1}$) returning `r [B, T, H, S]`. Start from $P_{-1} = 0$; at each token
# first update the memory (exercise 02), then read it.

# %% nbgrader={"grade": false, "grade_id": "task2_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def readout_loop(s_prev, b, gam, q_left, q_right):
    raise NotImplementedError("Task 2: for every token, write the memory (exercise 02, equation (1)), then read it with equation (1) of the Recap")


# %% nbgrader={"grade": true, "grade_id": "task2_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_readout_loop(readout_loop)

# %% [markdown]
# ## Task 3 · Predict before you plot
#
# Exercise 02 showed that the first token writes nothing ($P_0 = 0$). **What is $r_1$, the
# readout of the second token?**
#
# - (a) exactly zero, like $r_0$
# - (b) $(1 - \gamma_1)\,(q^l_1 \cdot s_0)\; b_1 \odot q^r_1$
# - (c) $(1 - \gamma_1)\,(q^l_1 \cdot s_1)\; b_1 \odot q^r_1$
# - (d) $\gamma_1 (1 - \gamma_0)\,(q^l_1 \cdot s_0)\; b_0 \odot q^r_1$
#
# The plot below runs a trained model's first layer and shows $|r_t|$ for every token.

# %% nbgrader={"grade": false, "grade_id": "task3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
my_prediction = None  # "a", "b", "c" or "d"

# %% nbgrader={"grade": true, "grade_id": "task3_check", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ex.check_first_readout_prediction(my_prediction)

# %%
# NBVAL_IGNORE_OUTPUT
model, info = ex.tiny_model("triple_latent")  # 2 layers, 2 heads, S = 8; a few seconds of training
tokens = ex.sample_tokens(info)  # [2, 64]
x = ex.layer_inputs(model, tokens)  # what layer 0 computes from its input: a, b, q_left, q_right, lam, gam
r, s, _ = triple_latent(x["a"], x["b"], x["q_left"], x["q_right"], x["lam"], x["gam"])  # r [B, T, H, S]
print(ex.training_note(info))  # the history is in nats; the note shows it in bits

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 3))
for h in range(r.shape[2]):
    ax.plot(r[0, :, h].norm(dim=-1), marker=".", label=f"head {h}")
ax.set(xlabel="token t", ylabel="|r_t|", title="trained layer 0: the readout of every token")
ax.legend()
plt.show()

# %% [markdown]
# ## Task 4 · The readout as attention
#
# **Derive, then code.** The page gives the loop (Task 2), not this matrix: derive it by unrolling
# Task 2's memory into the readout. Write `readout_scores(s_prev, gam, q_left)`: `s_prev, q_left [B, T, H, S]` (`s_prev[:, t]` $= s_{t-1}$),
# `gam [B, T, H]`, returning `A [B, H, T, T]` with
# `A[b, h, t, tau]` $= w_{t,\tau}\,(q^l_t \cdot s_{\tau-1})$ for $\tau \le t$ and 0 for $\tau > t$.
# Then $\sum_\tau A[t, \tau]\, b_\tau \odot q^r_t$ is the readout. The check also runs it on the
# trained model's layer 0.

# %% nbgrader={"grade": false, "grade_id": "task4_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def readout_scores(s_prev, gam, q_left):
    raise NotImplementedError("Task 4 defines A: unroll the memory as in exercise 02's Task 4, then read it with equation (1)")


# %% nbgrader={"grade": true, "grade_id": "task4_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
trained = {"s_prev": previous_states(running_state(x["a"], x["lam"])), "gam": x["gam"], "q_left": x["q_left"]}
ex.check_readout_scores(readout_scores, inputs=trained)

# %% [markdown]
# The trained layer's scores for the first 32 tokens, from your `readout_scores` of task 4 (the
# plot appears once that task is done): each row $t$ is what token $t$ reads. Compare the heads
# with the half-lives of exercise 01.

# %%
# NBVAL_IGNORE_OUTPUT
try:
    A = readout_scores(*(trained[name].double() for name in ("s_prev", "gam", "q_left")))  # [B, H, T, T]
except NotImplementedError:
    A = None
    print("write readout_scores in task 4 first: this plot uses it")
if A is not None:
    fig, axes = plt.subplots(1, A.shape[1], figsize=(9.5, 4))
    for h, ax in enumerate(axes):
        lim = A[0, h, :32, :32].abs().max()
        image = ax.imshow(A[0, h, :32, :32], cmap="RdBu", vmin=-lim, vmax=lim)
        ax.set(title=f"head {h}", xlabel="tau (written)", ylabel="t (reading)")
        fig.colorbar(image, ax=ax, label="A[t, tau]", shrink=0.8)
    plt.show()

# %% [markdown]
# **To discuss:** the paper's text writes $P_t q^l_t$, its code $P_t^\top q^l_t$. In words, what
# does each one look up: "which write followed a state like $q^l$", or the other way round?

# %% [markdown] nbgrader={"grade": true, "grade_id": "discussion1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# YOUR ANSWER HERE
