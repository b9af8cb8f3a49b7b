# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 · Slots: a cheaper pair memory
#
# The pair memory $P_t$, an $S \times S$ matrix per head, remembers which write $b_\tau$ followed
# which state $s_{\tau-1}$. The paper's `triple_slot` variant replaces $P$ by $K$ **slots**. Each slot is a pair of $S$-vectors, a left
# memory $L_k$ and a right memory $R_k$, and every token chooses softly which slots it writes to:
#
# $$
# g_t = \operatorname{softmax}_K\big(W_g n_t\big), \qquad
# L_{k,t} = \gamma_t L_{k,t-1} + (1-\gamma_t)\, g_t[k]\, s_{t-1}, \qquad
# R_{k,t} = \gamma_t R_{k,t-1} + (1-\gamma_t)\, g_t[k]\, b_t
# $$
#
# $$
# f_t[k] = (q^l_t \cdot L_{k,t})\,(q^r_t \cdot R_{k,t}), \qquad o_t = W_o \operatorname{vec}(f_t)
# $$
#
# | symbol | code (`tl_minimal/slots.py`) | shape | meaning |
# |---|---|---|---|
# | $g_t$ | `g` (`record["slot_weights"]`) | `[B, T, H, K]` | soft choice of slot, sums to 1 over $K$ |
# | $L_k, R_k$ | `L`, `R` | `[B, H, K, S]` (per $t$) | left / right memory of slot $k$ |
# | $f_t$ | `f` | `[B, T, H, K]` | one feature per slot (the dense layer had $S$ per head) |
# | $\gamma_t$ | `gam` | `[B, T, H]` | the same keep gate as the pair memory |
#
# Memory per head: $2KS$ numbers instead of $S^2$. At the paper's sizes ($K = 8$, $S = 16$) that is
# $256$ against $256$: **the same size**, so the slot variant is not a smaller memory, it is a
# *different* one. This notebook finds out what it keeps and what it loses.
#
# Slots are not new: ABC (Peng et al.) and Gated Slot Attention (Zhang et al., with a forget gate
# like $\gamma_t$) spread each token's write over a fixed number of slots and read the slots with a
# softmax (references: `docs/paper.md` section 7). The slot layer reads each slot with the product
# of two dot products instead.
#
# **Learning goals.** After this notebook you can
# - write the slot memory's update and read, and check that its three forms agree;
# - say which pairs of tokens the slots keep apart and which they blend;
# - measure how decided a trained model's slot choices are (their entropy);
# - compare the slot memory with the dense pair memory on the same inputs.
#
# **Prerequisites.** Notebooks 01-03 (running state, pair memory, readout); softmax and entropy.
# Every symbol is in the course's [glossary](../docs/glossary.md).
#
# **Time.** About 60 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 99 s (CPU 31 s, peak 591 MiB) on a 2-core CPU
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

from tl_minimal import views
from tl_minimal.course.shipped import shipped_or_retrained
from tl_minimal.data import text as data_text
from tl_minimal.pair_memory import pair_memory
from tl_minimal.readout import pair_readout
from tl_minimal.results.paper_numbers import paper_bpb
from tl_minimal.running_state import previous_states
from tl_minimal.slots import slot_memory, slot_readout, slot_readout_step
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import bits_per_byte, unigram_bits
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import count_parameters, fit
from tl_minimal.views import plots, plots_slots, plots_training, tables, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# One config cell: the paper's byte-level protocol normally, a tiny run when `TL_SMOKE=1`.

# %%
# NBVAL_IGNORE_OUTPUT
LP = protocol("lm")  # the paper's byte-level protocol: 80 steps, batch 16 x 128 bytes, AdamW 3e-4
STEPS = config.pick(LP.steps, 3)  # training steps (the paper: 80)
EVAL_BATCHES = config.pick(16, 1)  # evaluation batches of 16 chunks of 128 bytes (the paper: 128)
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   training steps: {STEPS}   eval batches: {EVAL_BATCHES}   device: {DEVICE}")

# %% [markdown]
# ## 1. The three forms of the slot readout agree
#
# Like every recurrence in the library, `slot_readout` has a loop over time (the specification),
# a chunked form (what the model runs) and a one-token step. `slot_memory` builds $L$ and $R$ for
# every token, so that we can look at them. On random inputs:

# %%
gen = torch.Generator().manual_seed(0)
B, T, H, S, K = 2, 37, 2, 6, 4
s_prev, b, q_left, q_right = (torch.randn(B, T, H, S, generator=gen, dtype=torch.float64) for _ in range(4))
g = torch.randn(B, T, H, K, generator=gen, dtype=torch.float64).softmax(-1)  # [B, T, H, K]
gam = torch.rand(B, T, H, generator=gen, dtype=torch.float64)  # [B, T, H]

f_loop = slot_readout(s_prev, b, g, gam, q_left, q_right, mode="loop")  # [B, T, H, K]
f_chunked = slot_readout(s_prev, b, g, gam, q_left, q_right, mode="fast")
L_run = R_run = None
f_step = []
for t in range(T):  # generation: one token at a time, carrying (L, R)
    f_t, L_run, R_run = slot_readout_step(L_run, R_run, s_prev[:, t], b[:, t], g[:, t], gam[:, t],
                                          q_left[:, t], q_right[:, t])
    f_step.append(f_t)
f_step = torch.stack(f_step, dim=1)

# f_t[k] = (q^l_t . L_k,t)(q^r_t . R_k,t), from the materialized memories
L_all, R_all = slot_memory(s_prev, b, g, gam)  # [B, T, H, K, S] each
f_from_memory = (L_all @ q_left.unsqueeze(-1)).squeeze(-1) * (R_all @ q_right.unsqueeze(-1)).squeeze(-1)


def relative_error(x, y):
    return ((x - y).norm() / y.norm()).item()


for name, f in (("fast", f_chunked), ("step", f_step), ("from slot_memory", f_from_memory)):
    print(f"{name:17s} equals loop: {relative_error(f, f_loop) < 1e-10}")

# %% [markdown]
# ## 2. What slots keep, what they lose
#
# The dense layer reads an $S$-vector, $r_t = (P_t^\top q^l_t) \odot q^r_t$, whose entries sum to
# $q^{l\top}_t P_t\, q^r_t$, with $P_t = \sum_\tau w_{t\tau}\, s_{\tau-1} b_\tau^\top$. The slot
# layer's $K$ entries $f_t[k]$ sum to the same form with another matrix in place of $P_t$, the
# slot layer's effective pair memory $\tilde P_t$:
#
# $$
# \sum_k f_t[k] = q^{l\top}_t \Big(\sum_k L_{k,t} R_{k,t}^\top\Big) q^r_t ,\qquad
# \tilde P_t = \sum_{\tau,\tau'} w_{t\tau} w_{t\tau'}\, \Big(\sum_k g_\tau[k]\, g_{\tau'}[k]\Big)\; s_{\tau-1}\, b_{\tau'}^\top
# $$
#
# $P$ pairs each state with **its own** write ($\tau' = \tau$ only). $\tilde P$ also pairs the state of
# token $\tau$ with the write of token $\tau'$ when the two wrote into a common slot: the factor
# $\sum_k g_\tau[k] g_{\tau'}[k]$ is their overlap. So:
#
# * tokens that write to **different slots** keep their pairing exactly (with weight $w^2$ instead of $w$);
# * tokens that **share a slot** are blended: the slot knows the average state and the average
#   write of its tokens, no longer which went with which;
# * uniform slot weights ($g = 1/K$) make every pair overlap: $\tilde P_t = \tfrac{1}{K} \bar s\, \bar b^\top$,
#   with the weighted averages $\bar s = \sum_\tau w_{t\tau} s_{\tau-1}$ and $\bar b = \sum_\tau w_{t\tau} b_\tau$:
#   a rank-one matrix of averages. $\tilde P_t$ has rank at most $K$ in any case, $P_t$ up to $S$.
#
# A toy with two tokens makes the cross terms visible. The states and writes are unit vectors, so
# each product $s b^\top$ lights up one cell: the first token pairs $\delta_0$ with $\delta_1$, the
# second $\delta_2$ with $\delta_3$:

# %%
S_toy, K_toy = 4, 2
eye = torch.eye(S_toy, dtype=torch.float64)
s_prev_toy = torch.stack([eye[0], eye[2]]).view(1, 2, 1, S_toy)  # s_{-1} = δ0, s_0 = δ2 (unit vectors)
b_toy = torch.stack([eye[1], eye[3]]).view(1, 2, 1, S_toy)  # b_0 = δ1, b_1 = δ3
gam_toy = torch.full((1, 2, 1), 0.5, dtype=torch.float64)

P_toy = pair_memory(s_prev_toy, b_toy, gam_toy)[0, -1, 0]  # [S, S] after both tokens
slot_choices = {
    "separate slots": torch.tensor([[1.0, 0.0], [0.0, 1.0]]),  # token 0 -> slot 0, token 1 -> slot 1
    "one shared slot": torch.tensor([[1.0, 0.0], [1.0, 0.0]]),  # both -> slot 0
    "uniform weights": torch.tensor([[0.5, 0.5], [0.5, 0.5]]),
}
M_toy = {}
for name, choice in slot_choices.items():
    L_toy, R_toy = slot_memory(s_prev_toy, b_toy, choice.double().view(1, 2, 1, K_toy), gam_toy)
    L_last, R_last = L_toy[0, -1, 0], R_toy[0, -1, 0]  # [K, S]
    M_toy[name] = L_last.T @ R_last  # M = sum_k outer(L_k, R_k)  [S, S]


def cells(M):
    return {(i, j): round(M[i, j].item(), 4) for i, j in M.nonzero().tolist()}


print("dense P:         ", cells(P_toy))
for name, M in M_toy.items():
    print(f"{name:17s}", cells(M))

# %% [markdown]
# Cells $(0, 1)$ and $(2, 3)$ are the true pairs. With separate slots $\tilde P$ has exactly those (the
# weights squared: $0.25^2$, $0.5^2$). A shared slot adds $(0, 3)$ and $(2, 1)$: the state of the
# first token with the write of the second and vice versa, pairs that never happened.

# %%
# NBVAL_IGNORE_OUTPUT
plots_slots.toy_memories(P_toy, M_toy)  # the four matrices as annotated heatmaps, one colour scale
plt.show()

# %% [markdown]
# ## 3. Train `triple_slot`
#
# The paper's byte-level protocol (the config cell above), trained by `fit`. For contrast we
# train the dense `triple_latent` the same way (both $S = 16$). The evaluation uses the
# first `EVAL_BATCHES` batches of validation chunks (fewer than the paper's), and scores the
# unigram baseline (`unigram_bits`, no context at all) on the same chunks. The loss plot is in
# bits per byte (the loss in nats divided by $\ln 2$).
#
# That training is very short, so sections 4 and 5 also look inside `triple_slot` trained 25 times
# longer (2,000 steps). The repository ships it; set `RETRAIN = True` to train it here instead.

# %%
# NBVAL_IGNORE_OUTPUT
P = LP.replace(steps=STEPS)
train_split = data_text.load_split("train")
valid = data_text.load_split("validation")
eval_set = data_text.eval_batches(valid.tokens, P.seq_len, P.eval_batch_size, max_batches=EVAL_BATCHES)
print(f"training text: {len(train_split.tokens):,} bytes of the WikiText-2 train split; validation: {len(valid.tokens):,} bytes")

models, histories, bpb = {}, {}, {}
for variant in ("triple_slot", "triple_latent"):
    model, histories[variant] = fit(variant, P, seed=0, device=DEVICE, data=train_split.tokens, progress=False)
    models[variant] = model.eval()
    bpb[variant] = bits_per_byte(model, eval_set)
    print(f"{variant:14s} {count_parameters(model):,} parameters, {histories[variant]['seconds']:.0f} s, "
          f"validation BPB {bpb[variant]:.3f}")
model = models["triple_slot"]
unigram = unigram_bits(train_split.tokens, torch.cat([yb for _, yb in eval_set]), data_text.VOCAB_SIZE)
print(f"unigram baseline (no context): validation BPB {unigram:.3f}")

RETRAIN = False  # True: train the 2,000-step triple_slot here instead of loading the shipped one
long_model, long_record = shipped_or_retrained("triple_slot", RETRAIN, train_split.tokens, DEVICE)
LONG = long_record["steps"]
print(f"triple_slot, {LONG} steps (made by: {long_record['command']}, {long_record['train_seconds'] / 60:.1f} min "
      f"of training): validation BPB {bits_per_byte(long_model.eval(), eval_set):.3f}")

# %%
# NBVAL_IGNORE_OUTPUT
plots_training.loss_and_bpb(histories, bpb, unigram, paper_bpb(["triple_slot", "triple_latent"]),
                            loss_title="training loss (bits per byte)", ylim=(4, 5.6),
                            bar_title="after training (paper: the same width, d = 64)")
plt.show()

# %% [markdown]
# The bars mark the paper's numbers at this width: slots and the dense layer are close. After the
# short training both models here are still *worse* than the unigram baseline (so is the paper's
# Transformer): their logits are still too small to express even the byte frequencies. This
# protocol is far too short to separate slots from the dense memory. The long-trained
# `triple_slot` (printed above) is far below the baseline.
#
# ## 4. Which slots does the trained model use?
#
# `model.internals` records the slot weights $g_t$ of every layer. On one validation sentence, for
# the short and the long training:

# %%
# NBVAL_IGNORE_OUTPUT
sentence = "Slots share the writes of tokens."
tokens = widgets.byte_prompt(sentence, P.seq_len)  # BOS + bytes: [T]
labels = plots.token_labels(tokens)
for steps, m in ((STEPS, model), (LONG, long_model)):
    _, record = m.internals(tokens[None].to(DEVICE))
    g_layer0 = record["layers"][0]["slot_weights"][0].cpu()  # [T, H, K]
    plots_slots.slot_usage(g_layer0, labels, title=f"slot weights of layer 0 (triple_slot, {steps} steps)")
    plt.show()

# %% [markdown]
# How sharp are the choices? The entropy of $g_t$ is $\ln K = 2.08$ nats for an even spread and 0
# for one slot. Measured over validation chunks, per layer and head:

# %%
# NBVAL_IGNORE_OUTPUT
chunks = eval_set[0][0][:16].to(DEVICE)  # [16, 128]
entropy, largest = {}, {}
for steps, m in ((STEPS, model), (LONG, long_model)):
    _, rec_chunks = m.internals(chunks)
    gw = torch.stack([layer["slot_weights"].cpu() for layer in rec_chunks["layers"]])  # [L, B, T, H, K]
    entropy[steps] = -(gw * gw.clamp_min(1e-12).log()).sum(-1).mean((1, 2))  # [L, H]: mean over chunks, tokens
    largest[steps] = gw.max(-1).values.mean((1, 2, 3))  # [L]: a token's largest weight, on average
tables.print_slot_choices(entropy, largest)  # one line per run and layer
plots_slots.entropy_bars(entropy, math.log(model.config.num_slots))
plt.show()

# %% [markdown]
# After the short training the slot weights have barely left uniform (the slot projection's
# weights start small, so $g_t \approx 1/K$): the entropy stays close to $\ln K$ and a token's
# largest weight near 0.2. So nearly every pair of tokens shares every slot, which by section 2
# makes $\tilde P_t$ close to the rank-one product of averages.
#
# After 2,000 steps the slots specialize, in part: the entropy drops and a token's largest weight
# nearly doubles. In the heatmap each head favours a few slots, and some bytes lean strongly on one
# slot. No token writes to a single slot, though: the choices stay soft.
#
# ## 5. Same input, both memories
#
# Take the first layer of a trained `triple_slot` and one chunk of text. From the same projections
# and slot weights we build the dense $P_t$ that a triple-latent layer would hold (`pair_memory`)
# and the slot memory $\tilde P_t$ (`slot_memory`), and read each with the same queries, summing
# each read's entries ($q^{l\top}_t P_t\, q^r_t$ and $q^{l\top}_t \tilde P_t\, q^r_t$). For both
# trainings:

# %%
# NBVAL_IGNORE_OUTPUT
x_one = chunks[:1]  # [1, T]


def cosine(X, Y):  # per token and head, between the flattened S x S matrices
    return torch.nn.functional.cosine_similarity(X.flatten(-2), Y.flatten(-2), dim=-1)  # [T, H]


def both_memories(m):  # layer 0 of triple_slot model m on x_one: dense P_t, slot P̃_t, both reads
    block0 = m.blocks[0]
    with torch.no_grad():
        n0 = block0.norm1(m.embed(x_one) + m.pos(torch.arange(x_one.shape[1], device=DEVICE)))  # [1, T, d]
        _, b0, ql0, qr0, _, gam0 = block0.mixer.project(n0)  # [1, T, H, S] x4, [1, T, H] x2
        layer0 = m.internals(x_one)[1]["layers"][0]
        s_prev0 = previous_states(layer0["s"])  # [1, T, H, S]
        g0 = layer0["slot_weights"]  # [1, T, H, K]
        P_dense = pair_memory(s_prev0, b0, gam0)[0]  # [T, H, S, S]
        L0, R0 = slot_memory(s_prev0, b0, g0, gam0)
        M_slot = torch.einsum("thks,thkr->thsr", L0[0], R0[0])  # sum_k outer(L_k, R_k): [T, H, S, S]
        read_dense = pair_readout(s_prev0, b0, gam0, ql0, qr0)[0].sum(-1)  # sum_j r_t[j] = q^l P q^r: [T, H]
        read_slot = slot_readout(s_prev0, b0, g0, gam0, ql0, qr0)[0].sum(-1)  # sum_k f_t[k] = q^l M q^r: [T, H]
        bilinear = torch.einsum("ths,thsr,thr->th", ql0[0], M_slot, qr0[0])
    assert relative_error(read_slot, bilinear) < 1e-4  # the sum of slot features is q^l M q^r
    return {"dense": P_dense, "slot": M_slot, "cos": cosine(P_dense, M_slot), "reads": (read_dense, read_slot)}


mem = {STEPS: both_memories(model), LONG: both_memories(long_model)}
for steps, r in mem.items():
    print(f"{steps:5d} steps: cosine(P_t, P̃_t) over the chunk, per head:", [round(v, 3) for v in r["cos"].mean(0).tolist()])

# %%
# NBVAL_IGNORE_OUTPUT
t_show, head = x_one.shape[1] - 1, 0  # the chunk's last position, head 0
plots_slots.dense_against_slots(mem, t_show, head)  # the 2,000-step model's P_t and P̃_t, and all four spectra
plt.show()
plots_slots.memories_alike(mem, head)  # cosine along the chunk; the two reads, each scaled to max 1
plt.show()

# %% [markdown]
# After the short training the slot memory's spectrum collapses after its first singular value or
# two, as section 2 predicts for nearly uniform slot weights; after the long one the next few
# singular values are larger, though still small (right panel). The dense memory is dominated by
# one direction in both, because the states and writes of different tokens share a large common
# part.
#
# So the slot memory keeps the
# memory's main direction: the two matrices point the same way (cosine near one, printed above)
# and the two reads rise and fall together. That is not the same as losing nothing: trained to
# 2,000 steps, `triple_slot` is clearly behind `triple_latent`, 2.848 against 2.691 BPB over 3
# seeds each (`lm_2000steps.json`, table 3b of notebook 07). What the slots drop, the smaller
# directions or the pairing of *which* state went with *which* write, costs the model something
# once it has learned enough to use it; this notebook does not measure which.
#
# ## 6. Play
#
# Type a sentence and pick a layer to see which slots the long-trained model writes each byte to.
# Try (a menu on the website): `abcabcabcabc`, `aaaaaaaaaaaa` and `Slots, pairs, ranks.`

# %%
# NBVAL_IGNORE_OUTPUT
plots_slots.slot_widget(long_model, sentence, P.seq_len, LONG)

# %% [markdown]
# ## Summary
#
# * `triple_slot` keeps $K$ pairs of vectors per head instead of an $S \times S$ matrix; at the
#   paper's sizes both hold 256 numbers.
# * Its bilinear read uses $\tilde P_t = \sum_k L_k R_k^\top$: pairs written to separate slots survive,
#   pairs sharing a slot blend into cross terms; rank at most $K$.
# * After the paper's short training the slot weights stay close to uniform and the slot memory
#   is nearly rank one, like the dense memory; both models are close, above the unigram baseline.
# * After 2,000 steps each head favours a few slots, softly; the two memories still point the same
#   way, but `triple_slot` is behind `triple_latent`.
#
# Exercise: `notebooks/exercises/04_slots.ipynb` · Next: `05_convolution.ipynb`
