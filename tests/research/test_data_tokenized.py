"""The tokenized benchmark's data (research/tl_research/tasks/tokenized_data.py): the MiniMind tokenizer,
the corpus and its 1-in-20 holdout, and clear errors when a file is bad or nothing can be had."""

import types

import pytest

from conftest import FIXTURE_DATA, data_dirs
from tl_minimal.data import text as data_text
from tl_minimal.data.text import DataUnavailable, Offline
from tl_research.tasks import tokenized_data as data_tokenized


def _online(monkeypatch):
    """Take the hub as reachable without the probe (data/offline.py), so the mocked hub below is what answers."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TL_OFFLINE", "0")


def test_holdout_is_one_in_twenty_and_deterministic():
    train, held = data_tokenized.split_holdout(list(range(100)))
    assert held == [19, 39, 59, 79, 99] and len(train) == 95 and not set(train) & set(held)


@pytest.mark.parametrize("root", data_dirs())
def test_tokenizer_and_stand_in_corpus(monkeypatch, root):
    monkeypatch.delenv("TL_MINIMAL_MINIMIND_JSONL", raising=False)
    tok = data_tokenized.load_tokenizer(root)
    # MiniMind's layout: ids 0, 1, 2 are the specials, in both the real tokenizer and the fixture's
    assert [tok.token_to_id(t) for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")] == [0, 1, 2]
    if root == FIXTURE_DATA:  # the tests' own tiny BPE (tests/fixtures/make_tokenizer.py)
        assert tok.get_vocab_size() == 512
        named = "a 512-id tokenizer laid out like MiniMind's"
    else:  # the real MiniMind tokenizer
        assert tok.get_vocab_size() == data_tokenized.VOCAB_SIZE == 6400
        named = "the MiniMind tokenizer"
    corpus = data_tokenized.load_corpus(data_dir=root)
    assert "stand-in WikiText-2" in corpus.source and "holdout" in corpus.source and named in corpus.source
    assert corpus.train[0] == data_tokenized.BEGIN and int(corpus.train.max()) < tok.get_vocab_size()
    docs = data_text.load_split("train", root).text.split("\n")
    assert int((corpus.holdout == data_tokenized.BEGIN).sum()) == len(docs) // 20  # documents 19, 39, ...
    if len(docs) > 1000:  # a real corpus: the holdout is about 1 token in 20
        assert 0.03 < len(corpus.holdout) / len(corpus.train) < 0.1


def test_a_tokenizer_not_laid_out_like_minimind_is_refused():
    ids = {"<|im_start|>": 1, "<|im_end|>": 2}
    too_big = types.SimpleNamespace(get_vocab_size=lambda: 7000, token_to_id=ids.get)
    with pytest.raises(data_text.BadDataFile, match="at most 6400 ids: it has 7000 ids"):
        data_tokenized.load_corpus(tokenizer=too_big)
    shuffled = types.SimpleNamespace(get_vocab_size=lambda: 6400, token_to_id={"<|im_start|>": 5}.get)
    with pytest.raises(data_text.BadDataFile, match=r"<\|im_start\|>, <\|im_end\|> = \(5, None\)"):
        data_tokenized.load_corpus(tokenizer=shuffled)


def test_minimind_jsonl_is_preferred_when_given(tmp_path):
    path = tmp_path / "pretrain.jsonl"
    path.write_text("".join(f'{{"text": "document number {i}"}}\n' for i in range(40)), encoding="utf-8")
    corpus = data_tokenized.load_corpus(jsonl=path, data_dir=FIXTURE_DATA)
    assert "MiniMind pretraining jsonl" in corpus.source and "40 documents" in corpus.source
    assert int((corpus.holdout == data_tokenized.BEGIN).sum()) == 2  # documents 19 and 39
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"txt": 1}\n', encoding="utf-8")
    with pytest.raises(data_text.BadDataFile, match=r"bad\.jsonl:1"):
        data_tokenized.read_jsonl(bad, None)


def test_missing_tokenizer_names_both_ways(monkeypatch, tmp_path):
    import tokenizers

    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)
    _online(monkeypatch)

    def offline(*args, **kwargs):
        raise OSError("hub unreachable")

    monkeypatch.setattr(tokenizers.Tokenizer, "from_pretrained", offline)
    with pytest.raises(DataUnavailable) as err:
        data_tokenized.load_tokenizer()
    assert "TL_MINIMAL_DATA" in str(err.value) and "hub" in str(err.value)


def test_offline_tokenizer_raises_at_once(monkeypatch, no_local_data):
    import tokenizers

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(tokenizers.Tokenizer, "from_pretrained", lambda *a: pytest.fail("asked the hub offline"))
    with pytest.raises(Offline, match="HF_HUB_OFFLINE=1 is set"):
        data_tokenized.load_tokenizer()
