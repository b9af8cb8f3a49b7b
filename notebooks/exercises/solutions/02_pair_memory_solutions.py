# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 02 · The pair memory
#
# > **Solutions, for instructors.** Students work in `../02_pair_memory.ipynb`, the same notebook with the answers removed. <!-- solutions only -->
#
# **Time:** about 30 minutes of work (our estimate); the worked solution runs top to bottom in 10 s
# (CPU 7 s, peak 419 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
# **Assumes:** exercise 01 (the running state), outer products,
# notebook `02_pair_memory`. **How it works:** write your code where a cell says `raise
# NotImplementedError`, run the check cell under it, read the hint if there is one. The
# solutions are in `solutions/`: try first, look after.
#
# **Passing:** a check runs your function on float64 inputs and passes when the result's shape is right
# and its relative error against the library's is below $10^{-5}$; the graded hidden tests use other
# sizes too (one with $B = 1$, one with $H = 1$), so do not rely on the visible checks' sizes.
#
# ## Recap
#
# Each head keeps an $S \times S$ memory of (state before the token) $\times$ (what the token writes):
#
# $$ P_t = \gamma_t \, P_{t-1} + (1 - \gamma_t)\, s_{t-1} \otimes b_t, \qquad (s \otimes b)[i, j] = s[i]\, b[j], \qquad P_{-1} = 0 \tag{1} $$
#
# | symbol | meaning | shape |
# |---|---|---|
# | $s_{t-1}$ | running state *before* token $t$ (exercise 01), $s_{-1} = 0$ | `[B, H, S]` per token |
# | $b_t$ | what token $t$ writes into the pair memory | `[B, H, S]` per token |
# | $\gamma_t$ | keep gate of the pair memory | `[B, H]` per token |
# | $P_t$ | the memory after token $t$; rows $i$ = state, columns $j$ = write | `[B, H, S, S]` |
#
# The library's version is `tl_minimal/pair_memory.py`.

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
from tl_minimal.pair_memory import pair_memory, unrolled_weights

# %% [markdown]
# ## Task 1 · One token
#
# Write `pair_memory_step(P_prev, s_prev_t, b_t, gam_t)`: the memory after one token. `P_prev`
# is `[B, H, S, S]`, the vectors `s_prev_t` and `b_t` are `[B, H, S]`, the gate `gam_t` is `[B, H]`;
# the result is `[B, H, S, S]`.

# %% nbgrader={"grade": false, "grade_id": "task1_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def pair_memory_step(P_prev, s_prev_t, b_t, gam_t):
    ### BLANK: raise NotImplementedError("Task 1: equation (1) of the Recap for one token, per head; Task 1 gives the shapes")
    ### BEGIN SOLUTION
    outer = s_prev_t.unsqueeze(-1) * b_t.unsqueeze(-2)  # [B, H, S, S]: outer[i, j] = s[i] b[j]
    gam_t = gam_t[..., None, None]  # [B, H, 1, 1]
    return gam_t * P_prev + (1 - gam_t) * outer
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "task1_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_pair_memory_step(pair_memory_step)
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
# every hidden shape (B = 1, H = 1, both > 1); in a grade run the outputs are only recorded,
# and a process that never ran this notebook judges them
_ex.hidden_check(_ex.check_pair_memory_step, pair_memory_step)
### END HIDDEN TESTS

# %% [markdown]
# ## Task 2 · From the running states
#
# You are given the running states `s [B, T, H, S]` with `s[:, t]` $= s_t$ (the state *after*
# token $t$), the writes `b [B, T, H, S]` and the gates `gam [B, T, H]`. Return every memory,
# `P[:, t]` $= P_t$, shape `[B, T, H, S, S]`. Careful: the memory pairs $b_t$ with $s_{t-1}$.

# %% nbgrader={"grade": false, "grade_id": "task2_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def pair_memory_from_states(s, b, gam):
    ### BLANK: raise NotImplementedError("Task 2: which state does token t pair with in equation (1)? Then equation (1) token after token")
    ### BEGIN SOLUTION
    s_prev = torch.cat([torch.zeros_like(s[:, :1]), s[:, :-1]], dim=1)  # s_prev[:, t] = s_{t-1}
    B, T, H, S = s.shape
    P = torch.zeros(B, H, S, S, dtype=s.dtype)
    memories = []
    for t in range(T):
        P = pair_memory_step(P, s_prev[:, t], b[:, t], gam[:, t])
        memories.append(P)
    return torch.stack(memories, dim=1)  # [B, T, H, S, S]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "task2_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_pair_memory_from_states(pair_memory_from_states)
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
# every hidden shape (B = 1, H = 1, both > 1); in a grade run the outputs are only recorded,
# and a process that never ran this notebook judges them
_ex.hidden_check(_ex.check_pair_memory_from_states, pair_memory_from_states)
### END HIDDEN TESTS

# %% [markdown]
# ## Task 3 · Predict before you plot
#
# Token 0 arrives; nothing came before it. **What is $P_0$?**
#
# - (a) $(1 - \gamma_0)\, a_0 \otimes b_0$
# - (b) $(1 - \gamma_0)\, s_0 \otimes b_0$
# - (c) the zero matrix
# - (d) $\gamma_0\, s_0 \otimes b_0$
#
# Write the letter in `my_prediction` and run the check: working on your own, it tells you at once
# whether you are right and why (in a graded course, your answer is marked when the notebook is graded).
# The heatmaps below show $P_0, \dots, P_3$ for random inputs.

# %% nbgrader={"grade": false, "grade_id": "task3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BLANK: my_prediction = None  # "a", "b", "c" or "d"
### BEGIN SOLUTION
my_prediction = "c"
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "task3_check", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ex.check_first_memory_prediction(my_prediction)
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
with _ex.hidden_tests():  # a wrong answer raises in any mode
    _ex.mark_prediction(
        my_prediction,
        task='02.3 what is P_0',
        correct='c',
        choices='abcd',
        hints={
            'a': 'a_0 enters the running state s_0, but P_0 pairs b_0 with the state BEFORE token 0',
            'b': 's_0 is the state after token 0; P_0 uses s_{-1}, the state before it',
            'd': 'gam_0 multiplies the old memory P_{-1}; the new pair is scaled by (1 - gam_0)',
        },
        explanation='P_0 = gam_0 P_{-1} + (1 - gam_0) outer(s_{-1}, b_0), and both P_{-1} and s_{-1} are zero: the first token can write nothing into the pair memory',
    )
### END HIDDEN TESTS

# %%
# NBVAL_IGNORE_OUTPUT
g = torch.Generator().manual_seed(0)
s = torch.randn(1, 4, 1, 6, generator=g)
s_prev = torch.cat([torch.zeros_like(s[:, :1]), s[:, :-1]], dim=1)  # s_{-1} = 0
P = pair_memory(s_prev, torch.randn(1, 4, 1, 6, generator=g), torch.full((1, 4, 1), 0.7))  # [1, 4, 1, 6, 6]
fig, axes = plt.subplots(1, 4, figsize=(9.5, 2.6))
for t, ax in enumerate(axes):
    image = ax.imshow(P[0, t, 0], cmap="RdBu", vmin=-1, vmax=1)
    ax.set(title=f"P_{t}", xlabel="j (write b)", ylabel="i (state s)" if t == 0 else None, xticks=[], yticks=[])
fig.colorbar(image, ax=axes, label="P_t[i, j]", shrink=0.9)
plt.show()

# %% [markdown]
# ## Task 4 · How far back does a trained memory reach?
#
# **Derive, then code.** Unrolled, $P_t = \sum_{\tau \le t} w_{t,\tau}\, s_{\tau-1} \otimes b_\tau$: every
# pair written so far, each with its own weight. Notebook `02_pair_memory`, section 3, prints $w_{t,\tau}$;
# derive it before you look: write $P_1$ and $P_2$ out from equation (1) by hand, see which factors
# multiply each pair, generalise, and only then compare with section 3.
# Write `unrolled_weights_row(gam, t)`
# for ONE head: `gam [T]` -> `w [T]`, with `w[tau]` $= w_{t,\tau}$ for $\tau \le t$ and 0 after $t$.
# The check also runs it on the pair gates of a small trained model.

# %%
# NBVAL_IGNORE_OUTPUT
model, info = ex.tiny_model("triple_latent")  # 2 layers, 2 heads, S = 8; a few seconds of training
tokens = ex.sample_tokens(info)  # [2, 64]
_, inside = model.internals(tokens, snapshot_at=(63,))
gam = inside["layers"][0]["gam"]  # [B, T, H]: pair-memory gates of layer 0
print(ex.training_note(info))  # the history is in nats; the note shows it in bits


# %% nbgrader={"grade": false, "grade_id": "task4_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def unrolled_weights_row(gam, t):
    ### BLANK: raise NotImplementedError("Task 4 defines the weights w_{t,tau}: unroll equation (1) of the Recap")
    ### BEGIN SOLUTION
    w = torch.zeros_like(gam)
    for tau in range(t + 1):
        w[tau] = (1 - gam[tau]) * torch.prod(gam[tau + 1 : t + 1])
    return w
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "task4_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_unrolled_weights(unrolled_weights_row, gam=gam[0, :, 0])
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
# every hidden shape (B = 1, H = 1, both > 1); in a grade run the outputs are only recorded,
# and a process that never ran this notebook judges them
_ex.hidden_check(_ex.check_unrolled_weights, unrolled_weights_row)
### END HIDDEN TESTS

# %% [markdown]
# Each trained head's weights $w_{63,\tau}$ at the last token (library version), and the memory
# $P_{63}$ itself: how many of the 64 tokens still count?

# %%
# NBVAL_IGNORE_OUTPUT
w, _ = unrolled_weights(gam, [63])  # [B, 1, T, H]
fig, axes = plt.subplots(1, 3, figsize=(9.5, 3), gridspec_kw={"width_ratios": [1.3, 1, 1]})
for h in range(gam.shape[-1]):
    axes[0].semilogy(w[0, 0, :, h], label=f"head {h}")
axes[0].set(xlabel="write tau", ylabel="w_{63, tau}", title="layer 0, sequence 0")
axes[0].legend()
P63 = inside["layers"][0]["P"][63][0]  # [H, S, S]
lim = P63.abs().max()
for h in range(2):
    image = axes[1 + h].imshow(P63[h], cmap="RdBu", vmin=-lim, vmax=lim)
    axes[1 + h].set(title=f"trained P_63, head {h}", xlabel="j (write)", ylabel="i (state)" if h == 0 else None)
fig.colorbar(image, ax=axes[1:], label="P_63[i, j]", shrink=0.9)
plt.show()

# %% [markdown]
# **To discuss:** why does the first token never reach the pair memory, while it does reach the
# running state? Is that a problem for a sequence that starts with the most important token?

# %% [markdown] nbgrader={"grade": true, "grade_id": "discussion1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# **Model answer.** The pair memory stores $s_{t-1} \otimes b_t$: a write paired with the state
# *before* it. For token 0 that state is $s_{-1} = 0$, so $P_0 = 0$ and token 0's write $b_0$ is
# never stored. The running state has no such factor: $s_0 = (1 - \lambda_0) a_0$. Token 0 is not
# lost, though: it reaches the pair memory one token later, as the *key* (context) of token 1's
# write, through $s_0 \otimes b_1$. What is lost is only its role as a value. For the models here
# every sequence starts with BOS, so the write that is lost is BOS's, which carries no content; a
# sequence whose first real token matters should start with such a marker (in the paper's recall
# task it does).
