# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · The running state
#
# Step 1 of the triple-latent layer. Every symbol is in notebook 00's
# [glossary](00_start_here.ipynb#glossary).
#
# **Learning goals.** After this notebook you can
# - compute the running state $s_t$ by hand, with the library's loop, and as one matrix product;
# - turn a keep gate $\lambda$ into a memory length (the half-life, in tokens);
# - write the training loop, check it against the library's `train()`, and train a model in one call;
# - read the gates of a trained model and say what its running state remembers.
#
# **Prerequisites.** Notebook 00 (the layer figure and the glossary). PyTorch: broadcasting,
# matrix products.
#
# **Time.** About 60 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 55 s (CPU 19 s, peak 612 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# ## 1. Where the running state sits, and what it computes
#
# The layer starts from its LayerNormed input $n_t = \mathrm{LN}(x_t)$ (width $d$), the same for
# all heads. From it, each head makes a write vector and a keep gate:
#
# $$
# a_t = \tanh(W_a n_t) \in (-1, 1)^S, \qquad \lambda_t = \sigma(W_\lambda n_t + c_\lambda) \in (0, 1)
# $$
#
# and keeps a **running state**, a moving average of its writes that forgets at a rate the token
# itself chooses:
#
# $$
# s_t = \lambda_t\, s_{t-1} + (1 - \lambda_t)\, a_t, \qquad s_{-1} = 0
# $$
#
# $\lambda_t$ near 1 keeps the past; near 0 it replaces the state by $a_t$. The next two steps of
# the layer read $s$ as a summary of the context.

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
from tl_minimal.data import text as data_text
from tl_minimal.running_state import causal_decay, log_gate, running_state
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import unigram_bits
from tl_minimal.views import diagrams, plots, plots_training, tables, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

diagrams.layer_diagram(highlight="s")
plt.show()

# %% [markdown]
# In the figure, the highlighted box is the running state $s_t$; the layer's next two steps read it.
#
# | symbol | code (`tl_minimal/running_state.py`) | shape | meaning |
# |---|---|---|---|
# | $a_t$ | `a` | `[B, T, H, S]` | what token $t$ writes |
# | $\lambda_t$ | `lam` | `[B, T, H]` | keep gate, one per head and token |
# | $s_t$ | `s` | `[B, T, H, S]` | the state after token $t$ |
# | $s_{-1}$ | `s0` | `[B, H, S]` | the initial state (zeros when `None`) |
#
# One config cell: the paper's setting, or a tiny one when `TL_SMOKE=1`.

# %%
# NBVAL_IGNORE_OUTPUT
STEPS = config.pick(80, 3)  # training steps of the byte-level protocol (the paper: 80)
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   training steps: {STEPS}   device: {DEVICE}")

# %% [markdown]
# ## 2. The recurrence by hand
#
# A toy with one head and a state of size one: a pulse of height 1 at $t = 0$, another of
# height 2 at $t = 5$, and a constant gate $\lambda = 0.5$. In plain Python:

# %%
a_toy = [1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0]
lam_toy = 0.5

s = 0.0  # s_{-1} = 0
by_hand = []
for a_t in a_toy:
    s = lam_toy * s + (1 - lam_toy) * a_t  # s_t = lambda s_{t-1} + (1 - lambda) a_t
    by_hand.append(s)

print(" t   a_t      s_t")
for t, (a_t, s_t) in enumerate(zip(a_toy, by_hand, strict=True)):
    print(f"{t:2d}  {a_t:4.1f}  {s_t:8.5f}")

# %% [markdown]
# Each pulse enters at half its height ($1 - \lambda$) and then halves at every token. The
# library's `running_state` takes the shapes of the table above (batch, time, heads, state size);
# its `mode="loop"` is the same for-loop over time:

# %%
a = torch.tensor(a_toy, dtype=torch.float64).view(1, -1, 1, 1)  # [B=1, T=8, H=1, S=1]
lam = torch.full((1, len(a_toy), 1), lam_toy, dtype=torch.float64)  # [B, T, H]
s_lib = running_state(a, lam, mode="loop")[0, :, 0, 0]  # [T]
print("library (mode='loop') equals the hand computation:",
      torch.allclose(s_lib, torch.tensor(by_hand, dtype=torch.float64)))

# %% [markdown]
# ## 3. The same numbers without a loop: one T x T matrix
#
# Unroll the recurrence: every earlier write survives, shrunk by every gate applied since.
#
# $$
# s_t = \sum_{\tau \le t} \underbrace{\Big(\prod_{u=\tau+1}^{t} \lambda_u\Big)(1-\lambda_\tau)}_{W_{t\tau}}\; a_\tau
# $$
#
# So the whole sequence of states is one matrix product, $s = W a$, with a lower-triangular
# $T \times T$ matrix $W$. The products of gates are computed as
# $\exp\big(\sum_{u=\tau+1}^{t} \log \lambda_u\big)$: `causal_decay` takes the log-gates and
# returns exactly that matrix (zeros above the diagonal). Here with gates that change from token
# to token: $\lambda_2 = 0.05$ almost wipes the state, $\lambda = 0.95$ later holds it.

# %%
lam_vary = torch.tensor([0.5, 0.5, 0.05, 0.5, 0.95, 0.95, 0.95, 0.5], dtype=torch.float64)  # [T]
decay = causal_decay(log_gate(lam_vary))  # [T, T]: prod_{u=tau+1..t} lambda_u
W = decay * (1 - lam_vary)[None, :]  # [T, T]: W[t, tau]
s_matrix = W @ torch.tensor(a_toy, dtype=torch.float64)  # [T]
s_loop = running_state(a, lam_vary.view(1, -1, 1), mode="loop")[0, :, 0, 0]
print("W @ a equals the loop:", torch.allclose(s_matrix, s_loop))
print("s_t:", [round(v, 4) for v in s_loop.tolist()])

# %%
# NBVAL_IGNORE_OUTPUT
labels = [f"{t}\n{v:.2f}" for t, v in enumerate(lam_vary.tolist())]
plots.matrix_heatmap(W, xlabels=labels, ylabels=list(range(len(a_toy))), annot=True, center=None, vmin=0,
                     cmap="Blues", title="W[t, τ]: how much of write a_τ is in s_t",
                     xlabel="write τ (its gate λ_τ below)", ylabel="state s_t")
plt.show()

# %% [markdown]
# A row shows what one state is made of; a column shows how one write fades. The first column
# is emptied at $t = 2$ by the small gate; the writes under the large gates fade slowly.
#
# This form has no loop, but it is **quadratic**: $W$ has $T^2$ entries, 67 million per head at
# $T = 8{,}192$, so the library never builds it.
#
# ## 4-5. The fast form and the three forms: notebook 01b
#
# The fast form that never builds $W$, and the check that all forms agree, are in
# [`01b_chunked_running_state.ipynb`](01b_chunked_running_state.ipynb), to read next.
#
# ## 6. What λ means: a memory length in tokens
#
# Feed one pulse, $a_0 = 1$ and $a_t = 0$ afterwards, with a constant gate. The recurrence gives
# $s_t = (1 - \lambda)\lambda^t$: the pulse enters at height $1 - \lambda$ and shrinks by $\lambda$
# per token. It has halved after $H_{1/2}$ tokens, where $\lambda^{H_{1/2}} = \tfrac12$:
#
# $$
# H_{1/2} = \frac{\ln(1/2)}{\ln \lambda}
# $$
#
# This **half-life** is what the course calls the memory length. A gate of 0.5 remembers for one
# token; the table below gives other gates. ($1/(1-\lambda)$, which you may also meet, is the *mean
# lifetime* of a write, not the half-life.) The check compares the library's pulse
# (`plots.pulse_response`) with the formula.

# %%
def relative_error(x, y):
    return ((x - y).norm() / y.norm()).item()


print("  λ      half-life   (1-λ)λ^t matches the library's pulse")
for lam_v in (0.5, 0.8, 0.9, 0.95, 0.99):
    h = math.log(0.5) / math.log(lam_v)
    s_pulse = plots.pulse_response(lam_v, T=200).double()
    closed = torch.tensor([(1 - lam_v) * lam_v**t for t in range(200)], dtype=torch.float64)
    print(f"{lam_v:5.2f}   {h:8.2f}      {relative_error(s_pulse, closed) < 1e-5}")

# %%
# NBVAL_IGNORE_OUTPUT
plots.pulse_memory([0.5, 0.8, 0.95], T=40)
plt.show()

# %% [markdown]
# Each curve crosses half its starting height after about one token for $\lambda = 0.5$, far
# later for the largest gate. That curve also starts lower: the longer the memory, the less each token
# writes ($1 - \lambda$).
#
# **At initialization every gate is about 0.5**, its **gate start**. The model computes $\lambda_t = \sigma(W_\lambda
# n_t + c_\lambda)$ with small random $W_\lambda$ and $c_\lambda = 0$ (as the reference code does),
# so $\lambda_t \approx \sigma(0) = 0.5$: a half-life of about **one token**. Training has to move
# the gates a long way before the state remembers anything far back. Try the slider (it needs a
# live kernel or the course website):

# %%
# NBVAL_IGNORE_OUTPUT
widgets.pulse_memory_widget(lam=0.9)

# %% [markdown]
# Drag $\lambda$ towards 1: the half-height point moves slowly at first, then fast, since
# $\ln(1/2)/\ln\lambda$ grows like $\ln 2/(1-\lambda)$ near 1.
#
# ## 7. Training a model: the loop, once
#
# This is the one place the training loop is written out. Five lines do the work: **forward** (logits for every position), **loss** (mean cross-entropy
# of the next byte, in nats), **backward**, **clip** (scale the gradient down if its norm is too
# large), **step** (AdamW). The data is the paper's byte-level protocol (`protocol("lm")`,
# described in `docs/paper.md`): random short windows of WikiText-2, each byte's target being the
# next byte.
#
# Below, the loop runs a few steps by hand. Then the library's recipe `fit` (seed, model, sampler,
# then `train()`: the same loop plus a progress bar, checkpoints and a stop on a NaN loss) runs the
# same steps from the same seed. The losses must agree.
#
# Two helpers, `checked_ids` and `clip_options`, only make the loop fast on every device.
#
# <details><summary>Implementation note: what the two helpers do on a GPU</summary>
#
# `checked_ids(model, x)` checks that every byte id is in the vocabulary while `x` is still
# on the CPU, and tells the model not to check again on the GPU (a check there would make the CPU
# wait for the GPU at every step). `clip_options(DEVICE)` asks `clip_grad_norm_` for its faster
# all-parameters-at-once ("foreach") path where torch has one (the CPU and CUDA, not MPS).
#
# </details>

# %%
from tl_minimal.checks import checked_ids
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import build, fit, make_sampler
from tl_minimal.training.train import clip_options, make_optimizer, seed_everything

train_split = data_text.load_split("train")
short = protocol("lm", steps=3)

seed_everything(0)
model = build("triple_latent", short).to(DEVICE)  # build_model with the protocol's sizes
sampler = make_sampler(short, seed=0, data=train_split.tokens)  # batch k = sampler(k)
optimizer = make_optimizer(model, short.lr, short.weight_decay, device=DEVICE)  # AdamW (fused on a GPU)
toy_losses = []
for step in range(short.steps):
    x, y = sampler(step)  # [B, T] bytes, [B, T] the next bytes, made on the CPU
    with checked_ids(model, x):  # ids checked here on the CPU, so the GPU never waits for the check
        logits = model(x.to(DEVICE))  # forward: [B, T, V]
    y = y.to(DEVICE)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # loss: mean nats per byte
    optimizer.zero_grad()
    loss.backward()  # backward
    torch.nn.utils.clip_grad_norm_(model.parameters(), short.grad_clip, **clip_options(DEVICE))  # clip
    optimizer.step()  # step
    toy_losses.append(loss.detach())  # kept on the device: no wait for the GPU at every step
toy_losses = torch.stack(toy_losses).tolist()  # read once (train() reads every log_every steps)

_, short_history = fit("triple_latent", short, seed=0, device=DEVICE, data=train_split.tokens, progress=False)
same = all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(toy_losses, short_history["loss"], strict=True))
print("the loop above and fit() give the same losses:", same)

# %%
# NBVAL_IGNORE_OUTPUT
tables.print_loop_against_fit(toy_losses, short_history["loss"])  # in bits per byte

# %% [markdown]
# Now the real run: `fit` with the paper's number of steps (`STEPS`). Its history is in nats per
# byte; we divide by $\ln 2$ to get **bits per byte** and draw the unigram baseline beside the
# curve (a model that predicts each byte from its frequency alone). We also keep the model at
# initialization (the same seed gives the same weights) to compare its gates later.

# %%
# NBVAL_IGNORE_OUTPUT
lm = protocol("lm", steps=STEPS)
valid_split = data_text.load_split("validation")
UNIGRAM_BPB = unigram_bits(train_split.tokens, valid_split.tokens[1:], data_text.VOCAB_SIZE)

seed_everything(0)
untrained = build("triple_latent", lm).to(DEVICE)  # the weights fit() starts from
model, history = fit("triple_latent", lm, seed=0, device=DEVICE, data=train_split.tokens, progress=False)
tables.print_short_run(history, UNIGRAM_BPB, "the validation split")  # losses in nats, printed / ln 2

# %%
# NBVAL_IGNORE_OUTPUT
plots_training.loss_with_baseline({"triple_latent": history}, UNIGRAM_BPB, "training loss of the model we look at")
plt.show()

# %% [markdown]
# Look at the end of the curve against the dashed line. The loss has fallen fast but is still
# *above* the unigram line: the model does not yet know the byte frequencies as well as a count
# does, let alone much context. Keep that in mind when reading its gates.
#
# ## 8. The gates of a trained model
#
# That training is very short, so we also look at a model trained 25 times longer: the same
# `triple_latent`, seed and protocol, 2,000 steps. It takes minutes on a CPU, so the repository
# ships it; `shipped_or_retrained` reads it with its record (the command that made it, its losses,
# its validation BPB). Set `RETRAIN = True` to train it here instead.

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal.course.shipped import shipped_or_retrained, unigram_on_record_chunks

RETRAIN = False  # True: train the 2,000-step model here instead of loading the shipped one
long_model, long_record = shipped_or_retrained("triple_latent", RETRAIN, train_split.tokens, DEVICE)
LONG = long_record["steps"]
# its validation BPB scores the protocol's first chunks: the unigram baseline on those same bytes (notebook 00, 7.1)
UNIGRAM_CHUNKS, n_chunks = unigram_on_record_chunks(train_split.tokens, valid_split.tokens, long_record)
tables.print_shipped_record(long_record, UNIGRAM_CHUNKS, n_chunks)  # how it was made, loss, BPB

# %% [markdown]
# We read the gates $\lambda$ on one sentence through `model.internals` (it runs the model in
# eval mode and records every layer's internals): for each training, one heatmap per layer, heads
# by tokens.

# %%
# NBVAL_IGNORE_OUTPUT
sentence = "The running state keeps a fading summary of what it has read."
tokens = widgets.byte_prompt(sentence, lm.seq_len)  # BOS + bytes: [T]
labels = plots.token_labels(tokens)
lam_init = plots.model_gates(untrained, tokens, "lam")  # [layers, T, heads]
lam_trained = plots.model_gates(model, tokens, "lam")
lam_long = plots.model_gates(long_model, tokens, "lam")
plots.gate_heatmaps(lam_trained, labels, name="λ", title=f"running-state gate λ after {history['steps']} steps")
plt.show()
plots.gate_heatmaps(lam_long, labels, name="λ", title=f"running-state gate λ after {LONG} steps")
plt.show()

# %% [markdown]
# A row of one colour is a head that keeps the same amount at every token. After the short
# training the colours barely vary along a row; after the long one they change with the byte.
#
# Now in half-lives, per head. The gate changes from token to token, so we average
# $\ln\lambda_t$ over the sentence ($\overline{\ln \lambda}$): a write decays by
# $\prod_t \lambda_t = \exp(T\, \overline{\ln \lambda})$, as under a constant gate
# $\exp(\overline{\ln \lambda})$. Its half-life, the **half-life of the average decay**, is
# $\ln(1/2) / \overline{\ln \lambda}$. (An average of per-token half-lives would let one gate
# near 1 outweigh all the others.)

# %%
# NBVAL_IGNORE_OUTPUT
def mean_half_life(lam_g):  # [L, T, H] -> [L, H]: ln(1/2) / mean_t ln(lambda_t)
    return math.log(0.5) / log_gate(lam_g).mean(dim=1)


half_lives = {"initialization": mean_half_life(lam_init), f"{history['steps']} steps": mean_half_life(lam_trained),
              f"{LONG} steps": mean_half_life(lam_long)}  # {run: [L, H]}
plots_training.per_head_bars(half_lives, "half-life of the mean decay (tokens)",
                             "how far back each head's running state remembers")
plt.show()
tables.print_half_lives({history["steps"]: (half_lives[f"{history['steps']} steps"], lam_trained),
                          LONG: (half_lives[f"{LONG} steps"], lam_long)})  # per head, then λ's range and spread

# %% [markdown]
# Look at the bar heights against one token. Training moved the gates, and not towards a longer
# memory. After the short training every head's half-life has dropped below one token: in the first
# steps the cheapest gain is to predict the next byte from the last one or two, and a state that
# forgets quickly does that well. After 2,000 steps the half-lives are *still* below one token
# (layer 2 the shortest): even the long-trained model does not use its running state as a long
# memory, on average.
#
# What the long training taught is *when* to keep: $\lambda$ now depends on the byte being read.
# Its range over the sentence widens, and its spread over the tokens grows in every layer (both
# printed above). In the heatmap, one head of layer 2 keeps more at the spaces between words while
# the other heads of that layer forget almost everything.
#
# Finally the state itself, in the long-trained model: the $S = 16$ numbers of the first head of
# the first layer, token by token.

# %%
# NBVAL_IGNORE_OUTPUT
_, record = long_model.internals(tokens[None].to(DEVICE))
s_head = record["layers"][0]["s"][0, :, 0, :].cpu()  # [T, S]
plots.matrix_heatmap(s_head.T, xlabels=labels, title=f"running state s_t of layer 0, head 0 ({LONG} steps)",
                     xlabel="token", ylabel="state entry", figsize=(9.5, 3.6))
plt.show()

# %% [markdown]
# Look at the columns: the state is redrawn at almost every byte instead of holding a value across
# a word, and every space between words ( ␣ ) gives nearly the same column. With half-lives under a
# token, the state describes the last byte or two.
#
# ## 9. Play
#
# Type a sentence to see the long-trained model's gates on it (the menu switches between λ and the
# pair-memory gate γ of the next notebook). Try:
# `one two three four five six` (many spaces), `aaaaaaaaaaaaaaaa` (one byte repeated) and
# `1 + 2 = 3, 10 - 4 = 6` (digits and signs). On the course website, which has no kernel, the
# sentence box is a menu of these.

# %%
# NBVAL_IGNORE_OUTPUT
widgets.gate_widget(long_model, sentence, key="lam")

# %% [markdown]
# Look for the bytes where a head's colour jumps: there the gate decides to keep or to forget.
#
# ## Summary
#
# - The running state is a gated moving average, $s_t = \lambda_t s_{t-1} + (1-\lambda_t) a_t$,
#   with $s_{-1} = 0$; one keep gate per head and token.
# - Unrolled, it is one lower-triangular $T \times T$ matrix: parallel but quadratic.
# - A keep gate $\lambda$ means a memory length (half-life) of $\ln(1/2)/\ln\lambda$ tokens: one
#   token at the initial $\lambda \approx 0.5$.
# - Training is forward, loss, backward, clip, step; `fit` does it in one call.
# - After the paper's short training the model is not yet below the unigram baseline, and the
#   gates have moved *down*: the running state is a short-range feature. After 2,000 steps the
#   gates are still short on average, but they depend on the byte read: the model has learned
#   when to keep.
#
# **Exercise:** [`exercises/01_running_state.ipynb`](exercises/01_running_state.ipynb) ·
# **Next:** [`01b_chunked_running_state.ipynb`](01b_chunked_running_state.ipynb), the fast form, then
# [`02_pair_memory.ipynb`](02_pair_memory.ipynb), step 2 of the layer.
