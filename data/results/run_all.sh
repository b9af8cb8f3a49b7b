#!/usr/bin/env bash
# Every command behind the committed lm*.json, tokenized*.json and the where-recall-breaks files (notebooks 07-07c,
# data/results/README.md, whose index says which file backs which table).
#
#   bash data/results/run_all.sh                 # all tables, one after another (hours on a 2-core CPU)
#   bash data/results/run_all.sh leak tokenized  # only these tables
#
# Tables: matched leak param time long long_seeds lr_sensitivity tokenized tokenized_leak tokenized_gated
# overwrite alias distance induction (shipped: the checkpoints of data/checkpoints/; gated_paper: only the paper's gated rows; paper_experiments: the paper's
# recall experiments of issue 24 - recall_width, recall_retrain, recall_more_variants; family, family_2000, family_recall: issue 33's relatives - not in the default list). Each command adds its runs to
# the file of its table row group here (one file per task and settings: several commands with the same settings
# share a file, which resumes and grows; protocol, data source, device, commit and command inside). Offline machines: set
# TL_MINIMAL_DATA to a folder with wikitext-2-raw/ and minimind/ (data/README.md).
# One thread per run: on a shared, overloaded 2-core CPU, two torch threads were 10x slower in
# wall-clock time than one (they wait for each other whenever one is descheduled).
# The result files are committed, and the experiments command resumes an existing file: a rerun
# over a complete file recomputes nothing and prints its table. FRESH=1 recomputes from scratch
# (passes --fresh); an interrupted run resumes where it stopped when rerun without it.
# The recall and MQAR tables (recall*.json, mqar*.json) come from `python -m tl_research study`;
# see RECALL_STUDY.md. overwrite*.json, alias*.json, distance.json and induction*.json (where recall
# breaks) come from the overwrite, alias, distance and induction functions below. Files written by an older
# layout (one per command) are merged into this one by `python -m tl_research.results merge`.
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}" PYTHONUNBUFFERED=1
PY="${PYTHON:-.venv/bin/python}"
E=(nice -n 10 "$PY" -m tl_research)
F=(${FRESH:+--fresh})  # FRESH=1: recompute instead of resuming the committed file
OUT=data/results
ALL=(transformer triple_latent triple_slot triple_hybrid transformer_plus_triple gated_hybrid_repaired)
SEEDS=(0 1 2)
TIME_BUDGET="${TIME_BUDGET:-40}"  # seconds of training per run in the time-matched table

matched() {  # 1. byte-level WikiText-2, matched width (S=16; gated S=8 as in the paper), 80 steps
  "${E[@]}" lm "${F[@]}" --variants "${ALL[@]}" --seeds "${SEEDS[@]}" --no-progress --out $OUT/lm.json
  gated_paper_matched
}
gated_paper_matched() {  # 1. the paper's gated configuration (gated_hybrid_repaired's default moved, see registry.py)
  "${E[@]}" lm "${F[@]}" --variants gated_hybrid_paper --seeds "${SEEDS[@]}" --no-progress \
    --out $OUT/lm.json
}
gated_paper_param() {  # 2. the paper's gated configuration, parameter-matched (175,225)
  "${E[@]}" lm "${F[@]}" --variants gated_hybrid_paper --set d_model=60 --set state_dim=8 --seeds "${SEEDS[@]}" \
    --no-progress --out $OUT/lm_d60_S8.json
}
gated_paper() { gated_paper_matched; gated_paper_param; }
leak() {  # 1b. the same hybrids with the paper's symmetric (non-causal) convolution
  "${E[@]}" lm "${F[@]}" --variants triple_hybrid gated_hybrid_repaired --seeds "${SEEDS[@]}" --set conv_causal=false \
    --no-progress --out $OUT/lm_noncausal.json
}
param() {  # 2. parameter-matched to the Transformer's 174,848 (within 5%); the Transformer row is table 1's
  "${E[@]}" lm "${F[@]}" --variants triple_latent --set state_dim=12 --seeds "${SEEDS[@]}" --no-progress \
    --out $OUT/lm_S12.json
  "${E[@]}" lm "${F[@]}" --variants triple_slot --set state_dim=12 --seeds "${SEEDS[@]}" --no-progress \
    --out $OUT/lm_S12.json
  "${E[@]}" lm "${F[@]}" --variants triple_hybrid --set d_model=56 --set state_dim=16 --seeds "${SEEDS[@]}" \
    --no-progress --out $OUT/lm_d56_S16.json  # the paper's 169,424
  "${E[@]}" lm "${F[@]}" --variants triple_hybrid --set state_dim=8 --seeds "${SEEDS[@]}" --no-progress \
    --out $OUT/lm_S8.json  # the paper's budget winner, 177,752
  "${E[@]}" lm "${F[@]}" --variants transformer_plus_triple --set d_model=60 --seeds "${SEEDS[@]}" --no-progress \
    --out $OUT/lm_d60.json
  "${E[@]}" lm "${F[@]}" --variants gated_hybrid_repaired --set d_model=60 --set state_dim=8 --seeds "${SEEDS[@]}" \
    --no-progress --out $OUT/lm_d60_S8.json
  gated_paper_param
}
time_matched() {  # 3a. the same wall-clock training budget per run on this CPU (steps as many as fit)
  "${E[@]}" lm "${F[@]}" --variants "${ALL[@]}" --seeds "${SEEDS[@]}" --steps 100000 --max-seconds "$TIME_BUDGET" \
    --no-progress --out $OUT/lm_40s_budget.json
}
long() {  # 3b. 2,000 steps instead of 80, seed 0 (2-6 minutes per run here)
  for v in ${LONG_VARIANTS:-transformer triple_hybrid transformer_plus_triple triple_latent gated_hybrid_repaired}; do
    "${E[@]}" lm "${F[@]}" --variants "$v" --seeds 0 --steps 2000 --no-progress --out $OUT/lm_2000steps.json
  done
  "${E[@]}" lm "${F[@]}" --variants triple_slot --seeds "${SEEDS[@]}" --steps 2000 --no-progress \
    --out $OUT/lm_2000steps.json
}
long_seeds() {  # 3b. seeds 1 and 2 at 2,000 steps (triple_slot: all three seeds in long)
  for v in ${LONG_SEED_VARIANTS:-transformer triple_hybrid transformer_plus_triple triple_latent gated_hybrid_repaired}; do
    "${E[@]}" lm "${F[@]}" --variants "$v" --seeds 1 2 --steps 2000 --no-progress --out $OUT/lm_2000steps.json
  done
}
lr_sensitivity() {  # 3c. is the 2,000-step gap the learning rate? seed 0 at lr 1e-3 and 3e-3; seeds 1 2 at each best
  "${E[@]}" lm "${F[@]}" --variants transformer triple_latent --seeds 0 --steps 2000 --protocol lr=1e-3 --no-progress \
    --out $OUT/lm_2000steps_lr0.001.json
  "${E[@]}" lm "${F[@]}" --variants transformer triple_latent triple_hybrid --seeds 0 --steps 2000 --protocol lr=3e-3 \
    --no-progress --out $OUT/lm_2000steps_lr0.003.json
  "${E[@]}" lm "${F[@]}" --variants triple_hybrid --seeds 0 --steps 2000 --protocol lr=1e-3 --no-progress \
    --out $OUT/lm_2000steps_lr0.001.json
  "${E[@]}" lm "${F[@]}" --variants transformer --seeds 1 2 --steps 2000 --protocol lr=1e-3 --no-progress \
    --out $OUT/lm_2000steps_lr0.001.json
  "${E[@]}" lm "${F[@]}" --variants triple_latent --seeds 1 2 --steps 2000 --protocol lr=3e-3 --no-progress \
    --out $OUT/lm_2000steps_lr0.003.json
}
tokenized() {  # 6. MiniMind tokenizer (WikiText-2 text offline), the paper's tokenized protocol, seeds 1 2 3
  "${E[@]}" tokenized "${F[@]}" --variants transformer triple_latent triple_hybrid transformer_plus_triple \
    gated_hybrid_paper --no-progress --out $OUT/tokenized.json
}
tokenized_leak() {  # 6c. the paper's symmetric convolution in the tokenized hybrids (its hybrids all had it)
  "${E[@]}" tokenized "${F[@]}" --variants triple_hybrid gated_hybrid_paper --set conv_causal=false --no-progress \
    --out $OUT/tokenized_noncausal.json
}
tokenized_gated() {  # 6b. gated_hybrid_repaired at its default (tied W_qk, learnable beta: not gated_hybrid_paper)
  "${E[@]}" tokenized "${F[@]}" --variants gated_hybrid_repaired --no-progress --out $OUT/tokenized.json
}
overwrite() {  # 9. where recall breaks: keys written 2-3 times, answer = the latest value (RECALL_STUDY.md 8)
  # 200 steps (the command's default); the seed groups the runs were made in (split to fit a shared CPU)
  "${E[@]}" overwrite --variants transformer --seeds 0 1 2 --no-progress --out $OUT/overwrite.json
  for v in triple_latent triple_slot triple_hybrid transformer_plus_triple gated_hybrid_paper; do
    "${E[@]}" overwrite --variants "$v" --seeds 0 --no-progress --out $OUT/overwrite.json
    "${E[@]}" overwrite --variants "$v" --seeds 1 2 --no-progress --out $OUT/overwrite.json
  done
  "${E[@]}" overwrite --variants gated_hybrid_repaired --seeds 0 1 2 --no-progress --out $OUT/overwrite.json
  "${E[@]}" overwrite --variants gated_hybrid_repaired --seeds 3 4 --no-progress --out $OUT/overwrite.json
  "${E[@]}" overwrite --variants gated_hybrid_repaired --set supersede=true --seeds 0 1 2 --no-progress \
    --out $OUT/overwrite_supersede.json
  "${E[@]}" overwrite --variants gated_hybrid_repaired --set supersede=true --seeds 3 4 --no-progress \
    --out $OUT/overwrite_supersede.json
  "${E[@]}" overwrite --variants gated_hybrid_repaired --seeds 0 --steps 500 --no-progress \
    --out $OUT/overwrite_500steps.json  # is the plain row converged at 200 steps?
  nice -n 10 "$PY" -m tl_research study overwrite-init --variants gated_hybrid_paper gated_hybrid_repaired \
    --seeds 0 1 2 3 4 --out $OUT/overwrite_init_diagnosis.json
  nice -n 10 "$PY" -m tl_research study overwrite-init --variants gated_hybrid_repaired --set supersede=true \
    --seeds 0 1 2 3 4 --out $OUT/overwrite_init_diagnosis_supersede.json
  nice -n 10 "$PY" -m tl_research study init --variants gated_hybrid_repaired --set supersede=true \
    --seeds 0 1 2 3 4 --examples 256 --out $OUT/recall_init_diagnosis_supersede.json
}
alias_keys() {  # 10. where recall breaks: written with one alias, asked with another (RECALL_STUDY.md 9)
  # the table: 1,000 steps (the command's default: the plateau at ln 8 ends between step 70 and past 1,000)
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --seeds 0 --steps 1000 --checkpoint-every 200 --no-progress \
    --out $OUT/alias.json  # run while the default was 200, hence --steps
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --seeds 1 --steps 1000 --checkpoint-every 200 --no-progress \
    --out $OUT/alias.json
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --seeds 2 --checkpoint-every 200 --no-progress \
    --out $OUT/alias.json
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --seeds 3 4 --checkpoint-every 200 --no-progress \
    --out $OUT/alias.json
  for v in transformer triple_latent triple_slot triple_hybrid transformer_plus_triple gated_hybrid_paper; do
    "${E[@]}" alias "${F[@]}" --variants "$v" --seeds 0 1 2 --checkpoint-every 200 --no-progress --out $OUT/alias.json
  done
  # the identical-token control (same_alias=true), one seed at 1,000 steps; gated_hybrid_repaired and triple_latent's
  # controls only at 200 steps (3 seeds each, below: 100% and the constant guess)
  for v in transformer triple_slot triple_hybrid transformer_plus_triple gated_hybrid_paper; do
    "${E[@]}" alias "${F[@]}" --variants "$v" --seeds 0 --protocol same_alias=true --checkpoint-every 200 --no-progress \
      --out $OUT/alias_same_alias.json
  done
  # the change that works: a curriculum, a quarter of the TRAINING questions asked with the written token
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --seeds 0 1 2 3 4 --protocol same_alias_share=0.25 \
    --checkpoint-every 200 --no-progress --out $OUT/alias_curriculum0.25.json
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --set top_k=all --seeds 0 1 2 3 4 --protocol same_alias_share=0.25 \
    --checkpoint-every 200 --no-progress --out $OUT/alias_curriculum0.25_top_k-all.json  # and every entry read
  "${E[@]}" alias "${F[@]}" --variants transformer --seeds 0 1 2 --protocol same_alias_share=0.25 \
    --checkpoint-every 200 --no-progress --out $OUT/alias_curriculum0.25.json  # attention, same curriculum
  # the read after training (RECALL_STUDY.md 9.3): the same runs again (seeds 0, 1), what the top-8 cuts
  nice -n 10 "$PY" -m tl_research study alias-trained --variants gated_hybrid_repaired --seeds 0 1 \
    --out $OUT/alias_trained_read.json
  nice -n 10 "$PY" -m tl_research study alias-trained --variants gated_hybrid_repaired --seeds 0 1 \
    --share 0.25 --out $OUT/alias_trained_read_curriculum.json
  # 200 steps, the first default: 4 of 5 gated_hybrid_repaired seeds still on the plateau
  for v in gated_hybrid_repaired transformer triple_latent triple_slot triple_hybrid transformer_plus_triple gated_hybrid_paper; do
    seeds="0 1 2"; [ "$v" = gated_hybrid_repaired ] && seeds="0 1 2 3 4"
    "${E[@]}" alias "${F[@]}" --variants "$v" --seeds $seeds --steps 200 --no-progress --out $OUT/alias_200steps.json
  done
  for v in gated_hybrid_repaired gated_hybrid_paper transformer triple_latent; do
    "${E[@]}" alias "${F[@]}" --variants "$v" --seeds 0 1 2 --steps 200 --protocol same_alias=true --no-progress \
      --out $OUT/alias_200steps_same_alias.json
  done
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --seeds 0 --steps 500 --no-progress \
    --out $OUT/alias_500steps.json
  # the change tried: every entry read (no top-8 cut), so the alias entry gets a gradient (RECALL_STUDY.md 9.2)
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --set top_k=all --seeds 0 1 2 3 4 --steps 200 --no-progress \
    --out $OUT/alias_200steps_top_k-all.json
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --set top_k=all --seeds 0 --checkpoint-every 200 \
    --no-progress --out $OUT/alias_top_k-all.json
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --set top_k=all --seeds 1 2 3 --checkpoint-every 200 \
    --no-progress --out $OUT/alias_top_k-all.json
  "${E[@]}" alias "${F[@]}" --variants gated_hybrid_repaired --set top_k=all --seeds 4 --checkpoint-every 200 \
    --no-progress --out $OUT/alias_top_k-all.json
  nice -n 10 "$PY" -m tl_research study alias-init --variants gated_hybrid_repaired gated_hybrid_paper \
    --seeds 0 1 2 3 4 --out $OUT/alias_init_diagnosis.json
  nice -n 10 "$PY" -m tl_research study alias-init --variants gated_hybrid_repaired gated_hybrid_paper \
    --seeds 0 1 2 3 4 --same-alias --out $OUT/alias_init_diagnosis_same_alias.json
}
distance() {  # 11. where recall breaks: the pairs at the start of 1,024 / 2,048 / 4,096 tokens (RECALL_STUDY.md 10)
  # the command's defaults: batch 4, 200 steps, lengths cycled batch by batch, 256 fresh examples per length
  "${E[@]}" distance "${F[@]}" --variants gated_hybrid_repaired --seeds 0 --no-progress --out $OUT/distance.json
  "${E[@]}" distance "${F[@]}" --variants gated_hybrid_repaired --seeds 1 2 --no-progress --out $OUT/distance.json
  for v in transformer triple_latent triple_slot triple_hybrid transformer_plus_triple gated_hybrid_paper; do
    "${E[@]}" distance "${F[@]}" --variants "$v" --seeds 0 1 2 --no-progress --out $OUT/distance.json
  done
}
induction() {  # 12. where recall breaks: held-out text read twice (RECALL_STUDY.md 11)
  # trained as lm, at the paper's 80 steps (the command's default) and at 2,000 steps; seeds 0-2;
  # one command per variant at 2,000 steps, so an interrupted run loses little (rerun = resume)
  local I=(induction "${F[@]}" --seeds 0 1 2 --no-progress --checkpoint-every 250)
  "${E[@]}" "${I[@]}" --variants "${ALL[@]}" gated_hybrid_paper --out $OUT/induction.json
  "${E[@]}" "${I[@]}" --variants gated_hybrid_repaired --set query_align=current \
    --out $OUT/induction_query_align-current.json  # the read asks with the current token
  for v in "${ALL[@]}" gated_hybrid_paper; do
    "${E[@]}" "${I[@]}" --variants "$v" --steps 2000 --out $OUT/induction_2000steps.json
  done
  "${E[@]}" "${I[@]}" --variants gated_hybrid_repaired --set query_align=current --steps 2000 \
    --out $OUT/induction_2000steps_query_align-current.json
}

# The paper's three recall experiments we had not run (docs/paper.md section 5; RECALL_STUDY.md). `study train`
# writes its --out file whole (it does not resume one), so each command below owns its file: the width files and
# the recipe file are final table files; the others are folded into recall.json (table 4: same settings) by
# `results merge` at the end. Evaluated at the paper's 200 and 500 steps; add 1000 to --eval-at for a row whose
# seeds still climb at 500 (by_step in its file). d = 64 is already in recall_gated_hybrid_paper.json and
# recall_eval100-200-500.json (gated_hybrid_repaired); only the printed form is new there.
RETRAIN=(--protocol warmup_steps=50 --protocol length_curriculum=32:128:150 --set read_gate_bias=-2)
GATED3=(gated_hybrid_paper gated_hybrid_printed gated_hybrid_repaired)
S=("${E[@]}" study train --seeds 0 1 2 3 4 --eval-at 200 500)  # 5 seeds: the paper claims a figure for these
recall_width() {  # the paper: gated hybrid 100% at d = 64, 67.2% at d = 80, 11.96% at d = 96 (one seed, 500 steps)
  "${S[@]}" --variants "${GATED3[@]}" --set d_model=80 --out $OUT/recall_d80.json
  "${S[@]}" --variants "${GATED3[@]}" --set d_model=96 --out $OUT/recall_d96.json
  "${S[@]}" --variants gated_hybrid_printed --out $OUT/recall_gated_hybrid_printed_d64.json  # -> recall.json
}
recall_retrain() {  # the paper's retrain recipe: 12.7% (per seed 13.0 / 13.4 / 11.6%), 500 steps
  "${S[@]}" --variants gated_hybrid_paper gated_hybrid_printed "${RETRAIN[@]}" \
    --out $OUT/recall_warmup50_lengths32-128-150_gatebias-2.json
}
recall_more_variants() {  # table 4's missing rows; the paper trains them on recall but quotes no figure: 3 seeds
  "${E[@]}" study train --variants triple_slot transformer_plus_triple --seeds 0 1 2 --eval-at 200 500 \
    --out $OUT/recall_triple_slot_transformer_plus_triple.json  # -> recall.json
}
shipped() {  # the trained models notebooks 01-04 look inside (data/checkpoints/; about 4 minutes each on a quiet CPU):
  # the lm protocol's 2,000-step runs of lm_2000steps.json, seed 0, kept with their record (not in the default list)
  "$PY" -m tl_research.ship_checkpoint triple_latent triple_slot --seed 0 --steps 2000
}
family() {  # issue 33: the relatives and the ablations beside triple_latent and the Transformer, 80 steps, 5 seeds
  # (not in the default list); compare with python -m tl_research.results paired FILE A B.
  # triple_hybrid: conv_only's convolution with the memory, so the pair isolates the memory. FAMILY: a queue may
  # name fewer rows
  local rows=(${FAMILY:-gla deltanet h3 triple_latent transformer triple_key_shift triple_key_current conv_only
              transformer_rope triple_hybrid})
  "${E[@]}" lm "${F[@]}" --variants "${rows[@]}" --seeds 0 1 2 3 4 --no-progress \
    --out $OUT/issue33/lm_family.json  # kept out of `results merge`, which would fold it into lm.json
}
family_2000() {  # issue 33: the same rows (and transformer_rope, rotary positions) at 2,000 steps, seed by seed so
  # that an interrupted queue leaves whole seeds; each run checkpoints every 100 steps and resumes. FAMILY_2000 and
  # FAMILY_2000_SEEDS: a queue may name fewer (seeds 1-4 ran first for the verdict's five rows: FAMILY_2000="triple_latent
  # transformer_rope gla triple_key_shift transformer" FAMILY_2000_SEEDS="1 2 3 4")
  local rows=(${FAMILY_2000:-triple_latent transformer transformer_rope gla deltanet h3 triple_key_shift
              triple_key_current conv_only triple_hybrid}) seed
  for seed in ${FAMILY_2000_SEEDS:-0 1 2 3 4}; do
    "${E[@]}" lm "${F[@]}" --variants "${rows[@]}" --seeds "$seed" --steps 2000 --checkpoint-every 100 --no-progress \
      --out $OUT/issue33/lm_family_2000steps.json
  done
}
family_recall() {  # issue 33: the relatives and ablations on the paper's recall protocol (500 steps), 3 seeds, until
  # issue 32's calibrated protocol exists; triple_latent and the Transformer are recall.json's rows
  "${E[@]}" study train --variants gla deltanet h3 triple_key_shift triple_key_current conv_only transformer_rope \
    --seeds 0 1 2 --eval-at 200 500 --out $OUT/issue33/recall_family.json
}
paper_experiments() {  # issue 24 item 3: all three, then the extra files folded into their tables
  recall_width
  recall_retrain
  recall_more_variants
  "$PY" -m tl_research.results merge
}

TABLES=("$@")
[ ${#TABLES[@]} -eq 0 ] && TABLES=(matched leak param time_matched long long_seeds lr_sensitivity tokenized tokenized_leak tokenized_gated overwrite alias distance induction)
for t in "${TABLES[@]}"; do
  case "$t" in
    time) t=time_matched ;;
    alias) t=alias_keys ;;  # not a function named alias: that would hide the shell builtin
  esac
  echo "== $t $(date -u +%H:%M:%S)"
  "$t"
done
