# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 06 · Key-value memory, top-k read and the read gate
#
# **Time:** about 35 minutes of work (our estimate); the worked solution runs top to bottom in 13 s
# (CPU 11 s, peak 414 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
# **Assumes:** cosine similarity, softmax, `topk` and `gather`, the
# associative recall task (notebook `00_start_here`), notebook `06_kv_gated_fusion`. **How it
# works:** write your code where a cell says `raise NotImplementedError`, run the check cell
# under it, read the hint if there is one. The solutions are in `solutions/`: try first, look after.
#
# **Passing:** a check runs your function on float64 inputs and passes when the result's shape is right
# and its relative error against the library's is below $10^{-5}$; the graded hidden tests use other
# sizes too (one with $B = 1$, one with $H = 1$), so do not rely on the visible checks' sizes.
#
# ## Recap
#
# Beside the compressed stack, the gated hybrid keeps exact pairs of raw token embeddings:
# entry $j$ is $(k_j, v_{j+1})$, "token $j$ was followed by token $j+1$". Position $t$ queries with
# the previous token, $q_t = W_q e_{t-1}$:
#
# $$ \rho_{t,j} = \beta \cos(q_t, k_j), \quad \alpha_t = \operatorname{softmax}\big(\operatorname{top\text{-}k}(\rho_{t,\cdot})\big), \quad m_t = \sum_{j\ \text{kept}} \alpha_{t,j}\, v_{j+1} \tag{1} $$
# $$ \text{logits}_t = E\, h_t + E\, z_t, \qquad z_t = \operatorname{LN}(g^{\mathrm{read}}_t\, m_t), \qquad g^{\mathrm{read}}_t = \sigma(w_g \cdot e_{t-1} + b_g) \tag{2} $$
#
# $\rho_{t,j}$ are the retrieval scores and $\beta$ the scale multiplying the cosine (Tasks 1 and 2
# use $\beta = 1$); top-k keeps the `top_k` best scores of each position (not the slot count $K$
# of notebook 04); $g^{\mathrm{read}}_t$ is the read gate (the library's code calls it `g_t`), and
# the head is the tied embedding $E$ (symbols as in notebook 06's opening table). The library's version is `tl_minimal/kv_fusion.py`.

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
# ## Task 1 · Cosine scores
#
# Write `cosine_scores(q, keys)`: `q [B, T, D_kv]`, `keys [B, N, D_kv]` -> `[B, T, N]`, the cosines
# $\cos(q_t, k_j)$ for every position and entry.

# %% nbgrader={"grade": false, "grade_id": "task1_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def cosine_scores(q, keys):
    raise NotImplementedError("Task 1: the cosine of equation (1) of the Recap, for every query and key")


# %% nbgrader={"grade": true, "grade_id": "task1_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_cosine_scores(cosine_scores)

# %% [markdown]
# ## Task 2 · Top-k read
#
# **Find the bug, then fix it.** A colleague's `topk_read_draft` below is meant to keep each row's
# `k` best scores, softmax over just those, and mix the matching values (equation (1)). It passes
# when `k = N`, and is wrong otherwise. Find out why (run it beside the equation on a small case
# you make), then write `topk_read(scores, values, k)`: `scores [B, T, N]`, `values [B, N, D_kv]`,
# `k` an int with 1 <= k <= N -> `m [B, T, D_kv]`.

# %%
def topk_read_draft(scores, values, k):
    """A draft with one bug (do not edit: it is here to be read)."""
    alpha = scores.softmax(dim=-1)  # [B, T, N]
    kept, idx = alpha.topk(k, dim=-1)  # [B, T, k]
    batch = torch.arange(values.shape[0])[:, None, None]  # [B, 1, 1]
    return (kept.unsqueeze(-1) * values[batch, idx]).sum(dim=2)  # [B, T, D_kv]


# %% nbgrader={"grade": false, "grade_id": "task2_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def topk_read(scores, values, k):
    raise NotImplementedError("Task 2: equation (1) of the Recap after the scores (keep the top k, softmax, weighted sum)")


# %% nbgrader={"grade": true, "grade_id": "task2_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_topk_read(topk_read)

# %% [markdown]
# ## Task 3 · Predict before you plot
#
# With the previous-token query, **which entries $(k_j, v_{j+1})$ may position $t$ read?**
#
# - (a) $j \le t$
# - (b) $j \le t - 1$
# - (c) $j \le t - 2$
#
# The plot shows which memory positions a trained gated hybrid actually read.

# %% nbgrader={"grade": false, "grade_id": "task3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
my_prediction = None  # "a", "b" or "c"

# %% nbgrader={"grade": true, "grade_id": "task3_check", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ex.check_visible_prediction(my_prediction)

# %%
# NBVAL_IGNORE_OUTPUT
model, info = ex.tiny_model("gated_hybrid_repaired", task="recall")  # the paper's recall task, 64 tokens
tokens = ex.sample_tokens(info, batch=64)  # [64, 64]
_, inside = model.internals(tokens)
weights, index = inside["retrieval"]["weights"], inside["retrieval"]["index"]  # [B, T, top_k] each
print(ex.training_note(info))  # the history is in nats; the note shows it in bits

# %%
# NBVAL_IGNORE_OUTPUT
T = tokens.shape[1]
t_grid = torch.arange(T)[None, :, None].expand_as(index)
read = index >= 0
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.scatter(t_grid[0][read[0]], index[0][read[0]], s=4 + 40 * weights[0][read[0]], alpha=0.5)
ax.plot([2, T - 1], [0, T - 3], color="red", lw=0.8, label="j = t - 2")
ax.set(xlabel="position t", ylabel="memory entry j read", title="sequence 0: every kept entry")
ax.legend()
plt.show()

# %% [markdown]
# ## Task 4 · Where does the trained model look?
#
# Write `top_entry(weights, index)`: both `[B, T, top_k]` (`index` holds memory positions, -1 where
# nothing could be read, with weight 0) -> `[B, T]`, the memory position with the largest weight,
# or -1 where all weights are 0. The check also runs it on the trained model's retrieval.

# %% nbgrader={"grade": false, "grade_id": "task4_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def top_entry(weights, index):
    raise NotImplementedError("Task 4 defines the position read most; Task 2 says where the kept entries come from")


# %% nbgrader={"grade": true, "grade_id": "task4_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_top_entry(top_entry, weights=weights, index=index)

# %% [markdown]
# At the last position (ANSWER) the right entry is the queried key's own position $j$: its pair
# is (key, value). How often is it the top entry? The model above uses this project's default,
# one matrix $W_{qk}$ for queries and keys and $\beta = 10$, so an exact repeat of a token scores
# highest from the start. The paper's configuration (separate $W_q$, $W_k$, $\beta = 1$) has no
# such head start: train it for the same few seconds and compare.

# %%
# NBVAL_IGNORE_OUTPUT
def answer_hits(model, tokens):
    """How many sequences read the queried key's pair as their top entry at the last position."""
    _, inside = model.internals(tokens)
    top_last = top_entry(inside["retrieval"]["weights"], inside["retrieval"]["index"])[:, -1]  # yours, task 4
    key_pos = [(row[: T - 3] == row[-2]).nonzero()[0, 0].item() for row in tokens]  # where the key sat
    return sum(int(p == k) for p, k in zip(top_last.tolist(), key_pos, strict=True))


paper_model, _ = ex.tiny_model("gated_hybrid_paper", task="recall")
for name, m in (("project default", model), ("paper's configuration", paper_model)):
    try:
        hits = answer_hits(m, tokens)
    except NotImplementedError:
        print("write top_entry in task 4 first: this comparison uses it")
        break
    print(f"{name:22s} top entry = the queried key's pair in {hits} of {len(tokens)} "
          f"sequences (chance: about 1 in {T - 2})")

# %% [markdown]
# **To discuss:** the read gate sits inside the LayerNorm, $\mathrm{LN}(g^{\mathrm{read}}_t\, m_t)$. What happens
# to the fused vector when $g^{\mathrm{read}}_t$ halves? Can the model switch retrieval off?

# %% [markdown] nbgrader={"grade": true, "grade_id": "discussion1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# YOUR ANSWER HERE

# %% [markdown]
# ## Optional exploration · The read gate inside the LayerNorm, measured
#
# *(Not graded.)* Check your answer on the trained model of task 3 and on the same
# model freshly initialized. Before the norm, the gated read passes through the memory's output
# projection (`kv.out`, a matrix without bias), so the norm's input is `kv.out` of $g^{\mathrm{read}}_t\, m_t$ and a
# factor on $g^{\mathrm{read}}_t$ is the same factor on that input. The LayerNorm divides by the input's standard
# deviation, with $\epsilon$ under the root: a factor cancels where the standard deviation is well
# above $\sqrt{\epsilon}$ and acts where it is below. The cell reads the norm's input with a
# forward hook, feeds it again as if every gate were 2 or 10 times smaller, and measures how far
# the fused vector moves, relative to its length.

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal import build_model, default_config
from tl_minimal.exercises.trained import RECALL_VOCAB, TINY  # the sizes of the tiny models above


def gate_effect(model, tokens, factors=(0.5, 0.1)):
    """(std of the norm's input u, mean gate, {f: mean |LN(f u) - LN(u)| / |LN(u)|}), over positions t >= 2."""
    norm, seen = model.kv.norm, {}
    hook = norm.register_forward_hook(lambda mod, inp, out: seen.update(u=inp[0], z=out))
    try:
        with torch.no_grad():
            _, inside = model.internals(tokens)
            u, z = seen["u"][:, 2:], seen["z"][:, 2:]  # [B, T-2, d]: positions with entries to read
            moved = {f: ((norm(f * u) - z).norm(dim=-1) / z.norm(dim=-1)).mean().item() for f in factors}
    finally:
        hook.remove()
    return u.std(dim=-1).mean().item(), inside["retrieval"]["read_gate"][:, 2:].mean().item(), moved


torch.manual_seed(0)
fresh = build_model("gated_hybrid_repaired", RECALL_VOCAB, **TINY, state_dim=8).eval()
print(f"sqrt(epsilon) of the norm: {model.kv.norm.eps ** 0.5:.4f}")
for name, m in (("trained (task 3's model)", model), ("freshly initialized", fresh)):
    spread, gate, moved = gate_effect(m, tokens)
    print(f"{name:25s} std of the norm's input {spread:.4f}   mean gate {gate:.2f}   the fused vector moves by "
          + ", ".join(f"{100 * v:.1f}% with the gate x {f}" for f, v in moved.items()))
print("gate_outside_norm (the gate after the norm) in the library's gated variants:",
      {v: default_config(v)["gate_outside_norm"] for v in ("gated_hybrid_repaired", "gated_hybrid_paper")})

# %% [markdown]
# Compare the two lines with your answer: on which model is the norm's input spread well above
# $\sqrt{\epsilon}$, and how far does the fused vector move there when the gate halves? A gate
# that must fall about tenfold before it matters much can hardly switch the memory off; with
# `gate_outside_norm=True` it would be a plain factor on the norm's output, at any size of the read.
