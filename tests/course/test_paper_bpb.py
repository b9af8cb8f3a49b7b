"""One paper number per model and size: the lessons and the research tables read one table.

Notebook 04 once set its d = 64 models beside the paper's d = 60 numbers (5.114, 5.126) while 03c
used 5.022 for the same d = 64 `triple_latent`. ``tl_minimal.results.paper_numbers`` now holds the
paper's byte-level BPB by size; these tests hold the research table to it and keep the required
lessons from writing a paper number of another size beside their models.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tl_minimal.results.paper_numbers import MATCHED_WIDTH, PAPER, PARAM_MATCHED, paper_bpb

ROOT = Path(__file__).resolve().parents[2]


def test_the_research_tables_read_the_same_numbers():
    for variant, bpb in MATCHED_WIDTH.items():
        assert PAPER["lm_matched_width"][variant] == bpb
    for label, bpb in PARAM_MATCHED.items():
        assert PAPER["lm_param_matched"][label] == bpb


def test_a_model_and_size_has_one_number():
    assert paper_bpb(["transformer", "triple_latent"]) == {"transformer": 5.124, "triple_latent": 5.022}
    with pytest.raises(ValueError, match="no matched-width BPB"):
        paper_bpb(["gated_hybrid_repaired"])


@pytest.mark.parametrize("name", ["03c_trained_model", "04_slots"])
def test_the_lessons_write_no_paper_number_by_hand_in_code(name):
    """The d = 64 lessons take the paper's numbers from paper_bpb; no d = 60 number sits in their code."""
    code = [ln for ln in (ROOT / "notebooks" / f"{name}.py").read_text(encoding="utf-8").splitlines()
            if not ln.startswith("#")]
    hand = [ln for ln in code if any(re.search(rf"\b{v}\b", ln) for v in map(str, PARAM_MATCHED.values()))]
    assert not hand, f"{name}: a parameter-matched (d = 60) paper number in the code: {hand}"
    assert any("paper_bpb(" in ln for ln in code), f"{name}: the paper's numbers should come from paper_bpb"


def _config(label: str) -> tuple[str, dict]:
    """"triple_latent (d=60, S=16)" -> ("triple_latent", {"d_model": 60, "state_dim": 16})."""
    names = {"d": "d_model", "S": "state_dim", "K": "num_slots"}
    variant, _, rest = label.partition(" (")
    return variant, {names[k]: int(v) for k, v in (p.split("=") for p in filter(None, rest.rstrip(")").split(", ")))}


@pytest.mark.parametrize("label", sorted(PAPER["params"]))
def test_parameter_counts_equal_the_papers(label):
    """Each configuration the paper counts, built here at vocabulary 259, has the paper's count."""
    from tl_minimal import build_model

    variant, config = _config(label)
    model = build_model(variant, 259, **config)
    assert sum(p.numel() for p in model.parameters()) == PAPER["params"][label], label
