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
# The first of the three latents is a **running state**: a vector per head that every token
# nudges towards what it writes, and that forgets at a rate the token itself chooses.
#
# $$
# s_t = \lambda_t\, s_{t-1} + (1 - \lambda_t)\, a_t, \qquad s_{-1} = 0
# $$
#
# | symbol | code (`tl_minimal/running_state.py`) | shape | meaning |
# |---|---|---|---|
# | $a_t$ | `a` | `[B, T, H, S]` | what token $t$ writes, $\tanh(W_a n_t)$ in the model |
# | $\lambda_t$ | `lam` | `[B, T, H]` | keep gate, one number in (0, 1) per head and token, $\sigma(w_\lambda \cdot n_t + c)$ |
# | $s_t$ | `s` | `[B, T, H, S]` | the state after token $t$ |
#
# $\lambda_t$ near 1 keeps the past; near 0 it replaces the state by $a_t$. This notebook computes
# the recurrence by hand, checks it against the library's three forms (loop, chunked, step),
# works out what a value of $\lambda$ means in tokens, and looks at the gates of a trained model.

# %%
import math
import time

import matplotlib.pyplot as plt
import torch

from tl_minimal.data import text as data_text
from tl_minimal.training import config
from tl_minimal.views import plots, widgets
from tl_minimal.training.device import get_device, synchronize
from tl_minimal.running_state import causal_decay, log_gate, running_state, running_state_step

# %% [markdown]
# One config cell: the paper's setting normally, a tiny one when `TL_SMOKE=1` (see notebook 00).

# %%
# NBVAL_IGNORE_OUTPUT
STEPS = config.pick(80, 3)  # training steps of the byte-level protocol (the paper: 80)
TIMING_T = config.pick(2048, 256)  # sequence length for the loop-vs-chunked timing
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   training steps: {STEPS}   device: {DEVICE}")

# %% [markdown]
# ## 1. The recurrence by hand
#
# A toy with one head and a state of size one: a pulse of height 1 at $t = 0$, another of
# height 2 at $t = 5$, and a constant gate $\lambda = 0.5$. Eight lines of plain Python:

# %%
a_toy = [1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0]
lam_toy = 0.5

s = 0.0  # s_{-1} = 0
by_hand = []
for a_t in a_toy:
    s = lam_toy * s + (1 - lam_toy) * a_t  # s_t = lambda s_{t-1} + (1 - lambda) a_t
    by_hand.append(s)

print(" t   a_t      s_t")
for t, (a_t, s_t) in enumerate(zip(a_toy, by_hand)):
    print(f"{t:2d}  {a_t:4.1f}  {s_t:8.5f}")

# %% [markdown]
# Each pulse enters at half its height ($1 - \lambda$) and then halves at every token. The
# library's `running_state` takes the model's layout `[B, T, H, S]` (batch, time, heads, state
# size) and a gate per head `[B, T, H]`; its `mode="loop"` is the same for-loop over time:

# %%
a = torch.tensor(a_toy, dtype=torch.float64).view(1, -1, 1, 1)  # [B=1, T=8, H=1, S=1]
lam = torch.full((1, len(a_toy), 1), lam_toy, dtype=torch.float64)  # [B, T, H]
s_lib = running_state(a, lam, mode="loop")[0, :, 0, 0]  # [T]
print("library (mode='loop') equals the hand computation:",
      torch.allclose(s_lib, torch.tensor(by_hand, dtype=torch.float64)))

# %% [markdown]
# ## 2. The same numbers without a loop
#
# Unroll the recurrence: every earlier write survives, shrunk by every gate applied since.
#
# $$
# s_t = \sum_{\tau \le t} \underbrace{\Big(\prod_{u=\tau+1}^{t} \lambda_u\Big)(1-\lambda_\tau)}_{W_{t\tau}}\; a_\tau
# $$
#
# So the whole sequence of states is one matrix product, $s = W a$, with a lower-triangular
# $T \times T$ matrix $W$. The products of gates are computed as
# $\exp\big(\sum_{u=\tau+1}^{t} \log \lambda_u\big)$: `state.causal_decay` takes the log-gates and
# returns exactly that matrix (zeros above the diagonal). This is how the library's fast `chunked` form works
# inside each chunk of 64 tokens. Here with gates that change from token to token: $\lambda_2 = 0.05$
# almost wipes the state, $\lambda = 0.95$ later holds it.

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
# Read a row to see what one state is made of; read a column to see how one write fades. Column 0
# is emptied at $t = 2$ by the small gate; columns 4-6 fade slowly.
#
# ## 3. Loop, chunked and step: three forms, one set of numbers
#
# The library holds the three forms equal (tests/test_running_state.py); here is the check once more, on
# random inputs with 4 heads of size 8, in float64 on the CPU, for lengths that are not multiples of
# the chunk size. `running_state_step` is the form a model uses while generating: one token, the
# previous state in, the next state out.

# %%
def relative_error(x, y):
    return ((x - y).norm() / y.norm()).item()


gen = torch.Generator().manual_seed(0)
for T in (1, 7, 64, 129, 300):
    a_r = torch.randn(2, T, 4, 8, generator=gen, dtype=torch.float64)  # [B, T, H, S]
    lam_r = torch.rand(2, T, 4, generator=gen, dtype=torch.float64)  # [B, T, H], weak and strong gates
    s_loop = running_state(a_r, lam_r, mode="loop")
    s_fast = running_state(a_r, lam_r, mode="fast")
    s_t, steps = torch.zeros(2, 4, 8, dtype=torch.float64), []
    for t in range(T):
        s_t = running_state_step(a_r[:, t], lam_r[:, t], s_t)
        steps.append(s_t)
    s_step = torch.stack(steps, dim=1)
    print(f"T = {T:3d}: chunked vs loop rel. error < 1e-12: {relative_error(s_fast, s_loop) < 1e-12}, "
          f"step vs loop < 1e-12: {relative_error(s_step, s_loop) < 1e-12}")

# %% [markdown]
# The notebooks' models run in float32 on the chosen device; there the forms agree to float32
# precision:

# %%
a32 = torch.randn(2, 257, 4, 8, generator=gen).to(DEVICE)
lam32 = torch.rand(2, 257, 4, generator=gen).to(DEVICE)
err = relative_error(running_state(a32, lam32, mode="fast"), running_state(a32, lam32, mode="loop"))
print(f"float32 on the device: chunked vs loop rel. error < 1e-5: {err < 1e-5}")

# %% [markdown]
# Why have a fast form at all? The loop makes one small step per token; the chunked form does a
# few large matrix products, which is what GPUs (and, for long sequences and the larger pair
# memory of notebook 02, CPUs too) are fast at. On a small busy CPU and a state of 16 numbers the
# loop can even win; notebook 08 measures the forms properly. The timing below is only a taste:

# %%
# NBVAL_IGNORE_OUTPUT
a_long = torch.randn(8, TIMING_T, 4, 16, device=DEVICE)
lam_long = torch.rand(8, TIMING_T, 4, device=DEVICE)
for mode in ("loop", "fast"):
    running_state(a_long, lam_long, mode=mode)  # warm-up
    best = float("inf")
    for _ in range(5):  # best of five: the machine may be busy with other work
        t0 = time.perf_counter()
        running_state(a_long, lam_long, mode=mode)
        synchronize(DEVICE)  # on a GPU, wait for the work to finish before reading the clock
        best = min(best, time.perf_counter() - t0)
    print(f"{mode:8s} T = {TIMING_T}: {1000 * best:8.1f} ms")

# %% [markdown]
# ## 4. What λ means: a half-life in tokens
#
# Feed one pulse, $a_0 = 1$ and $a_t = 0$ afterwards, with a constant gate. The recurrence gives
# $s_t = (1 - \lambda)\lambda^t$: the pulse enters at height $1 - \lambda$ and shrinks by $\lambda$
# per token. It has halved after $h$ tokens, where $\lambda^h = \tfrac12$:
#
# $$
# h = \frac{\ln 0.5}{\ln \lambda}
# $$
#
# A gate of 0.5 remembers for one token, 0.9 for about 6.6, 0.99 for about 69. There is a
# trade-off in the same formula: the larger $\lambda$, the less each token writes ($1 - \lambda$).
# `plots.pulse_response` runs `running_state` on the pulse; the check compares it with the formula.

# %%
print("  λ      half-life h   ln0.5/lnλ matches the library's pulse")
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
# **At initialization every gate is about 0.5.** The model computes $\lambda_t = \sigma(w_\lambda \cdot
# n_t + c)$ with small random $w_\lambda$ and $c = 0$ (the reference code's initialization), so
# $\lambda_t \approx \sigma(0) = 0.5$: a memory of about **one token**. Training has to move the
# gates a long way before the state remembers anything far back. Try it with the slider (live
# kernel only; the picture above is the static version):

# %%
# NBVAL_IGNORE_OUTPUT
widgets.pulse_memory_widget(lam=0.9)

# %% [markdown]
# ## 5. The gates of a trained model
#
# Now a real model: `triple_latent` (three triple-latent layers, 4 heads, state size 16) trained
# with the paper's byte-level protocol on WikiText-2 (`protocol("lm")`: batches of 16 random
# 128-byte windows, AdamW at 3e-4, weight decay 0.05, clipping at 1.0) for `STEPS` steps, with the
# library's `train`. We read its running-state gates $\lambda$ on one sentence through
# `model.internals`, before and after training.

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal.experiments.protocols import protocol
from tl_minimal.experiments.tasks import build
from tl_minimal.training.train import seed_everything, train

P = protocol("lm", steps=STEPS)
train_split = data_text.load_split("train")
print(train_split)

seed_everything(0)
model = build("triple_latent", P).to(DEVICE)  # build_model with the protocol's sizes
sentence = "The running state keeps a fading summary of everything it has read so far."
tokens = widgets.byte_prompt(sentence, P.seq_len)  # BOS + bytes: [T]
labels = plots.token_labels(tokens)
lam_init = plots.model_gates(model, tokens, "lam")  # [layers, T, heads]

sampler = data_text.WindowSampler(train_split.tokens, P.batch_size, P.seq_len, seed=0)
history = train(model, sampler, P.steps, lr=P.lr, weight_decay=P.weight_decay, grad_clip=P.grad_clip,
                device=DEVICE, progress=False)
lam_trained = plots.model_gates(model, tokens, "lam")
print(f"{history['steps']} steps in {history['seconds']:.0f} s; training loss {history['loss'][0]:.3f} -> "
      f"{history['loss'][-1]:.3f} nats")

# %%
# NBVAL_IGNORE_OUTPUT
plots.loss_curves({"triple_latent": history}, bits=True, title="training loss of the model we look at")
plt.show()

# %% [markdown]
# The gates per layer (rows of panels), head (rows) and token (columns), at initialization and after
# training, on the same colour scale from 0 (forget everything) to 1 (keep everything):

# %%
# NBVAL_IGNORE_OUTPUT
plots.gate_heatmaps(lam_init, labels, name="λ", title="running-state gate λ at initialization")
plt.show()
plots.gate_heatmaps(lam_trained, labels, name="λ", title=f"running-state gate λ after {history['steps']} steps")
plt.show()

# %% [markdown]
# In half-lives, per layer and head (the mean over the sentence's tokens):

# %%
# NBVAL_IGNORE_OUTPUT
def mean_half_life(lam_g):  # [L, T, H] -> [L, H]
    return (math.log(0.5) / torch.log(lam_g)).mean(dim=1)


fig, ax = plt.subplots(figsize=(7, 3))
L, _, H = lam_trained.shape
names = [f"L{layer}h{h}" for layer in range(L) for h in range(H)]
ax.bar(range(L * H), mean_half_life(lam_init).flatten(), width=0.4, label="initialization")
ax.bar([i + 0.4 for i in range(L * H)], mean_half_life(lam_trained).flatten(), width=0.4, label="trained")
ax.set_xticks([i + 0.2 for i in range(L * H)], names, rotation=45)
ax.set_xlabel("layer and head")
ax.set_ylabel("mean half-life (tokens)")
ax.set_title("how far back each head's running state remembers")
ax.legend()
plt.show()
for layer in range(L):
    print(f"layer {layer}: mean half-life per head, trained:",
          [round(v, 2) for v in mean_half_life(lam_trained)[layer].tolist()])

# %% [markdown]
# Training moved the gates, and not towards a longer memory: after 80 steps every head's mean
# half-life has dropped from about one token to about 0.5-0.75 tokens ($\lambda$ around 0.25-0.4,
# darker heatmaps). In the first steps the cheapest gain is to predict the next byte from the last
# one or two, and a state that forgets quickly does that well. The paper's protocol is very short
# (80 steps see about 1.5% of the training text), and the gates start at 0.5 where the reference
# code puts them, so within this budget the running state works as a local feature, not as a
# long memory. Exercise: rebuild the model with `build("triple_latent", P, {"lam_bias": 3.0})`
# (gates start near $\sigma(3) = 0.95$, a half-life of about 13 tokens), retrain, and compare the
# loss curves and these half-lives.
#
# Finally the state itself: the 16 numbers of head 0 in the first layer, token by token.

# %%
# NBVAL_IGNORE_OUTPUT
with torch.no_grad():
    model.eval()
    _, record = model.internals(tokens[None].to(DEVICE))
s_head = record["layers"][0]["s"][0, :, 0, :].cpu()  # [T, S]
plots.matrix_heatmap(s_head.T, xlabels=labels, title="running state s_t of layer 0, head 0 (trained)",
                     xlabel="token", ylabel="state entry", figsize=(15, 4))
plt.show()

# %% [markdown]
# ## Play
#
# Type your own sentence: the heatmaps show the trained model's gates on it (the menu switches
# between λ and the pair-memory gate γ of notebook 02). Without a live kernel this shows the
# sentence above.

# %%
# NBVAL_IGNORE_OUTPUT
widgets.gate_widget(model, sentence, key="lam")
