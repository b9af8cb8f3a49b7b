"""The paper's numbers (docs/paper.md section 5 names the table and line of each), apart from our code.

:data:`PAPER` maps a table key (those of :data:`tl_research.results.TABLES`, and others) to {row label or
variant: the paper's number}; a string is a claim given in words, not a number. The byte-level BPB comes
at two sizes: ``MATCHED_WIDTH`` (d = 64, S = 16, the models the lessons train) and ``PARAM_MATCHED``
(narrowed to the Transformer's parameter count, keyed by the row label that names the size); a lesson
sets its d = 64 models beside :func:`paper_bpb` (notebooks 03c and 04), so a model and size has one
paper number across the course.
"""

from __future__ import annotations

# byte-level WikiText-2 BPB after 80 steps, one run each (the paper's main table)
MATCHED_WIDTH = {"transformer": 5.124, "triple_latent": 5.022, "triple_slot": 5.041, "triple_hybrid": 4.766}
PARAM_MATCHED = {"triple_latent (d=60, S=16)": 5.114, "triple_slot (d=60, S=16)": 5.126,
                 "triple_hybrid (d=56, S=16)": 5.067}

PAPER: dict[str, dict] = {
    "lm_matched_width": {  # byte WT2 BPB, matched width S=16, 80 steps, one run (the paper's main table)
        **MATCHED_WIDTH,  # transformer, triple_latent, triple_slot, triple_hybrid
        # the gated hybrid's 80-step BPB (recall table; one run, symmetric convolution)
        "gated_hybrid_paper": 3.595,  # the paper's model only: gated_hybrid_repaired is ours, with no paper number
    },
    "lm_param_matched": {  # byte WT2 BPB, parameter-matched, one run (main table)
        "transformer": MATCHED_WIDTH["transformer"],
        # by variant: the narrowed sizes (triple_latent and triple_slot at d=60, triple_hybrid at d=56; S=16)
        **{label.split(" (")[0]: bpb for label, bpb in PARAM_MATCHED.items()},
        "triple_hybrid (S=8)": "4.806 (budget winner; its Transformer 5.143)",
        # the same numbers by the row labels of table 2 (which keys by label: its S=12 rows are ours)
        **PARAM_MATCHED,
    },
    # d=64 S=8: 3 seeds (abstract, results text, main table); "pilot": the sweep's single run
    "lm_budget_winner": {"transformer": 5.143, "triple_hybrid": 4.806, "triple_hybrid (pilot)": 4.827},
    "tokenized": {  # MiniMind mean token loss, 3 seeds (the arXiv text; not in the repository's TeX)
        "transformer": 7.317,
        "triple_hybrid": 7.035,
        "transformer_plus_triple": 7.239,
        "gated_hybrid_paper": 6.766,
    },
    # 3 seeds (7, 19, 29), 500 steps (recall table); the paper's gated row is gated_hybrid_paper
    "recall": {"transformer": 0.250, "triple_hybrid": 0.116, "gated_hybrid_paper": 0.419},
    # the same runs per seed 7 / 19 / 29 (the paper's result file; its text: "one seed exact")
    "recall_seeds": {"transformer": (0.256, 0.239, 0.253), "triple_hybrid": (0.114, 0.120, 0.116),
                     "gated_hybrid_paper": (0.142, 1.000, 0.116)},
    # their last training loss (the result file's train_loss_last), seeds 7 / 19 / 29
    "recall_seeds_train_loss_last": {"gated_hybrid_paper": (2.1223, 0.3468, 2.1045)},
    # 200 steps, one run, matched width S=16 (main table); 13.4% = 274 / 2,048, a constant guess
    "recall_200": {"transformer": 0.254, "triple_latent": 0.134, "triple_slot": 0.134, "triple_hybrid": 0.134},
    # the gated hybrid's width sweep: one seed, 500 steps ("non-monotonic in width")
    "recall_width": {"gated_hybrid_paper (d=64)": 1.000, "gated_hybrid_paper (d=80)": 0.672,
                     "gated_hybrid_paper (d=96)": 0.1196},
    # retrained with a 50-step lr warm-up, a length curriculum 32 -> 128 over 150 steps and read-gate
    # bias -2; 3 seeds, 500 steps (best seed 13.4%)
    "recall_retrain": {"gated_hybrid_paper": 0.127},
    "recall_retrain_seeds": {"gated_hybrid_paper": (0.130, 0.134, 0.116)},  # seeds 7 / 19 / 29 (result file)
    # an ungated previous-token query trained as long ("same-budget long-run check")
    "recall_ungated": {"gated_hybrid_paper (no gate)": 0.1196},
    # the recall table's byte-level BPB column (80 steps, one run, symmetric convolution)
    "lm_recall_table": {"transformer": 5.144, "triple_hybrid (S=8)": 4.843, "gated_hybrid_paper": 3.595},
    # dominant forward MFLOPs (d=64, 3 layers, S=8, vocab 259) and the ratio to the Transformer
    "flops_t64": {"transformer": 24.1, "triple_hybrid": 21.8, "gated_hybrid_paper": 25.8},
    "flops_t128": {"transformer": 54.6, "triple_hybrid": 43.5, "gated_hybrid_paper": 52.1},
    "flops_t512": {"transformer": 369.3, "triple_hybrid": 174.0, "gated_hybrid_paper": 220.9},
    "flops_ratio_t64": {"triple_hybrid": 0.90, "gated_hybrid_paper": 1.07},
    "flops_ratio_t128": {"triple_hybrid": 0.80, "gated_hybrid_paper": 0.95},
    "flops_ratio_t512": {"triple_hybrid": 0.47, "gated_hybrid_paper": 0.60},
    # forward-only throughput on Apple MPS: times slower than the Transformer
    "slowdown_t64": {"triple_hybrid": 32.7, "gated_hybrid_paper": 106.5},
    "slowdown_t512": {"triple_hybrid": 18.2, "gated_hybrid_paper": 70.1},
    "tokens_per_s_t64": {"transformer": 602_684, "triple_hybrid": 18_433, "gated_hybrid_paper": 5_659},
    "tokens_per_s_t512": {"transformer": 344_185, "triple_hybrid": 18_870, "gated_hybrid_paper": 4_910},
    # parameter counts the paper prints, keyed by our label for the same configuration (vocab 259)
    "params": {"transformer": 174_848, "triple_latent": 187_928, "triple_slot": 188_024,
               "triple_hybrid": 208_472, "triple_latent (d=60, S=16)": 170_424,
               "triple_slot (d=60, S=16)": 170_520, "triple_hybrid (d=56, S=16)": 169_424,
               "triple_hybrid (S=8)": 177_752},
}


def paper_bpb(variants) -> dict[str, float]:
    """{variant: the paper's BPB at matched width (d = 64)}; a clear error for a variant it does not give."""
    missing = [v for v in variants if v not in MATCHED_WIDTH]
    if missing:
        raise ValueError(f"the paper gives no matched-width BPB for {missing}; it gives {sorted(MATCHED_WIDTH)}")
    return {v: MATCHED_WIDTH[v] for v in variants}
