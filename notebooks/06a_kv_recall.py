# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06a · Recall, trained: the key-value read, and the gate start the compressed memory needs
#
# The second sitting of notebook 06. The key-value memory is trained on associative recall beside
# a Transformer (section 1.1). Then the compressed stack is trained without it: at the paper's gate
# start ($\gamma = \sigma(0) = 0.5$, a half-life of one token) it cannot learn recall, because no
# gradient reaches the pairs (sections 1.2-1.3); with the pair gate's bias at 4 (`gam_bias=4`) it
# can (section 1.4).
#
# **Learning goals.** After this notebook you can
# - train the repaired gated hybrid on recall and read, from its retrieval weights, which entry
#   it looked up and why a fresh model that already looks there still answers wrong;
# - compute, from the keep gates of a trained `triple_latent`, how much of a stored pair is left
#   after the filler;
# - measure, before any training, how much of the question's gradient reaches the pairs, and so
#   say why the layer cannot learn recall from the paper's gate start and can from a long one;
# - (optional) define an induction head and see the memory make its look-up at initialization.
#
# **Prerequisites.** Notebook 06 (the memory, its read, $\beta$ and the tied $W_{qk}$; its opening
# table has every symbol used here), notebook 02 (the pair memory's decay), the associative-recall
# task of notebook 00.
#
# **Time.** About 60 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 73 s (CPU 68 s, peak 1025 MiB) on a 2-core CPU
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
from IPython.display import Markdown, display

from tl_minimal import views
from tl_minimal.course import forgetting, gradient_reach, recall_start
from tl_minimal.course.shipped import shipped_or_retrained
from tl_minimal.data import recall as data_recall
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import recall_accuracy
from tl_minimal.training.protocols import protocol
from tl_minimal.training.recipes import build, count_parameters, fit
from tl_minimal.training.train import seed_everything
from tl_minimal.views import plots_retrieval, widgets

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

# %% [markdown]
# One config cell: the recall protocol's 200 steps normally, a few steps when `TL_SMOKE=1`.

# %%
# NBVAL_IGNORE_OUTPUT
RP = protocol("recall")  # batch 32, sequences of 128, AdamW 3e-4, weight decay 0.01
LP = protocol("lm")  # the byte-level protocol: only its context of 128 bytes is used (section 3)
RECALL_STEPS = config.pick(RP.steps, 3)  # our recall protocol's default: 200 (the paper reports 200 and 500)
EVAL_EXAMPLES = config.pick(1024, 64)  # fresh evaluation examples (the paper: 2,048)
DEVICE = get_device()
name = data_recall.PAPER_LAYOUT.name  # a token id -> its name in the task ("k5", "v13", "QUERY", ...)
print(f"smoke mode: {config.smoke()}   recall steps: {RECALL_STEPS}   eval examples: {EVAL_EXAMPLES}   device: {DEVICE}")

# %% [markdown]
# ## 1. Recall, trained
#
# The task (notebook 00): four key-value pairs, filler, then `QUERY key ANSWER`; the target is the
# asked key's value at the last position only. A constant guess scores 1/8 (3 bits per answer
# token), a random pick among the four values in context 1/4.
#
# ### 1.1 The key-value memory learns the look-up
#
# Two models, trained with the recall protocol (`RECALL_STEPS` steps, seed 0): `gated_hybrid_repaired`
# (tied $W_{qk}$, $\beta$ from 10) and the Transformer.

# %%
# NBVAL_IGNORE_OUTPUT
P_recall = RP.replace(steps=RECALL_STEPS)
x_eval, y_eval = data_recall.eval_set(EVAL_EXAMPLES, seed=0)  # fresh: not the training seed's examples
recall_models, recall_hist, accuracy = {}, {}, {}
for variant in ("transformer", "gated_hybrid_repaired"):
    model, recall_hist[variant] = fit(variant, P_recall, seed=0, device=DEVICE, progress=False)
    recall_models[variant] = model.eval()
    accuracy[variant] = recall_accuracy(model, x_eval, y_eval)["accuracy"]
    last = sum(recall_hist[variant]["loss"][-10:]) / min(10, len(recall_hist[variant]["loss"])) / math.log(2)
    print(f"{variant:13s} {count_parameters(model):,} parameters, {recall_hist[variant]['seconds']:.0f} s, "
          f"final training loss {last:.2f} bits per answer token, recall accuracy {accuracy[variant]:.1%}")

# %% [markdown]
# `fit` returns the training history in nats (the loss PyTorch computes); the plot divides by
# $\ln 2$ to show bits per answer token. Chance, a constant guess among the 8 value ids, is
# 1/8 = 12.5%.

# %%
# NBVAL_IGNORE_OUTPUT
plots_retrieval.recall_training(recall_hist, accuracy, RECALL_STEPS)
plt.show()

# %% [markdown]
# Look for which curve falls below the dotted 3-bit line of a constant guess, and which bar rises
# above the 1/4 of a random pick among the four values in context: that model has learned the look-up.
#
# **Where the memory reads.** `plots_retrieval.read_at` takes the retrieval weights $\alpha_t$ at the
# answer position from `model.internals` and spreads them over the memory positions $j$. Orange
# marks the entry holding the asked key, green its value, blue the asked key in the question. Rows:
# the trained model on an example it answers right (and one it answers wrong, if there is one), and
# the same model freshly initialized.

# %%
# NBVAL_IGNORE_OUTPUT
x_few, y_few = x_eval[:256], y_eval[:256]
trained_read = plots_retrieval.read_at(recall_models["gated_hybrid_repaired"], x_few, y_few)
seed_everything(0)
fresh_gated = build("gated_hybrid_repaired", RP).to(DEVICE).eval()
fresh_read = plots_retrieval.read_at(fresh_gated, x_few, y_few)
plots_retrieval.retrieval_grid(plots_retrieval.read_panels(trained_read, fresh_read, x_few, y_few),
                               title="gated_hybrid_repaired: the memory's weights at the answer position")
plt.show()

# %%
# NBVAL_IGNORE_OUTPUT
rows = torch.arange(len(x_few))
key_pos_few = torch.tensor([data_recall.locate(x_few[i], y_few[i])[-1]["key_pos"] for i in range(len(x_few))])
for label, read in (("initialized", fresh_read), ("trained", trained_read)):
    on_key = read["weights"][rows, key_pos_few]
    print(f"{label:12s} accuracy {read['correct'].float().mean():6.1%}   weight on the right entry {on_key.mean():.3f}   "
          f"read gate {read['read_gate'].mean():.3f}")

# %% [markdown]
# Before training the read already lands on the right entry with nearly all its weight, yet the
# fresh model answers wrong: the value it reads, $W_v e_{j+1}$, still has to be mapped to the right
# logit through the LayerNorm and the tied head. Training learns that quickly, because the read is
# right from the first step.
#
# The Transformer has to find the look-up in its attention, and 200 steps with one supervised token
# per sequence are too few for it. So this budget shows that an exact-match read makes recall
# easy, not which models can learn recall: section 1.4 asks that at a budget where the
# Transformer does recall.
#
# ### 1.2 Without the memory: what a trained `triple_latent` keeps across the gap
#
# `triple_latent` alone, trained with the same protocol, does not learn this task (its accuracy is
# printed below). The pairs end at position 12, the question starts at 125, and every token in
# between multiplies the pair memory by its $\gamma_u$ (notebook 02, section 3). The filler leaves
#
# $$
# \prod_{u=13}^{124} \gamma_u \qquad \text{(} \gamma^{112} \text{ for a constant gate } \gamma \text{)},
# $$
#
# of what the memory held, and $\prod_u \lambda_u$ of the running state. `shipped_or_retrained`
# loads a `triple_latent` trained on this task (`RETRAIN = True` trains it here instead). Its gates
# along the sequence, averaged over 256 fresh examples:

# %%
RETRAIN = False  # True: train the 200-step recall model here instead of loading the shipped one
latent, latent_record = shipped_or_retrained("triple_latent", RETRAIN, device=DEVICE, task="recall",
                                             steps=RP.steps)
print(f"{latent_record['command']}\n  {latent_record['steps']} steps, {latent_record['train_seconds']} s of training; "
      f"recall accuracy {latent_record['accuracy']:.1%} on {RP.eval_examples} fresh examples (a constant guess: 1/8)")
x_gap, _ = data_recall.eval_set(256, seed=0)
gates = forgetting.recall_gates(latent, x_gap)  # {"lam", "gam"}: [256, layers, T, heads]
gap = forgetting.filler_gap(x_gap[0])  # (first filler position, one past the last)
print(f"filler: positions {gap[0]} .. {gap[1] - 1}, {gap[1] - gap[0]} tokens")
plots_retrieval.gates_along_recall(gates, gap)
plt.show()

# %% [markdown]
# In the shaded filler every head keeps about half of its state per token, the gates' start:
# training has not moved them far. Multiplied over the gap, in log space:

# %%
kept = {key: forgetting.kept_fraction(g, *gap) for key, g in gates.items()}  # log10 of the fraction: [256, L, H]
half = {key: forgetting.half_life(g, *gap) for key, g in gates.items()}  # tokens: [256, L, H]
for key, name_ in (("gam", "pair memory, gamma"), ("lam", "running state, lambda")):
    med, hl = kept[key].median(dim=0).values, half[key].median(dim=0).values  # [L, H]: median over the examples
    print(f"{name_}: the best of its {med.numel()} heads keeps 10^{med.max():.1f} of a pair after the gap; "
          f"half-lives at the gap's average decay {hl.min():.2f} to {hl.max():.2f} tokens")
print(f"a constant gate of 0.5 over the gap: 10^{(gap[1] - gap[0]) * math.log10(0.5):.1f}; keeping half of a pair "
      f"would take a gate of {0.5 ** (1 / (gap[1] - gap[0])):.4f} at every filler token")

# %%
plots_retrieval.kept_across_gap(kept, gap[1] - gap[0])
plt.show()

# %% [markdown]
# Each bar is one head's share of a stored pair that reaches the question: even the tallest ends
# far below zero, so the model can only guess. The gates depend on the token, so a model could
# learn to keep on filler and overwrite on pairs. Why has training not found that?
#
# ### 1.3 Before any training: the gradient that reaches the pairs
#
# A weight moves only if the loss has a gradient with respect to it, and the gradient that reaches
# a pair's tokens passes back through the same gates as the pair. At the start every gate is
# $\sigma(0) = 0.5$, so over the roughly 110 tokens from the pairs to the questions it carries
# $0.5^{110} \approx 10^{-33}$ of what it carries at the question. In float32 that is **exactly 0**:
# with the other small factors on the way back it falls below the smallest number float32 holds,
# about $10^{-38}$ (in float64 a trace of about $10^{-32}$ survives).
#
# The **gradient reach** measures it at initialization, on section 1.4's task: the norm of the
# loss's gradient at the pairs' embeddings over its norm at the questions' own tokens
# (`gradient_reach.pair_reach`), for
# `triple_latent` at the paper's start, with the pair gate's bias at 4 ($\gamma = \sigma(4) = 0.982$),
# and for relatives. It takes seconds; nothing is trained.

# %%
REACH_ROWS = [("triple_latent, gamma starts at 0.5", "triple_latent", {}),
              ("triple_latent, gamma starts at 0.982", "triple_latent", {"gam_bias": 4.0}),
              ("gla (gamma starts at 0.958)", "gla", {}), ("deltanet", "deltanet", {}),
              ("transformer", "transformer", {}), ("gated_hybrid_paper (key-value memory)", "gated_hybrid_paper", {})]
reach = [{**gradient_reach.measure(variant, seeds=(0,), **settings), "label": label}
         for label, variant, settings in REACH_ROWS]
for row in reach:
    print(f"{row['label']:40s} gradient at the pairs / at the questions: {row['pair_reach']:.1e}")
plots_retrieval.gradient_reach(reach)
plt.show()

# %% [markdown]
# Read the right panel from the bottom: at the paper's start nothing of the question's gradient
# reaches the pairs, so no number of steps can teach this model to store them. A long start lets
# a little through, GLA more; the Transformer and `gated_hybrid_paper` read the pairs' tokens
# directly (attention, and the key-value entries, which never decay). The left panel shows where
# the paper's start loses it: the share halves with every token back.
#
# ### 1.4 What a long start does, trained
#
# The same task, trained at a budget where the Transformer recalls: the calibrated 4-pair recall of
# notebook 07, section 6 (every pair asked, 1,000 steps of 32 sequences), each row at the learning
# rate its seed 0 did best with. Only the pair gate's starting bias differs between the rows. A seed
# "recalls" at 95% or more; the interval is the exact (Clopper-Pearson) 95% interval of that rate.
# Chance, a constant guess among the 8 value ids, is 1/8 = 12.5%.

# %%
display(Markdown(recall_start.markdown(recall_start.gate_start_rows(["triple_latent"]))))
start = {row["gam_bias"]: row for row in recall_start.gate_start_rows(["triple_latent"])}
for bias, row in sorted((bias, row) for bias, row in start.items() if row["values"]):
    print(f"gamma starts at {recall_start.gate_start(bias)}: mean accuracy {row['mean']:.1%}, "
          f"{recall_start.rate(row)} recall")

# %% [markdown]
# The layer that sat at a constant guess recalls once its pair gate starts long, on most seeds:
# what failed was the start, not the fixed-size state. One seed stays at a guess among the values
# in context, so the long start makes recall learnable, not certain; $\sigma(2) = 0.88$ (a
# half-life of 5 tokens) recalled on none of its 3 seeds.
#
# Every relative that recalls starts long (notebook 03, section 10) or, like DeltaNet, has no
# decay; the paper's code starts both gates at 0.5. The course keeps the paper's start for the
# paper's variants and names the long start as a setting (`--set gam_bias=4`). A gradient at the
# pairs is needed, not sufficient: notebook 06b (section 5) changes
# this layer into GLA one step at a time and finds that the key matters too.
#
# ## 2. Play
#
# Write your own pairs, choose which key to ask, how much filler separates the pairs from the
# question, and whether the trained or the fresh `gated_hybrid_repaired` answers. The bars are the memory's
# weights at the answer position; a pair the task cannot use gets a message. First the trained
# model's starting picture, then the controls (they move in a running kernel).

# %%
# NBVAL_IGNORE_OUTPUT
PLAY_MODELS = {"gated_hybrid_repaired (trained)": recall_models["gated_hybrid_repaired"], "gated_hybrid_repaired (initialized)": fresh_gated}
widgets.recall_widget(PLAY_MODELS, model="gated_hybrid_repaired (trained)", max_len=RP.seq_len, static=True)

# %%
# NBVAL_IGNORE_OUTPUT
widgets.recall_widget(PLAY_MODELS, pairs="k5=v13 k6=v20 k7=v17 k8=v14", ask="k7", filler=60, max_len=RP.seq_len)

# %% [markdown]
# Pairs worth trying (on the website the box is a menu of these): `k9=v15 k10=v19 k11=v13 k12=v18`
# (the other four keys), `k8=v14 k7=v17 k6=v20 k5=v13` (reversed: does the read follow the asked
# key?), and `k5=v13 k6=v14` (two pairs, where training had four).

# %% [markdown]
# ## 3. Optional: induction heads, and which token asks
#
# *(Optional: nothing else depends on it; notebook 07c, section 4, has the whole study.)* An
# **induction head** (Olsson et al. 2022, `docs/paper.md` section 7), a circuit found in trained
# Transformers, copies what followed an earlier occurrence of the current token: after
# "... A B ... A" it predicts B. It takes two attention layers. The key-value memory makes the same
# look-up in one step when the current token asks (`query_align`):
#
# - `"current"`: $q_t = W_{qk} e_t$ over entries $j \le t-1$: "what followed this token last
#   time?", a guess of $x_{t+1}$, the induction look-up.
# - `"previous"` (the paper's, and the library default): $q_t = W_{qk} e_{t-1}$ over $j \le t-2$:
#   "what followed the previous token?", a guess of $x_t$, which the model already has. It fits
#   the recall task only because a fixed marker sits between key and answer (`docs/paper.md`
#   section 6.3).
#
# First the mechanism, **at initialization** (fresh models, tied $W_{qk}$): on a repeated
# sentence, each row shows the token whose value gets the largest retrieval weight at each
# position; green where it equals the next byte.

# %%
sentence = "the cat ran. the cat ran."
tokens_ind = widgets.byte_prompt(sentence, LP.seq_len)  # BOS + bytes: [T]
T_ind = len(tokens_ind)
read_token, right_next, right_current = {}, {}, {}
second_half = range(T_ind // 2 + 1, T_ind - 1)
for align in ("current", "previous"):
    seed_everything(0)
    fresh = build("gated_hybrid_repaired", LP, {"query_align": align}).to(DEVICE)
    _, rec = fresh.internals(tokens_ind[None].to(DEVICE))
    w, idx = rec["retrieval"]["weights"][0].cpu(), rec["retrieval"]["index"][0].cpu()  # [T, top_k] each
    top = idx.gather(-1, w.argmax(-1, keepdim=True))[:, 0]  # memory position of the top entry: [T]
    read = torch.where(top >= 0, tokens_ind[(top + 1).clamp(max=T_ind - 1)], tokens_ind.new_tensor(256))  # its value token
    read_token[f"{align!r} alignment: the value read"] = read
    right_next[align] = sum(int(read[t] == tokens_ind[t + 1]) for t in second_half)
    right_current[align] = sum(int(read[t] == tokens_ind[t]) for t in second_half)
plots_retrieval.prediction_strips(tokens_ind, read_token, per_row=T_ind + 6, title="the memory's read at initialization (tied W_qk)")
plt.show()
for align, hits in right_next.items():
    print(f"{align:8s} second copy of the sentence: the read is the NEXT byte at {hits} of "
          f"{len(second_half)} positions, the CURRENT byte at {right_current[align]}")

# %% [markdown]
# At initialization the current-token query returns the next byte in the second copy, the
# previous-token query the byte already there (PAD: nothing to read). Whether the copying survives
# training is the optional notebook 07c's study of induction (section 4).
#
# ## Summary
#
# * The fresh tied `gated_hybrid_repaired` already reads the right entry, yet answers wrong: training maps
#   the value it reads to the right logit within a few hundred steps. An exact-match read makes
#   recall easy; that short budget does not say which models can learn it.
# * A `triple_latent` trained at the paper's gate start ($\gamma = \sigma(0) = 0.5$, a half-life of
#   one token) keeps nothing of a stored pair after the 112 filler tokens, and training cannot fix
#   that: at that start the question's gradient at the pairs is exactly 0 in float32.
# * With the pair gate's bias at 4 ($\gamma$ starts at 0.982, a half-life of 38 tokens) a gradient
#   reaches the pairs, and the same layer recalls on 6 of 7 seeds. Recall needs a memory that the
#   gradient reaches: a gate that starts long, or entries that never decay (the key-value memory,
#   attention). Reaching it is needed, not sufficient (notebook 06b, section 5).
# * (Optional.) The memory with `query_align="current"` makes an induction head's look-up at
#   initialization.
#
# Exercise: `notebooks/exercises/06_kv_gated_fusion.ipynb` · Next: `06b_family.ipynb`: the layer
# beside its relatives, what each one's start, key and write do, and which changes from this layer
# to GLA decide recall.
