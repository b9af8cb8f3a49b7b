"""The paper's byte-level WikiText-2 BPB (80 steps, one run; docs/paper.md section 5.1), one per model
and size, so a model has one paper number across the course (notebooks 03c and 04): ``MATCHED_WIDTH``
(d = 64, S = 16, the models the lessons train) and ``PARAM_MATCHED`` (narrowed to the Transformer's
parameter count, keyed by the row label that names the size). ``tl_minimal.results.paper_numbers``
reads the same dictionaries.

    paper_bpb(["transformer", "triple_latent"])  # {"transformer": 5.124, "triple_latent": 5.022}
"""

from __future__ import annotations

MATCHED_WIDTH = {"transformer": 5.124, "triple_latent": 5.022, "triple_slot": 5.041, "triple_hybrid": 4.766}
PARAM_MATCHED = {"triple_latent (d=60, S=16)": 5.114, "triple_slot (d=60, S=16)": 5.126,
                 "triple_hybrid (d=56, S=16)": 5.067}


def paper_bpb(variants) -> dict[str, float]:
    """{variant: the paper's BPB at matched width (d = 64)}; a clear error for a variant it does not give."""
    missing = [v for v in variants if v not in MATCHED_WIDTH]
    if missing:
        raise ValueError(f"the paper gives no matched-width BPB for {missing}; it gives {sorted(MATCHED_WIDTH)}")
    return {v: MATCHED_WIDTH[v] for v in variants}
