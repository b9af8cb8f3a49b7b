#!/usr/bin/env bash
# Issue 50: recall, round 2. The pair gate's start, the ladder from triple_latent to gla, on the calibrated
# 4-pair recall task (MQAR in Zoology's form, 4 pairs, 1,000 steps x 32 sequences of 128 tokens, warm-up 100
# + cosine, dropout 0, fan-in init, answers hidden, labels on the asked key: run_calibrated.sh's protocol).
# Every run is resumable: rerun the same command, finished seeds are skipped, a run stopped midway continues
# from its checkpoint (every 100 steps). One file per (variant, setting, lr) in data/results/issue50/.
#
#   bash data/results/run_gate_start.sh gate_sweep        # seed 0 of each row at each lr (GATE_VARIANTS, GATE_BIASES, LRS)
#   bash data/results/run_gate_start.sh gate_seeds        # seeds 1-4 (MORE_SEEDS) at each row's best lr
#   bash data/results/run_gate_start.sh lm_yardstick      # the language-model yardstick (LM_VARIANTS, LM_LRS, LM_SEEDS)
#   DRY=1 bash data/results/run_gate_start.sh ...         # print the commands
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}" PYTHONUNBUFFERED=1
PY="${PYTHON:-.venv/bin/python}"
E=(${DRY:+echo} nice -n "${NICE:-19}" "$PY" -m tl_research)
OUT=data/results/issue50
read -r -a LRS <<< "${LRS:-3e-3 1e-3 1e-2}"
STEPS=1000 SEQ=128
cal() {
  echo --steps "$STEPS" --protocol seq_len="$SEQ" --protocol warmup_steps=$((STEPS / 10)) \
    --protocol lr_schedule=cosine --protocol dropout=0.0 --checkpoint-every 100 --no-progress \
    --protocol hide_answers=true --protocol answer_at_key=true --set init=fan_in
}
aligned() { [[ $1 == gated_hybrid_* ]] && echo --set query_align=current; return 0; }
name() { echo "recall4_$1_gam$2_lr$3.json"; }  # name VARIANT GAM_BIAS LR
recall4() {  # recall4 VARIANT GAM_BIAS LR SEEDS...
  local v=$1 g=$2 lr=$3; shift 3
  "${E[@]}" recall --variants "$v" --seeds "$@" --protocol n_queries=4 --protocol lr="$lr" $(cal) $(aligned "$v") \
    --set gam_bias="$g" --out "$OUT/$(name "$v" "$g" "$lr")"
}
GATE_VARIANTS_ALL=(triple_latent triple_key_shift triple_slot triple_hybrid triple_key_current gated_hybrid_paper)
gate_sweep() {
  local v g lr
  for g in ${GATE_BIASES:-4 2 0}; do for v in ${GATE_VARIANTS:-${GATE_VARIANTS_ALL[*]}}; do for lr in "${LRS[@]}"; do
    recall4 "$v" "$g" "$lr" 0
  done; done; done
}
gate_seeds() {  # seeds 1-4 (MORE_SEEDS) at GATE_LR (default: the best seed-0 lr of the sweep's files)
  local v g lr
  for g in ${GATE_BIASES:-4}; do for v in ${GATE_VARIANTS:-triple_latent}; do
    lr=${GATE_LR:-$(best_lr "$v" "$g")}
    recall4 "$v" "$g" "$lr" ${MORE_SEEDS:-1 2 3 4}
  done; done
}
best_lr() {  # best_lr VARIANT GAM_BIAS: the lr whose seed-0 file scores best (ties: the smaller lr)
  "$PY" -m tl_research.studies.gate_start best-lr --folder "$OUT" "$1" "$2"
}
# the ladder (tl_minimal/ladder.py): rungs 0-2 are the gate study's rows (triple_latent at gam_bias 0 and 4,
# triple_key_current at 4: the same layers, tests/model/test_ladder.py), rung 7 is gla (the family's rows);
# these are the rungs between and the reverse arm, each a registered preset with its own gate start
LADDER_ROWS=(ladder_3 ladder_4 ladder_5 ladder_6 gla_short_start)
ladder_name() { echo "recall4_$1_lr$2.json"; }
ladder() {  # seed 0 of each rung at each lr in LRS (LADDER: a queue may name fewer), then LADDER_SEEDS at LADDER_LR
  local v lr
  for v in ${LADDER:-${LADDER_ROWS[*]}}; do for lr in "${LRS[@]}"; do
    "${E[@]}" recall --variants "$v" --seeds ${LADDER_SEEDS:-0} --protocol n_queries=4 --protocol lr="$lr" $(cal) \
      --out "$OUT/$(ladder_name "$v" "$lr")"
  done; done
}
# item 4: the fan-in scale for the recurrent mixers' projections too (init=fan_in_all; attention's already have
# it), gate biases kept: INIT_ROWS "VARIANT:GAM_BIAS|-" pairs, seed 0 at INIT_LR (3e-3)
init_arm() {
  local row v g set tag
  for row in ${INIT_ROWS:-triple_latent:4 gla:-}; do
    IFS=: read -r v g <<< "$row"
    set=(); tag=""; [[ $g == - ]] || { set=(--set gam_bias="$g"); tag="_gam$g"; }
    "${E[@]}" recall --variants "$v" --seeds ${INIT_SEEDS:-0} --protocol n_queries=4 --protocol lr="${INIT_LR:-3e-3}" \
      $(cal) --set init=fan_in_all "${set[@]}" --out "$OUT/recall4_${v}${tag}_fanall_lr${INIT_LR:-3e-3}.json"
  done
}
# MQAR with 8 pairs at its calibrated budget (run_calibrated.sh's mqar_rows: 3,000 steps of 64 tokens, 8 pairs
# drawn from 16 key ids, each row at its 4-pair lr): MQAR_VARIANT at MQAR_BIAS (a preset of the ladder takes none)
mqar8() {  # mqar8 VARIANT GAM_BIAS|- LR SEEDS...
  local v=$1 g=$2 lr=$3; shift 3
  local set=() tag="_gam$g"; [[ $g == - ]] && tag="" || set=(--set gam_bias="$g")
  local STEPS=3000 SEQ=64
  "${E[@]}" mqar --variants "$v" --seeds "$@" --protocol n_pairs=8 --protocol n_queries=8 --protocol lr="$lr" $(cal) \
    --protocol key_ids=16 --protocol vocab_size="$("$PY" -c \
      "from tl_minimal.data.recall import layout_for; print(layout_for(8, 16).vocab_size)")" "${set[@]}" \
    --out "$OUT/mqar8_${v}${tag}_lr$lr.json"
}
mqar_rows() {  # MQAR_ROWS: "VARIANT:GAM_BIAS:LR" triples (GAM_BIAS - for a ladder preset), seeds MQAR_SEEDS (0 1 2)
  local row v g lr
  for row in ${MQAR_ROWS:-triple_latent:4:3e-3}; do
    IFS=: read -r v g lr <<< "$row"
    mqar8 "$v" "$g" "$lr" ${MQAR_SEEDS:-0 1 2}
  done
}
# item 5: capacity, tested for real. MQAR in Zoology's form with 32 and 64 pairs drawn from 256 key ids (CAP_PAIRS,
# CAP_IDS), the shortest multiple of 64 tokens that holds them (7P: 256 and 512), CAP_STEPS (3,000) steps; every
# point at lr 1e-3 (the Transformer's MQAR choice), seeds CAP_SEEDS (0 1 2). CAP_ROWS "VARIANT:SETTINGS" with
# SETTINGS "k=v,k=v" or "-": triple_latent at its working start and S in {8, 16, 32, 64}, gla, deltanet and h3 at
# two head counts (state D x D per head, D = 64 / heads), the Transformer's cache, gated_hybrid_repaired's store. Long
# runs (seq 512): meant for a GPU or a long CPU queue; each file resumes.
CAP_ROWS_ALL=(transformer:- gated_hybrid_repaired:- triple_latent:gam_bias=4,state_dim=8 triple_latent:gam_bias=4,state_dim=16
              triple_latent:gam_bias=4,state_dim=32 triple_latent:gam_bias=4,state_dim=64 gla:n_heads=4 gla:n_heads=2
              deltanet:n_heads=4 deltanet:n_heads=2 h3:n_heads=4 h3:n_heads=2)
cap_name() { echo "mqar_capacity_pairs$1_ids$2_$3_${4//[=,]/-}.json"; }  # PAIRS IDS VARIANT SETTINGS
capacity() {
  local pairs row v settings ids=${CAP_IDS:-256} set k
  for pairs in ${CAP_PAIRS:-32 64}; do for row in ${CAP_ROWS:-${CAP_ROWS_ALL[*]}}; do
    IFS=: read -r v settings <<< "$row"
    set=(); [[ $settings == - ]] || for k in ${settings//,/ }; do set+=(--set "$k"); done
    local STEPS=${CAP_STEPS:-3000} SEQ=$(((7 * pairs + 63) / 64 * 64))
    "${E[@]}" mqar --variants "$v" --seeds ${CAP_SEEDS:-0 1 2} --protocol n_pairs="$pairs" --protocol n_queries="$pairs" \
      --protocol lr=1e-3 $(cal) $(aligned "$v") --protocol key_ids="$ids" --protocol vocab_size="$("$PY" -c \
        "from tl_minimal.data.recall import layout_for; print(layout_for($pairs, $ids).vocab_size)")" "${set[@]}" \
      --out "$OUT/$(cap_name "$pairs" "$ids" "$v" "$settings")"
  done; done
}

# item 6: a fair language-model yardstick. Byte-level WikiText-2 at 2,000 steps with warm-up (200) + cosine:
# the Transformer with learned positions and with rotary ones, triple_latent at the paper's start and at the
# working one (ladder_1, gam_bias 4); seed 0 at each lr of LM_LRS, then LM_SEEDS at LM_LR (a queue's choice)
LM_ROWS=(transformer transformer_rope triple_latent ladder_1)
lm_yardstick() {
  local v lr
  for v in ${LM_VARIANTS:-${LM_ROWS[*]}}; do for lr in ${LM_LRS:-1e-3 3e-3}; do
    "${E[@]}" lm --variants "$v" --seeds ${LM_SEEDS:-0} --steps 2000 --protocol lr="$lr" --protocol warmup_steps=200 \
      --protocol lr_schedule=cosine --checkpoint-every 500 --no-progress --out "$OUT/lm2000_cosine_${v}_lr$lr.json"
  done; done
}

STAGES=("$@")
[[ ${#STAGES[@]} -eq 0 ]] && STAGES=(gate_sweep)
for stage in "${STAGES[@]}"; do
  echo "== $stage ($(date -u +%H:%M:%S) UTC)"
  "$stage"
done
