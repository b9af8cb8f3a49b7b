"""Induction sequences: shapes, the second copy equals the first, the lead, seeds, bad settings."""

import pytest
import torch

from tl_minimal.data.text import BOS, EOS, decode, encode
from tl_research.tasks import induction_data as ind

TEXT = encode("the cat sat on the mat, and the dog sat on the log. " * 4)


def _g(seed):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("span_len", [1, 7, 64])
def test_shapes_and_the_two_copies_are_equal(span_len):
    for x, y in (ind.repeated_spans(TEXT, 16, span_len, _g(0)), ind.repeated_random(16, span_len, _g(0))):
        assert x.shape == y.shape == (16, 2 * span_len) and x.dtype == y.dtype == torch.long
        assert torch.equal(y[:, :span_len], y[:, span_len:])  # the targets: the span, twice
        assert torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted by one
        assert torch.equal(x[:, span_len + 1 :], x[:, 1:span_len]) or span_len == 1


def test_text_spans_are_held_out_text_with_the_byte_before_them_as_lead():
    x, y = ind.repeated_spans(TEXT, 64, 10, _g(1))
    text = TEXT.tolist()
    for row_x, row_y in zip(x, y, strict=True):
        span, lead = row_y[:10].tolist(), int(row_x[0])
        where = [s for s in range(1, len(text) - 10) if text[s : s + 10] == span and text[s - 1] == lead]
        assert where, f"span {decode(span)!r} with lead {lead} is not in the text"
        assert EOS not in span and BOS not in span and max(span) < 256


def test_the_control_puts_another_span_in_the_second_half():
    for x, y in (ind.repeated_spans(TEXT, 64, 12, _g(2), control=True),
                 ind.repeated_random(64, 12, _g(2), control=True)):
        assert x.shape == y.shape == (64, 24) and torch.equal(x[:, 1:], y[:, :-1])
        same = sum(torch.equal(a, b) for a, b in zip(y[:, :12], y[:, 12:], strict=True))
        assert same < 8  # (text: the same start by chance)
    x, y = ind.repeated_spans(TEXT, 64, 12, _g(2), control=True)
    text = TEXT.tolist()
    for half in (y[:, :12], y[:, 12:]):  # both halves are spans of the text
        assert all(any(text[s : s + 12] == row.tolist() for s in range(len(text))) for row in half)


def test_the_worked_example_of_the_docstring():
    x, y = ind.repeated_spans(encode("the cat sat on the mat"), 1, span_len=6, generator=_g(0))
    assert decode(x[0]) == "t sat o sat " and decode(y[0]) == " sat o sat o"


def test_random_spans_are_bytes_and_seeds_reproduce():
    x, _ = ind.repeated_random(256, 64, _g(3))
    assert int(x.min()) >= 0 and int(x.max()) < 256 and len(set(x.flatten().tolist())) > 200
    assert torch.equal(x, ind.repeated_random(256, 64, _g(3))[0])
    assert not torch.equal(x, ind.repeated_random(256, 64, _g(4))[0])
    a = ind.repeated_spans(TEXT, 8, 20, ind.eval_generator(5))[0]
    assert torch.equal(a, ind.repeated_spans(TEXT, 8, 20, ind.eval_generator(5))[0])
    assert not torch.equal(a, ind.repeated_spans(TEXT, 8, 20, ind.eval_generator(6))[0])
    # the text and the random spans of one seed come from different generators
    assert ind.eval_generator(5).initial_seed() != ind.eval_generator(5, "random").initial_seed()


@pytest.mark.parametrize("call, words", [
    (lambda: ind.repeated_spans(TEXT, 4, 65), ("span_len=65 is longer than half the context: two copies need 130 "
                                               r"positions, the models see seq_len=128 \(span_len <= 64\)")),
    (lambda: ind.repeated_random(4, 33, seq_len=64), r"span_len <= 32"),
    (lambda: ind.repeated_random(4, 0), "span_len must be a whole number >= 1"),
    (lambda: ind.repeated_spans(encode("short"), 4, 6), "too short for a span of 6 bytes"),
    (lambda: ind.repeated_random(0, 4), "n must be >= 1"),
    (lambda: ind.eval_generator(0, "noise"), "kind must be one of text, random, text_control, random_control"),
])
def test_impossible_settings_name_the_limit(call, words):
    with pytest.raises(ValueError, match=words):
        call()
