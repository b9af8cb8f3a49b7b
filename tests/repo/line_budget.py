"""How long the library a student reads is: lines (docstrings and comments included) per group of files.

    python tests/repo/line_budget.py            # the table; exit status 1 when a group is over its budget

The budgets are issue 31's (item 2): what a reader needs for TripleLatentMixer, the six concept
files with the blockwise top-k read, the model assembly, and each relative of the family.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tl_minimal"
CONCEPTS = ("running_state", "pair_memory", "readout", "slots", "conv", "kv_fusion")
# (group, its files, the most lines they may have together)
BUDGETS = (
    ("the triple-latent layer", ("running_state", "pair_memory", "readout"), 500),
    ("the six concepts and the blockwise top-k read", (*CONCEPTS, "blockwise_topk"), 1200),
    ("the model assembly", ("layers", "models", "model_config", "registry"), 600),
)
RELATIVES = ("gla", "h3", "deltanet")  # the family's relatives (each at most RELATIVE_BUDGET lines)
RELATIVE_BUDGET = 200


def lines(name: str) -> int:
    return len((PACKAGE / f"{name}.py").read_text(encoding="utf-8").splitlines())


def groups() -> list[tuple[str, int, int]]:
    """(group, lines, budget) for every group and every relative that exists."""
    rows = [(group, sum(lines(f) for f in files), budget) for group, files, budget in BUDGETS]
    rows += [(f"relative {r}", lines(r), RELATIVE_BUDGET) for r in RELATIVES
             if (PACKAGE / f"{r}.py").is_file()]
    return rows


def main() -> int:
    over = 0
    for group, n, budget in groups():
        over += n > budget
        print(f"{group:48s} {n:5d} lines  (budget {budget}){'  OVER' if n > budget else ''}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
