"""Byte-level WikiText-2: preprocessing, sources, windows, chunks (the tokenized corpus: tests/research)."""

import sys
import types

import pytest
import torch

from conftest import FIXTURE_DATA, data_dirs, head_only_copy
from tl_minimal.data import text as data_text
from tl_minimal.data.text import BOS, EOS, VOCAB_SIZE, DataUnavailable


def test_preprocess_strips_drops_empty_and_joins():
    assert data_text.preprocess(" = Title = \n\n  body text . \n \n last") == "= Title =\nbody text .\nlast"


def test_encode_wraps_bytes_in_bos_eos_and_decodes_back():
    ids = data_text.encode("héllo")
    assert ids.dtype == torch.long and ids[0] == BOS and ids[-1] == EOS
    assert ids[1:-1].tolist() == list("héllo".encode())
    assert int(ids.max()) < VOCAB_SIZE == 259
    assert data_text.decode(ids) == "héllo"


@pytest.mark.parametrize("root", data_dirs())
def test_local_splits_are_read_and_their_source_said(root):
    valid = data_text.load_split("valid", root)
    assert valid.name == "validation" and not valid.partial and "full validation" in valid.source
    train = data_text.load_split("train", root)
    head_only = not (root / "wikitext-2-raw" / "wiki.train.raw").is_file()  # an offline copy's head
    assert train.partial is head_only
    assert ("head of the train split" if head_only else "full train split") in train.source
    assert "\n\n" not in train.text and train.tokens[0] == BOS and train.tokens[-1] == EOS


def test_partial_train_is_reported(tmp_path):
    root = head_only_copy(FIXTURE_DATA, tmp_path)
    size = (root / "wikitext-2-raw" / "wiki.train.head1MB.txt").stat().st_size
    train = data_text.load_split("train", root)
    assert train.partial and "head of the train split" in train.source and f"{size:,} bytes" in train.source


def test_source_names_tl_minimal_data_not_the_machines_path(monkeypatch):
    monkeypatch.setenv("TL_MINIMAL_DATA", str(FIXTURE_DATA))
    valid = data_text.load_split("valid")
    assert "($TL_MINIMAL_DATA/wikitext-2-raw/wiki.valid.raw)" in valid.source
    assert str(FIXTURE_DATA) not in valid.source
    explicit = data_text.load_split("valid", FIXTURE_DATA)  # an explicit directory: its path
    assert str(FIXTURE_DATA / "wikitext-2-raw" / "wiki.valid.raw") in explicit.source


def test_explicit_directory_without_files_is_an_error(tmp_path):
    with pytest.raises(DataUnavailable, match=r"wiki\.valid\.raw"):
        data_text.load_split("validation", tmp_path)
    with pytest.raises(ValueError, match="unknown split"):
        data_text.load_split("dev", tmp_path)


def _online(monkeypatch):
    """Take the hub as reachable without the probe (data/offline.py), so the mocked hub below is what answers."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TL_OFFLINE", "0")


def _broken_datasets(monkeypatch):
    def load_dataset(*args, **kwargs):
        raise ConnectionError("no internet here")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))


def test_neither_local_nor_hub_names_both_ways(monkeypatch):
    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)
    _online(monkeypatch)
    _broken_datasets(monkeypatch)
    with pytest.raises(DataUnavailable) as err:
        data_text.load_split("train")
    message = str(err.value)
    assert "TL_MINIMAL_DATA" in message and "datasets" in message and "wikitext-2-raw-v1" in message


def test_hub_is_used_when_no_local_directory(monkeypatch):
    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)
    _online(monkeypatch)
    calls = []

    def load_dataset(name, config, split):
        calls.append((name, config, split))
        return {"text": ["", " = A = \n", "", " line one \n", " line two \n"]}

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    split = data_text.load_split("test")
    assert calls == [("wikitext", "wikitext-2-raw-v1", "test")]
    assert split.text == "= A =\nline one\nline two" and "Hugging Face" in split.source and not split.partial


def test_windows_are_shifted_seeded_and_differ_per_stream():
    tokens = torch.arange(1000)
    a = data_text.WindowSampler(tokens, 4, 16, seed=3)
    x, y = a(5)
    assert x.shape == y.shape == (4, 16) and torch.equal(y, x + 1)
    assert torch.equal(a(5)[0], data_text.WindowSampler(tokens, 4, 16, seed=3)(5)[0])  # same seed, same step
    assert not torch.equal(a(5)[0], a(6)[0])  # next step, new windows
    assert not torch.equal(
        a(5)[0], data_text.WindowSampler(tokens, 4, 16, seed=3, stream=1)(5)[0]
    )  # DDP rank 1
    assert not torch.equal(a(5)[0], data_text.WindowSampler(tokens, 4, 16, seed=4)(5)[0])


def test_eval_chunks_do_not_overlap_and_cover_targets_once():
    tokens = torch.arange(1 + 10 * 8 + 3)
    x, y = data_text.eval_chunks(tokens, 8)
    assert x.shape == (10, 8) and torch.equal(y, x + 1)
    assert torch.equal(y.flatten(), tokens[1:81])  # every target byte exactly once, in order
    batches = data_text.eval_batches(tokens, 8, batch_size=4, max_batches=2)
    assert [len(b[0]) for b in batches] == [4, 4] and torch.equal(batches[0][0], x[:4])
    whole = data_text.eval_batches(tokens, 8, batch_size=4)
    assert [len(b[0]) for b in whole] == [4, 4, 2]
    assert torch.equal(torch.cat([b[1] for b in whole]), y)  # in text order, every chunk once
