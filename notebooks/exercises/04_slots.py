# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 04 · Slots
#
# **Time:** about 30 minutes of work (our estimate); the worked solution runs top to bottom in 10 s
# (CPU 8 s, peak 421 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
# **Assumes:** exercises 02 and 03, softmax, entropy, notebook
# `04_slots`. **How it works:** write your code where a cell says `raise NotImplementedError`,
# run the check cell under it, read the hint if there is one. The solutions are in
# `solutions/`: try first, look after.
#
# **Passing:** a check runs your function on float64 inputs and passes when the result's shape is right
# and its relative error against the library's is below $10^{-5}$; the graded hidden tests use other
# sizes too (one with $B = 1$, one with $H = 1$), so do not rely on the visible checks' sizes.
#
# ## Recap
#
# Instead of a dense $S \times S$ memory, each head keeps $K$ slots, each a pair of vectors
# $L_k, R_k$. A softmax $g_t$ chooses, softly, which slots token $t$ writes:
#
# $$ L_{k,t} = \gamma_t L_{k,t-1} + (1 - \gamma_t)\, g_t[k]\, s_{t-1}, \qquad R_{k,t} = \gamma_t R_{k,t-1} + (1 - \gamma_t)\, g_t[k]\, b_t \tag{1} $$
# $$ f_t[k] = \sum_j r^{(k)}_t[j], \qquad r^{(k)}_t = \big((L_{k,t} \otimes R_{k,t})^\top q^l_t\big) \odot q^r_t \tag{2} $$
#
# that is: slot $k$ is read as if it were a dense memory $P = L_k \otimes R_k$ (exercise 03's readout),
# and its feature is the sum of that readout.
#
# | symbol | shape |
# |---|---|
# | $L, R$ | `[B, H, K, S]` |
# | $g_t$ (slot weights, sum to 1 over $K$) | `[B, H, K]` |
# | $f_t$ | `[B, H, K]` |
#
# The library's version is `tl_minimal/slots.py`.

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

# %% [markdown]
# ## Task 1 · One token, both slot memories
#
# Write `slot_step(L, R, s_prev_t, b_t, g_t, gam_t)` returning the pair `(L_t, R_t)`: the slot memories
# `L, R [B, H, K, S]` (`L[:, :, k]` is $L_{k,t-1}$), the state `s_prev_t` and the write `b_t`, both
# `[B, H, S]`, the slot weights `g_t [B, H, K]` (they sum to 1 over $k$) and the gate `gam_t [B, H]`;
# `L_t` and `R_t` are `[B, H, K, S]`.

# %% nbgrader={"grade": false, "grade_id": "task1_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def slot_step(L, R, s_prev_t, b_t, g_t, gam_t):
    raise NotImplementedError("Task 1: equations (1) of the Recap for one token, both memories; Task 1 gives the shapes")


# %% nbgrader={"grade": true, "grade_id": "task1_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_slot_step(slot_step)

# %% [markdown]
# ## Task 2 · One feature per slot
#
# **Derive, then code.** Write `slot_features(L, R, q_left, q_right)`: `L, R [B, H, K, S]`, the
# queries `q_left, q_right [B, H, S]` -> `f [B, H, K]`, one feature per slot (equation (2)). Do not
# build the $S \times S$ matrices: work equation (2) out by hand into a form with two dot products
# per slot, and code that (the point of the slots is never to store $S \times S$ numbers).

# %% nbgrader={"grade": false, "grade_id": "task2_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def slot_features(L, R, q_left, q_right):
    raise NotImplementedError("Task 2: equation (2) of the Recap, for every slot")


# %% nbgrader={"grade": true, "grade_id": "task2_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_slot_features(slot_features)

# %% [markdown]
# ## Task 3 · Predict before you plot
#
# Take one slot ($K = 1$, so $g_t = 1$). Is $L_t \otimes R_t$ the dense pair memory $P_t$ of
# exercise 02 (same gates, same $s$ and $b$)?
#
# - (a) yes, always
# - (b) yes, up to a constant factor
# - (c) no: it contains products of a state from one token with the write of another
#
# The plot compares the two on random inputs.

# %% nbgrader={"grade": false, "grade_id": "task3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
my_prediction = None  # "a", "b" or "c"

# %% nbgrader={"grade": true, "grade_id": "task3_check", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ex.check_dense_prediction(my_prediction)

# %%
# NBVAL_IGNORE_OUTPUT
gaps, approx, P = ex.slots.dense_vs_slots(T=12)
fig, axes = plt.subplots(1, 3, figsize=(9.5, 3), gridspec_kw={"width_ratios": [1.3, 1, 1]})
axes[0].plot(gaps, marker="o")
axes[0].set(xlabel="token t", ylabel="|L R^T - P| / |P|", title="K = 1 slot vs the dense memory")
lim = max(approx[-1].abs().max(), P[-1].abs().max())  # one colour scale for both matrices
for ax, M, name in ((axes[1], approx[-1], "L_t outer R_t"), (axes[2], P[-1], "P_t (dense)")):
    image = ax.imshow(M, cmap="RdBu", vmin=-lim, vmax=lim)
    ax.set(title=f"{name}, t = 11", xticks=[], yticks=[])
fig.colorbar(image, ax=axes[1:], shrink=0.9)
plt.show()

# %% [markdown]
# ## Task 4 · How decided is a trained model's slot choice?
#
# The entropy of the slot weights, $-\sum_k g[k] \log g[k]$ (natural log), is $\log K$ when a
# token spreads its write evenly and near 0 when it picks one slot. Write `slot_entropy(g)`:
# `g [..., K]` (rows sum to 1) -> `[...]`, over the last axis; the check also runs it on a trained `triple_slot` model's slot weights.

# %%
# NBVAL_IGNORE_OUTPUT
model, info = ex.tiny_model("triple_slot", num_slots=8)  # a few seconds of training
tokens = ex.sample_tokens(info)
_, inside = model.internals(tokens)
g = inside["layers"][0]["slot_weights"]  # [B, T, H, K]
print(ex.training_note(info))  # the history is in nats; the note shows it in bits


# %% nbgrader={"grade": false, "grade_id": "task4_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def slot_entropy(g):
    raise NotImplementedError("Task 4 defines the entropy of a slot choice (in nats)")


# %% nbgrader={"grade": true, "grade_id": "task4_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_slot_entropy(slot_entropy, g=g)

# %%
# NBVAL_IGNORE_OUTPUT
try:
    entropy = slot_entropy(g)  # your task-4 function: [B, T, H]
except NotImplementedError:
    entropy = None
    print("write slot_entropy in task 4 first: this plot uses it")
if entropy is not None:
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3))
    for h in range(entropy.shape[-1]):
        axes[0].plot(entropy[0, :, h], label=f"head {h}")
    axes[0].axhline(torch.log(torch.tensor(8.0)), color="grey", ls="--", label="log K (even)")
    axes[0].set(xlabel="token t", ylabel="entropy (nats)", title="layer 0 slot choice")
    axes[0].legend()
    image = axes[1].imshow(g.mean(dim=(0, 1)), cmap="viridis")
    axes[1].set(xlabel="slot k", ylabel="head", title="mean slot weight")
    fig.colorbar(image, ax=axes[1], label="mean g[k]", shrink=0.8)
    plt.show()

# %% [markdown]
# **To discuss:** at initialization every token spreads its write evenly (entropy $\log 8$). If the
# slots all receive the same write, what do the $K$ features $f_t[k]$ have in common?

# %% [markdown] nbgrader={"grade": true, "grade_id": "discussion1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# YOUR ANSWER HERE
