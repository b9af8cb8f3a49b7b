"""The family's table (notebook 06b, section 4): one row per variant, two yardsticks, clear errors."""

from __future__ import annotations

import json

import pytest

from tl_research.results.family_table import (
    FAMILY_ORDER,
    YARDSTICKS,
    family_markdown,
    family_rows,
    paired_variants,
    seed_means,
    seeds_by_variant,
)


def test_rows_follow_the_order_and_pair_with_both_yardsticks():
    rows = family_rows()
    assert [r.variant for r in rows] == list(FAMILY_ORDER)
    for r in rows:
        assert set(r.vs) == set(YARDSTICKS)
        for y in YARDSTICKS:  # against itself a yardstick has no difference; every other pair has one
            assert (r.vs[y] is None) == (y == r.variant)
        assert len(r.values) == len(r.seeds) >= 5


def test_the_table_has_a_line_per_row():
    rows = family_rows()
    table = family_markdown(rows).splitlines()
    assert len(table) == 2 + len(rows) and "minus triple_latent" in table[0]


def _runs_file(tmp_path, seeds: dict):
    """A results file with one finished run per (variant, seed) of ``seeds`` ({variant: [seed, ...]})."""
    runs = [{"variant": v, "seed": s, "value": 2.0 + 0.01 * s + 0.1 * i, "params": 1000}
            for i, (v, ss) in enumerate(seeds.items()) for s in ss]
    path = tmp_path / "lm_family_partial.json"
    path.write_text(json.dumps({"task": "lm", "protocol": {"steps": 2000, "seeds": [0]}, "runs": runs}),
                    encoding="utf-8")
    return path


def test_a_file_still_filling_pairs_only_the_rows_with_every_seed(tmp_path):
    path = _runs_file(tmp_path, {"transformer": [0, 1, 2], "h3": [0], "triple_latent": [0, 1, 2],
                                 "gla": [1, 2, 0], "deltanet": [0, 1]})
    assert seeds_by_variant(path) == {"transformer": (0, 1, 2), "triple_latent": (0, 1, 2), "gla": (0, 1, 2),
                                      "deltanet": (0, 1), "h3": (0,)}  # FAMILY_ORDER, not the file's order
    assert seed_means(path)["deltanet"] == (2, pytest.approx(2.0 + 0.005 + 0.4))  # seeds 0-1 of the 5th variant
    paired = paired_variants(path)
    assert paired == ("transformer", "triple_latent", "gla")
    rows = family_rows(path, variants=paired)
    for r in rows:  # every row and every pair over the same three seeds
        assert r.seeds == (0, 1, 2)
        d = r.vs["transformer"]
        assert d is None if r.variant == "transformer" else d.seeds == (0, 1, 2)


def test_a_file_with_one_seed_has_no_paired_rows_and_says_so(tmp_path):
    with pytest.raises(ValueError, match="no variant has 2 finished seeds"):
        paired_variants(_runs_file(tmp_path, {"transformer": [0], "triple_latent": [0]}))
