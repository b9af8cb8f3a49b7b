"""The 'where recall breaks' tasks: shapes, the answer read back from the sequence, seeds, bad input."""

import pytest
import torch

from tl_minimal.data.recall import IGNORE
from tl_research.tasks import recall_breaks as rb


def _g(seed):
    return torch.Generator().manual_seed(seed)


def test_overwrite_shapes_and_layout():
    L = rb.OVERWRITE_LAYOUT
    x, y = rb.overwrite_batch(64, generator=_g(0))
    assert x.shape == y.shape == (64, 128) and x.dtype == torch.long
    assert (x[:, 0] == L.BOS).all() and (x[:, -3] == L.QUERY).all() and (x[:, -1] == L.ANSWER).all()
    assert (y[:, :-1] == IGNORE).all() and int(x.max()) < L.vocab_size
    assert ((y[:, -1] >= L.first_value) & (y[:, -1] < L.first_filler)).all()


def test_overwrite_answer_is_the_latest_write_read_from_the_sequence():
    x, y = rb.overwrite_batch(256, generator=_g(1))
    counts = []
    for row, target in zip(x, y, strict=True):
        written = rb.written_values(row)
        assert 2 <= len(written) <= 3  # the asked key is overwritten
        assert len(set(written)) == len(written)  # every write has its own value
        assert rb.latest_value(row) == int(target[-1]) == written[-1]
        context = row[1:-3]
        values = context[(context >= 13) & (context < 29)]
        assert len(set(values.tolist())) == len(values)  # values distinct in the whole sequence
        counts.append(len(written))
    assert {2, 3} <= set(counts)


def test_overwrite_seeds_reproduce_and_eval_is_fresh():
    make = rb.BreakSampler(rb.overwrite_batch, 8, seed=3)
    assert torch.equal(make(5)[0], rb.BreakSampler(rb.overwrite_batch, 8, seed=3)(5)[0])
    assert not torch.equal(make(5)[0], make(6)[0])
    ev, _ = rb.overwrite_batch(8, generator=rb.eval_generator(3))
    assert not any(torch.equal(ev, make(s)[0]) for s in range(5))


@pytest.mark.parametrize("kw, words", [
    ({"n_keys": 9}, "n_keys must be in 1..8"),
    ({"max_writes": 1}, "max_writes must be >= 2"),
    ({"n_keys": 6, "max_writes": 3}, "18 writes need as many distinct values, but the layout has 16"),
    ({"seq_len": 30}, "seq_len=30 is too short"),
])
def test_overwrite_bad_settings_name_the_limit(kw, words):
    with pytest.raises(ValueError, match=words):
        rb.overwrite_batch(2, **kw)


def test_alias_table_is_fixed_per_seed_and_partitions_ids():
    t = rb.alias_table(0)
    assert t == rb.alias_table(0) and t != rb.alias_table(1)
    assert len(t) == 8 and all(2 <= len(a) <= 4 for a in t)
    ids = [i for a in t for i in a]
    assert len(set(ids)) == len(ids) and min(ids) >= 5 and max(ids) < 5 + 32


@pytest.mark.parametrize("same", [False, True])
def test_alias_question_uses_another_alias_and_answer_is_determined(same):
    table = rb.alias_table(2)
    x, y = rb.alias_batch(256, table, same_alias=same, generator=_g(3))
    assert x.shape == (256, 128) and (y[:, :-1] == IGNORE).all()
    for row, target in zip(x, y, strict=True):
        asked = int(row[-2])
        written = [int(t) for t in row[1:-3] if any(int(t) in a for a in table)]
        assert (asked in written) == same  # exact token match only in the control
        assert rb.alias_answer(row, table) == int(target[-1])


def test_alias_curriculum_share_asks_that_share_with_the_written_token():
    table = rb.alias_table(2)
    plain = rb.alias_batch(64, table, generator=_g(3))
    # share 0 draws exactly what the generator drew before the option existed; share 1 is the control
    assert all(torch.equal(a, b) for a, b in zip(plain, rb.alias_batch(64, table, same_alias_share=0.0,
                                                                      generator=_g(3)), strict=True))
    assert all(torch.equal(a, b) for a, b in zip(rb.alias_batch(64, table, same_alias=True, generator=_g(3)),
                                                 rb.alias_batch(64, table, same_alias_share=1.0, generator=_g(3)),
                                                 strict=True))
    x, y = rb.alias_batch(2000, table, same_alias_share=0.25, generator=_g(4))
    same = [int(row[-2]) in [int(t) for t in row[1:-3]] for row in x]
    assert 0.2 < sum(same) / len(same) < 0.3  # about a quarter asked with the written token
    assert all(rb.alias_answer(row, table) == int(t[-1]) for row, t in zip(x[:200], y[:200], strict=True))
    with pytest.raises(ValueError, match=r"same_alias_share must be in \[0, 1\], got 1.5"):
        rb.alias_batch(2, table, same_alias_share=1.5)


def test_alias_bad_settings_name_the_limit():
    with pytest.raises(ValueError, match="40 alias ids, but the layout has 32"):
        rb.alias_table(0, n_classes=8, max_aliases=5)
    with pytest.raises(ValueError, match="needs >= 2 aliases"):
        rb.alias_batch(2, [[5], [6, 7]], n_pairs=2)
    with pytest.raises(ValueError, match=r"n_pairs must be in 1\.\.8"):
        rb.alias_batch(2, rb.alias_table(0), n_pairs=9)
    with pytest.raises(ValueError, match="too short"):
        rb.alias_batch(2, rb.alias_table(0), seq_len=12)


@pytest.mark.parametrize("T", [20, 1024])
def test_distance_shapes_pairs_early_question_at_the_end(T):
    L = rb.PAPER_LAYOUT
    x, y = rb.distance_batch(16, T, generator=_g(0))
    assert x.shape == y.shape == (16, T) and x.dtype == torch.long
    assert (x[:, 0] == L.BOS).all() and (x[:, 3:13:3] == L.SEP).all()  # the pairs right after BOS
    assert (x[:, -3] == L.QUERY).all() and (x[:, -1] == L.ANSWER).all() and (y[:, :-1] == IGNORE).all()
    filler = x[:, 13:-3]
    assert ((filler >= L.first_filler) & (filler < L.first_filler + L.n_filler)).all()


def test_distance_answer_and_distance_are_determined_by_the_sequence():
    x, y = rb.distance_batch(128, 2048, generator=_g(1))
    ds = [rb.distance_of(row) for row in x]
    assert all(rb.latest_value(row) == int(t[-1]) for row, t in zip(x, y, strict=True))
    assert set(ds) == {2048 - 3 - 3 * i for i in range(4)}  # pair i is written at 1 + 3i, asked at T - 2
    with pytest.raises(ValueError, match="written 0 times"):
        rb.distance_of(torch.tensor([1, 5, 13, 2, 30, 30, 3, 6, 4]))


def test_distance_seeds_reproduce_lengths_cycle_and_eval_is_fresh():
    s = rb.DistanceSampler((32, 64), 4, seed=3)
    assert [s(k)[0].shape[1] for k in range(4)] == [32, 64, 32, 64]
    assert torch.equal(s(2)[0], rb.DistanceSampler((32, 64), 4, seed=3)(2)[0])
    assert not torch.equal(s(2)[0], rb.DistanceSampler((32, 64), 4, seed=4)(2)[0])
    ev, _ = rb.distance_eval_set(4, 3, 32)
    assert torch.equal(ev, rb.distance_eval_set(4, 3, 32)[0]) and not any(torch.equal(ev, s(k)[0]) for k in (0, 2))


@pytest.mark.parametrize("kw, words", [
    ({"seq_len": 15}, "seq_len=15 is too short for 4 pairs: need at least 16 tokens"),
    ({"seq_len": 64, "n_pairs": 9}, r"n_pairs must be in 1\.\.8 \(the layout has 8 key ids"),
    ({"seq_len": 64, "n_pairs": 0}, r"n_pairs must be in 1\.\.8"),
])
def test_distance_bad_settings_name_the_limit(kw, words):
    with pytest.raises(ValueError, match=words):
        rb.distance_batch(2, **kw)
