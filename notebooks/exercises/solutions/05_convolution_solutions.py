# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 05 · The causal convolution and the future-token leak
#
# > **Solutions, for instructors.** Students work in `../05_convolution.ipynb`, the same notebook with the answers removed. <!-- solutions only -->
#
# **Time:** about 30 minutes of work (our estimate); the worked solution runs top to bottom in 14 s
# (CPU 11 s, peak 440 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
# **Assumes:** `Conv1d` and padding, next-token prediction, notebook
# `05_convolution`. **How it works:** write your code where a cell says `raise
# NotImplementedError`, run the check cell under it, read the hint if there is one. The
# solutions are in `solutions/`: try first, look after.
#
# **Passing:** a check runs your function on float64 inputs and passes when the result's shape is right
# and its relative error against the library's is below $10^{-5}$; the graded hidden tests use other
# sizes too (one with $B = 1$, one with $H = 1$), so do not rely on the visible checks' sizes.
#
# ## Recap
#
# The hybrid adds one short convolution over time before its stack. Causal: pad $k-1$ zeros on
# the **left**, so position $t$ reads $x_{t-k+1}, \dots, x_t$:
#
# $$ y_t = \mathrm{GELU}\Big(c + \sum_{i=0}^{k-1} W_{:,:,i}\, x_{t-(k-1)+i}\Big), \qquad x_{<0} = 0 \tag{1} $$
#
# `x` is `[B, T, d]`, `weight` is `[d, d, k]` (tap $i$ is `weight[:, :, i]`, shape `[d_out, d_in]`),
# `bias` is `[d]`. The paper's code pads symmetrically (`padding=k//2`). The library's version is
# `tl_minimal/conv.py`.

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
import torch.nn.functional as F

from tl_minimal import exercises as ex
from tl_minimal.conv import conv_fast

# %% [markdown]
# ## Task 1 · Causal padding
#
# Write `causal_pad(x, k)`: `x [B, T, d]` and the kernel size `k` (an int, at least 1) ->
# `[B, T + k - 1, d]`, with $k-1$ zeros before the first token.

# %% nbgrader={"grade": false, "grade_id": "task1_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def causal_pad(x, k):
    ### BLANK: raise NotImplementedError("Task 1: equation (1) of the Recap says which positions before x_0 are read, and that they are zero")
    ### BEGIN SOLUTION
    zeros = x.new_zeros(x.shape[0], k - 1, x.shape[2])  # [B, k-1, d]
    return torch.cat([zeros, x], dim=1)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "task1_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_causal_pad(causal_pad)
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
# every hidden shape (B = 1, H = 1, both > 1); in a grade run the outputs are only recorded,
# and a process that never ran this notebook judges them
_ex.hidden_check(_ex.check_causal_pad, causal_pad)
### END HIDDEN TESTS

# %% [markdown]
# ## Task 2 · The convolution, tap by tap
#
# Write `causal_conv(x, weight, bias)`: `x [B, T, d]`, `weight [d, d, k]`, `bias [d]` -> `y [B, T, d]`,
# with a loop over the $k$ taps (no `F.conv1d`), using your `causal_pad`. The GELU is the exact one
# (`F.gelu`'s default): its tanh approximation differs by about $10^{-4}$ and does not pass.

# %% nbgrader={"grade": false, "grade_id": "task2_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def causal_conv(x, weight, bias):
    ### BLANK: raise NotImplementedError("Task 2: equation (1) of the Recap, one tap at a time, on the sequence your causal_pad returns")
    ### BEGIN SOLUTION
    k, T = weight.shape[-1], x.shape[1]
    xp = causal_pad(x, k)  # [B, T+k-1, d]
    pre = bias
    for i in range(k):
        pre = pre + xp[:, i : i + T] @ weight[:, :, i].T  # tap i reads x_{t-(k-1)+i}
    return F.gelu(pre)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "task2_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
ex.check_causal_conv(causal_conv)
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
# every hidden shape (B = 1, H = 1, both > 1); in a grade run the outputs are only recorded,
# and a process that never ran this notebook judges them
_ex.hidden_check(_ex.check_causal_conv, causal_conv)
### END HIDDEN TESTS

# %% [markdown]
# ## Task 3 · Predict before you plot
#
# The paper's convolution pads symmetrically, kernel $k = 5$. **How many tokens after $t$ does
# position $t$ see?**  (a) 0  (b) 1  (c) 2  (d) 4
#
# The plot shows, for both paddings, which inputs $x_\tau$ each output $y_t$ depends on (the
# gradient of $y_t$ with respect to $x_\tau$).

# %% nbgrader={"grade": false, "grade_id": "task3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BLANK: my_prediction = None  # "a", "b", "c" or "d"
### BEGIN SOLUTION
my_prediction = "c"
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "task3_check", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
ex.check_leak_prediction(my_prediction)
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
        task="05.3 how far does the paper's convolution see",
        correct='c',
        choices='abcd',
        hints={
            'a': 'padding=k//2 puts (k-1)/2 zeros on EACH side; what does the right half of the window cover?',
            'b': 'count the taps of a 5-wide window centred on t',
            'd': 'the window is centred on t: only half of the other taps are in the future',
        },
        explanation='a 5-tap window centred on t covers t-2 .. t+2: two future tokens, and t+1 is the very token position t is trained to predict',
    )
### END HIDDEN TESTS

# %%
# NBVAL_IGNORE_OUTPUT
torch.manual_seed(0)
weight, bias, T = torch.randn(3, 3, 5), torch.randn(3), 10
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, causal in zip(axes, (True, False), strict=True):
    dep = torch.autograd.functional.jacobian(lambda x, causal=causal: conv_fast(x, weight, bias, causal=causal), torch.randn(1, T, 3))
    image = ax.imshow((dep.abs().sum(dim=(0, 2, 3, 5)) > 0).float(), cmap="Greys", vmin=0, vmax=1)  # [T (out t), T (in tau)]
    ax.plot([0, T - 1], [0, T - 1], color="red", lw=0.8)
    ax.set(title="causal (left padding)" if causal else "symmetric (the paper)", xlabel="input tau", ylabel="output t")
bar = fig.colorbar(image, ax=axes, ticks=[0, 1], shrink=0.8)
bar.ax.set_yticklabels(["independent", "depends"])
plt.show()

# %% [markdown]
# Black right of the red diagonal means $y_t$ depends on a later token. With next-token
# prediction the logits at $t$ are trained to predict $x_{t+1}$, and the symmetric convolution
# hands them $x_{t+1}$ directly.
#
# ## Task 4 · A causality test, on trained models too
#
# **Design a test.** No equation gives this one: decide what to change and what to compare.
# Write `leaks_future(fn, T, d)`: `fn` maps `[1, T, d]` to `[1, T, d]` (`T` and `d` are ints); return
# `True` if some output $y_t$ changes when only inputs **after** $t$ change, else `False`. What
# "changes" means here: make a float64 input (`torch.randn(1, T, d, dtype=torch.float64)`); for a
# position $t$, add standard normal noise to `x[:, t+1:]` only; the outputs at positions $\le t$
# changed when `torch.allclose(new, old)` (its default tolerances) is `False`. Leaks can be small
# (a thousandth of an input) and can start late in the sequence: test every $t$. The check runs your
# test on known functions and on the convolutions of two small trained hybrids, one causal and
# one with the paper's padding.

# %%
# NBVAL_IGNORE_OUTPUT
causal_model, causal_info = ex.tiny_model("triple_hybrid", conv_causal=True)
leaky_model, leaky_info = ex.tiny_model("triple_hybrid", conv_causal=False)
print("causal:", ex.training_note(causal_info))
print("leaky: ", ex.training_note(leaky_info))


# %% nbgrader={"grade": false, "grade_id": "task4_code", "locked": false, "schema_version": 3, "solution": true, "task": false}
def leaks_future(fn, T, d):
    ### BLANK: raise NotImplementedError("Task 4 defines a leak and what counts as a change; equation (1) of the Recap says which inputs y_t may read")
    ### BEGIN SOLUTION
    x = torch.randn(1, T, d, dtype=torch.float64)
    y = fn(x)
    for t in range(T - 1):
        x2 = x.clone()
        x2[:, t + 1 :] += torch.randn(1, T - t - 1, d, dtype=torch.float64)
        if not torch.allclose(fn(x2)[:, : t + 1], y[:, : t + 1]):
            return True
    return False
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "task4_check", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
def trained_conv(model):
    """The trained model's convolution path as a function of float64 inputs [1, T, d]."""
    return lambda x: model.conv(x.float())[0].double()


d = causal_model.config.d_model
ex.check_leaks_future(leaks_future, extra={"the trained causal convolution": (trained_conv(causal_model), False, d),
                                           "the trained leaky convolution": (trained_conv(leaky_model), True, d)})
### BEGIN HIDDEN TESTS
# a fresh checker: what the answer cells did to the imported one does not reach it
import importlib
import sys

for _name in [n for n in sys.modules if n.split(".")[0] == "tl_minimal"]:
    del sys.modules[_name]
_ex = importlib.import_module("tl_minimal.exercises")
# every hidden shape (B = 1, H = 1, both > 1); in a grade run the outputs are only recorded,
# and a process that never ran this notebook judges them
_ex.hidden_check(_ex.check_leaks_future, leaks_future)
### END HIDDEN TESTS

# %% [markdown]
# What the leak does to training: the leaky model's loss falls faster, for a reason that cannot
# exist when generating text (token $t+1$ is not there yet).

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(causal_info["loss_bits"], label="causal convolution")
ax.plot(leaky_info["loss_bits"], label="symmetric (leaks t+1, t+2)")
ax.axhline(causal_info["baseline_bits"], color="black", ls=":", lw=1, label="unigram baseline")
ax.set(xlabel="step", ylabel="training loss (bits per byte)", title="triple_hybrid, tiny, same seed")
ax.legend()
plt.show()

# %% [markdown]
# **To discuss:** the paper's hybrid beats the Transformer on BPB. Its numbers (all from models with
# the symmetric convolution; the paper's tables are collected in `docs/paper.md` section 5): 4.766
# against the Transformer's 5.124 at matched width, 5.067 with its parameters matched, and 4.806
# against 5.143 for the winner of its budget sweep. Which of its numbers would you trust after this
# exercise, and what experiment would settle it?

# %% [markdown] nbgrader={"grade": true, "grade_id": "discussion1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false} tags=["solution"]
# **Model answer.** None of the numbers of a model with the symmetric convolution: the hybrid's
# byte-level 4.766, 5.067 (parameter-matched) and 4.806 (budget sweep), and on the tokenized
# benchmark the hybrid's and the gated hybrid's losses. Each of them was measured by a model that
# reads $x_{t+1}$, its own target, and would lose that advantage when generating. The numbers of
# the variants without a convolution (`triple_latent`, `triple_slot`, `transformer_plus_triple`)
# carry no leak. The experiment: the same protocol with the convolution padded on the left only
# (everything else equal, several seeds), checked causal by the test you wrote in Task 4 (change
# token $t+1$, the logits at $t$ must not move), or scored prefix by prefix as in notebook 05.
# This repository ran it (`docs/paper.md` section 6.1, table 1): causal, the hybrid is level with
# the Transformer at 80 steps (5.019 against 5.050 BPB); with the paper's padding it scores 4.628.
