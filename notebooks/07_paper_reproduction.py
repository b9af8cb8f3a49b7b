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
# The paper (`docs/paper.md` section 5) reports bits per byte (BPB) on byte-level WikiText-2, a token
# loss with the MiniMind tokenizer, and associative-recall accuracy. This notebook sets our numbers
# beside the paper's, over several seeds, and says which claims hold. It opens with the verdicts;
# the sections after them show the tables.
#
# **Learning goals.** After this notebook you can
# - read a reproduction table: mean ± standard deviation over seeds, a difference paired by seed with
#   its 95% interval, the paper's number, the unigram baseline;
# - say which of the paper's claims hold here, and at what budget;
# - find for every number the file and the command that produced it.
#
# **Optional, after this notebook.** [`07b_diagnoses`](07b_diagnoses.ipynb) measures why two verdicts
# come out as they do; [`07c_recall_breaks`](07c_recall_breaks.ipynb) finds where the repaired gated
# read breaks. Every seed and interval: [RECALL_STUDY.md](../data/results/RECALL_STUDY.md) (recall)
# and [paper.md](../docs/paper.md) section 6 (language modelling).
#
# **Prerequisites.** Notebooks 01-06b; mean and standard deviation. Every symbol is in the course's
# glossary, [`docs/glossary.md`](../docs/glossary.md).
#
# **Time.** About 60 minutes: reading at the course's pace (notebook 00, section 5) and a run of
# every cell in default mode, measured at 5 s (CPU 4 s, peak 460 MiB) on a 2-core CPU
# (`docs/notebook_cost.json`).
#
# The notebook trains nothing: it reads the result files in `data/results/` (index:
# `data/results/README.md`), each with its protocol, device, commit and command.

# %%
# NBVAL_IGNORE_OUTPUT
try:  # set-up check: without the library in this kernel, one line says how to install it
    import tl_minimal  # noqa: F401  (only checks that it imports)
except ModuleNotFoundError:  # the clone: the first folder above this one with a pyproject.toml
    import pathlib

    clone = next((f'-e "{p}"' for p in pathlib.Path.cwd().parents if (p / "pyproject.toml").is_file()), None)
    raise SystemExit(f"tl_minimal is not installed for this kernel; run this in a cell, then restart the kernel:  "
                     f"%pip install {clone or 'git+https://github.com/<owner>/<repo>  (Colab: see its address)'}") from None

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tl_minimal import results, views
from tl_minimal.course import recall_start
from tl_minimal.data import text as data_text
from tl_minimal.results import report
from tl_minimal.training import config
from tl_minimal.training.evaluate import unigram_bits
from tl_minimal.training.protocols import chunk_eval_set, protocol
from tl_minimal.views import plots_capacity, plots_reproduction

views.use_course_style()  # the course's colours; in Jupyter, every figure's alt text

RESULTS = results.results_dir()
print(f"smoke mode: {config.smoke()}   results folder: data/results")

# %% [markdown]
# The yardstick for every BPB below is the **unigram baseline**: each byte predicted from its
# frequency in the training text, with no context at all (`unigram_bits`), on the tables'
# validation chunks. A model above it has not yet learned even the byte frequencies.

# %%
p = protocol("lm")  # the tables' validation chunks: its first eval_batches batches of eval_batch_size chunks
_, chunks = chunk_eval_set(data_text.load_split(p.eval_split).tokens, p)  # [C, T]: the bytes the BPB predicts
UNIGRAM = unigram_bits(data_text.load_split("train").tokens, chunks, data_text.VOCAB_SIZE)
print(f"unigram baseline on the tables' validation chunks: {UNIGRAM:.3f} BPB")

# %% [markdown]
# ## The verdicts
#
# One row per claim. The paper's rows are single runs; ours rest on the seeds the linked place gives.
#
# | the paper claims | verdict here | where |
# |---|---|---|
# | conv-free triple-latent layers beat the Transformer on bytes | not shown at the paper's 80 steps: about 0.05 BPB ahead, which 3 seeds cannot tell from zero | section 3 |
# | the compressed latent helps language modelling | yes, against a fair yardstick (one recipe for every row, 2,000 steps): `triple_latent` minus the rotary Transformer is -0.063 BPB over 5 seeds, 95% interval [-0.079, -0.047] | section 5 |
# | the hybrid's convolution gives its lead | no: the paper's convolution sees the next byte; made causal, `triple_hybrid` is level with the Transformer | section 3; [notebook 05](05_convolution.ipynb) |
# | on tokens, every variant beats the Transformer | yes, but the hybrids' gaps are the same leak | section 7 |
# | the gated hybrid recalls (the paper's 41.9%) | that mean is one seed of three; the win did not reproduce with the paper's code or ours, at a budget where the Transformer only guesses | section 6; [notebook 07b](07b_diagnoses.ipynb), section 2 |
# | exact recall needs a separate retrieval path | not supported. At the paper's start (pair gate at sigmoid(0) = 0.5) no gradient reaches the pairs and the triple-latent models stay at chance; with the pair gate's bias at 4, `triple_latent` recalls on 6 of 7 seeds | section 6; [notebook 06a](06a_kv_recall.ipynb) |
# | (ours) what the key-value path adds once the compressed memory can recall | nothing measured: started long, the paper's `gated_hybrid_paper` recalls on 4 of 5 seeds, its compressed stack alone (`triple_hybrid`) on 5 of 5 | section 6; [RECALL_STUDY.md](../data/results/RECALL_STUDY.md) section 13 |
# | (ours) the ladder to GLA, one change a rung | four changes decide it, all about time: the long start and a key from earlier tokens make recall; the written token's own key loses it, GLA's convolution brings it back; GLA's shorter start loses it again | [notebook 06b](06b_family.ipynb), section 5 |
# | recall is non-monotonic in width | not supported: one run per width; no win in 15 of our runs | [notebook 07b](07b_diagnoses.ipynb), section 3 |
# | the paper's retrain recipe collapses (12.7%) | agrees (5 seeds) | [notebook 07b](07b_diagnoses.ipynb), section 3 |
# | (ours) the repaired hybrid (`gated_hybrid_repaired`) recalls | yes: its tied read is solved at initialization, an exact-match cache that grows with the sequence; it fails on aliased keys | [notebook 07c](07c_recall_breaks.ipynb), section 2 |
# | the paper's layer is 32.7-106.5x slower than attention | that is the paper's Python loop over time, not the model | [notebook 08](08_speed.ipynb) (optional) |
#
# ## 1. Before the tables: what a step-matched lead measures
#
# At the paper's 80 steps `transformer_plus_triple` (the Transformer plus **one** triple-latent layer
# whose output joins the logits: late fusion) beats the Transformer by almost a whole bit per byte.
# Notebook 07b, section 1, shows why: its side path doubles the logits, and a Transformer whose logits
# are simply doubled scores about the same. So read the 80-step tables beside section 5's longer runs.

# %% [markdown]
# ## 2. Where the numbers come from
#
# One row per results file (`+dirty`: other files of the working tree were being edited; the model
# code was not). Offline, the byte-level runs train on the **first 1 MB of the train split**, and the
# tokenized runs use **WikiText-2 text** with the MiniMind tokenizer.

# %%
# NBVAL_IGNORE_OUTPUT
provenance = report("provenance")  # the tables' files, read by the research package (data/results/README.md)
display(Markdown(provenance["markdown"]))
print(provenance["data_sources"])

# %% [markdown]
# ## 3. Byte-level WikiText-2, matched width (table 1)
#
# The paper's protocol: d = 64, 3 layers, 4 heads, S = 16, 80 steps of 16 windows of 128 bytes. Mean
# ± standard deviation over seeds 0-2, and each row minus the Transformer paired by seed (a seed sees
# the same batches in every row) with its 95% interval.

# %%
# NBVAL_IGNORE_OUTPUT
TABLES = report("tables")  # {key: its title and Markdown}
for key in ("lm_matched_width", "lm_leak"):
    display(Markdown(f"**{TABLES[key]['title']}**\n\n" + TABLES[key]["markdown"]
                     + f"\n\nUnigram baseline on the same chunks: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **What agrees, what does not** (`lm.json`, `lm_noncausal.json`).
#
# - *The Transformer* scores 5.050 here, 5.124 in the paper: close (the training text and seeds differ).
# - *The conv-free layers* `triple_latent` and `triple_slot` land on the paper's numbers, about 0.05
#   BPB below the Transformer, with more parameters (187,928 / 174,848 - 1 = 7.5%).
# - *The hybrid's gain is the leak.* With a causal convolution `triple_hybrid` is no better than
#   `triple_latent`; with the paper's symmetric one (table 1b) position t sees the byte it must
#   predict, and it beats the paper's number.
# - *The late-fusion models* lead by far at 80 steps (section 1 says why).
# - Every model without late fusion is still above the unigram baseline.
#
# Three seeds do not settle the conv-free lead: the Transformer minus `triple_latent` is +0.054 BPB
# (paired over 3 seeds, 95% interval [-0.073, +0.180]), an interval that holds zero.

# %% [markdown]
# ## 4. Parameter-matched (table 2)
#
# Each variant gets sizes that bring it within 5% of the Transformer's parameters. The counts of the
# paper's configurations equal the paper's exactly.

# %%
# NBVAL_IGNORE_OUTPUT
display(Markdown(TABLES["lm_param_matched"]["markdown"] + f"\n\nUnigram baseline: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **What agrees, what does not.** At the paper's configuration (d = 60), `triple_latent` (5.119) and
# `triple_slot` (5.120) land on the paper's 5.114 and 5.126, a little behind our Transformer; shrunk
# through the state instead (S = 12) they are a little ahead. So the paper's parity roughly holds;
# which side is ahead depends on where the parameters are removed (`docs/paper.md` section 6.7).
# The paper's numbers stand beside its own d = 60 configurations. The paper's
# parameter-matched hybrid (d = 56) is worse than the Transformer (5.221 - 5.050 = 0.17 BPB) with a causal
# convolution: its gain in the paper was the leak.

# %% [markdown]
# ## 5. Longer training, and a fair yardstick (table 3)
#
# The paper compares models after the same number of steps. Here every run also gets the same
# wall-clock budget on this CPU (table 3a), and 2,000 steps instead of 80 (table 3b).

# %%
# NBVAL_IGNORE_OUTPUT
for key in ("lm_time_matched", "lm_2000_steps"):
    display(Markdown(f"**{TABLES[key]['title']}**\n\n" + TABLES[key]["markdown"]
                     + f"\n\nUnigram baseline: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **Time-matched (3a).** Our chunked layers cost about as much per step as attention on this CPU,
# so every model got a few hundred steps. The causal `triple_hybrid` is now clearly ahead of the
# Transformer: after a few hundred steps the convolution is worth a lot.
#
# **2,000 steps (3b).** The 80-step ranking does not survive: the late-fusion models fall behind the
# plain triple-latent stacks, and every triple-latent variant ends 0.47-0.71 BPB ahead of this
# Transformer, a weak yardstick (learned positions, constant lr 3e-4, no warm-up).

# %%
# NBVAL_IGNORE_OUTPUT
# 2,000 steps: table 3b (the paper's lr 3e-4) beside the same protocol at higher learning rates
display(Markdown("**3c. Learning rate, 2,000 steps (BPB; seed 0, or mean ± std over the seeds in brackets)**\n\n"
                 + report("lr_sweep") + f"\n\nUnigram baseline: {UNIGRAM:.3f} BPB."))

# %% [markdown]
# **Learning rate (3c).** At each model's best of three rates the gap shrinks (2.939 - 2.516 = 0.42 and 2.939 - 2.476 = 0.46 BPB): about
# a third of it was the learning rate.
#
# **A fair yardstick.** The next cell gives every row one recipe: 2,000 steps, warm-up 200 and
# cosine decay, the better lr on seed 0 (`lm_yardstick.json`, [RECALL_STUDY.md](../data/results/RECALL_STUDY.md)
# section 13). The rotary Transformer is far better than the learned-position one, and the
# compressed latent still leads it: `triple_latent` minus the rotary Transformer is -0.063 BPB over
# 5 seeds, 95% interval [-0.079, -0.047]. Not rerun this way: `conv_only`, a convolution with no
# memory, lower than `triple_latent` under the old recipe (notebook 06b, section 4).

# %%
# NBVAL_IGNORE_OUTPUT
print(report("yardstick"))  # lm_yardstick.json: each row's mean, then the paired differences with 95% intervals

# %% [markdown]
# The start that makes recall learnable (`ladder_1`: the pair gate's bias at 4) costs a little
# language modelling (the third comparison above) and still leads the rotary Transformer.

# %% [markdown]
# ## 6. Associative recall and MQAR (tables 4 and 5)
#
# These files come from the recall study ([RECALL_STUDY.md](../data/results/RECALL_STUDY.md) sections
# 4-5). Accuracy is over 2,048 fresh examples per seed. Chance, a constant
# guess, scores 1/8 = 12.5% in expectation and at best 13.4-15.0% on our evaluation sets (the first line
# printed below); a random pick among the four values in context scores 25%.

# %%
# NBVAL_IGNORE_OUTPUT
for kind, text in report("recall_files"):  # the constant guess's line, then a table per file and step
    display(Markdown(text)) if kind == "markdown" else print(text)

# %% [markdown]
# **Table 5, MQAR** (multi-query associative recall): 4 questions per sequence, mean ± std (minimum)
# over seeds after each evaluated step. Chance, a constant guess, is 1/N for N value ids: 1/8 = 12.5%,
# 1/16 = 6.25%, 1/32 = 3.125%, 1/64 = 1.5625%, 1/128 = 0.78125%.

# %%
# NBVAL_IGNORE_OUTPUT
mqar = report("mqar")  # from the mqar*.json files
display(Markdown(mqar["markdown"]))
plots_reproduction.mqar_accuracy(mqar["points"], mqar["order"])
plt.show()

# %% [markdown]
# **At the paper's budget** (500 steps x 32 sequences, one supervised token each, a constant lr 3e-4)
# the Transformer itself reaches only 24.8% (mean of 3 seeds), as in the paper: a random pick among
# the values in context, not recall. The triple-latent models sit on the constant-guess line, and on
# MQAR every model without an exact-match read is near chance: these tables measure the budget.
#
# - Five rows have identical per-seed numbers at 500 steps (`triple_latent`, `triple_slot`,
#   `triple_hybrid`, `gated_hybrid_paper`, `gated_hybrid_printed`): each answers one constant value.
#
# **The paper's gated hybrid** (`gated_hybrid_paper`). The paper's 41.9% is the mean of one seed at
# 100% and two at the constant guess. On our CPU at the paper's budget, the paper's own code won 0 of
# 25 seeds (95% Clopper-Pearson interval [0.00, 0.14]) (`recall_reference_code.json`; a win is
# accuracy >= 95%). Notebook 07b, section 2, shows why.
#
# **Ours** agrees: on the same protocol our re-implementation won 0 of 30 seeds (95% Clopper-Pearson
# interval [0.00, 0.12]) (`recall_gated_hybrid_paper.json`, `issue32/recall_reference_seeds_ours.json`).
#
# **The repaired hybrid** (`gated_hybrid_repaired`: one tied $W_{qk}$, a score scale $\beta$ starting at 10)
# recalls on every seed, because its read is solved before any training: an exact-match cache that
# grows with the sequence, not a better fixed-size state.

# %% [markdown]
# **A budget where attention recalls, and the gate's start.** [RECALL_STUDY.md](../data/results/RECALL_STUDY.md)
# section 12 calibrated one: every pair asked, fan-in init, warm-up and cosine, 1,000 steps x 32,
# where the Transformer recalls 4 pairs (100.0% over 5 seeds, `recall_calibrated.json`). At the
# paper's start `triple_latent` scores 12.4% over 5 seeds there: chance. Notebook 06a shows why:
# with the pair gate at 0.5 the gradient that reaches the pairs is exactly 0 before any training
# (`gradient_reach.json`). Started long, with the pair gate's bias at 4 the same layer recalls on 6 of
# 7 seeds (95% Clopper-Pearson interval [0.42, 1.00]) (`recall_gate_start.json`). Chance on this
# task: 1/8 = 12.5%.

# %%
display(Markdown(recall_start.markdown(recall_start.gate_start_rows(["triple_latent", "triple_hybrid",
                                                                      "gated_hybrid_paper"]))))

# %% [markdown]
# **What the key-value path adds** (`recall_gate_start.json`). At the paper's start
# `gated_hybrid_paper` scores 43.1% over 5 seeds there, and no seed recalls. Started long, it does
# best with lr 1e-3 and recalls on 4 of its 5 seeds; its compressed stack alone, `triple_hybrid`,
# recalls on 5 of 5. Paired over the 5 seeds, `gated_hybrid_paper` minus `triple_hybrid` is -0.075
# in accuracy, 95% interval [-0.282, +0.132] (`issue50/recall4_gated_hybrid_paper_gam4_lr1e-3.json`,
# `issue50/recall4_triple_hybrid_gam4_lr3e-3.json`): the key-value path adds no gain that 5 seeds
# can measure.
#
# **MQAR with 8 pairs** at its own calibrated budget says the same. Its pairs use 16 value ids, so a
# constant guess scores 1/16 = 6.25%. At the paper's start `triple_latent` stays at 8.1% over 3
# seeds (MQAR, 8 pairs; `mqar_calibrated_pairs8.json`). Started long, `triple_latent` recalls 100.0%
# over 3 seeds on MQAR with 8 pairs (`issue50/mqar8_triple_latent_gam4_lr3e-3.json`). The ladder
# to GLA (notebook 06b, section 5) names what else recall needs, and `triple_latent` already has:
# a key built from the tokens before the one written.

# %% [markdown]
# **Recall against state size** (`recall_state_size.json`; chance 1/8 = 12.5% on 4 pairs, 1/16 = 6.25% on
# MQAR). Every triple-latent point ran at the paper's start, so the sweep measured that start, not
# capacity: `triple_latent` stays at chance at every S tried (S = 8 to 64: 12.4-12.7% on average),
# while `deltanet`, a fixed state of 19,200 bytes, recalls 100.0% over 3 seeds. A real capacity test
# (`recall_capacity.json`) has begun; at its budget even the Transformer stays at a guess.

# %%
# NBVAL_IGNORE_OUTPUT
sizes = results.load(RESULTS / "recall_state_size.json")
display(Markdown(report("state_size")))
plots_capacity.recall_vs_state_bytes(sizes["runs"])
plt.show()

# %% [markdown]
# ## 7. Tokenized benchmark, MiniMind tokenizer (table 6)
#
# Hidden 96, 2 layers, 120 steps, seeds 1-3. The files hold the mean token loss in nats; here it is
# divided by $\ln 2$ and shown in **bits per token**, the paper's numbers too.

# %%
# NBVAL_IGNORE_OUTPUT
tokenized = report("tokenized")  # the files hold nats; here bits per token
display(Markdown(tokenized["markdown"]))
display(Markdown(tokenized["gaps"]))

# %% [markdown]
# **What agrees, what does not.** Our corpus is WikiText-2 text, so only the gaps to the Transformer
# compare. Every variant beats the Transformer, as in the paper, but with a causal convolution the
# hybrid gains almost nothing; with the paper's symmetric padding its gap becomes the paper's: the leak
# again.

# %% [markdown]
# ## 8. Ours beside the paper, as a picture
#
# One row per variant, one panel per table. Dots: our seeds; bars: our mean; black diamonds: the
# paper's number; dotted: the unigram baseline.

# %%
# NBVAL_IGNORE_OUTPUT
plots_reproduction.beside_paper(report("beside_paper"), UNIGRAM)
plt.show()

# %% [markdown]
# What to look for: the conv-free `triple_latent` and `triple_slot` bars end close to their diamonds,
# while the hybrids' diamonds sit well to the left of our causal bars: the paper's numbers carry the
# convolution's leak (section 3).
#
# Does the ranking survive longer training? Each variant's mean BPB after 80 steps, after about 300
# (the time-matched table) and after 2,000, against the number of steps.

# %%
# NBVAL_IGNORE_OUTPUT
plots_reproduction.bpb_against_steps(report("bpb_by_steps"), UNIGRAM,
                                     "byte-level WikiText-2: BPB against training length")
plt.show()

# %% [markdown]
# What to look for: the lines cross. The late-fusion models lead at 80 steps, but at 2,000 steps
# `triple_hybrid` and `triple_latent` are below them, and the Transformer's line ends highest.
#
# ## 9. Rerun (notebook 07b)
#
# Every table comes from a command in `data/results/run_all.sh`; notebook 07b, section 4, reruns a
# tiny version of one.
#
# ## Summary
#
# * **The compressed latent helps language modelling** against a fair yardstick at 2,000 steps; at
#   the paper's 80 steps 3 seeds cannot show it.
# * **The hybrid's gain is the leak** of a convolution that sees the next token.
# * **Late fusion leads early, not late.**
# * **The paper's one recall win did not reproduce**, with its own code or with ours.
# * **For the triple-latent layer, the pair gate's start decides recall.** At the paper's start no
#   gradient reaches the pairs and the layer stays at chance; started long, it recalls. The
#   key-value path then adds no gain that 5 seeds can measure.
#
# **Next.** The required path ends here. `08_speed.ipynb` is **optional**: why this repository's
# triple-latent models are not 30-100 times slower than attention, as the paper's were.
