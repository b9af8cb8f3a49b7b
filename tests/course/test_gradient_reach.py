"""course/gradient_reach.py: the gradient of the recall loss that reaches the pairs at initialization.

At the paper's start (gamma = 0.5) it is exactly 0 in float32 and about 1e-32 in float64; a long start
(gam_bias 4) and the relatives let some through, in the order of what recalls after training. The
committed gradient_reach.json is what the function gives now (one row recomputed)."""

import json
from pathlib import Path

import pytest
import torch

from tl_minimal.course.gradient_reach import (
    measure,
    pair_positions,
    pair_reach,
    reach_by_distance,
    task_batch,
    token_gradients,
)
from tl_minimal.data.recall import IGNORE
from tl_minimal.registry import build_model
from tl_research import variants  # noqa: F401  (registers gla_short_start, a research variant)

RESULTS = Path(__file__).resolve().parents[2] / "data" / "results"


def small(variant, **settings):
    torch.manual_seed(0)
    return build_model(variant, 64, init="fan_in", dropout=0.0, **settings)


def test_token_gradients_and_the_pair_positions():
    x, y = task_batch(4)
    g = token_gradients(small("transformer"), x, y)
    assert g.shape == x.shape and (g >= 0).all()
    assert (g[y != IGNORE] > 0).all()
    # the pairs: key, value after BOS, then SEP; positions 1, 2, 4, 5, 7, 8, 10, 11 for 4 pairs
    assert pair_positions(4).tolist() == [1, 2, 4, 5, 7, 8, 10, 11]
    assert (x[:, pair_positions(4)] >= 5).all() and (x[:, pair_positions(4)] <= 20).all()
    reach = reach_by_distance(small("transformer"), x, y, max_distance=20)
    assert reach.shape == (21,) and reach[0] == 1


def test_the_paper_start_lets_nothing_reach_the_pairs():
    x, y = task_batch(8)
    assert pair_reach(small("triple_latent"), x, y) == 0.0             # float32 rounds it away
    exact = pair_reach(small("triple_latent").double(), x, y)
    assert 0 < exact < 1e-25                                            # 0.5 ** 100 and more
    assert pair_reach(small("triple_latent", gam_bias=4.0), x, y) > 1e-7


def test_the_order_of_the_rows():
    x, y = task_batch(8)
    reach = {v: pair_reach(small(v), x, y) for v in ("transformer", "deltanet", "gla", "gla_short_start")}
    assert reach["transformer"] > reach["deltanet"] > reach["gla"] > reach["gla_short_start"] == 0.0


@pytest.mark.parametrize("label", ["triple_latent, gam_bias 4", "gla"])
def test_the_committed_numbers_are_what_the_function_gives(label):
    rows = {row["label"]: row for row in json.loads((RESULTS / "gradient_reach.json").read_text("utf-8"))["rows"]}
    row = rows[label]
    again = measure(row["variant"], seeds=row["seeds"], **row["settings"])
    assert again["pair_reach"] == pytest.approx(row["pair_reach"], rel=1e-4)
    assert again["reach"][:40] == pytest.approx(row["reach"][:40], rel=1e-4, abs=1e-30)
    assert rows["triple_latent, gam_bias 0"]["pair_reach"] == 0.0
