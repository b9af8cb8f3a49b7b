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
# verdicts, one line per claim of the paper with the runs that decide it; the sections after them
# are the tables the verdicts are read from.
#
# **Learning goals.** After this notebook you can
# - read a reproduction table: mean ± standard deviation over seeds, each row minus the Transformer
#   paired by seed with its 95% interval, parameter counts, the paper's number, and the unigram
#   baseline every BPB has to beat;
# - say which of the paper's claims hold here (the compressed latent helps language modelling
#   after longer training, though a convolution alone helps more) and which do not (the hybrid's
#   gain is a leak; the gated hybrid's one recall success did not reproduce; recall does not need
#   a separate path once the gate starts long);
# - say why a step-matched comparison at the paper's 80 steps needs care, and what longer training
#   changes;
# - find for every number the file and the command that produced it.
#
# **Optional, after this notebook.** [`07b_diagnoses`](07b_diagnoses.ipynb) measures why two
# verdicts come out as they do (`transformer_plus_triple`'s lead at 80 steps; the paper's gated
# hybrid at the paper's budget); [`07c_recall_breaks`](07c_recall_breaks.ipynb) finds where the
# repaired gated read breaks and whether any model copies text (induction).
#
# **Prerequisites.** Notebooks 01-03 (the triple-latent layer), 04-06 (slots, the convolution
# and its leak, the key-value memory and late fusion); mean and standard deviation. Every symbol
# is in the course's glossary, [`docs/glossary.md`](../docs/glossary.md).
#
# **Time.** About 60 minutes: 60 of reading (4397 words at 100 a minute, 55 lines of code at 4, 4
# figures at half a minute each) and a run of every cell in default mode, measured at 5 s (CPU 4 s,
# peak 460 MiB) on a 2-core CPU (`docs/notebook_cost.json`).
#
# The notebook trains nothing: it **reads the JSON files** in `data/results/` (index:
# `data/results/README.md`), each with its protocol, data source, device, git commit and command
# (`data/results/run_all.sh` lists them; notebook 07b reruns a tiny protocol).
#
# | table | protocol (`docs/paper.md` section 4) | files |
# |---|---|---|
# | 1, 1b | byte WT2, d=64, 3 layers, S=16, 80 steps; the hybrids with and without the leak | `lm.json`, `lm_noncausal.json` |
# | 2 | byte WT2, parameters within 5% of the Transformer's 174,848 | `lm_d60_S8.json`, `lm_d60.json`, `lm_d56_S16.json`, `lm_S8.json`, `lm_S12.json` |
# | 3a, 3b, 3c | the same wall-clock budget per run; 2,000 steps instead of 80; the learning rate at 2,000 steps | `lm_40s_budget.json`, `lm_2000steps*.json` |
# | 4, 5 | associative recall, MQAR (the recall study, see `RECALL_STUDY.md`) | `recall*.json`, `mqar*.json` |
# | 6 | MiniMind tokenizer, hidden 96, 2 layers, 120 steps, seeds 1-3 | `tokenized*.json` |

# %%
# NBVAL_IGNORE_OUTPUT
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import math

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tl_minimal import results, views
from tl_minimal.course import recall_start
from tl_minimal.results import state_size_table
from tl_minimal.training import config
from tl_minimal.training.protocols import protocol
from tl_minimal.views import plots_capacity, plots_reproduction

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

RESULTS = results.results_dir()
print(f"smoke mode: {config.smoke()}   results folder: data/results")

# %% [markdown]
# The yardstick for every BPB below: the **unigram baseline**, each byte predicted from its
# frequency in the training text with no context at all (`results.tables_unigram`), on the same validation
# chunks as the tables (the first 128 batches of 16 chunks of 128 bytes). A model below it has
# learned something about context; one above it has not yet learned even the byte frequencies.

# %%
UNIGRAM = results.tables_unigram(protocol("lm"))
print(f"unigram baseline on the tables' validation chunks: {UNIGRAM:.3f} BPB   (uniform over 259 ids: {math.log2(259):.3f})")

# %% [markdown]
# ## The verdicts
#
# **The paper's claims, one by one.** Each verdict holds at the budget it names; the place named
# last holds the runs, seeds and intervals that decide it (the paper's own rows are single runs).
#
# | the paper claims | verdict here | budget | where |
# |---|---|---|---|
# | conv-free triple-latent layers beat the Transformer on bytes (80 steps) | not shown: Transformer minus `triple_latent` +0.054 BPB (paired over 3 seeds, 95% interval [-0.073, +0.180]) | 80 steps x 16 x 128 bytes | table 1 |
# | the compressed latent helps language modelling | partly: with one recipe for every row, `triple_latent` minus the rotary Transformer is -0.063 BPB over 5 seeds, 95% interval [-0.079, -0.047]; but a convolution with no memory was further ahead (lr 3e-4) | 2,000 steps, warm-up and cosine | tables 3b-3c; 06b, section 4; `lm_yardstick.json` |
# | the hybrid's convolution gives its lead | the lead is the symmetric convolution's leak; causal, `triple_hybrid` is level with the Transformer | 80 steps | tables 1, 1b; notebook 05 |
# | the gated hybrid recalls (41.9%, one seed at 100%) | did not reproduce at the paper's budget, with its own code or ours: one run, not a rate | 500 steps x 32, lr 3e-4 | section 6, 07b |
# | recall is non-monotonic in width | not supported: one run per width; 0 wins in 15 of our runs | 500 steps x 32 | 07b, section 3 |
# | the retrain recipe collapses (12.7%) | agrees (5 seeds) | 500 steps, warm-up 50 | 07b, section 3 |
# | exact recall needs a separate retrieval path | not supported: at the paper's gate start (0.5) no gradient reaches the pairs; started long, the same layer recalls | calibrated 4-pair recall, 1,000 steps x 32 | section 6; 06a, section 1; 06b, section 5 |
# | (ours) a tied $W_{qk}$ with $\beta = 10$ fixes the read | on exact repeats, solved at initialization; a cache that grows with T, fails on aliases | 500 steps x 32 | 07c, section 2 |
# | the layer is 32.7-106.5x slower than attention | the Python loop's cost, not the model's | CPU, one thread | notebook 08 (optional) |
#
# ## 1. Before the tables: what a step-matched lead measures (notebook 07b)
#
# At the paper's 80 steps `transformer_plus_triple` (the Transformer plus **one** triple-latent
# layer whose output joins the logits: late fusion) beats the Transformer by almost a whole bit per
# byte (table 1). Notebook 07b, section 1, measures why: the side vector doubles the logits of a
# head still too small to be confident, and a Transformer whose logits are simply doubled scores
# about the same. So a step-matched comparison at 80 steps measures mostly how fast a model's
# logits grow: read table 1 (80 steps) beside tables 3a and 3b (the same wall-clock budget; 2,000
# steps), and never a single seed. The sections below do both.

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
display(Markdown(results.provenance_markdown(files)))
print("\n".join(results.data_sources(files)))

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
#   takes `gated_hybrid_repaired` from 4.333 to 3.581, beside the 3.595 the paper reports for its own gated
#   hybrid (one run, in its recall table; `docs/paper.md` section 5.1), which has the same padding.
# - *The unigram baseline:* every model without late fusion (the Transformer, `triple_latent`,
#   `triple_slot`, the causal `triple_hybrid`) is still *above* it after 80 steps: at the paper's
#   budget none of them has yet learned even the byte frequencies well.
# - *Two late-fusion variants do best:* `transformer_plus_triple` 4.174 ± 0.026 and
#   `gated_hybrid_repaired` 4.333 ± 0.030 (both causal: `tests/model/test_models.py::test_causal` checks every
#   variant). Both add a LayerNorm-ed side path to the logits (late fusion). Notebook 07b (section 1) showed
#   that for `transformer_plus_triple` this is mostly a matter of logit scale: the side
#   vector points the same way as the stack's and doubles it, and a plain Transformer whose logits
#   are doubled reaches the same BPB at 80 steps. The 2,000-step table (section 5) shows what is
#   left of the lead with longer training.
# - `gated_hybrid_repaired` here is the library's current default (tied query/key projection, learnable
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
# - `transformer_plus_triple (d=60)` 4.245 ± 0.032 and `gated_hybrid_repaired (d=60, S=8)` 4.411 ± 0.030 keep
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
# `gated_hybrid_repaired` (3.369 ± 0.078) stay in front. At 80 steps the causal convolution was worth
# nothing; after a few hundred steps it is worth a lot.
#
# **2,000 steps (table 3b).** Three seeds for every variant. The Transformer reaches 3.353 ± 0.027;
# the causal `triple_hybrid` 2.641 ± 0.011, `triple_latent` 2.691 ± 0.007, `gated_hybrid_repaired`
# 2.702 ± 0.010, `triple_slot` 2.848 ± 0.017 and `transformer_plus_triple` 2.879 ± 0.001. The
# 80-step ranking does not survive: the late-fusion models that led by 0.7-0.9 BPB at 80 steps fall
# behind the plain triple-latent stacks (`gated_hybrid_repaired` only just; notebook 07b, section 1, showed
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
# These files come from the recall study (`python -m tl_research study`, see
# `data/results/RECALL_STUDY.md`). Accuracy is over 2,048 fresh examples per seed; chance, a constant
# guess, scores 1/8 = 12.5% in expectation and at best 13.4-15.0% on our evaluation sets (the first line
# printed below), a random pick among the four values in context 25%.

# %%
# NBVAL_IGNORE_OUTPUT
for kind, text in results.recall_file_reports():  # the constant guess's line, then a table per file and step
    display(Markdown(text)) if kind == "markdown" else print(text)

# %% [markdown]
# **Table 5, MQAR: where does each model's recall break?** Every `mqar*.json` file, one row per
# model and setting (pairs, sequence length), 4 questions per sequence,
# accuracy over all 4 x 2,048 questions per seed: mean ± std (minimum) over seeds after each
# evaluated step. "chance" is a constant guess, 1/N for N value ids: 1/8 = 12.5%, 1/16 = 6.25%,
# 1/32 = 3.125%, 1/64 = 1.5625%, 1/128 = 0.78125%.

# %%
# NBVAL_IGNORE_OUTPUT
mqar = results.mqar_rows()
display(Markdown(results.mqar_markdown(mqar)))
plots_reproduction.mqar_accuracy(mqar, results.ORDER)
plt.show()

# %% [markdown]
# **What agrees, what does not** (`recall.json` and the two 5-seed files, 500 steps, mean ± std
# over seeds; details in `RECALL_STUDY.md`). Every
# verdict here is for the paper's budget: 500 steps x 32 sequences, one supervised token per
# sequence, AdamW at a constant lr of 3e-4 (MQAR: 100-500 steps of the same). At that budget the
# Transformer itself reaches only 24.8% (mean of 3 seeds), so these tables measure the budget as
# much as the models.
#
# - *Transformer:* 24.8% ± 0.6 (3 seeds), the paper's 25.0%: it learns to pick one of the four
#   values in context at random, not to recall. Agrees. At 200 steps ours is 21.9% ± 1.4, the
#   paper's main table 25.4% (one run), and its latent-only models 13.4%, a constant guess
#   (`docs/paper.md` section 5.3).
# - *Triple-latent models without the key-value path* sit on the constant-guess line:
#   `triple_hybrid` 12.3% ± 0.8 (paper 11.6%), `triple_latent` 12.3% ± 0.8. Agrees.
# - *The paper's gated hybrid* (`gated_hybrid_paper`): 12.3% ± 0.8 over 3 seeds and 12.3% ± 0.9 over
#   5 seeds, every seed on the constant-guess line. The paper's 41.9% is the mean of 14.2, 100 and
#   11.6% (its result file): one win in 3 runs on Apple
#   MPS. That win did not reproduce: the paper's own code won 0 of 25 seeds (95% Clopper-Pearson
#   interval [0.00, 0.14]) on our CPU (`recall_reference_code.json`), and our re-implementation won 0 of 30 seeds (95%
#   Clopper-Pearson interval [0.00, 0.12]); seed 19 (100% in the paper's run) gives 12.0% with the
#   paper's own code and 12.4% with ours (a win: accuracy >= 95%). At a larger step both codes win
#   on some seeds: at lr 1e-3 it won 4 of 12, and the paper's own code at lr 1e-3 won 2 of 5
#   (`RECALL_STUDY.md` section 0). Does not agree with the paper's mean, which one run makes.
# - *The library's `gated_hybrid_repaired` default* (tied query/key projection, learnable score scale
#   β starting at 10): 100.0% on all 5 seeds, already after 100 steps. Its read is solved at
#   initialization (0.99 of the weight on the answer at step 0 in `recall_init_diagnosis.json`, notebook 07b
#   section 2) and it keeps every earlier
#   token to match against, a cache that grows with the sequence: it shows that this task is
#   solved by exact token matching, not that a separate path is necessary, nor that it beats the
#   fixed-size states.
# - *MQAR (table 5)*, 4 questions per sequence, 3 seeds: at this budget every model without an
#   exact-match read, the Transformer included, is at or near chance from the smallest setting,
#   so the rows measure the budget. With 8 pairs in 128 tokens the
#   Transformer is at chance after 500 steps (12.5% ± 0.3) and the recurrent rows reach
#   15.6-15.9%, which is not recall: their per-question accuracy is close to 1/8, 1/7, 1/6, 1/5,
#   a guess among the values not yet given as an answer earlier in the sequence. With 16 pairs
#   (6.2-6.5% against 6.25%) and 32 pairs (length 128 or 256; 3.0-3.3% against 3.1%) all four
#   sit on the chance line. The exact-match `gated_hybrid_repaired` does not break up to
#   128 pairs in 512 tokens (99.7% ± 0.4 after 200 steps; 100% at the last evaluated step of
#   every other setting): its read is exact from step 0.
# - Five rows have identical per-seed numbers at 500 steps (11.8, 13.2, 12.0% on seeds 0-2:
#   `triple_latent`, `triple_slot`, `triple_hybrid`, `gated_hybrid_paper` and, on the same seeds,
#   `gated_hybrid_printed`). Each of these models answers one constant value for every example,
#   the same one for a given seed.

# %% [markdown]
# **A calibrated budget, and the gate's start.** The first calibration attempts stalled at
# 51.9-52.5% (`issue32/recall_calibrated*.json`); at a calibrated budget (Zoology's form of MQAR with 4 pairs, fan-in init, warm-up
# and cosine decay, 1,000 steps x 32; `RECALL_STUDY.md` section 12), where the Transformer recalls 4 pairs (100.0% over 5 seeds, `recall_calibrated.json`, at lr
# 1e-3; a fragile yardstick: its seed 0 at lr 3e-3 stays at 24.9%, a guess among the values in
# context, `issue32/recall_zoology_seq128_steps1000_lr3e-3.json`), `triple_latent` scores 12.4%
# over 5 seeds there and `gated_hybrid_paper` scores 43.1% over 5 seeds there, both at the
# paper's gate start. Notebook 06a shows why: with the pair gate at 0.5 no gradient reaches the
# pairs. Started long (`--set gam_bias=4`), with the pair gate's bias at 4 the same layer recalls on 6 of 7 seeds (95% Clopper-Pearson interval [0.42, 1.00]): a start that makes recall learnable
# at this budget, not certain (`recall_gate_start.json`). Chance: 1/8 = 12.5%.

# %%
display(Markdown(recall_start.markdown(recall_start.gate_start_rows(["triple_latent", "gated_hybrid_paper"]))))

# %% [markdown]
# **Recall against state size** (`recall_state_size.json`, all at the paper's gate start; chance
# 1/8 = 12.5% on 4 pairs, 1/16 = 6.25% on MQAR's 16 value ids):
# attention's KV cache and `gated_hybrid_repaired`'s store grow with the sequence, `triple_latent`'s state
# does not, and on 4 pairs it stays at chance at every S tried (S = 8 to 64: 12.4-12.7% on
# average): `triple_latent` at S = 64 keeps 199,680 bytes and scores 12.7% over 3 seeds;
# `triple_slot` too, from S = 8 to 64 (12.4-12.7% on average). Bytes were not what it lacked, and
# 4 pairs never fill any of these states, so the sweep measured training, not capacity:
# `deltanet`, a fixed state of 19,200 bytes, recalls 100.0% over 3 seeds (06b). On MQAR with 8
# pairs, `deltanet` recalls 100.0% over 3 seeds, as GLA and H3 do, while `triple_latent` stays at
# 8.1% over 3 seeds (MQAR, 8 pairs) at the paper's start; started long, `triple_latent` recalls
# 100.0% over 3 seeds on MQAR with 8 pairs (`issue50/mqar8_triple_latent_gam4_lr3e-3.json`).

# %%
# NBVAL_IGNORE_OUTPUT
sizes = results.load(RESULTS / "recall_state_size.json")
display(Markdown(state_size_table.markdown(sizes)))
plots_capacity.recall_vs_state_bytes(sizes["runs"])
plt.show()

# %% [markdown]
# **Why the paper's gated hybrid fails, seed by seed (notebook 07b).** Notebook 07b, section 2, sets
# the paper's own code, ours and the tied read side by side and measures the read before any
# training: with independent query and key
# projections the right entry is rarely among the 8 kept, so no gradient tells them to align; one
# tied projection ranks it first on every example. Section 3 there runs the paper's other recall
# experiments (the width sweep, the retrain recipe, table 4's other rows) with 5 seeds each.

# %% [markdown]
# ## 7. Tokenized benchmark, MiniMind tokenizer (table 6)
#
# Hidden 96, 2 layers, 4 heads, sequence 96, batch 4, 120 steps, 32 evaluation batches of a
# deterministic 1-in-20 holdout, seeds 1, 2, 3. The paper reports the mean token loss in nats, and
# so do the result files; here every loss is divided by $\ln 2$ and shown in **bits per token**,
# the unit of the other tables (the paper's numbers too). `gated_hybrid_paper` is the paper's gated
# configuration; `gated_hybrid_repaired` is the library's default (its `config` is in the JSON).

# %%
# NBVAL_IGNORE_OUTPUT
tok_rows, tok_paper = results.tokenized_in_bits()  # the files hold nats; here bits per token
display(Markdown(results.tokenized_markdown(tok_rows, tok_paper)))
display(Markdown(results.tokenized_gaps_markdown(tok_rows, tok_paper)))

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
# owe part of that to the logit-scale effect notebook 07b (section 1) measured at 80 byte-level
# steps, which we have not checked on this benchmark. The library's `gated_hybrid_repaired` default is
# slightly behind the paper's configuration on language modelling (9.06 against 8.93 bits per
# token).

# %% [markdown]
# ## 8. Ours beside the paper, as a picture
#
# One row per variant, one panel per table. Dots: our seeds; bars: our mean; black diamonds: the
# paper's number where it gives one; dotted: the unigram baseline (byte-level panels).

# %%
# NBVAL_IGNORE_OUTPUT
plots_reproduction.beside_paper(results.beside_paper_panels(UNIGRAM))
plt.show()

# %% [markdown]
# What to look for: in the first two panels the conv-free `triple_latent` and `triple_slot` bars
# end close to their diamonds, while the diamonds of the hybrids (`triple_hybrid`,
# `gated_hybrid_paper`) sit well to the left of our causal bars (a lower BPB), because the paper's
# numbers carry the convolution's leak (section 3).

# %% [markdown]
# Does the ranking survive longer training? Each variant's mean BPB after 80 steps (table 1), after
# about 300 steps (the 40-second budget, table 3a) and after 2,000 steps (table 3b), against the
# mean number of steps (the paper's 80-step comparison is the leftmost point).

# %%
# NBVAL_IGNORE_OUTPUT
plots_reproduction.bpb_against_steps(results.bpb_by_steps(), UNIGRAM,
                                     "byte-level WikiText-2: BPB against training length")
plt.show()

# %% [markdown]
# What to look for: the lines cross. `transformer_plus_triple` and `gated_hybrid_repaired` lead at 80
# steps, but at 2,000 steps `triple_hybrid` and `triple_latent` are below both, and the
# Transformer's line ends highest: the 80-step ranking is not the long-run one.

# %% [markdown]
# ## 9. Rerun (notebook 07b)
#
# The tables above come from the commands in `data/results/run_all.sh`. Notebook 07b, section 4,
# reruns a tiny version of the byte-level protocol through the same function the command line
# calls, and offers the full rerun (`bash data/results/run_all.sh`, hours on a CPU).

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
# * **Late fusion leads early, not late.** `transformer_plus_triple` and `gated_hybrid_repaired` lead by
#   0.7-0.9 BPB at 80 steps (`transformer_plus_triple` mostly through the scale of its logits,
#   notebook 07b), and fall behind the plain stacks at 2,000 steps.
# * **The gated hybrid's one recall success did not reproduce.** The paper's 41.9% is one seed at
#   100% (on Apple MPS) and two collapsed. At the paper's budget (500 steps x 32 sequences, one
#   supervised token, constant lr 3e-4) the paper's own code won 0 of 25 seeds (95% Clopper-Pearson
#   interval [0.00, 0.14]) on our CPU (`recall_reference_code.json`), and our re-implementation won 0 of 30 seeds (95%
#   Clopper-Pearson interval [0.00, 0.12]). One tied $W_{qk}$ and a learnable $\beta$ recall 100%
#   on every seed and up to 128 pairs in MQAR, because the read is solved at initialization: an
#   exact-match cache that grows with the sequence, not a better fixed-size state. At that budget
#   the Transformer fails too; at a calibrated budget where it recalls 4 pairs, `triple_latent`
#   stays at chance whatever its state size, the paper's gated hybrid lands in between, and
#   DeltaNet's fixed state recalls.
# * Every number comes from a file in `data/results` with its protocol and command (except
#   notebook 07b's three small models). Where the repaired read breaks, and whether any model
#   copies text: notebook 07c.
#
# Next (optional): `08_speed.ipynb` (why this repository's triple-latent models are not 30-100 times
# slower than attention, as the paper's were).

