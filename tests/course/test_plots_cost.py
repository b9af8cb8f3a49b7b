"""The views of notebooks 00 and 03c: the memory kept while generating, the cost and BPB tables, and a trained
layer's scores beside softmax attention. Each shows what the notebook computed and refuses a wrong input."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from tl_minimal.training.protocols import protocol
from tl_minimal.views import plots_training, tables


def test_numbers_kept_two_log_log_lines():
    fig = plots_training.numbers_kept([16, 32, 64], [2 * t * 64 for t in (16, 32, 64)], 1088)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert list(ax.lines[0].get_ydata()) == [2048, 4096, 8192] and list(ax.lines[1].get_ydata()) == [1088] * 3
    plt.close(fig)


def test_generation_cost_and_unigram_tables(capsys):
    tables.print_generation_cost(64, 4, 16, [(128, 16_384, 1088, 16_384, 2112)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "d = 64, H = 4, S = 16; per layer, while generating token t:"
    assert lines[2].split() == ["128", "16,384", "1,088", "16,384", "2,112"]
    tables.print_two_unigrams(4.589, 4.671, protocol("lm"))
    whole, table = capsys.readouterr().out.splitlines()
    assert whole.endswith(": 4.589 BPB") and "chunks of 128 bytes (a table's): 4.671 BPB" in table
    assert whole.index(":") == table.index(":")  # the two numbers line up


def test_bpb_table_rows_and_baselines(capsys):
    tables.print_bpb_table({"a": 1000}, {"a": 1.5}, {"a": 5.0}, {"a": 5.1}, 4.6, 259)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["a", "1,000", "1.5", "5.000", "5.100"]
    assert "8.017" in lines[3] and "all 259 ids" in lines[3]


def test_scores_beside_softmax_three_panels():
    A = torch.rand(4, 4)
    fig = plots_training.scores_beside_softmax({80: A, 2000: A}, A.softmax(-1), list("abcd"), 80)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["triple_latent, 80 steps: A[t, τ]", "triple_latent, 2000 steps: A[t, τ]",
                      "Transformer, 80 steps: softmax"]
    plt.close(fig)
