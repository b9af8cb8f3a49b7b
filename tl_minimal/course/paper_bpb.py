"""The paper's byte-level WikiText-2 numbers, one per model and size, for the lessons' bar charts.

The paper's main table gives each model at two sizes, and each size has its own number:

- **matched width** (d = 64, S = 16, the models the lessons train): ``MATCHED_WIDTH``;
- **parameter-matched** (the recurrent models narrowed to the Transformer's parameter count:
  ``triple_latent`` and ``triple_slot`` at d = 60, ``triple_hybrid`` at d = 56): ``PARAM_MATCHED``,
  keyed by the row label that names the size.

A lesson that trains the d = 64 models sets them beside ``paper_bpb([...])`` (matched width), so a
model and size has one paper number across the course (notebooks 03c and 04). Bits per byte after
80 steps, one run each (``docs/paper.md`` section 5.1 names the table and line). The research
tables (``tl_minimal.results.paper_numbers``) read these same dictionaries.

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
