# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · The local convolution, and a leak
#
# The paper's `triple_hybrid` adds one short convolution over time, once, before the stack of
# triple-latent layers:
#
# $$
# x \leftarrow x + \operatorname{Dropout}\big(\operatorname{GELU}(\operatorname{Conv1d}_{d \to d,\,\kappa=5}(x))\big)
# $$
#
# A convolution with kernel size $\kappa$ mixes $\kappa$ neighbouring positions. *Which* neighbours depends on the
# padding. This project's convolution is **causal**: pad $\kappa-1$ zeros on the left, so that tap $i$
# reads $x_{t-(\kappa-1)+i}$:
#
# $$
# y_t = \operatorname{GELU}\Big(c_{\mathrm{conv}} + \sum_{i=0}^{\kappa-1} W_{\mathrm{conv}}[:, :, i]\; x_{t-(\kappa-1)+i}\Big), \qquad x_{<0} = 0,
# $$
#
# and position $t$ sees $x_{t-4}, \dots, x_t$. The reference code pads **symmetrically**
# (`padding = k // 2`, with `k` the code's name for $\kappa$): tap $i$ reads $x_{t-(\kappa-1)/2+i}$, so position $t$ sees
# $x_{t-2}, \dots, x_{t+2}$. The logits at $t$ are trained to predict $x_{t+1}$, and the
# symmetric convolution hands them $x_{t+1}$ directly: the **future-token leak**.
#
# | symbol | code (`tl_minimal/conv.py`) | shape |
# |---|---|---|
# | $x_t$ | `x` | `[B, T, d]` (embedding + position) |
# | $\kappa$ | `k` (config `conv_kernel`) | 5 |
# | $W_{\mathrm{conv}}$, $c_{\mathrm{conv}}$ | `conv.weight`, `conv.bias` | `[d, d, k]`, `[d]` |
# | $y_t$ | `y` (`record["conv"]["update"]`) | `[B, T, d]` |
# | state (causal only) | `state` | `[B, k-1, d]`: the last $\kappa-1$ inputs, for one-token steps |
#
# **Learning goals.** After this notebook you can
# - compute a causal convolution by hand, tap by tap, and check the library's three forms agree;
# - tell from the padding which inputs each output reads, and spot a read from the future;
# - test a whole model for causality by changing a later token;
# - explain why a leaky model scores a better BPB in training and a worse one when it generates.
#
# **Prerequisites.** `Conv1d` and padding, next-token prediction, notebooks 01-03 (the
# `triple_hybrid` stack is notebook 03's layer, stacked). Every symbol is in the course's
# glossary, [`docs/glossary.md`](../docs/glossary.md).
#
# **Time.** About 55 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 48 s (CPU 32 s, peak 755 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).

# %%
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tl_minimal import views
from tl_minimal.conv import conv_fast, conv_loop, conv_step
from tl_minimal.data import text as data_text
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import bits_per_byte, evaluating, unigram_bits
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import build, count_parameters, fit
from tl_minimal.training.train import seed_everything
from tl_minimal.views import plots, plots_conv, plots_retrieval, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# One config cell: the paper's byte-level protocol normally, a tiny run when `TL_SMOKE=1`.

# %%
# NBVAL_IGNORE_OUTPUT
LP = protocol("lm")  # the paper's byte-level protocol: 80 steps, batch 16 x 128 bytes, AdamW 3e-4
STEPS = config.pick(LP.steps, 3)  # training steps (the paper: 80)
EVAL_BATCHES = config.pick(16, 1)  # evaluation batches of 16 chunks of 128 bytes (the paper: 128)
HONEST_CHUNKS = config.pick(16, 2)  # chunks scored prefix by prefix (section 5)
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   training steps: {STEPS}   eval batches: {EVAL_BATCHES}   device: {DEVICE}")

# %% [markdown]
# ## 1. A convolution by hand
#
# One channel ($d = 1$), kernel taps $W_{\mathrm{conv}} = (1, 2, 3, 4, 5)$, no bias, and an impulse at $t = 3$.
# The pre-activation $\sum_i W_{\mathrm{conv}}[i]\, x_{t-(\kappa-1)+i}$ written out, then the library's loop form, which
# also applies the GELU:

# %%
T_toy, k = 9, 5
x_toy = torch.zeros(1, T_toy, 1, dtype=torch.float64)
x_toy[0, 3, 0] = 1.0  # impulse at t = 3
W_toy = torch.arange(1.0, k + 1, dtype=torch.float64).view(1, 1, k)  # [d=1, d=1, k]
c_toy = torch.zeros(1, dtype=torch.float64)

for causal in (True, False):
    first = k - 1 if causal else (k - 1) // 2  # how far back tap 0 reads
    pre = []
    for t in range(T_toy):
        total = 0.0
        for i in range(k):
            src = t - first + i  # tap i reads x_{t-first+i}
            if 0 <= src < T_toy:
                total += W_toy[0, 0, i].item() * x_toy[0, src, 0].item()
        pre.append(total)
    lib = conv_loop(x_toy, W_toy, c_toy, causal=causal)[0, :, 0]
    print(f"{'causal   ' if causal else 'symmetric'} pre-activation {pre}")
    print(f"          library equals GELU(by hand): {torch.allclose(lib, F.gelu(torch.tensor(pre, dtype=torch.float64)))}")

# %% [markdown]
# The causal output starts at the impulse ($t = 3$) and runs forward: outputs at $t \ge 3$ read it.
# The symmetric output starts at $t = 1$: outputs at $t = 1, 2$ read an input that lies in their
# future. The library's three forms (loop, one `F.conv1d`, one token at a time with a carried
# state) agree on random inputs; the symmetric form has no step, because a step cannot read a
# token that does not exist yet:

# %%
gen = torch.Generator().manual_seed(0)
x = torch.randn(2, 23, 6, generator=gen, dtype=torch.float64)
W = torch.randn(6, 6, k, generator=gen, dtype=torch.float64) / 6
c = torch.randn(6, generator=gen, dtype=torch.float64)
state = torch.zeros(2, k - 1, 6, dtype=torch.float64)  # the last k-1 inputs (zeros before the start)
stepped = []
for t in range(x.shape[1]):
    y_t, state = conv_step(x[:, t], state, W, c)
    stepped.append(y_t)
stepped = torch.stack(stepped, dim=1)
loop = conv_loop(x, W, c, causal=True)
print("causal:    fast equals loop:", torch.allclose(conv_fast(x, W, c, causal=True), loop),
      "  step equals loop:", torch.allclose(stepped, loop))
print("symmetric: fast equals loop:", torch.allclose(conv_fast(x, W, c, causal=False), conv_loop(x, W, c, causal=False)))

# %% [markdown]
# ## 2. Which inputs does each output read?
#
# The size of the Jacobian $\lVert \partial y_t / \partial x_\tau \rVert$ for every output $t$ and
# input $\tau$, computed by autograd through `conv_fast` with random weights. A white cell means
# output $t$ cannot see input $\tau$ at all, darker grey a stronger read; the outlined cells above
# the diagonal are reads from the future.

# %%
# NBVAL_IGNORE_OUTPUT
maps = {  # influence [T, T] for a sequence of 12 inputs of the kernel's width d = 6
    "causal (left padding k-1)":
        plots_conv.conv_influence(lambda v: conv_fast(v, W.float(), c.float(), causal=True), T=12, d=6),
    "symmetric (the reference's padding k//2)":
        plots_conv.conv_influence(lambda v: conv_fast(v, W.float(), c.float(), causal=False), T=12, d=6),
}
plots_conv.influence_maps(maps)
plt.show()

# %%
for name, M in maps.items():
    future = sum(int(M[t, tau] > 0) for t in range(M.shape[0]) for tau in range(t + 1, M.shape[0]))
    print(f"{name:42s} reads from the future: {future} (output, input) pairs")

# %% [markdown]
# ## 3. The leak in a whole model
#
# A causal model's logits at position $t$ must not change when a later token changes. Test it on
# two freshly built `triple_hybrid` models, one with the causal convolution (the default), one with
# `conv_causal=False` (the paper's padding): change the token at $t + 1$ and compare the logits at
# $t$.

# %%
P = LP.replace(steps=STEPS)
VARIANTS = {"causal": {}, "leaky": {"conv_causal": False}}  # overrides of triple_hybrid's defaults

probe = torch.randint(0, 256, (1, 32), generator=torch.Generator().manual_seed(1))
changed = probe.clone()
changed[0, 11] = (changed[0, 11] + 1) % 256  # change token t + 1 = 11
for name, overrides in VARIANTS.items():
    seed_everything(0)
    fresh = build("triple_hybrid", P, overrides).eval()
    with torch.no_grad():
        diff = (fresh(probe) - fresh(changed)).abs().amax(-1)[0]  # [T]: biggest logit change per position
    print(f"{name:7s} logits change at t = 10 (before the edit): {bool(diff[10] > 1e-6)};  "
          f"earliest position that changes: {int((diff > 1e-6).nonzero()[0])}")

# %% [markdown]
# With symmetric padding the logits at $t = 9$ and $t = 10$ depend on the token at $11$: position 10
# is *trained to predict* token 11 while reading it. Generation cannot use such a model at all, since
# token $t+1$ does not exist when position $t$ is computed; the library refuses:

# %%
try:
    fresh.generate(probe[0, :4], n_new=4)
except NotImplementedError as err:
    print("generate ->", err)

# %% [markdown]
# ## 4. Train both
#
# The paper's byte-level protocol (as in notebook 04): 16 random 128-byte windows of WikiText-2 per
# step, AdamW at 3e-4, weight decay 0.05, `STEPS` steps, trained by `fit`; validation BPB on the
# first `EVAL_BATCHES` batches of 16 chunks, beside the unigram baseline (each byte predicted from
# its frequency in the training text, no context, on the same chunks: notebook 00, section 7.1).
# Both models have the same parameters and the same seed; only the padding differs.

# %%
# NBVAL_IGNORE_OUTPUT
train_split = data_text.load_split("train")
valid = data_text.load_split("validation")
eval_set = data_text.eval_batches(valid.tokens, P.seq_len, P.eval_batch_size, max_batches=EVAL_BATCHES)
print(f"training text: {len(train_split.tokens):,} bytes of the WikiText-2 train split; validation: {len(valid.tokens):,} bytes")

models, histories, bpb = {}, {}, {}
for name, overrides in VARIANTS.items():
    model, histories[name] = fit("triple_hybrid", P, seed=0, device=DEVICE, overrides=overrides,
                                 data=train_split.tokens, progress=False)
    models[name] = model.eval()
    bpb[name] = bits_per_byte(model, eval_set)
    print(f"{name:7s} {count_parameters(model):,} parameters, {histories[name]['seconds']:.0f} s, "
          f"validation BPB {bpb[name]:.3f}")
unigram = unigram_bits(train_split.tokens, torch.cat([yb for _, yb in eval_set]), data_text.VOCAB_SIZE)
print(f"unigram baseline (no context): validation BPB {unigram:.3f}")

# %% [markdown]
# The training history is in nats; the plot divides by $\ln 2$ for bits per byte.

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(7, 3.3))
plots.loss_curves(histories, bits=True, ax=ax, title="training loss of triple_hybrid: causal against leaky padding")
ax.axhline(unigram, color="black", ls=":", lw=1, label="unigram baseline")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# What to look for: the two curves are one until about step 30, then the leaky one pulls ahead and
# the gap widens to the end; both are still falling, and neither has reached the dotted unigram line.

# %% [markdown]
# ## 5. Too good to be true
#
# The leaky model's BPB is lower than the causal one's. After 80 steps both are still above the
# unigram baseline printed beside them (a model that only counts how often each byte occurs, and
# ignores the context): 80 steps is early training, and lower here means less bad, not good. Is
# the leaky model's lead real, is it a better model? Score it the way it would be *used*: the
# logits at $t$ computed from the prefix $x_0 \dots x_t$ alone, as when generating (nothing after
# $t$ exists yet; the convolution's padding then fills the future with zeros). For the causal model
# this changes nothing, which the first line checks. For the leaky one it removes the peek:

# %%
# NBVAL_IGNORE_OUTPUT
@torch.no_grad()
def prefix_logits(model, x):
    """Logits at each t from the prefix x[:, :t+1] only: [B, T, V] (T forward passes)."""
    return torch.stack([model(x[:, : t + 1])[:, -1] for t in range(x.shape[1])], dim=1)


def bpb_of(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).item() / math.log(2)


x_h = torch.cat([xb for xb, _ in eval_set])[:HONEST_CHUNKS].to(DEVICE)  # [HONEST_CHUNKS, 128]
y_h = torch.cat([yb for _, yb in eval_set])[:HONEST_CHUNKS].to(DEVICE)
honest = {}
with evaluating(models["causal"]), evaluating(models["leaky"]):
    for name, model in models.items():
        full, pre = model(x_h), prefix_logits(model, x_h)
        honest[name] = {"whole sequence (training view)": bpb_of(full, y_h), "prefix only (generation view)": bpb_of(pre, y_h)}
        if name == "causal":
            print("causal model: prefix logits equal whole-sequence logits:", torch.allclose(full, pre, atol=1e-4))
unigram_h = unigram_bits(train_split.tokens, y_h, data_text.VOCAB_SIZE)  # the same chunks, no context
for name, row in honest.items():
    print(f"{name:7s}", "   ".join(f"{k}: {v:.3f} BPB" for k, v in row.items()))
print(f"unigram baseline on these chunks: {unigram_h:.3f} BPB")

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(7, 3.3))
views = list(next(iter(honest.values())))
for i, view in enumerate(views):
    ax.bar([j + 0.4 * i for j in range(len(honest))], [honest[n][view] for n in honest], width=0.4, label=view)
ax.set_xticks([j + 0.2 for j in range(len(honest))], [f"triple_hybrid ({n})" for n in honest])
ax.axhline(unigram_h, color="black", ls=":", lw=1, label=f"unigram baseline ({unigram_h:.2f})")
ax.set_ylabel(f"BPB on {HONEST_CHUNKS} validation chunks")
ax.set_title("the leaky model's gain disappears when it cannot peek")
ax.legend(fontsize=8, loc="lower right")
plt.show()

# %% [markdown]
# Scored on whole sequences the leaky model wins; scored on prefixes (the only way it could ever
# generate text) it is far *worse* than the causal model, and worse than the unigram baseline: it
# learned to rely on a copy of the answer that is not there at generation time. Two things change
# at once when it is scored on prefixes, though: the peek is gone, *and* the inputs it peeked at are
# now the padding's zeros, inputs it never saw in training. The drop measures both together; this
# notebook does not separate them. (Compare the two models' validation BPB printed in section 4
# with the paper's 4.766 for its hybrid, and both with the unigram baseline printed beside them.)
# The paper's hybrid numbers (4.766 BPB against the Transformer's 5.124) come from the symmetric
# padding and carry this leak; with a causal convolution the hybrid's advantage has to be measured
# again (notebook 07 does).
#
# Where did the leaky model put its weight? The size of each kernel tap, at the input offset it
# reads (both kernels start from the same random initialization, so differences are what training
# did; watch the tap that reads $x_{t+1}$):

# %%
# NBVAL_IGNORE_OUTPUT
plots_conv.tap_norms({f"{name}": (m.conv.conv.weight.detach().cpu(), m.conv.causal) for name, m in models.items()})
plt.show()

# %% [markdown]
# ## 6. Play
#
# Each strip shows a model's top guess for the **next** byte at every position; green guesses are
# right. The leaky model scored on the whole sentence reads the answer; scored prefix by prefix it
# is on its own. First a fixed sentence (the picture that stays on the page):

# %%
# NBVAL_IGNORE_OUTPUT
sentence = "It sees the next byte."


def draw_guesses(text):
    toks = widgets.byte_prompt(text if text else " ", P.seq_len)[None].to(DEVICE)  # [1, T]
    with evaluating(models["causal"]), evaluating(models["leaky"]):
        guesses = {"causal": models["causal"](toks).argmax(-1)[0],
                   "leaky, whole sentence": models["leaky"](toks).argmax(-1)[0],
                   "leaky, prefix only": prefix_logits(models["leaky"], toks).argmax(-1)[0]}
    return plots_retrieval.prediction_strips(toks[0].cpu(), {k: v.cpu() for k, v in guesses.items()}, per_row=26,
                                          title="next-byte guesses of the trained models")


draw_guesses(sentence)
plt.show()

# %% [markdown]
# Now try your own text. In a running notebook, type any text in the box and press Enter; on the
# course website, which has no kernel, the box is a menu of texts drawn beforehand. Texts worth
# trying: `Zq8#vK2!pX` (random characters: nothing before a byte predicts it), `aaaaaaaaaaaaaaaaaaaa`
# (one byte repeated: everything before it does), `the cat sat on the mat.` (common words), and
# `It sees the next byte. It sees the next byte.` (a sentence said twice). In each strip, count the
# right guesses (green, hatched).

# %%
# NBVAL_IGNORE_OUTPUT
widgets.interactive(draw_guesses, text=widgets.Text(sentence, "sentence"))

# %% [markdown]
# ## Summary
#
# * The hybrid's convolution mixes the last $\kappa$ inputs; with left padding $\kappa-1$ it is causal and
#   has an O(1) step for generation (it carries the last $\kappa-1$ inputs).
# * The reference's symmetric padding lets position $t$ read $x_{t+1}$ and $x_{t+2}$. Training then
#   learns to copy the next byte, and the BPB drops for a reason that cannot exist at generation
#   time: scored prefix by prefix, the leaky model is worse than the causal one.
# * Every hybrid number that used the symmetric padding has to be rerun with a causal convolution
#   before it says anything about the architecture (notebook 07 does, tables 1b and 6).
#
# Exercise: `notebooks/exercises/05_convolution.ipynb` · Next: `06_kv_gated_fusion.ipynb`
