# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 · Paper reproduction: which claims hold?
#
# The paper (`docs/paper.md` section 5) reports a handful of numbers: bits per byte (BPB) on
# byte-level WikiText-2, a mean token loss with the MiniMind tokenizer, and associative-recall
# accuracy. This notebook sets **our** numbers beside them, for every variant, over several seeds,
# with the parameter counts, and says where they agree and where they do not. It opens with the
# paper's last variant, `transformer_plus_triple`, and what its lead at 80 steps measures: the
# lesson in fair comparison that the tables need.
#
# **Learning goals.** After this notebook you can
# - explain where `transformer_plus_triple`'s large lead at 80 steps comes from (the scale of
#   the logits, measured with a control), what is left of it after 2,000 steps, and so why a
#   step-matched comparison at 80 steps needs care;
# - read a reproduction table: mean ± standard deviation over seeds, parameter counts, the
#   paper's number, and the unigram baseline every BPB has to beat;
# - say which of the paper's claims hold here (the compressed latent helps language modelling,
#   more clearly with longer training) and which do not (the hybrid's gain is a leak; the gated
#   hybrid's one recall success did not reproduce, with the paper's own code or ours);
# - explain why the paper's gated hybrid fails to recall at the paper's budget, from measurements
#   at initialization, and what an exact-match read changes (and what it does not show);
# - say what the repaired gated read does and does not do: where its recall breaks (a key written
#   twice, a key asked with another token, thousands of tokens of distance, copying text);
# - find for every number the file and the command that produced it.
#
# **Prerequisites.** Notebooks 01-03 (the triple-latent layer), 04-06 (slots, the convolution
# and its leak, the key-value memory and late fusion); mean and standard deviation. Every symbol
# is in the course's glossary, [`docs/glossary.md`](../docs/glossary.md).
#
# **Time.** About 225 minutes: 225 of reading (8237 words at 100 a minute, 546 lines of code at 4,
# 13 figures at half a minute each) and a run of every cell in default mode, measured at 39 s (CPU
# 36 s, peak 950 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
#
# Section 1 trains three small language models for the paper's 80 steps to make its point. The
# tables the notebook does not train itself (that takes hours on a 2-core CPU): it **reads the
# JSON files** that `python -m tl_minimal.experiments` wrote into `data/results/` (one file per
# table row group, named by its settings; `data/results/README.md` is the index). Each file holds the
# protocol (every hyperparameter), the data source, the device, the git commit and the exact
# command. `data/results/run_all.sh` lists every command; section 9 reruns a tiny protocol
# through the same function, and offers the full rerun.
#
# | table | protocol (`docs/paper.md` section 4) | files |
# |---|---|---|
# | section 1 | `transformer_plus_triple` and the Transformer, trained here for 80 steps; then tables 1, 3a and 3b | `lm.json`, `lm_40s_budget.json`, `lm_2000steps.json` |
# | 1, 1b | byte WT2, d=64, 3 layers, S=16, 80 steps; the hybrids with and without the leak | `lm.json`, `lm_noncausal.json` |
# | 2 | byte WT2, parameters within 5% of the Transformer's 174,848 | `lm_d60_S8.json`, `lm_d60.json`, `lm_d56_S16.json`, `lm_S8.json`, `lm_S12.json` |
# | 3a, 3b, 3c | the same wall-clock budget per run; 2,000 steps instead of 80; the learning rate at 2,000 steps | `lm_40s_budget.json`, `lm_2000steps*.json` |
# | 4, 5 | associative recall, MQAR (the recall study, see `RECALL_STUDY.md`) | `recall*.json`, `mqar*.json` |
# | 6 | MiniMind tokenizer, hidden 96, 2 layers, 120 steps, seeds 1-3 | `tokenized*.json` |
# | sections 10-13 | beyond the paper: where recall breaks (overwritten keys, aliases, long distances, induction on text) | `overwrite*.json`, `alias*.json`, `distance.json`, `induction*.json` |

# %%
# NBVAL_IGNORE_OUTPUT
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((p for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), "tl-minimal")
    raise SystemExit(f'tl_minimal is not installed for this kernel; run this in a cell, then restart the '
                     f'kernel:  %pip install -e "{clone}"') from None

import contextlib
import io
import json
import math
import re
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from IPython.display import Markdown, display

from tl_minimal import views
from tl_minimal.data import text as data_text
from tl_minimal.experiments import results, run_experiment
from tl_minimal.experiments.protocols import protocol
from tl_minimal.experiments.studies import breaks
from tl_minimal.training import config
from tl_minimal.training.device import get_device
from tl_minimal.training.evaluate import bits_per_byte, evaluating, unigram_bits
from tl_minimal.training.recipes import build, count_parameters, fit, make_sampler
from tl_minimal.training.train import seed_everything, train
from tl_minimal.views import palette, plots
from tl_minimal.views.plots_seeds import Group, seeds_beside_paper

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

palette.apply()  # the colour-blind-safe colours (Okabe-Ito) for every plot below

RESULTS = results.results_dir()
RERUN_FULL = False  # True: run every command of data/results/run_all.sh again (hours on a CPU)
SMOKE_STEPS = config.pick(3, 2)  # the tiny rerun in section 9
LM_STEPS = config.pick(protocol("lm").steps, 2)  # section 1's training: the paper's byte-level budget, 80
LM_EVAL_BATCHES = config.pick(16, 1)  # section 1's validation: batches of 16 chunks (the tables: 128)
DEVICE = get_device()
print(f"smoke mode: {config.smoke()}   results folder: data/results   full rerun: {RERUN_FULL}   "
      f"section 1: {LM_STEPS} steps on {DEVICE}")

# %% [markdown]
# The yardstick for every BPB below: the **unigram baseline**, each byte predicted from its
# frequency in the training text with no context at all (`unigram_bits`), on the same validation
# chunks as the tables (the first 128 batches of 16 chunks of 128 bytes). A model below it has
# learned something about context; one above it has not yet learned even the byte frequencies.

# %%
LP = protocol("lm")
train_text, valid_text = data_text.load_split("train"), data_text.load_split("validation")
table_chunks = data_text.eval_batches(valid_text.tokens, LP.seq_len, LP.eval_batch_size, max_batches=LP.eval_batches)
UNIGRAM = unigram_bits(train_text.tokens, torch.cat([yb for _, yb in table_chunks]), data_text.VOCAB_SIZE)
print(f"unigram baseline on the tables' validation chunks: {UNIGRAM:.3f} BPB   (uniform over 259 ids: {math.log2(259):.3f})")

# %% [markdown]
# ## 1. Before the tables: what a step-matched lead measures
#
# The tables below compare models trained for the same number of steps. Such a comparison is only
# as fair as the budget is long enough, and one of the paper's variants shows why. It keeps the
# Transformer unchanged and adds **one** triple-latent layer (notebooks 01-03) that reads the raw
# token stream, $\operatorname{LN}(e)$, not the stack: `transformer_plus_triple`. Its output joins
# the logits at the very end, like the key-value memory of notebook 06 ("late fusion",
# `docs/paper.md` section 3.5):
#
# $$
# o^{\mathrm{side}}_t = \operatorname{TripleLatent}\big(\operatorname{LN}(e)\big)_t, \qquad
# \text{logits}_t = E\, h_t + E \operatorname{LN}(o^{\mathrm{side}}_t) .
# $$
#
# At the paper's 80 steps it beats the Transformer by almost a whole bit per byte (table 1 in
# section 3, mean ± standard deviation over seeds):

# %%
# NBVAL_IGNORE_OUTPUT
table1 = {r.variant: r for r in results.TABLES["lm_matched_width"].rows() if "(" not in r.label}
for variant in ("transformer", "transformer_plus_triple"):
    print(f"table 1: {variant:24s} {table1[variant].mean:.3f} ± {table1[variant].std:.3f} BPB "
          f"({table1[variant].n} seeds, {table1[variant].params:,} parameters)")

# %% [markdown]
# One layer is a small addition. Where does such a gain come from? This is the one section of the
# notebook that trains: both models with the byte-level protocol (seed 0, `LM_STEPS` steps), scored
# on `LM_EVAL_BATCHES` batches of validation chunks beside the unigram baseline on the same chunks.

# %%
# NBVAL_IGNORE_OUTPUT
P_lm = LP.replace(steps=LM_STEPS)
lm_eval = data_text.eval_batches(valid_text.tokens, P_lm.seq_len, P_lm.eval_batch_size, max_batches=LM_EVAL_BATCHES)
x_lm = torch.cat([xb for xb, _ in lm_eval]).to(DEVICE)  # [chunks, 128]
y_lm = torch.cat([yb for _, yb in lm_eval]).to(DEVICE)
unigram = unigram_bits(train_text.tokens, y_lm, data_text.VOCAB_SIZE)
lm_models, lm_hist, lm_bpb = {}, {}, {}
for variant in ("transformer", "transformer_plus_triple"):
    model, lm_hist[variant] = fit(variant, P_lm, seed=0, device=DEVICE, data=train_text.tokens, progress=False)
    lm_models[variant] = model.eval()
    lm_bpb[variant] = bits_per_byte(model, lm_eval)
print(f"{'unigram baseline (no context)':30s} validation BPB {unigram:.3f}")
for variant, value in lm_bpb.items():
    print(f"{variant:30s} validation BPB {value:.3f}   ({count_parameters(lm_models[variant]):,} parameters)")

# %% [markdown]
# At 80 steps the plain Transformer has not even reached the unigram baseline. Two measurements
# say why. First, how do the two vectors added before the head, the stack's $h_t$ and the side
# layer's $z_t = \operatorname{LN}(o^{\mathrm{side}}_t)$, compare? (Read with forward hooks on the final
# LayerNorm and on the side layer's output LayerNorm.)

# %%
# NBVAL_IGNORE_OUTPUT
tpt = lm_models["transformer_plus_triple"]
seen = {}
hooks = [tpt.norm.register_forward_hook(lambda mod, inp, out: seen.__setitem__("h", out)),
         tpt.side_out.register_forward_hook(lambda mod, inp, out: seen.__setitem__("z", out))]
with evaluating(tpt):
    tpt(x_lm)
for hook in hooks:
    hook.remove()
h_vec, z_vec = seen["h"], seen["z"]  # [chunks, 128, d] each
print(f"|h_t| = {h_vec.norm(dim=-1).mean():.2f}   |z_t| = {z_vec.norm(dim=-1).mean():.2f}   "
      f"|h_t + z_t| = {(h_vec + z_vec).norm(dim=-1).mean():.2f}   cos(h_t, z_t) = "
      f"{F.cosine_similarity(h_vec, z_vec, dim=-1).mean():.2f} (mean over positions)")

# %% [markdown]
# Both are LayerNorm outputs, of length about $\sqrt{d} = 8$, and they point in nearly the same
# direction: the sum is nearly $2 h_t$. The head is $E$, the embedding, initialized at
# $\mathcal{N}(0, 0.02)$ and moved by at most about $3 \times 10^{-4}$ per step, so after 80 steps the logits
# are small and the predicted distribution is still too flat. A vector twice as long makes every
# logit twice as large. Second measurement: multiply each trained model's logits by a factor $\mu$
# and score again (only the scale changes, not which byte is preferred):

# %%
# NBVAL_IGNORE_OUTPUT
factors = [0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0]
scaled = {}
with torch.no_grad():
    for variant, model in lm_models.items():
        with evaluating(model):
            logits = model(x_lm)  # [chunks, 128, V]
        scaled[variant] = [F.cross_entropy((mu * logits).flatten(0, 1), y_lm.flatten()).item() / math.log(2)
                           for mu in factors]
        best = min(range(len(factors)), key=lambda i: scaled[variant][i])
        print(f"{variant:24s} BPB at μ = 1: {scaled[variant][factors.index(1.0)]:.3f}   best: {scaled[variant][best]:.3f} "
              f"at μ = {factors[best]}")

# %% [markdown]
# Both models are under-confident: their BPB improves when the logits are scaled up, the
# Transformer's far more. Last, a control: train a plain Transformer whose logits are simply
# doubled, $\text{logits}_t = 2 E h_t$, with no side layer at all. This needs the recipe that
# `fit` runs, written out, because the model is changed (a forward hook on the head) before
# training.

# %%
# NBVAL_IGNORE_OUTPUT
seed_everything(0)
doubled = build("transformer", P_lm)
doubled.head.register_forward_hook(lambda mod, inp, out: 2 * out)  # logits_t = 2 E h_t, in training and after
lm_hist["transformer, logits x 2"] = train(doubled, make_sampler(P_lm, 0, train_text.tokens), P_lm.steps, lr=P_lm.lr,
                                          weight_decay=P_lm.weight_decay, grad_clip=P_lm.grad_clip, device=DEVICE,
                                          progress=False)
lm_bpb["transformer, logits x 2"] = bits_per_byte(doubled, lm_eval)
for variant, value in lm_bpb.items():
    print(f"{variant:26s} validation BPB {value:.3f}   (unigram baseline {unigram:.3f})")

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.5))
plots.loss_curves(lm_hist, bits=True, ax=axes[0], smooth=5, title=f"training loss, {LM_STEPS} steps")
axes[0].axhline(unigram, color="black", ls=":", lw=1, label="unigram baseline")
axes[0].legend(fontsize=8)
for variant, values in scaled.items():
    axes[1].plot(factors, values, marker="o", label=variant)
axes[1].axhline(unigram, color="black", ls=":", lw=1, label="unigram baseline")
axes[1].axvline(1.0, color="grey", lw=0.5)
axes[1].set_xlabel("factor μ multiplying the trained logits")
axes[1].set_ylabel("validation BPB")
axes[1].set_title("how much is only the logits' scale?")
axes[1].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# In the run saved here the doubled Transformer scores about what `transformer_plus_triple` scores
# (we checked seeds 1 and 2 the same way while writing this notebook, with the same outcome).
# So most of the 80-step gain is **not** what the side layer remembers about the byte stream: it
# is that late fusion adds a second LayerNormed vector, pointing the same way as the first, in
# front of a head that is still too small to make confident predictions. `gated_hybrid`'s late
# fusion has the same shape ($h_t + \operatorname{LN}(g^{\mathrm{read}}_t m_t)$) and the same kind of 80-step
# lead in table 1; we have not run the control for it.
#
# Does the gain survive longer training? The tables below trained every variant for
# 80 steps, for as many steps as a 40-second budget allows (a different number for each model and
# seed: the time-matched table), and for 2,000 steps, three seeds each. Read from `data/results`,
# with the mean number of steps behind each point:

# %%
# NBVAL_IGNORE_OUTPUT
lengths, by_table = {}, {}
for key in ("lm_matched_width", "lm_time_matched", "lm_2000_steps"):
    for r in results.TABLES[key].rows():
        if r.variant in ("transformer", "transformer_plus_triple", "triple_latent") and "(" not in r.label:
            lengths.setdefault(r.variant, []).append((sum(r.steps) / len(r.steps), r.mean, r.std or 0.0))
            by_table.setdefault(key, {})[r.variant] = (sum(r.steps) / len(r.steps), r.mean)
fig, ax = plt.subplots(figsize=(6.5, 3.6))
for variant, pts in lengths.items():
    xs, ys, es = zip(*sorted(pts), strict=True)
    ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=variant)
    print(f"{variant:24s} " + "   ".join(f"{s:5.0f} steps: {m:.3f}" for s, m, _ in sorted(pts)))
ax.axhline(UNIGRAM, color="black", ls=":", lw=1, label=f"unigram baseline ({UNIGRAM:.2f})")
ax.set_xscale("log")
ax.set_xlabel("training steps (mean over 3 seeds)")
ax.set_ylabel("validation BPB (128 batches)")
ax.set_title("byte-level WikiText-2, learning rate 3e-4")
ax.legend(fontsize=8)
plt.show()
for key, row in by_table.items():  # how far each model is ahead of the Transformer, in BPB
    (s_tf, tf), (s_tpt, tpt_bpb), (s_tl, tl_bpb) = (row[v] for v in ("transformer", "transformer_plus_triple",
                                                                    "triple_latent"))
    print(f"{key:17s} transformer_plus_triple {tf - tpt_bpb:+.2f} BPB ({s_tpt:.0f} vs {s_tf:.0f} steps)   "
          f"triple_latent {tf - tl_bpb:+.2f} BPB ({s_tl:.0f} vs {s_tf:.0f} steps)")

# %% [markdown]
# The lead of `transformer_plus_triple` over the Transformer (the last lines, positive = ahead)
# shrinks as training goes on. Read the middle line with care: a 40-second budget buys each model
# a different number of steps, so that comparison is time-matched, not step-matched. Meanwhile the
# plain `triple_latent` stack, level with the Transformer at 80 steps, passes
# `transformer_plus_triple` by 2,000 steps. Nor is the 2,000-step lead the final word: the
# protocol's learning rate of $3 \times 10^{-4}$ is low for the Transformer, which does better
# with $10^{-3}$ (table 3c, section 5); `transformer_plus_triple` was not run at other rates.
#
# What to take from it, for every table that follows: a step-matched comparison at 80 steps
# measures mostly how fast a model's logits grow, and anything that enlarges them early (here,
# adding a second normalized vector) looks like a better architecture. The side layer's own
# contribution is the smaller part, and longer training, where every model has time to scale its
# logits, is the fairer test. So read table 1 (80 steps) beside tables 3a and 3b (the same
# wall-clock budget; 2,000 steps), and never a single seed: the sections below do both.

# %% [markdown]
# ## 2. Where the numbers come from
#
# One row per results file: the device, the threads, the commit (`+dirty`: other files of the
# working tree were being edited while it ran; the model code was not) and the data source.
# Offline, the byte-level protocol trains on the **first 1 MB of the train split** (the paper's 80
# steps see about 164 KB, so this matters little at 80 steps and more at 2,000), and the tokenized
# protocol runs on **WikiText-2 text** tokenized with the MiniMind tokenizer, not MiniMind's
# pretraining corpus.

# %%
# NBVAL_IGNORE_OUTPUT
files = sorted({f for t in results.TABLES.values() for f in t.files()} | set(RESULTS.glob("lm_2000steps_lr*.json")))
lines = ["| file | seeds | steps | device | threads | commit | date |", "|---|---|---|---|---|---|---|"]
for info in results.provenance(files):
    lines.append(f"| `{info['file']}` | {info['seeds']} | {info['steps']} | {info['device']} | {info['threads']} "
                 f"| `{(info['git_commit'] or '-')[:7]}{'+dirty' if 'dirty' in (info['git_commit'] or '') else ''}` "
                 f"| {(info['date'] or '')[:16]} |")
display(Markdown("\n".join(lines)))
local_path = re.compile(r" ?\(/[^()]*\)")  # where the offline copy lay on the machine that ran it: not needed here
sources = {(local_path.sub("", i["data_source"] or ""), i["data_note"]) for i in results.provenance(files)}
for source, note in sorted(sources, key=str):
    print("-", source, f"\n  NOTE: {note}" if note else "")

# %% [markdown]
# ## 3. Byte-level WikiText-2, matched width (table 1)
#
# d = 64, 3 layers, 4 heads, S = 16 (the gated hybrid S = 8, as in the paper), 80 AdamW steps of
# 16 random 128-byte windows, BPB on the first 128 batches of validation chunks. Mean ± sample
# standard deviation over seeds 0, 1, 2, and each row minus the Transformer paired by seed (the same
# seed saw the same batches) with its 95% t interval over the 3 seeds.

# %%
# NBVAL_IGNORE_OUTPUT
for key in ("lm_matched_width", "lm_leak"):
    display(Markdown(f"**{results.TABLES[key].title}**\n\n" + results.TABLES[key].markdown()
                     + f"\n\nUnigram baseline on the same chunks: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **What agrees, what does not (80 steps, seeds 0-2, the first 128 validation batches, as in the paper).**
#
# - *Transformer:* 5.050 ± 0.042 BPB here, 5.124 in the paper: ours is 0.07 lower, about two of
#   our standard deviations. The evaluation chunks are the paper's; the training text is not (we
#   sample windows from the first 1 MB of the train split, the paper from all of it), nor are the
#   seeds. Close, not identical.
# - *Conv-free triple-latent layers help a little:* `triple_latent` 4.996 ± 0.010 and `triple_slot`
#   5.005 ± 0.010, both below the Transformer as in the paper (5.022 and 5.041 against its 5.124),
#   by 0.05 BPB, with 7.5% more parameters (187,928 vs 174,848). Ours and the paper's agree within
#   0.04. But 3 seeds do not resolve it: `triple_latent` minus `transformer` is -0.054 BPB with a
#   paired 95% interval of [-0.180, +0.073], `triple_slot` -0.044 [-0.123, +0.034] (the table's
#   column): a lead this budget cannot tell from zero.
# - *The hybrid's gain is the leak:* with the causal convolution `triple_hybrid` scores
#   5.019 ± 0.005, no better than `triple_latent`; the paper's 4.766 is not reproduced. With the
#   paper's symmetric convolution (table 1b, `causal=False`) it drops to 4.628 ± 0.049, *below* the
#   paper's number. Position t then sees bytes t+1 and t+2, its own target among them. The same leak
#   takes `gated_hybrid` from 4.333 to 3.581, beside the 3.595 the paper reports for its own gated
#   hybrid (one run, in its recall table; `docs/paper.md` section 5.1), which has the same padding.
# - *The unigram baseline:* every model without late fusion (the Transformer, `triple_latent`,
#   `triple_slot`, the causal `triple_hybrid`) is still *above* it after 80 steps: at the paper's
#   budget none of them has yet learned even the byte frequencies well.
# - *Two late-fusion variants do best:* `transformer_plus_triple` 4.174 ± 0.026 and
#   `gated_hybrid` 4.333 ± 0.030 (both causal: `tests/model/test_models.py::test_causal` checks every
#   variant). Both add a LayerNorm-ed side path to the logits (late fusion). Section 1 showed
#   that for `transformer_plus_triple` this is mostly a matter of logit scale: the side
#   vector points the same way as the stack's and doubles it, and a plain Transformer whose logits
#   are doubled reaches the same BPB at 80 steps. The 2,000-step table (section 5) shows what is
#   left of the lead with longer training.
# - `gated_hybrid` here is the library's current default (tied query/key projection, learnable
#   score scale β starting at 10: see the recall study); `gated_hybrid_paper` is the paper's
#   configuration, 4.272 ± 0.026 (190,233 parameters), a little better than the default here.

# %% [markdown]
# ## 4. Parameter-matched (table 2)
#
# Each variant gets sizes (`--set`) that bring it within 5% of the Transformer's 174,848
# parameters. `triple_hybrid (d=56, S=16)` is the paper's parameter-matched hybrid (169,424);
# `triple_hybrid (S=8)` is the paper's "budget winner" (177,752; paper: 4.806 vs the
# Transformer's 5.143 on its own evaluation subset).

# %%
# NBVAL_IGNORE_OUTPUT
display(Markdown(results.TABLES["lm_param_matched"].markdown() + f"\n\nUnigram baseline: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **What agrees, what does not.** The parameter counts of the paper's configurations agree exactly
# with the paper's (174,848 for the Transformer, 170,424 and 170,520 for `triple_latent` and
# `triple_slot` at d=60, 169,424 for the d=56 hybrid, 177,752 for the S=8 hybrid); the `S=12` rows
# are our own alternative, not the paper's setup.
#
# - *Conv-free variants, roughly at parity:* at the paper's configuration, `triple_latent (d=60,
#   S=16)` 5.119 ± 0.016 and `triple_slot (d=60, S=16)` 5.120 ± 0.011, on the paper's 5.114 and 5.126
#   but 0.07 BPB *behind* our Transformer's 5.050 ± 0.042 (the paper: level with its 5.124). Shrunk
#   through the state instead, `triple_latent (S=12)` 4.980 ± 0.011 and `triple_slot (S=12)`
#   4.999 ± 0.009 are 0.05-0.07 *ahead*. Both within two Transformer standard deviations: parity
#   agrees in kind; which side of it depends on where the parameters are removed (`docs/paper.md`
#   section 6.7). The paper's numbers stand beside its own d=60 configurations; the S=12 rows are
#   ours and have none.
# - *The parameter-matched hybrid does not win:* the paper's configuration `triple_hybrid (d=56,
#   S=16)` scores 5.221 ± 0.030, *worse* than the Transformer by 0.17; the paper's 5.067 (better by
#   0.06) came with the leaky convolution. The paper's budget winner `triple_hybrid (S=8)` gives
#   5.023 ± 0.019, at parity with the Transformer, not the paper's 4.806.
# - `transformer_plus_triple (d=60)` 4.245 ± 0.032 and `gated_hybrid (d=60, S=8)` 4.411 ± 0.030 keep
#   most of their matched-width gain at the Transformer's size (the paper reports no parameter-matched
#   BPB for them).

# %% [markdown]
# ## 5. Step-matched vs time-matched, and longer training (table 3)
#
# The paper compares models after the same number of steps. Here every run instead gets the same
# wall-clock training budget on this CPU (one thread; the machine was shared with other jobs, so
# the step counts are noisy), and separately 2,000 steps instead of 80.

# %%
# NBVAL_IGNORE_OUTPUT
for key in ("lm_time_matched", "lm_2000_steps"):
    display(Markdown(f"**{results.TABLES[key].title}**\n\n" + results.TABLES[key].markdown()
                     + f"\n\nUnigram baseline: {UNIGRAM:.3f} BPB."))
budget = [i["max_seconds"] for i in results.provenance(results.TABLES["lm_time_matched"].files())]
print("time budget per run (s):", budget)

# %% [markdown]
# **Time-matched (40 s of training per run, seeds 0-2).** On this CPU our chunked triple-latent forms
# cost about as much per step as attention at T = 128, so every model got a similar number of
# steps (about 180-500; 0.09-0.27 s per step), and the time-matched table is in effect a
# step-matched table at about 4x the paper's 80 steps. The step counts say more about the shared
# machine's load than about the models: `transformer_plus_triple` did *more* steps than the
# Transformer although it computes strictly more, and one `triple_latent` seed got 179 steps where
# the others got over 320 (hence its ± 0.296). We did not run the paper's reference code, whose loop over time
# would give the triple-latent variants about 5x fewer steps (`docs/paper.md` section 6.5).
#
# With about 300 steps the ordering changes from table 1: the causal `triple_hybrid` is now clearly
# ahead of the Transformer (3.442 ± 0.069 vs 3.792 ± 0.045), `triple_latent` (3.650 ± 0.296) and
# `triple_slot` (3.730 ± 0.010) are ahead by less, and `transformer_plus_triple` (3.208 ± 0.057) and
# `gated_hybrid` (3.369 ± 0.078) stay in front. At 80 steps the causal convolution was worth
# nothing; after a few hundred steps it is worth a lot.
#
# **2,000 steps (table 3b).** Three seeds for every variant. The Transformer reaches 3.353 ± 0.027;
# the causal `triple_hybrid` 2.641 ± 0.011, `triple_latent` 2.691 ± 0.007, `gated_hybrid`
# 2.702 ± 0.010, `triple_slot` 2.848 ± 0.017 and `transformer_plus_triple` 2.879 ± 0.001. The
# 80-step ranking does not survive: the late-fusion models that led by 0.7-0.9 BPB at 80 steps fall
# behind the plain triple-latent stacks (`gated_hybrid` only just; section 1 showed
# why an 80-step lead from late fusion says little), and every triple-latent
# variant ends 0.47-0.71 BPB ahead of the Transformer, every paired 95% interval (the table's
# column, 3 seeds) far from zero. So the paper's
# main claim, that the compressed latent helps language modelling, holds more clearly after longer
# training than in the paper's 80-step table, and with a causal convolution.
# Caveats: 2,000 x 16 x 128 bytes is about four passes over the offline 1 MB train head, and every
# run uses the paper's constant learning rate 3e-4, tuned for no model. The next cell asks how
# much of the gap is that learning rate.

# %%
# NBVAL_IGNORE_OUTPUT
# 2,000 steps: table 3b (the paper's lr 3e-4) beside the same protocol at higher learning rates
sweep = results.load_runs(RESULTS / "lm_2000steps.json") + results.load_runs(RESULTS / "lm_2000steps_lr*.json")
display(Markdown("**3c. Learning rate, 2,000 steps (BPB; seed 0, or mean ± std over the seeds in brackets)**\n\n"
                 + results.sweep_markdown(sweep, "lr") + f"\n\nUnigram baseline: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **Learning rate (3c).** The paper's constant learning rate 3e-4 is low for the Transformer. At 1e-3
# it reaches 2.939 ± 0.004 (3 seeds) instead of 3.353 ± 0.027, and at 3e-3 it is worse again (2.961,
# one seed), so 1e-3 is its best of the three. The triple-latent stacks gain from a higher rate as
# well and are still improving at 3e-3: `triple_latent` 2.516 ± 0.002 (3 seeds), `triple_hybrid`
# 2.476 (one seed). With each model at its best of the three rates the gap is 0.42 BPB
# (`triple_latent`) and 0.46 (`triple_hybrid`) instead of 0.66-0.71. So about a third of the
# 3e-4 gap was the learning rate, and the ranking survives it.
# Caveats: three rates only, constant (no warmup or decay, as in the paper); the triple-latent
# optimum is not bracketed (their gap might grow); the other three variants were not swept.

# %% [markdown]
# ## 6. Associative recall and MQAR (tables 4 and 5)
#
# These files come from the recall study (`python -m tl_minimal.experiments study`, see
# `data/results/RECALL_STUDY.md`). Accuracy is over 2,048 fresh examples per seed; a constant
# guess scores 12.5% in expectation and at best 13.4-15.0% on our evaluation sets (the first line
# printed below), a random pick among the four values in context 25%.

# %%
# NBVAL_IGNORE_OUTPUT
RECALL_FILES = ("recall_constant_guess.json", "recall_eval100-200-500.json",  # the constant guess, gated_hybrid 5 seeds,
                "recall_gated_hybrid_paper.json", "recall.json")  # gated_hybrid_paper 5 seeds, table 4
for path in (RESULTS / name for name in RECALL_FILES):
    data = json.loads(path.read_text(encoding="utf-8"))
    runs = [r for r in data.get("runs") or [] if "value" in r and "variant" in r]
    if not runs:
        guess = data.get("constant_guess") or {}
        best = [g["best_on_set"] for g in guess.values() if isinstance(g, dict) and "best_on_set" in g]
        if best:
            print(f"{path.name}: best constant guess {100 * min(best):.1f}-{100 * max(best):.1f}% over "
                  f"{len(best)} evaluation sets (expected 12.5%; a pick among the 4 values in context: 25%)")
        continue
    proto = data["protocol"]
    by_step = {}
    for r in results.load_runs(path):
        for step, acc in (r.get("by_step") or {str(r["steps"]): {"accuracy": r["value"]}}).items():
            by_step.setdefault(int(step), []).append({**r, "value": acc["accuracy"], "steps": int(step)})
    head = (f"**`{path.name}`**: {proto.get('task')}, {proto.get('n_pairs')} pairs, "
            f"{proto.get('n_queries')} question(s), seeds {sorted({r['seed'] for r in runs})}")
    tables = [f"after {s} steps\n\n" + results.markdown_table(results.summarize(rs),
              results.PAPER["recall"] if proto.get("task") == "recall" and s == 500 else None,
              percent=True, metric="accuracy") for s, rs in sorted(by_step.items())]
    display(Markdown(head + "\n\n" + "\n\n".join(tables)))

# %% [markdown]
# **Table 5, MQAR: where does each model's recall break?** Every `mqar*.json` file, one row per
# model and setting (number of key-value pairs, sequence length), 4 questions per sequence,
# accuracy over all 4 x 2,048 questions per seed: mean ± std (minimum) over seeds after each
# evaluated step. "chance" is a constant guess (one over the number of values).

# %%
# NBVAL_IGNORE_OUTPUT
mqar = results.mqar_rows()
display(Markdown(results.mqar_markdown(mqar)))

settings = sorted({(r.pairs, r.seq_len) for r in mqar})
fig, ax = plt.subplots(figsize=(6.5, 3.6))
for i, variant in enumerate(v for v in results.ORDER if any(r.variant == v for r in mqar)):
    pts = [(settings.index((r.pairs, r.seq_len)), *r.stats(max(r.by_step))) for r in mqar if r.variant == variant]
    xs, means, stds, lows, _ = zip(*pts, strict=True)
    ax.errorbar(np.array(xs) + 0.06 * (i - 2), means, yerr=stds, marker="o", ls="", capsize=3, label=variant)
chance = {(r.pairs, r.seq_len): r.chance for r in mqar}
ax.scatter(range(len(settings)), [chance[s] for s in settings], marker="_", s=400, c="k", label="chance (constant guess)")
ax.set_xticks(range(len(settings)), [f"{p} pairs\nT={t}" for p, t in settings])
ax.set_ylabel("accuracy (last evaluated step)")
ax.set_ylim(-0.02, 1.05)
ax.set_title("MQAR: accuracy by number of pairs and sequence length", fontsize=9)
ax.legend(fontsize=7, loc="center right")
fig.tight_layout()

# %% [markdown]
# **What agrees, what does not** (numbers from `recall.json` and the two 5-seed files,
# after 500 steps, mean ± std over seeds; details and the diagnosis in `RECALL_STUDY.md`). Every
# verdict here is for the paper's budget: 500 steps x 32 sequences, one supervised token per
# sequence, AdamW at a constant lr of 3e-4 (MQAR: 100-500 steps of the same). At that budget the
# Transformer itself reaches only 24.8% (mean of 3 seeds), so these tables measure the budget as
# much as the models; `RECALL_STUDY.md` section 0 says what is decided and what is not.
#
# - *Transformer:* 24.8% ± 0.6 (3 seeds), the paper's 25.0%: it learns to pick one of the four
#   values in context at random, not to recall. Agrees. At 200 steps ours is 21.9% ± 1.4, the
#   paper's main table 25.4% (one run), and its latent-only models 13.4%, a constant guess
#   (`docs/paper.md` section 5.3).
# - *Triple-latent models without the key-value path* sit on the constant-guess line:
#   `triple_hybrid` 12.3% ± 0.8 (paper 11.6%), `triple_latent` 12.3% ± 0.8. Agrees.
# - *The paper's gated hybrid* (`gated_hybrid_paper`): 12.3% ± 0.8 over 3 seeds and 12.3% ± 0.9 over
#   5 seeds, every seed on the constant-guess line. The paper's 41.9% is the mean of 14.2, 100 and
#   11.6% (its result file; its text says one seed exact, two failing): one win in 3 runs on Apple
#   MPS. That win did not reproduce: the paper's own code won 0 of 11 seeds (95% Clopper-Pearson
#   interval [0.00, 0.28]) on our CPU, and our re-implementation won 0 of 30 seeds (95%
#   Clopper-Pearson interval [0.00, 0.12]); seed 19 (100% in the paper's run) gives 12.0% with the
#   paper's own code and 12.4% with ours (a win: accuracy >= 95%). Does not agree with the paper's
#   mean, which one run makes; agrees with its other two seeds.
# - *The library's `gated_hybrid` default* (tied query/key projection, learnable score scale
#   β starting at 10): 100.0% on all 5 seeds, already after 100 steps. Its read is solved at
#   initialization (0.99 of the weight on the answer at step 0, below) and it keeps every earlier
#   token to match against, a cache that grows with the sequence: it shows that this task is
#   solved by exact token matching, not that a separate path is necessary, nor that it beats the
#   fixed-size states. Whether the compressed states can recall is open until a protocol exists
#   where the Transformer recalls; the calibrated attempts so far stall at 51.9-52.5% for the
#   Transformer (elimination among the values not yet answered, `RECALL_STUDY.md` section 0).
# - *MQAR (table 5)*, 4 questions per sequence, 3 seeds (the table and plot above): at this budget
#   every model without an exact-match read, the Transformer included, is at or near chance from
#   the smallest setting, so the rows measure the budget, not where each architecture breaks. With 8 pairs in 128 tokens the
#   Transformer is at chance after 500 steps (12.5% ± 0.3) and the recurrent rows reach
#   15.6-15.9%, which is not recall: their per-question accuracy is close to 1/8, 1/7, 1/6, 1/5,
#   a guess among the values not yet given as an answer earlier in the sequence. With 16 pairs
#   (6.2-6.5% against 6.25%) and 32 pairs (length 128 or 256; 3.0-3.3% against 3.1%) all four
#   sit on the chance line. The exact-match `gated_hybrid` does not break up to
#   128 pairs in 512 tokens (99.7% ± 0.4 after 200 steps; 100% at the last evaluated step of
#   every other setting): more pairs slow
#   its learning (92.6% at 100 steps with 128 pairs) but its read stays exact from step 0; what
#   takes longer is learning to map the read to one of 128 value ids.
# - Five rows have identical per-seed numbers at 500 steps (11.8, 13.2, 12.0% on seeds 0-2:
#   `triple_latent`, `triple_slot`, `triple_hybrid`, `gated_hybrid_paper` and, on the same seeds,
#   `gated_hybrid_printed`). Each of these models answers one constant value for every example,
#   the same one for a given seed.

# %% [markdown]
# ### The paper's gated hybrid: one win that did not reproduce, and an exact-match read
#
# The paper's 41.9% for its gated hybrid is a mean over three seeds that scored 14.2%, 100% and
# 11.6% (`docs/paper.md` section 5.3): one seed found the retrieval, two collapsed onto the
# constant-guess line. The paper's own code, run unmodified on our CPU
# (`recall_reference_code.json`), and 30 seeds of our `gated_hybrid_paper` (seeds 0-4 and the
# reference seeds 5-29) all collapse; the library's `gated_hybrid` (one tied $W_{qk}$ for queries
# and keys, a learnable scale $\beta$ starting at 10) recalls on every seed. Per seed, after 500
# steps:

# %%
# NBVAL_IGNORE_OUTPUT
PAPER_GATED_SEEDS = results.PAPER["recall_seeds"]["gated_hybrid_paper"]  # its seeds 7, 19, 29 (docs/paper.md 5.3)
per_seed = {"paper's gated hybrid\n(the paper, MPS, 3 seeds)": list(PAPER_GATED_SEEDS)}
reference = json.loads((RESULTS / "recall_reference_code.json").read_text(encoding="utf-8"))["runs"]
per_seed[f"the paper's own code\n(our CPU, {len(reference)} seeds)"] = [r["eval_accuracy"] for r in reference]
print("paper's own code     steps 500: " + ", ".join(f"seed {r['seed']} {r['eval_accuracy']:.1%}" for r in reference))
for label, files in (("gated_hybrid_paper", ("recall_gated_hybrid_paper.json", "issue32/recall_reference_seeds_ours.json")),
                     ("gated_hybrid, tied W_qk", ("recall_eval100-200-500.json",))):
    runs = [r for file in files for r in results.load_runs(RESULTS / file)]
    per_seed[f"{label}\n(ours, {len(runs)} seeds)"] = [r["value"] for r in runs]
    print(f"{label:20s} steps {sorted({r['steps'] for r in runs})}: "
          + ", ".join(f"seed {r['seed']} {r['value']:.1%}" for r in runs))
fig, ax = plt.subplots(figsize=(8.5, 3.6))
for i, accs in enumerate(per_seed.values()):
    ax.plot([i] * len(accs), accs, "o", ms=7, alpha=0.7)
    ax.plot([i - 0.25, i + 0.25], [np.mean(accs)] * 2, color="black", lw=2)
    ax.annotate(f"mean {np.mean(accs):.1%}", (i + 0.28, np.mean(accs)), fontsize=9, va="center")
ax.axhline(1 / 8, color="black", ls=":", lw=1, label="constant guess 1/8")
ax.axhline(1 / 4, color="grey", ls="--", lw=1, label="random value in context 1/4")
ax.set_xticks(range(len(per_seed)), list(per_seed), fontsize=8)
ax.set_xlim(-0.5, len(per_seed) - 0.1)
ax.set_ylim(0, 1.08)
ax.set_ylabel("recall accuracy, 500 steps")
ax.set_title("one dot per seed: the paper's mean rests on one run that did not reproduce", fontsize=10)
ax.legend(fontsize=8, loc="center right")
fig.tight_layout()

# %% [markdown]
# Why does the paper's configuration fail? Measured before any training (`recall_init_diagnosis.json`: 5 seeds x
# 256 examples, `python -m tl_minimal.experiments study init --ablations`), at the answer
# position, where the memory holds 126 entries and the right one is the entry whose key is the
# asked key. One row per configuration: the paper's, then one change at a time.

# %%
# NBVAL_IGNORE_OUTPUT
diagnosis = json.loads((RESULTS / "recall_init_diagnosis.json").read_text(encoding="utf-8"))["mean_over_seeds"]
lines = [("| configuration | right entry in the top-8 | median rank of the right entry (of 126) | weight on it | "
          "filler share of the top-8 |"), "|---|---|---|---|---|"]
for name, m in diagnosis.items():
    lines.append(f"| {name.replace('gated_hybrid_paper ', '')} | {m['in_kept']:.1%} | {m['answer_rank_median']:.0f} | "
                 f"{m['answer_weight']:.3f} | {m['filler_share']:.0%} |")
display(Markdown("\n".join(lines)))

# %% [markdown]
# - With independent $W_q$ and $W_k$ the asked key's earlier occurrence scores like any other token
#   (median rank 55 of 126), so the right entry is in the top-8 for about 6% of examples, and for
#   3 of the 5 seeds for none. The memory learns only through the entries it keeps, through a
#   softmax that is uniform over them at $\beta = 1$ (the reference code's scale; the printed formula
#   would give 1/8, `docs/paper.md` section 3.6): for most seeds no gradient ever tells $W_q$
#   and $W_k$ to align. Whether a run escapes is decided at initialization; on our CPU none of
#   the paper's own code's seeds and none of our 30 did.
# - A larger $\beta$ alone changes nothing (the right entry is not there to be sharpened), and
#   keeping every entry alone gives it a weight of about 1/126.
# - Tying $W_q = W_k$ makes an exact repeat score $\cos = 1$, the maximum: the right entry ranks
#   first for every example and every seed (notebook 06, section 5, shows the cosines). With
#   $\beta = 10$ it also takes 0.99 of the weight. That is the library's `gated_hybrid`, 100% on 5
#   of 5 seeds from 100 steps on (`data/results/RECALL_STUDY.md` sections 2-3). The read is
#   solved before training; what the 100% measures is how fast the value path is learned.
#
# Two caveats that belong to the same critique. The memory's previous-token query fits this task's
# `QUERY key ANSWER` layout, not running text, where an induction-style query with the current
# token would be needed (notebook 06, section 8; `docs/paper.md` section 6.3). And the memory
# grows with the sequence like a KV cache (notebook 06, section 3): the gated hybrid buys exact
# recall by giving up the constant-size state of the rest of the model.

# %% [markdown]
# ### The paper's other recall experiments: width, the retrain recipe, table 4's other rows
#
# The paper reports three more recall experiments, each from one to three seeds: its gated hybrid
# at widths $d$ = 64, 80 and 96 (one seed each: 100%, 67.2%, 11.96%, "non-monotonic in width"),
# the same model retrained with a 50-step warm-up, a length curriculum from 32 to 128 tokens and a
# read-gate bias of -2 (12.7%, three seeds), and every other model on recall (table 4 quotes no
# number for `triple_slot` or `transformer_plus_triple`). We ran each with 5 seeds where the paper
# claims a recall figure (3 for table 4's rows), for the paper as coded (`gated_hybrid_paper`), the
# paper as printed (`gated_hybrid_printed`: the printed score scale and vector read gate,
# `docs/paper.md` section 3.6) and the library's `gated_hybrid`. Per seed, at 200 and 500 steps:

# %%
# NBVAL_IGNORE_OUTPUT
RECIPE_FILE = "recall_warmup50_lengths32-128-150_gatebias-2.json"
WIDTH_FILES = {  # (width, model) -> file; d = 64 is the paper's width, the main recall table's files
    (64, "gated_hybrid_paper"): "recall_gated_hybrid_paper.json", (64, "gated_hybrid_printed"): "recall.json",
    (64, "gated_hybrid"): "recall_eval100-200-500.json",
    **{(d, m): f"recall_d{d}.json" for d in (80, 96) for m in ("gated_hybrid_paper", "gated_hybrid_printed", "gated_hybrid")},
}


def seeds_at(file, variant, step):
    """{seed: accuracy} of one variant in one results file at one evaluated step (absent seeds left out)."""
    runs = [r for r in results.load_runs(RESULTS / file) if r["variant"] == variant]
    return {r["seed"]: r["by_step"][str(step)]["accuracy"] for r in sorted(runs, key=lambda r: r["seed"])
            if str(step) in r.get("by_step", {})}


def cell(accs):
    """'mean ± std (per seed)' in percent, or 'not run'."""
    if not accs:
        return "not run"
    a = 100 * np.array(list(accs.values()))
    spread = a.std(ddof=1) if len(a) > 1 else 0.0
    return f"{a.mean():.1f} ± {spread:.1f} (" + ", ".join(f"{v:.1f}" for v in a) + ")"


experiments = [(f"width d = {d}", model, file, results.PAPER["recall_width"].get(f"{model} (d={d})"))
               for (d, model), file in WIDTH_FILES.items()]
experiments += [("retrain recipe", m, RECIPE_FILE, results.PAPER["recall_retrain"].get(m))
                for m in ("gated_hybrid_paper", "gated_hybrid_printed")]
experiments += [("table 4", m, "recall.json", None) for m in ("triple_slot", "transformer_plus_triple")]
lines = ["| experiment | model | 200 steps: mean ± std (per seed), % | 500 steps | the paper (500) |", "|---|---|---|---|---|"]
for name, model, file, paper in experiments:
    lines.append(f"| {name} | `{model}` | {cell(seeds_at(file, model, 200))} | {cell(seeds_at(file, model, 500))} | "
                 + ("-" if paper is None else f"{round(100 * paper, 2):g}") + " |")
display(Markdown("\n".join(lines)))

# %%
COLOUR = {"gated_hybrid_paper": 0, "gated_hybrid_printed": 1, "gated_hybrid": 2, "triple_slot": 3,
          "transformer_plus_triple": 4}
SHORT = {"gated_hybrid_paper": "coded", "gated_hybrid_printed": "printed", "gated_hybrid": "ours"}


def last_step(file, model):
    """The 500-step seeds, or the 200-step ones where a run stopped there (said in the label)."""
    at500 = seeds_at(file, model, 500)
    return (list(at500.values()), "") if at500 else (list(seeds_at(file, model, 200).values()), "\n(200 steps)")


width = []
for (d, model), file in WIDTH_FILES.items():
    accs, note = last_step(file, model)
    paper = results.PAPER["recall_width"].get(f"{model} (d={d})")
    width.append(Group(f"{SHORT[model]}\nd={d}{note}", accs, [] if paper is None else [paper], COLOUR[model]))
recipe = [Group(SHORT[m], list(seeds_at(RECIPE_FILE, m, 500).values()),
                list(results.PAPER["recall_retrain_seeds"].get(m, ())), COLOUR[m])
          for m in ("gated_hybrid_paper", "gated_hybrid_printed")]
table4 = [Group(m.replace("_", "_\n", 1), list(seeds_at("recall.json", m, 500).values()), [], COLOUR[m])
          for m in ("triple_slot", "transformer_plus_triple")]
fig = seeds_beside_paper({"width sweep (paper: one seed per width)": width,
                          "retrain recipe": recipe, "table 4's other rows": table4},
                         {"constant guess 1/8": 1 / 8, "random value in context 1/4": 1 / 4},
                         title="recall after 500 steps: every seed of ours beside the paper's runs")
plt.show()

# %% [markdown]
# **What the three experiments say** (the table and figure above; `data/results/RECALL_STUDY.md`
# section 4.1 has the probes):
#
# - *Width.* The paper's curve, 100% at $d$ = 64, 67.2% at 80 and 11.96% at 96, is one seed per
#   width. All 15 of our seeds of the paper's configuration, 5 per width, end on the constant-guess
#   line (12.3%, 12.5% and 12.9% at 500 steps), and so does the paper as printed at every width
#   (12.3%, 12.5%, 13.0%). With 0 wins in 15 runs here and 1 in 3 in the paper (a win that neither
#   its own code nor ours reproduced), one seed per width cannot tell a width effect from
#   seed-to-seed variation: each point of the curve is one run. The
#   tied read of `gated_hybrid` recalls 100% on every seed at every width by 200 steps (at
#   $d$ = 96 its 500-step evaluation was not run).
# - *The retrain recipe* (50-step warm-up, lengths 32 to 128 over 150 steps, read-gate bias -2) does
#   not rescue the paper's model, here (12.2% ± 1.0 coded, 12.9% ± 0.6 printed) or in the paper
#   (12.7%): it changes the first steps of training, not the step-0 geometry that keeps the read
#   from finding the answer.
# - *Table 4's other rows.* `triple_slot` sits on the constant-guess line like every recurrent model
#   without a key-value read (12.3% ± 0.8), `transformer_plus_triple` on the Transformer's
#   random-pick line (25.1% ± 0.5); the paper trains both on recall and quotes no number.

# %% [markdown]
# ## 7. Tokenized benchmark, MiniMind tokenizer (table 6)
#
# Hidden 96, 2 layers, 4 heads, sequence 96, batch 4, 120 steps, 32 evaluation batches of a
# deterministic 1-in-20 holdout, seeds 1, 2, 3. The paper reports the mean token loss in nats, and
# so do the result files; here every loss is divided by $\ln 2$ and shown in **bits per token**,
# the unit of the other tables (the paper's numbers too). `gated_hybrid_paper` is the paper's gated
# configuration; `gated_hybrid` is the library's default (its `config` is in the JSON).

# %%
# NBVAL_IGNORE_OUTPUT
LN2 = math.log(2)
tok_rows = [results.Row(r.label, r.variant, r.params, [v / LN2 if v is not None else None for v in r.values],
                        r.steps, r.seconds) for r in results.TABLES["tokenized"].rows()]  # nats -> bits per token
tok_paper = {k: v / LN2 if isinstance(v, float) else v for k, v in results.PAPER["tokenized"].items()}
display(Markdown("**6. Tokenized LM, MiniMind tokenizer (WikiText-2 text), 120 steps, bits per token**\n\n"
                 + results.markdown_table(tok_rows, tok_paper, metric="bits per token")))
ours_tf = next(r.mean for r in tok_rows if r.label == "transformer")
lines = ["| model | ours: gap to the Transformer | the paper's gap |", "|---|---|---|"]
for r in tok_rows:
    if r.label == "transformer":
        continue
    paper_value = tok_paper.get(r.label, tok_paper.get(r.variant)) if "causal=False" not in r.label else tok_paper.get(r.variant)
    paper_gap = f"{paper_value - tok_paper['transformer']:+.3f}" if isinstance(paper_value, float) else "-"
    if r.variant in ("triple_hybrid", "gated_hybrid_paper", "gated_hybrid") and "causal=False" not in r.label:
        paper_gap += " (the paper's, with the leaky convolution)"
    lines.append(f"| `{r.label}` | {r.mean - ours_tf:+.3f} | {paper_gap} |")
display(Markdown("**Gaps to the Transformer (bits per token; negative = better than the Transformer)**\n\n"
                 + "\n".join(lines)))

# %% [markdown]
# **What agrees, what does not.** The corpus differs (WikiText-2 text instead of MiniMind's
# pretraining data), so our losses (8.9-9.3 bits per token for the causal models) are not on the
# paper's scale (9.8-10.6). What can be compared are the gaps to the Transformer (table above).
#
# Every variant beats the Transformer here as in the paper, and the gated hybrid is among the best,
# but with causal convolutions the gaps are not the paper's: the causal hybrid gains almost nothing
# at 120 steps. Put the paper's symmetric padding back and the hybrid's gap becomes the paper's
# (-0.44 against -0.41 bits per token), and the gated hybrid's exceeds it. The paper's tokenized
# hybrid numbers are the leak again. Meanwhile `transformer_plus_triple` (no convolution, so no
# leak in the paper either) gains three times what the paper reports; its late fusion may well
# owe part of that to the logit-scale effect section 1 measured at 80 byte-level
# steps, which we have not checked on this benchmark. The library's `gated_hybrid` default is
# slightly behind the paper's configuration on language modelling (9.06 against 8.93 bits per
# token).

# %% [markdown]
# ## 8. Ours beside the paper, as a picture
#
# Dots: our seeds; bars: our mean; black diamonds: the paper's number where it gives one; dotted:
# the unigram baseline (byte-level panels).

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 3, figsize=(9.5, 4.4))
for ax, key in zip(axes, ("lm_matched_width", "lm_param_matched", "tokenized"), strict=True):
    table = results.TABLES[key]
    rows = [r for r in table.rows() if r.ok] if key != "tokenized" else [r for r in tok_rows if r.ok]
    if not rows:
        ax.set_title(f"{key}: no results yet", fontsize=9)
        continue
    paper = results.PAPER.get(table.paper, {}) if key != "tokenized" else tok_paper
    x = np.arange(len(rows))
    ax.bar(x, [r.mean or np.nan for r in rows], color="#9ecae1")
    for i, r in enumerate(rows):
        ax.plot([i] * len(r.ok), r.ok, "o", color="#08519c", ms=3)
        ref = table.paper_number(r) if key != "tokenized" else paper.get(r.label, paper.get(r.variant))
        if isinstance(ref, float):
            ax.plot(i, ref, "D", color="black", ms=6, label="paper" if i == 0 or "paper" not in
                    ax.get_legend_handles_labels()[1] else None)
    shown = [v for r in rows for v in r.ok] + [v for v in paper.values() if isinstance(v, float)]
    if key != "tokenized":
        ax.axhline(UNIGRAM, color="black", ls=":", lw=1, label="unigram baseline")
        shown.append(UNIGRAM)
    ax.set_ylim(min(shown) - 0.15, max(shown) + 0.1)
    ax.set_xticks(x, [r.label.replace(" (", "\n(") for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("bits per token" if key == "tokenized" else "BPB")
    ax.set_title({"lm_matched_width": "1. byte WT2, matched width, 80 steps",
                  "lm_param_matched": "2. byte WT2, parameter-matched, 80 steps",
                  "tokenized": "6. MiniMind tokenizer (WT2 text), 120 steps"}[key], fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
fig.tight_layout()

# %% [markdown]
# What to look for: in the first two panels the conv-free `triple_latent` and `triple_slot` bars
# sit close to their diamonds, while the diamonds of the hybrids (`triple_hybrid`,
# `gated_hybrid_paper`) sit well below our causal bars, because the paper's numbers carry the
# convolution's leak (section 3).

# %% [markdown]
# Does the ranking survive longer training? Each variant's mean BPB after 80 steps (table 1), after
# about 300 steps (the 40-second budget, table 3a) and after 2,000 steps (table 3b), against the
# mean number of steps (the paper's 80-step comparison is the leftmost point).

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6.5, 3.8))
curves = {}
for key in ("lm_matched_width", "lm_time_matched", "lm_2000_steps"):
    for r in results.TABLES[key].rows():
        if r.ok and "(" not in r.label:
            curves.setdefault(r.label, []).append((np.mean([s for s in r.steps if s]), r.mean, r.std or 0.0))
for name, pts in curves.items():
    xs, ys, es = zip(*sorted(pts), strict=True)
    ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=name)
ax.axhline(UNIGRAM, color="black", ls=":", lw=1, label=f"unigram baseline ({UNIGRAM:.2f})")
ax.set_xscale("log")
ax.set_xlabel("training steps (mean over seeds)")
ax.set_ylabel("validation BPB")
ax.set_title("byte-level WikiText-2: BPB against training length")
ax.legend(fontsize=7)
fig.tight_layout()

# %% [markdown]
# What to look for: the lines cross. `transformer_plus_triple` and `gated_hybrid` lead at 80
# steps, but at 2,000 steps `triple_hybrid` and `triple_latent` are below both, and the
# Transformer's line ends highest: the 80-step ranking is not the long-run one.

# %% [markdown]
# ## 9. Rerun
#
# The tables above come from the commands in `data/results/run_all.sh`. The same function the
# command line calls, `run_experiment`, reruns a tiny version of the byte-level protocol here
# (a few steps, one evaluation batch: the numbers mean nothing, the pipeline is the point), into a
# temporary folder so the committed results stay untouched.

# %%
# NBVAL_IGNORE_OUTPUT
with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()) as log:
    tiny = run_experiment("lm", ["transformer", "triple_hybrid"], seeds=[0], steps=SMOKE_STEPS, device="cpu",
                          eval_batches=1, progress=False, out=Path(tmp) / "lm_tiny.json")
print(local_path.sub("", log.getvalue()).replace(tmp, "<temporary folder>"))
print("runs:", len(tiny["runs"]), "  recorded protocol fields:", len(tiny["protocol"]))

# %% [markdown]
# The full rerun, offered and not executed by default: set `RERUN_FULL = True` in the config cell
# (or run `bash data/results/run_all.sh` in a terminal; `bash data/results/run_all.sh leak` runs one
# table). It overwrites the committed files.

# %%
if RERUN_FULL and not config.smoke():
    import subprocess

    subprocess.run(["bash", str(RESULTS / "run_all.sh")], check=True)
else:
    print("full rerun skipped (RERUN_FULL = False); commands: data/results/run_all.sh")

# %% [markdown]
# ---
#
# ## 10. Where recall breaks: overwritten keys
#
# *(Beyond the paper; independent of sections 1-9.)* Tables 4 and 5 are the easiest case for the
# new `gated_hybrid`: every key is written once and asked with the very same token, and its read
# is an exact-match look-up (tied query/key projection, sharp softmax). This section changes one
# thing: a key is **written two or three times with different values**, and the right answer is
# the **latest** one (`python -m tl_minimal.experiments overwrite`, generator
# `tl_minimal.experiments.tasks.recall_breaks.overwrite_batch`, 4 keys written 1-3 times each, the asked one
# 2-3 times, all values distinct, 16 value ids, 2,048 fresh examples per seed). Besides the accuracy,
# the table shows how often a model answers an **earlier** value of the asked key.
#
# Chance lines: a constant guess scores 1/16 = 6.25%; a random pick among the asked key's writes
# scores 5/12 = 41.7% (and answers an earlier value 58.3% of the time). A read that averages the
# writes of a key lands on that second line. The row `gated_hybrid (supersede=True)` is
# `gated_hybrid` with one option: a later write of the same key takes its score from the earlier
# ones (`kv_fusion.py`, "Overwriting"); details in `RECALL_STUDY.md` section 8.

# %%
# NBVAL_IGNORE_OUTPUT
ow_rows = results.break_rows("overwrite")
display(Markdown(results.break_markdown(ow_rows)))
ow_chance = results.break_chance("overwrite")
if ow_rows:
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    xs = np.arange(len(ow_rows))
    for k, (name, title, color) in enumerate((("value", "latest value (right)", "#31a354"),
                                              ("earlier_rate", "an earlier value", "#de2d26"),
                                              ("other_rate", "anything else", "#bdbdbd"))):
        means = [r.stats(name)[0] for r in ow_rows]
        ax.bar(xs + (k - 1) * 0.27, means, width=0.27, color=color, label=title)
        for i, r in enumerate(ow_rows):
            ax.plot([xs[i] + (k - 1) * 0.27] * len(r.rates[name]), r.rates[name], ".", color="k", ms=3)
    ax.axhline(ow_chance.get("pick_among_writes", np.nan), color="k", ls="--", lw=1,
               label="random pick among the writes")
    ax.axhline(ow_chance.get("constant", np.nan), color="k", ls=":", lw=1, label="constant guess")
    ax.set_xticks(xs, [r.label.replace(" (", "\n(") for r in ow_rows], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("fraction of questions")
    ax.set_ylim(0, 1.05)
    ax.set_title("overwrite: which value does each model answer? (dots: seeds)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()

# %% [markdown]
# **The read at initialization** (no training, 5 seeds x 256 examples,
# `python -m tl_minimal.experiments study overwrite-init`): where the read at the question
# puts its weight, on the latest write of the asked key, on its earlier writes, or elsewhere.

# %%
# NBVAL_IGNORE_OUTPUT
init_lines = ["| model | weight on the latest write | on earlier writes | elsewhere | latest write first |",
              "|---|---|---|---|---|"]


def with_overrides(variant, overrides):  # the variant's name and its --set overrides, if any
    return variant + (f" ({results.override_label(overrides)})" if overrides else "")


for name in ("overwrite_init_diagnosis.json", "overwrite_init_diagnosis_supersede.json"):
    path = RESULTS / name
    if not path.exists():
        continue
    diag = json.loads(path.read_text(encoding="utf-8"))
    for variant, row in diag["mean_over_seeds"].items():
        init_lines.append(f"| `{with_overrides(variant, diag['overrides'])}` | {row['latest']:.3f} | {row['earlier']:.3f} | {row['rest']:.3f} "
                          f"| {100 * row['latest_first']:.1f}% |")
display(Markdown("\n".join(init_lines)))

# %% [markdown]
# **What it says** (numbers from the committed `overwrite*.json` files; details in `RECALL_STUDY.md`
# section 8):
#
# - *Every model without an exact-match read is at chance.* The Transformer, `triple_latent`,
#   `triple_slot`, `triple_hybrid`, `transformer_plus_triple` and `gated_hybrid_paper` give the same
#   numbers on every seed (6.2% ± 0.8 right, chance 6.25%): the signature of one constant answer
#   for every question (the collapse of table 4), which is right 1 time in 16 and an earlier value
#   of the asked key about 1.5 times in 16.
# - *`gated_hybrid` finds the key but averages its writes.* About 40% right and 58% an earlier
#   value over 5 seeds, the random-pick line: with tied keys every write of the asked key scores
#   the same, so the read returns the average of the values written (0.42 of its weight on the
#   latest write at step 0). With two writes it is right about 1/2 of the time, with three about
#   1/3, and 500 steps of training do not change that.
# - *The `supersede` option fixes it.* A later write of the same key takes the score of the
#   earlier ones ("last write wins"): 0.97 of the read on the latest write at step 0, and 100% on
#   all 5 seeds after training. It is an option (`--set supersede=true`), not the default:
#   it was not measured on the other tasks.
#
# Sections 11-13 take away the other easy parts: the exact token match (aliases), the short
# distance (1k-4k tokens), and the recall format itself (induction on text).

# %% [markdown]
# ---
#
# ## 11. Where recall breaks: aliased keys
#
# *(Beyond the paper, like section 10; independent of the other sections.)* The gated read of
# `gated_hybrid` matches **token identity**: the query is the asked token, the keys are the
# written tokens, one tied projection for both, so an earlier copy of the asked token scores
# cos = 1 from the first step. This section takes that copy away. Every key has 2-4 **alias
# tokens** (8 keys over 32 ids, the table fixed by the run's seed); a pair is written with one
# alias and asked with **another**, so the question never repeats a written token and the alias
# relation has to be learned (`python -m tl_minimal.experiments alias`, generator
# `tl_minimal.experiments.tasks.recall_breaks.alias_batch`, 4 pairs in 128 tokens, 8 value ids, 2,048 fresh
# examples per seed). The **control** is the same task asked with the written token itself
# (`--protocol same_alias=true`, rows marked "identical tokens"): same vocabulary, same alias
# table, same training; only the exact match is back.
#
# Chance lines: a constant guess scores 1/8 = 12.5%; a random pick among the four values in
# context 1/4 = 25%.

# %%
# NBVAL_IGNORE_OUTPUT
al_rows = results.break_rows("alias")
display(Markdown(results.break_markdown(al_rows)))
al_chance = results.break_chance("alias")
al_pairs = {}  # model label -> {"alias": row, "control": row}
for r in sorted(al_rows, key=lambda r: r.label.endswith("steps)")):  # the default steps first
    name = r.label.replace(" (identical tokens)", "").replace(" (200 steps)", "")
    kind = "control" if "identical tokens" in r.label else "alias"
    if r.label.endswith("steps)") and not (kind == "control" and r.label.endswith("(200 steps)")):
        continue  # the command's default steps only; a control run only at 200 steps stands in (hatched)
    al_pairs.setdefault(name, {}).setdefault(kind, r)
al_pairs = {name: pair for name, pair in al_pairs.items() if "alias" in pair}
if al_pairs:
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    names = list(al_pairs)
    xs = np.arange(len(names))
    for k, (kind, title, color) in enumerate((("alias", "asked with another alias", "#de2d26"),
                                              ("control", "asked with the written token (control)", "#3182bd"))):
        for i, v in enumerate(names):
            row = al_pairs[v].get(kind)
            if row is None:
                continue
            x0 = xs[i] + (k - 0.5) * 0.38
            short = row.label.endswith("steps)")  # the control run only at 200 steps
            ax.bar(x0, row.stats("value")[0], width=0.38, color=color, hatch="///" if short else None,
                   edgecolor="white" if short else None, label=title if i == 0 else None)
            ax.plot([x0] * len(row.rates["value"]), row.rates["value"], ".", color="k", ms=3)
    ax.axhline(al_chance.get("in_context_pick", np.nan), color="k", ls="--", lw=1, label="random pick in context")
    ax.axhline(al_chance.get("constant", np.nan), color="k", ls=":", lw=1, label="constant guess")
    ticks = [n.replace(" (trained with 25% identical)", " + curriculum").replace(" (top_k=all)", ", all entries")
             for n in names]  # short tick labels; the table above has the row names
    ax.set_xticks(xs, ticks, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("alias, 1,000 steps: another alias vs the written token (dots: seeds; hatched: 200 steps)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()

# %% [markdown]
# **The read at initialization** (no training, 5 seeds x 256 examples,
# `python -m tl_minimal.experiments study alias-init`, with `--same-alias` for the control):
# where the entry holding the answer (the written alias) ranks among the 126 memory entries at
# the question, whether it survives the top-8, and the weight it gets.

# %%
# NBVAL_IGNORE_OUTPUT
al_init = ["| model | question | answer entry in the top-8 | ranked first | median rank | weight on it |",
           "|---|---|---|---|---|---|"]
for name, asked in (("alias_init_diagnosis.json", "another alias"),
                    ("alias_init_diagnosis_same_alias.json", "the written token")):
    path = RESULTS / name
    if not path.exists():
        continue
    diag = json.loads(path.read_text(encoding="utf-8"))
    for variant, row in diag["mean_over_seeds"].items():
        al_init.append(f"| `{variant}` | {asked} | {100 * row['in_kept']:.1f}% | {100 * row['answer_top1']:.1f}% "
                       f"| {row['answer_rank_median']:.0f} | {row['answer_weight']:.3f} |")
display(Markdown("\n".join(al_init)))

# %% [markdown]
# With another alias the answer entry is barely better placed than an unrelated token: top-8 on 13.7%
# of examples (8 of 126 entries would be 6.3%), so on most examples it gets no weight and **no
# gradient**. Two changes were tried, alone and together (5 seeds each, 1,000 steps): read every
# entry (`--set top_k=all`, a softmax over all 126), so that the alias entry always gets some
# gradient; and a **curriculum**, a quarter of the *training* questions asked with the written
# token (`--protocol same_alias_share=0.25`; the evaluation still asks only with another alias), so
# that the value path is learned from reads that work. The training curves say what each does
# (loss in bits; a uniform guess among the 8 values costs log2 8 = 3 bits; the curriculum's loss
# includes its easy questions):

# %%
# NBVAL_IGNORE_OUTPUT
al_curves = results.break_curves("alias")
al_style = {  # the 1,000-step rows: row label -> (legend, line style, colour)
    "gated_hybrid": ("top-8 read", "-", "#de2d26"),
    "gated_hybrid (top_k=all)": ("every entry read", "--", "#756bb1"),
    "gated_hybrid (trained with 25% identical)": ("top-8, curriculum", "-", "#31a354"),
    "gated_hybrid (top_k=all) (trained with 25% identical)": ("every entry, curriculum", "--", "#006d2c"),
}
if any(label in al_curves for label in al_style):
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    for label, (legend, ls, color) in al_style.items():
        for seed, curve in sorted(al_curves.get(label, {}).items()):
            steps_axis = 10 * np.arange(1, len(curve) + 1)
            ax.plot(steps_axis, np.array(curve) / math.log(2), ls, color=color, lw=1.0, alpha=0.85,
                    label=legend if seed == min(al_curves[label]) else None)  # nats -> bits
    ax.axhline(3.0, color="k", ls=":", lw=1, label="3 bits: uniform guess")
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (bits)")
    ax.set_title("alias: gated_hybrid's training loss, one line per seed", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()

# %% [markdown]
# **The read after training: what the top-8 cuts.** Why do seeds that learned the aliases stop at
# 71-84% with the top-8 read and reach 100% when every entry is read?
# `python -m tl_minimal.experiments study alias-trained --variants gated_hybrid --seeds 0 1`
# (with `--share 0.25` for the curriculum) trains the alias command's run again, same seed and
# settings, so the same model (its accuracy below reproduces the table's), and looks at its read
# on 512 evaluation questions: was the entry holding the answer (the written alias) among the 8
# kept, on the questions the model gets wrong and on those it gets right? Then, on all 2,048
# questions, the accuracy of each (asked alias, written alias) pair of tokens: are the misses
# spread over every pair, or whole pairs never learned? A token is *left out* when every pair it
# is part of fails (`breaks.left_out_tokens`).

# %%
# NBVAL_IGNORE_OUTPUT
al_read = ["| row | seed | accuracy | missed (of 512) | missed: entry cut | their median rank (of 126) "
           "| right: entry cut | alias pairs learned / failed | tokens left out |", "|---|---|---|---|---|---|---|---|---|"]
for name, row in (("alias_trained_read.json", "gated_hybrid"),
                  ("alias_trained_read_curriculum.json", "gated_hybrid (trained with 25% identical)")):
    path = RESULTS / name
    if not path.exists():
        continue
    for run in json.loads(path.read_text(encoding="utf-8"))["runs"]:
        pairs = run["by_pair"]["pairs"]
        out, explains = breaks.left_out_tokens(pairs)
        failed = sum(p[3] < 0.5 for p in pairs)
        al_read.append(f"| `{row}` | {run['seed']} | {100 * run['accuracy']:.1f}% | {run['missed']} "
                       f"| {100 * run['missed_cut']:.0f}% | {run['missed_answer_rank_median']:.0f} "
                       f"| {100 * run['right_cut']:.1f}% | {len(pairs) - failed} / {failed} "
                       f"| {', '.join(map(str, out))}{'' if explains else ' (not all)'} |")
display(Markdown("\n".join(al_read)))

# %% [markdown]
# **What it says** (details in `RECALL_STUDY.md` section 9):
#
# - *The command trains 1,000 steps, not 200, because of a plateau.* Every loss first falls to
#   3 bits (it knows which 8 tokens can be answers) and waits there until the model finds the asked
#   value; at 200 steps 4 of 5 `gated_hybrid` seeds were still waiting. The 200-step rows stay in
#   the table, marked.
# - *The gated read learns aliases on 4 of 5 seeds, at a seed-dependent step.* At 1,000 steps `gated_hybrid` (red) leaves the
#   plateau on 4 of 5 seeds, near steps 100-830, and answers 71-84%; seed 2 never leaves it
#   (12.5%). Asked with the written token it scores 100% on every seed. The exact token match was
#   doing the work.
# - *Two obstacles, two changes, 5 seeds each.* The plateau is a chicken-and-egg problem: the
#   value path is learned only from reads that find the answer, and the aliases align only once
#   the value path gives a useful gradient. The **curriculum** (green) breaks it: no seed waits,
#   but with the top-8 read seeds 0-3 stop at 72-84%. The read after training (the last table)
#   says why: on every question the model misses, the answer entry was cut, ranked near the
#   bottom (median 113-124 of 126), and the misses are whole tokens: each seed left 3-5 alias
#   tokens out of their group, every pair with one of them fails (at a guess's rate), every other
#   pair is answered on 90% or more. A cut entry gets no gradient, so nothing pulls a left-out
#   token back. **Reading every entry** (purple, dashed)
#   reaches 100% on each seed that leaves the plateau, but seed 2 still never does. **Both
#   together** (dark green, dashed): 100% on 5 of 5 seeds. The relation is learnable; the default
#   training finds it on 4 of 5 seeds within 1,000 steps. Neither change is the default (the curriculum needs
#   identical-token questions to mix in; `top_k=all` scores a T x T matrix).
# - *The Transformer and `transformer_plus_triple`* (about 25%) leave the plateau near step
#   250-350 to copy *some* value from the context (the 25% line), not the asked one, with or without
#   aliases, and the Transformer with the curriculum too; the recurrent stacks stay at the
#   constant guess, controls included.

# %% [markdown]
# ---
#
# ## 12. Where recall breaks: long distances
#
# *(Beyond the paper, like sections 10 and 11; independent of the others.)* The paper's task
# asks its question about 120 tokens after the pairs. Here the four pairs stay at the start and
# the question moves to the end of a sequence of **1,024, 2,048 or 4,096 tokens**, so thousands of
# filler tokens separate a write from its question (`python -m tl_minimal.experiments distance`,
# generator `tl_minimal.experiments.tasks.recall_breaks.distance_batch`: the paper's vocabulary of 64 and its
# 8 keys, 8 values and 10 filler ids). Each run trains on all three lengths in turn (batch k has
# length 1,024, 2,048 or 4,096 for k mod 3 = 0, 1, 2) and is evaluated on fresh sequences of each
# length; the models' learned positions are sized for 4,096 tokens, which is why their parameter
# counts are larger than in the other tables (4,096 x 64 position weights). Batch size and steps
# (the command's defaults) are in the table; they are small because a 4,096-token Transformer
# step costs about half a second of CPU per sequence.
#
# Chance lines, at every length: a constant guess 12.5%, a random pick among the four values 25%.

# %%
# NBVAL_IGNORE_OUTPUT
di_rows = results.break_rows("distance")
display(Markdown(results.break_markdown(di_rows)))
di_chance = results.break_chance("distance")
if di_rows:
    lengths = [int(name.split()[1]) for name, _ in results.break_columns(di_rows) if name.startswith("length ")]
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    for r in di_rows:
        have = [T for T in lengths if f"length {T}" in r.rates]
        means = [r.stats(f"length {T}")[0] for T in have]
        line, = ax.plot(have, means, "o-", lw=1.5, ms=4, label=r.label)
        for T in have:
            ax.plot([T] * len(r.rates[f"length {T}"]), r.rates[f"length {T}"], ".", color=line.get_color(), ms=3)
    ax.axhline(di_chance.get("in_context_pick", np.nan), color="k", ls="--", lw=1, label="random pick in context")
    ax.axhline(di_chance.get("constant", np.nan), color="k", ls=":", lw=1, label="constant guess")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{T:,}" for T in lengths])
    ax.set_xlabel("sequence length = distance from the pairs to the question (tokens)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("distance: accuracy against how far back the pairs were written (dots: seeds)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()

# %% [markdown]
# **What it says** (details in `RECALL_STUDY.md` section 10):
#
# - *`gated_hybrid` does not break with distance*: 100% at 1,024, 2,048 and 4,096 tokens. Its score
#   has no position term, so thousands of filler tokens change nothing but the cost of the read
#   (it scans every earlier entry; the optional notebook 08 times it).
# - *Every other model is at the constant guess at every length* (several give identical numbers:
#   one constant answer). That says little about distance: they did not learn the paper's task at
#   128 tokens either (section 6), and these runs are short (200 steps of batch 4).
# - Every row has 3 seeds; the gated row is the informative one.

# %% [markdown]
# ---
#
# ## 13. Induction on real text
#
# *(Beyond the paper; independent of the sections before it.)* The recall tasks ask for one value
# after a marker. Text asks for something else: an **induction head** (notebook 06, section 8)
# predicts the next byte by finding where the current context occurred before and copying what
# followed. The classic test: train a language model, then show it a stretch of held-out text
# *twice*. On the first copy it can only use what it knows about English; on the second copy every
# byte was written 64 positions back, so a model that copies predicts it almost for free.
#
# `python -m tl_minimal.experiments induction` trains exactly as the byte-level LM (table 1's
# protocol and recipe), then reads 512 random spans of 64 bytes of the **validation** split, each
# followed by itself (generator `tl_minimal.experiments.tasks.induction_data.repeated_spans`, worked example in its
# docstring; two copies of 64 fill the context of 128), and as many spans of **uniform random
# bytes** read twice, where knowing English does not help and only copying can. It reports the
# loss in bits at every position of both copies, and the **ratio** mean(second copy) / mean(first
# copy): 1 means no copying (any predictor that ignores the context has exactly 1), 0 a perfect
# copier. A model's predictions also depend on the position, so each run also reads a **control**:
# the same layout with a *different* span in the second half, nothing to copy; a ratio below the
# control's ratio is copying. It runs at the paper's 80 steps (the command's default) and at 2,000 steps (`--steps
# 2000`, the same runs as table 3b: the BPB column lets the two be compared). For the gated hybrids
# it also measures everything with the key-value read switched off (the read returns nothing),
# which says how much of the copying goes through the read. `gated_hybrid (query_align=current)`
# is `gated_hybrid` whose read asks with the current byte instead of the previous one (notebook 06,
# section 8): "what followed this byte last time?", the induction look-up keyed on one byte.

# %%
# NBVAL_IGNORE_OUTPUT
from tl_minimal.experiments.tasks import induction_data as data_induction

IP = protocol("induction")
x_ind, y_ind = data_induction.repeated_spans(valid_text.tokens, 1, IP.span_len, data_induction.eval_generator(0),
                                             IP.seq_len)  # [1, 2L] each
print(f"span_len L = {IP.span_len}, context = {IP.seq_len}, spans per run = {IP.eval_examples}; x, y {tuple(x_ind.shape)}")
print("lead byte  :", repr(data_text.decode(x_ind[0, :1])))
print("first copy :", repr(data_text.decode(y_ind[0, : IP.span_len])))
print("second copy:", repr(data_text.decode(y_ind[0, IP.span_len :])))

# %%
# NBVAL_IGNORE_OUTPUT
ind_rows = results.induction_rows()
for ind_steps in (80, 2000):
    display(Markdown(f"**Induction, {ind_steps} steps** (bits per byte; mean ± std over seeds; ratio = 2nd copy / "
                     f"1st copy, lower = more copying; BPB on table 1's validation chunks)\n\n"
                     + results.induction_markdown(ind_rows, ind_steps)))
print(f"unigram baseline on the validation chunks: {UNIGRAM:.3f} BPB; uniform random bytes cost at least 8 bits "
      "on the first copy")

# %%
# NBVAL_IGNORE_OUTPUT
ind_labels = list(dict.fromkeys(r.label for r in ind_rows))
ind_by = {(r.label, r.steps): r for r in ind_rows}
if ind_rows:
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.9))
    for ax, kind in zip(axes, ("text", "random"), strict=True):
        for k, (ind_steps, color) in enumerate(((80, "#9ecae1"), (2000, "#08519c"))):
            for i, label in enumerate(ind_labels):
                row = ind_by.get((label, ind_steps))
                if row is None:
                    continue
                xpos = i + (k - 0.5) * 0.38
                ax.bar(xpos, row.stats(kind)[0], width=0.38, color=color,
                       label=f"{ind_steps} steps" if i == 0 else None)
                ax.plot([xpos] * len(row.seeds), row.numbers[(kind, "ratio")], ".", color="k", ms=3)
                ax.plot(xpos, row.stats(f"{kind}_control")[0], "_", color="#de2d26", ms=12, mew=2,
                        label="control (another span)" if i == 0 and k == 0 else None)
        ax.axhline(1.0, color="k", ls=":", lw=1, label="no copying (1)")
        ax.set_xticks(np.arange(len(ind_labels)), [lb.replace(" (", "\n(") for lb in ind_labels], rotation=40,
                      ha="right", fontsize=7)
        ax.set_ylabel("loss ratio, 2nd copy / 1st copy")
        ax.set_title({"text": "held-out text read twice", "random": "random bytes read twice"}[kind], fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("induction: how much cheaper is the second copy? (dots: seeds)", fontsize=9)
    fig.tight_layout()

# %% [markdown]
# The loss at every position of the span, first copy (dashed) against second copy (solid), for the
# 2,000-step models (mean over seeds). Position 1 of the second copy follows the last byte of the
# first copy, a junction that never occurred before, so even a perfect copier cannot know it there.

# %%
# NBVAL_IGNORE_OUTPUT
long_rows = [r for r in ind_rows if r.steps == 2000]
if long_rows:
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.9))
    positions = np.arange(1, IP.span_len + 1)
    for ax, kind in zip(axes, ("text", "random"), strict=True):
        for c, row in enumerate(long_rows):
            first, second = row.curve(kind)
            color = plt.cm.tab10(c)
            ax.plot(positions, first, ls="--", lw=0.9, color=color)
            ax.plot(positions, second, lw=1.4, color=color, label=row.label)
        ax.set_xlabel("position in the span")
        ax.set_ylabel("bits per byte")
        ax.set_title(f"{'held-out text' if kind == 'text' else 'random bytes'}: 1st copy dashed, 2nd solid", fontsize=9)
    axes[1].axhline(8.0, color="k", ls=":", lw=1)
    axes[1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()

# %% [markdown]
# **The key-value read switched off.** The same models and spans with the read returning nothing
# (`tl_minimal.experiments.studies.induction.read_switched_off`: $m_t = 0$, so the fused vector is the
# LayerNorm's constant bias). If the ratio goes to 1 without the read, the copying went through it.

# %%
# NBVAL_IGNORE_OUTPUT
display(Markdown(results.read_off_markdown(ind_rows)))

# %% [markdown]
# **What it says** (details in `RECALL_STUDY.md` section 11):
#
# - **No model copies at the paper's 80 steps.** On text every ratio is 0.994-1.001 and its control
#   0.990-0.998: the second copy costs what any second half costs. The one exception is small:
#   `gated_hybrid (query_align=current)`, 0.980 against a control of 0.995 on text, 0.951 against
#   0.999 on random bytes.
# - **Nor at 2,000 steps, although every model is far better at text by then (2.64-3.35 BPB).**
#   Every second copy costs 3-4% *more* than the first (ratios 1.026-1.041), and so does the
#   control's unrelated second span: the second half starts at a junction of unrelated text, and
#   that is all the ratio sees. On random bytes the ratios equal the controls within 0.01 (the
#   first copy costs 9-12 bits there, above the 8 bits of a uniform guess: models trained on text
#   are confidently wrong on noise), except the gated hybrid's: 0.994 against a control of 0.965,
#   a repeated span costs it more than a fresh one (not explained here). None of these small models, the Transformer included (3
#   layers, d 64, 2,000 steps of 16 x 128 bytes of a 1 MB head of the training text), has formed an
#   induction head.
# - **The gated read copies a little when it asks with the current byte.** `gated_hybrid
#   (query_align=current)` at 2,000 steps: 0.989 against a control of 1.041 on text (the second
#   copy about 5% cheaper than a fresh span), 0.912 against 0.971 on random bytes; with the read
#   switched off both go back to the control (1.036, 0.998), so the copying goes through the read.
#   It keys on one byte, "what followed this byte last time?", which on text is ambiguous (a byte
#   has many earlier copies, and they tie): far from what an induction head, keyed on the context,
#   does.
# - **The default read is used, but not to copy.** With `query_align="previous"` the read returns
#   what followed the previous byte, i.e. the current byte; switched off, `gated_hybrid`'s loss on
#   text rises from 2.80 to 3.27 bits (2,000 steps) while its ratio does not move (1.037, 1.038).

# %% [markdown]
# ## Summary
#
# * **The compressed latent helps language modelling, more clearly with longer training.** At the
#   paper's 80 steps the conv-free triple-latent stacks are about 0.05 BPB ahead of the Transformer,
#   which 3 seeds do not establish (Transformer minus `triple_latent`: +0.054 BPB (paired over 3
#   seeds, 95% interval [-0.073, +0.180])), and, like it, still above the unigram baseline; at 2,000 steps every triple-latent variant is
#   0.47-0.71 BPB ahead (0.42-0.46 with each model at its best of three learning rates).
# * **The hybrid's gain is the leak.** With a causal convolution `triple_hybrid` is level with the
#   Transformer at 80 steps; with the paper's symmetric padding it reproduces (and beats) the
#   paper's number, on bytes and on tokens (tables 1b and 6).
# * **Late fusion leads early, not late.** `transformer_plus_triple` and `gated_hybrid` lead by
#   0.7-0.9 BPB at 80 steps (`transformer_plus_triple` mostly through the scale of its logits,
#   section 1), and fall behind the plain stacks at 2,000 steps.
# * **The gated hybrid's one recall success did not reproduce.** The paper's 41.9% is one seed at
#   100% (on Apple MPS) and two collapsed. At the paper's budget (500 steps x 32 sequences, one
#   supervised token, constant lr 3e-4) the paper's own code won 0 of 11 seeds (95% Clopper-Pearson
#   interval [0.00, 0.28]) on our CPU, and our re-implementation won 0 of 30 seeds (95%
#   Clopper-Pearson interval [0.00, 0.12]). Independent query and key projections leave the right
#   entry out of the top-8 at initialization. One tied $W_{qk}$ and a learnable $\beta$ recall 100%
#   on every seed and up to 128 pairs in MQAR, because the read is solved at initialization: an
#   exact-match cache that grows with the sequence, not a better fixed-size state. At that budget
#   the Transformer fails too, so which architecture recalls is not decided yet.
# * **The repaired read is an exact-match look-up, and breaks where that is not enough**
#   (sections 10-13). A key written two or three times: it averages the writes (40.5%; the
#   `supersede` option, last write wins, makes it 100%). A key asked with another alias: 71-84%
#   on 4 of 5 seeds after 1,000 steps, chance on the fifth, after a plateau whose length depends on
#   the seed; a curriculum plus reading every entry makes it 100% on 5 of 5. 4,096 tokens of distance: no effect (100%, 3 seeds). Text read twice: it
#   copies a little only when it asks with the current byte, and none of our models, the
#   Transformer included, forms an induction head in 2,000 steps.
# * Every number comes from a file in `data/results` with its protocol and command (section 1's
#   three models excepted: it trains them itself); section 9 reruns the pipeline.
#
# **The paper's claims, one by one.** Each verdict holds at the budget it names; "seeds" is how
# many runs decide it (the paper's own rows are single runs unless said).
#
# | the paper claims | verdict here | budget | decided by |
# |---|---|---|---|
# | conv-free triple-latent layers beat the Transformer on bytes (80 steps) | not shown: Transformer minus `triple_latent` +0.054 BPB (paired over 3 seeds, 95% interval [-0.073, +0.180]) | 80 steps x 16 x 128 bytes, constant lr 3e-4 | `lm.json`, 3 seeds (table 1) |
# | the compressed latent helps language modelling | holds after longer training: every triple-latent variant ahead of the Transformer at 2,000 steps, and at each model's best of three learning rates | 2,000 steps; lr 3e-4, 1e-3, 3e-3 | `lm_2000steps*.json`: 3 seeds at 3e-4; table 3c mixes 1-seed and 3-seed cells (marked there) |
# | the hybrid's convolution gives its lead (4.766 BPB) | the lead is the symmetric convolution's leak; causal, `triple_hybrid` is level with the Transformer | 80 steps | `lm.json`, `lm_noncausal.json`, 3 seeds (tables 1, 1b) |
# | the gated hybrid recalls (41.9%, one seed at 100%) | did not reproduce: the paper's own code won 0 of 11 seeds (95% Clopper-Pearson interval [0.00, 0.28]); our re-implementation won 0 of 30 seeds (95% Clopper-Pearson interval [0.00, 0.12]) | 500 steps x 32, one supervised token, constant lr 3e-4 | `recall_reference_code.json` (the paper's code, CPU), `recall_gated_hybrid_paper.json`, `issue32/recall_reference_seeds_ours.json` |
# | recall is non-monotonic in width (100 / 67.2 / 11.96%) | not supported: one run per width; 0 wins in 15 of our runs | 500 steps x 32 | `recall_gated_hybrid_paper.json`, `recall_d80.json`, `recall_d96.json`, 5 seeds per width |
# | the retrain recipe collapses (12.7%) | agrees (5 seeds, coded and printed) | 500 steps, warm-up 50, lengths 32-128, gate bias -2 | `recall_warmup50_lengths32-128-150_gatebias-2.json` |
# | exact recall needs a separate retrieval path | not decided: at this budget the Transformer itself reaches only 24.8% (mean of 3 seeds); the calibrated attempts so far stall at 51.9-52.5% | 500 steps x 32 (paper); 2,000-4,000 steps, warm-up and cosine (calibrated, 1 seed) | `recall.json`; `issue32/recall_calibrated*.json` |
# | (ours) a tied $W_{qk}$ with $\beta = 10$ fixes the read | on exact repeats: 100% on 5 of 5 seeds, solved at initialization; an exact-match cache that grows with T; fails on aliases (section 11) | 500 steps x 32 | `recall_eval100-200-500.json`, `recall_init_diagnosis.json` |
# | the layer is 32.7-106.5x slower than attention | the Python loop's cost, not the model's | CPU, one thread | `speed_cpu*.json` (notebook 08) |
#
# Next: `08_speed.ipynb` (why this repository's triple-latent models are not 30-100 times slower
# than attention, as the paper's were).
