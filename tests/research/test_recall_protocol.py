"""The research recall protocol's switches (tl_research.protocols.RecallProtocol): hidden answers, labels at
the key, wider key ids, a pool of pair counts; each off by default, recorded when on, refused where it has no use."""

import pytest
import torch

from tl_minimal.data import recall as dr
from tl_minimal.data.recall import IGNORE
from tl_minimal.data.recall import PAPER_LAYOUT as L


def test_hide_answers_is_a_protocol_option_of_recall_tasks_only():
    from tl_research.protocols import protocol

    p = protocol("mqar", hide_answers=True)
    assert p.to_dict()["hide_answers"] is True
    assert "hide_answers" not in protocol("mqar").to_dict()  # off: result files written before it match
    from tl_minimal.training.recipes import make_sampler

    x, y = make_sampler(p, seed=0)(0)  # what training on the protocol sees
    first_question = int((y[0] != IGNORE).nonzero()[0]) - 2
    assert not ((x[:, first_question:] >= L.first_value) & (x[:, first_question:] < L.first_filler)).any()
    with pytest.raises(ValueError, match="true or false"):
        protocol("mqar", hide_answers="yes")
    with pytest.raises(ValueError, match="applies to recall and mqar"):
        protocol("overwrite", hide_answers=True)


def test_answer_at_key_is_a_protocol_option_of_recall_tasks_only():
    from tl_minimal.training.recipes import make_sampler
    from tl_research.protocols import protocol

    p = protocol("mqar", answer_at_key=True, hide_answers=True)
    assert {k: p.batch_options()[k] for k in ("hide_answers", "answer_at_key")} == {"hide_answers": True,
                                                                          "answer_at_key": True}
    assert "answer_at_key" not in protocol("mqar").to_dict()  # off: result files written before it match
    x, y = make_sampler(p, seed=0)(0)
    at = (y[0] != IGNORE).nonzero()[:, 0]
    assert (x[0, at - 1] == L.QUERY).all()
    with pytest.raises(ValueError, match="answer_at_key must be true or false"):
        protocol("mqar", answer_at_key=1)
    with pytest.raises(ValueError, match="applies to recall and mqar"):
        protocol("alias", answer_at_key=True)


def test_a_protocols_eval_set_is_its_sizes_layout_and_switches():
    """RecallProtocol.eval_set (what every recall task scores) = data/recall.eval_set with the protocol's
    fields, the pairs' layout (a wider vocabulary past 8 pairs) and its sequence switches."""
    from tl_research.protocols import protocol

    for p in (protocol("recall", eval_examples=64), protocol("mqar", n_pairs=16, n_queries=16, eval_examples=64,
                                                             answer_at_key=True, hide_answers=True)):
        x, y = p.eval_set(3)
        ex, ey = dr.eval_set(64, 3, n_queries=p.n_queries, n_pairs=p.n_pairs, seq_len=p.seq_len,
                             layout=dr.layout_for(p.n_pairs),
                             hide_answers=bool(p.hide_answers), answer_at_key=bool(p.answer_at_key))
        assert torch.equal(x, ex) and torch.equal(y, ey) and x.shape == (64, p.seq_len)
        assert p.layout() == dr.layout_for(p.n_pairs)
    assert p.layout().n_keys == 16 != L.n_keys and int(x.max()) > L.first_filler + L.n_filler  # 16 keys, 16 values


def test_key_ids_draw_the_pairs_from_a_wider_vocabulary():
    """--protocol key_ids=16: 8 pairs among 16 keys and 16 values (Zoology's few-pairs-of-many), so the
    values in context are not all the value ids; off by default (old result files keep their settings)."""
    from tl_minimal.training.recipes import make_sampler
    from tl_research.protocols import protocol

    assert protocol("mqar", key_ids=8).layout() == dr.layout_for(8) == L
    assert protocol("recall", key_ids=16).layout() == dr.layout_for(16) and dr.layout_for(16).n_keys == 16
    p = protocol("mqar", n_pairs=8, n_queries=8, key_ids=16, hide_answers=True, answer_at_key=True)
    assert p.layout() == dr.RecallLayout(n_keys=16, n_values=16, n_filler=10, vocab_size=64)
    x, y = make_sampler(p, seed=0)(0)
    values = x[(x >= 21) & (x < 37)]  # the 16 value ids
    assert values.unique().numel() == 16 and (y[y != IGNORE] >= 21).all() and (y[y != IGNORE] < 37).all()
    per_sequence = [((row >= 21) & (row < 37)).sum().item() for row in x]
    assert set(per_sequence) == {8}  # 8 values in each context, hidden answers add none
    assert "key_ids" not in protocol("mqar").to_dict()
    with pytest.raises(ValueError, match="key_ids must be a whole number >= n_pairs = 8"):
        protocol("mqar", n_pairs=8, key_ids=4)
    with pytest.raises(ValueError, match="applies to recall and mqar"):
        protocol("alias", key_ids=16)
    with pytest.raises(ValueError, match="vocabulary of 128 ids, the protocol has 64: --protocol vocab_size=128"):
        make_sampler(protocol("mqar", n_pairs=16, n_queries=16, key_ids=32), seed=0)
    x, _ = make_sampler(protocol("mqar", n_pairs=16, n_queries=16, key_ids=32, vocab_size=128), seed=0)(0)
    assert int(x.max()) < 128


def test_pairs_mix_cycles_the_pair_counts_of_the_training_batches():
    """--protocol pairs_mix=4:8:16: batch k writes (4, 8, 16)[k % 3] pairs and asks each of them (Zoology
    trains MQAR on a pool of pair counts); every batch keeps the length and the layout, and the
    evaluation keeps n_pairs. Off by default; a bad pool says what is expected."""
    from tl_minimal.training.recipes import make_sampler
    from tl_research.protocols import protocol

    p = protocol("mqar", n_pairs=16, n_queries=16, key_ids=32, vocab_size=128, hide_answers=True,
                 answer_at_key=True, pairs_mix="4:8:16")
    assert p.pairs_mix == (4, 8, 16) and p.to_dict()["pairs_mix"] == (4, 8, 16)
    sampler = make_sampler(p, seed=0)
    for step, pairs in enumerate([4, 8, 16, 4]):
        x, y = sampler(step)
        assert x.shape == (32, 128) and int(x.max()) < 128
        assert ((y != IGNORE).sum(dim=1) == pairs).all()  # every pair asked
        for row in range(2):
            for q in dr.locate(x[row], _labels_at_answer(y[row]), p.layout()):
                assert x[row, q["value_pos"]] == q["value"]
    x, y = p.eval_set(0)
    assert ((y != IGNORE).sum(dim=1) == 16).all()
    assert "pairs_mix" not in protocol("mqar").to_dict()
    for bad in ("4:8:17", "four", "0:8", ""):
        with pytest.raises(ValueError, match=r"pairs_mix: expected pair counts in 1\.\.n_pairs = 16"):
            protocol("mqar", n_pairs=16, n_queries=16, key_ids=32, vocab_size=128, pairs_mix=bad)
    with pytest.raises(ValueError, match="applies to recall and mqar"):
        protocol("alias", pairs_mix="1:2")
    with pytest.raises(ValueError, match="choose one"):
        protocol("mqar", pairs_mix="4:8", length_curriculum="64:128:10")


def test_scaled_mix_lengths_keep_the_density_of_pairs():
    """--protocol mix_lengths=scaled: a pooled batch of P of the task's 16 pairs in 128 tokens is 128 * P / 16
    tokens long (32, 64, 128), as Zoology's pool puts fewer pairs in shorter sequences; the evaluation keeps 128."""
    from tl_minimal.training.recipes import make_sampler
    from tl_research.protocols import protocol

    p = protocol("mqar", n_pairs=16, n_queries=16, key_ids=32, vocab_size=128, hide_answers=True,
                 answer_at_key=True, pairs_mix="4:8:16", mix_lengths="scaled")
    sampler = make_sampler(p, seed=0)
    assert [tuple(sampler(step)[0].shape) for step in range(4)] == [(32, 32), (32, 64), (32, 128), (32, 32)]
    assert [int((sampler(step)[1] != IGNORE).sum(dim=1).max()) for step in range(3)] == [4, 8, 16]
    assert p.eval_set(0)[0].shape == (2048, 128)
    assert "mix_lengths" not in protocol("mqar", pairs_mix="4:8").to_dict()
    with pytest.raises(ValueError, match="mix_lengths must be full or scaled, with a pairs_mix"):
        protocol("mqar", mix_lengths="scaled")
    with pytest.raises(ValueError, match="mix_lengths must be full or scaled"):
        protocol("mqar", pairs_mix="4:8", mix_lengths="half")
    with pytest.raises(ValueError, match="4 pairs in 16 tokens do not fit; the shortest sequence for them is 28"):
        protocol("mqar", n_pairs=16, n_queries=4, key_ids=32, vocab_size=128, seq_len=64, pairs_mix="4:16",
                 mix_lengths="scaled")


def _labels_at_answer(y):
    """answer_at_key labels sit one position left of the ANSWER token: move them back for locate()."""
    return torch.cat([torch.full((1,), IGNORE), y[:-1]])
