"""The associative recall task and MQAR: format, targets, seeds."""

import pytest
import torch

from tl_minimal.data import recall as dr
from tl_minimal.data.recall import IGNORE
from tl_minimal.data.recall import PAPER_LAYOUT as L


def _g(seed):
    return torch.Generator().manual_seed(seed)


def test_recall_format_matches_the_paper():
    x, y = dr.recall_batch(64, generator=_g(0))
    assert x.shape == y.shape == (64, 128) and x.dtype == torch.long
    assert (x[:, 0] == L.BOS).all()
    ctx = x[:, 1:13].view(64, 4, 3)  # 4 x (key value SEP)
    assert ((ctx[..., 0] >= 5) & (ctx[..., 0] <= 12)).all() and (
        (ctx[..., 1] >= 13) & (ctx[..., 1] <= 20)
    ).all()
    assert (ctx[..., 2] == L.SEP).all()
    assert ((x[:, 13:125] >= 21) & (x[:, 13:125] <= 30)).all()  # filler
    assert (x[:, -3] == L.QUERY).all() and (x[:, -1] == L.ANSWER).all()
    assert (y[:, :-1] == IGNORE).all()  # only the last position is supervised
    assert int(x.max()) < 64


def test_queried_key_occurs_once_and_target_is_its_value():
    x, y = dr.recall_batch(256, generator=_g(1))
    for row, target in zip(x, y, strict=True):
        key = row[-2]
        context = row[:-3]
        where = (context == key).nonzero().flatten()
        assert len(where) == 1
        assert row[where[0] + 1] == target[-1]
    keys = x[:, 1:13:3]
    assert all(len(set(k.tolist())) == 4 for k in keys)  # distinct keys per sequence


def test_seeds_reproduce_and_train_eval_differ():
    a = dr.RecallSampler(32, seed=5)
    assert torch.equal(a(3)[0], dr.RecallSampler(32, seed=5)(3)[0])
    assert not torch.equal(a(3)[0], a(4)[0])
    assert not torch.equal(a(0)[0], dr.RecallSampler(32, seed=6)(0)[0])
    ex, _ = dr.eval_set(32, seed=5)
    assert dr.eval_seed(5) != 5
    assert torch.equal(ex, dr.eval_set(32, seed=5)[0])
    assert not any(torch.equal(ex, a(s)[0]) for s in range(5))


def test_mqar_labels_only_at_answer_positions():
    x, y = dr.mqar_batch(128, n_queries=4, n_pairs=8, generator=_g(2))
    assert x.shape == (128, 128)
    labelled = (y != IGNORE).nonzero()
    assert (labelled[:, 1].view(128, 4) == torch.tensor([115, 119, 123, 127])).all()
    for row, target in zip(x, y, strict=True):
        asked = []
        for a in (target != IGNORE).nonzero().flatten().tolist():
            assert row[a] == L.ANSWER and row[a - 2] == L.QUERY
            key = row[a - 1]
            where = (row[: 1 + 3 * 8] == key).nonzero().flatten()
            assert len(where) == 1 and row[where[0] + 1] == target[a]
            if a + 1 < 128:
                assert row[a + 1] == target[a]  # earlier answers are given in the input
            asked.append(int(key))
        assert len(set(asked)) == 4


def test_hidden_answers_give_nothing_away_and_keep_the_task():
    """hide_answers: no value in the question block, the same context and labels as the shown form."""
    shown_x, shown_y = dr.mqar_batch(64, n_queries=4, n_pairs=8, generator=_g(4))
    x, y = dr.mqar_batch(64, n_queries=4, n_pairs=8, generator=_g(4), hide_answers=True)
    assert torch.equal(y, shown_y)  # the same questions, asked at the same positions
    answers = (y != IGNORE).nonzero()[:, 1].view(64, 4)  # [B, Q]
    first_question = int(answers[0, 0]) - 2
    assert torch.equal(x[:, :first_question], shown_x[:, :first_question])  # context and filler unchanged
    after = x.gather(1, answers[:, :-1] + 1)  # [B, Q-1] the token after each answered-before-last ANSWER
    assert ((after >= L.first_filler) & (after < L.first_filler + L.n_filler)).all()
    values_in_questions = (x[:, first_question:] >= L.first_value) & (x[:, first_question:] < L.first_filler)
    assert not values_in_questions.any()
    sampler = dr.RecallSampler(8, seed=0, n_queries=4, n_pairs=8, hide_answers=True)
    assert torch.equal(sampler(3)[0], sampler(3)[0])  # a function of (seed, step): resumes stay exact
    one = dr.mqar_batch(8, n_queries=1, generator=_g(3), hide_answers=True)[0]
    assert torch.equal(one, dr.recall_batch(8, generator=_g(3))[0])  # one question: nothing to hide


def test_answer_at_key_moves_each_label_onto_the_asked_key_and_nothing_else():
    """Zoology's labels: the value is due at the asked key; the input and the values asked are the same."""
    x0, y0 = dr.mqar_batch(32, n_queries=4, n_pairs=8, generator=_g(5), hide_answers=True)
    x, y = dr.mqar_batch(32, n_queries=4, n_pairs=8, generator=_g(5), hide_answers=True, answer_at_key=True)
    assert torch.equal(x, x0)
    assert torch.equal(y[:, :-1], y0[:, 1:]) and (y[:, -1] == IGNORE).all()
    at = (y != IGNORE).nonzero()[:, 1].view(32, 4)  # [B, Q]
    asked = x.gather(1, at)  # the token read where each label sits: a key, just after QUERY
    assert ((asked >= L.first_key) & (asked < L.first_value)).all() and (x.gather(1, at - 1) == L.QUERY).all()
    # the label is the value written right after that key in the context
    for b in range(4):
        for t, key in zip(at[b].tolist(), asked[b].tolist(), strict=True):
            written = int((x[b, : 1 + 3 * 8] == key).nonzero()[0])  # BOS, 8 x (key value SEP)
            assert int(y[b, t]) == int(x[b, written + 1])
    sampler = dr.RecallSampler(8, seed=0, n_queries=4, n_pairs=4, answer_at_key=True)
    assert torch.equal(sampler(2)[1][:, :-1], dr.RecallSampler(8, seed=0, n_queries=4, n_pairs=4)(2)[1][:, 1:])
    _, ey = dr.eval_set(16, seed=1, n_queries=2, answer_at_key=True)
    assert torch.equal(ey[:, :-1], dr.eval_set(16, seed=1, n_queries=2)[1][:, 1:])


def test_single_query_mqar_is_the_recall_task():
    assert torch.equal(
        dr.mqar_batch(8, n_queries=1, generator=_g(3))[0], dr.recall_batch(8, generator=_g(3))[0]
    )


def test_bad_sizes_are_clear_errors():
    with pytest.raises(ValueError, match="n_queries"):
        dr.mqar_batch(2, n_queries=5, n_pairs=4)
    with pytest.raises(ValueError, match="n_pairs"):
        dr.mqar_batch(2, n_pairs=9)
    with pytest.raises(ValueError, match="too short"):
        dr.recall_batch(2, seq_len=10)


def test_describe_and_locate_tell_where_to_look():
    x, y = dr.recall_batch(1, seq_len=20, generator=_g(0))
    text = dr.describe(x[0], y[0])
    assert text.startswith("BOS k7 v17 SEP") and "ANSWER -> v19" in text  # the docstring's worked example
    (q,) = dr.locate(x[0], y[0])
    assert q["key_pos"] == 7 and q["value"] == 19 and q["answer_pos"] == 19


def test_docstring_worked_examples_are_what_the_code_gives():
    x, y = dr.recall_batch(1, seq_len=20, generator=_g(0))
    assert (
        x[0].tolist() == [1, 7, 17, 2, 8, 18, 2, 9, 19, 2, 11, 15, 2, 27, 29, 25, 24, 3, 9, 4]
        and y[0, -1] == 19
    )
    x, y = dr.mqar_batch(1, n_queries=2, seq_len=24, generator=_g(1))
    assert x[0].tolist() == [1, 9, 18, 2, 6, 14, 2, 11, 20, 2, 7, 19, 2, 23, 22, 23, 27, 3, 6, 4, 14, 3, 7, 4]
    assert {i: int(v) for i, v in enumerate(y[0]) if v != IGNORE} == {19: 14, 23: 19}
