"""The tokenized benchmark (research only): MiniMind's tokenizer (vocab 6,400) and a corpus cut into train / holdout.

Glossary
    tokenizer   MiniMind2's byte-level BPE; ids 0, 1, 2 = <|endoftext|>, <|im_start|>, <|im_end|>
    document    one {"text": ...} line of a MiniMind pretraining jsonl, or one line of WikiText-2
    holdout     documents 19, 39, 59, ... (index % 20 == 19): a deterministic 1-in-20 split
    stream      all documents of one side, each as <|im_start|> text <|im_end|>, concatenated [N]

Where things come from:
- tokenizer: ``<dir>/minimind/tokenizer.json`` (or ``<dir>/tokenizer.json``) under
  ``tokenizer_dir=`` / ``TL_MINIMAL_DATA``, else the Hugging Face hub (``jingyaogong/MiniMind2``;
  offline, as ``tl_minimal.data.offline`` decides before any request, its cache only), else
  :class:`DataUnavailable`. :func:`load_corpus` accepts MiniMind's tokenizer or one laid out like it
  (at most 6,400 ids, ``<|im_start|>`` = 1, ``<|im_end|>`` = 2), such as the tests' tiny stand-in,
  and its source sentence says which;
- corpus: a MiniMind pretraining jsonl when the user has one (``jsonl=`` argument,
  ``TL_MINIMAL_MINIMIND_JSONL``, or ``<dir>/minimind/pretrain_hq.jsonl``), read up to
  ``max_docs`` documents; otherwise the WikiText-2 train split (lines after the paper's
  preprocessing) tokenized with the same tokenizer. :attr:`TokenCorpus.source` says which,
  and runs print it. The second is a stand-in, not the paper's corpus: numbers differ.

A file that is there but unusable (a tokenizer.json that is not JSON or not a tokenizer, or
not MiniMind's; an unreadable jsonl or a bad line in it; too few documents) is a
:class:`~tl_minimal.data.text.BadDataFile` naming the file and the problem.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from tl_minimal.data import offline as _offline
from tl_minimal.data.text import BadDataFile, DataUnavailable, Offline, load_split, local_root

HUB_REPO = "jingyaogong/MiniMind2"
VOCAB_SIZE = 6400
HOLDOUT_EVERY = 20
BEGIN, END = 1, 2  # <|im_start|>, <|im_end|>: around every document, as MiniMind's pretraining does


def read_tokenizer(path: Path):
    """A ``tokenizers.Tokenizer`` from a tokenizer.json, or a BadDataFile naming the file and the problem."""
    from tokenizers import Tokenizer

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadDataFile(f"{path}: cannot read it ({exc})") from None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadDataFile(f"{path} is not valid JSON ({exc}); a broken download? Prepare it again with "
                          "`python data/prepare_minimind.py`") from None
    try:
        return Tokenizer.from_str(text)
    except Exception as exc:  # any error: the tokenizers library raises a plain Exception
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise BadDataFile(f"{path} is JSON but not a tokenizer ({first})") from None


def _local_tokenizer(tokenizer_dir):
    """(tokenizer, its file) from the local directory, (None, None) when there is none."""
    root = local_root(tokenizer_dir)
    if root is not None:
        for path in (root / "minimind" / "tokenizer.json", root / "tokenizer.json"):
            if path.exists():
                return read_tokenizer(path), path
        if tokenizer_dir is not None:
            raise DataUnavailable(f"no tokenizer.json (or minimind/tokenizer.json) under {root}")
    return None, None


def load_tokenizer(tokenizer_dir: str | os.PathLike | None = None):
    """The MiniMind tokenizer (``tokenizers.Tokenizer``): local file first, then the hub."""
    from tokenizers import Tokenizer

    tokenizer, _ = _local_tokenizer(tokenizer_dir)
    if tokenizer is not None:
        return tokenizer
    why = _offline.offline_reason()  # decided before any request: no retries without a network
    try:
        if why is None:
            return Tokenizer.from_pretrained(HUB_REPO)
        if not _offline.in_hub_cache("models", HUB_REPO):
            raise Offline(f"offline ({why}) and no Hugging Face cache of {HUB_REPO}: nothing was requested", why)
        from huggingface_hub import hf_hub_download

        return read_tokenizer(Path(hf_hub_download(HUB_REPO, "tokenizer.json", local_files_only=True)))
    except Exception as exc:
        message = (
            "The MiniMind tokenizer is not available. Either point TL_MINIMAL_DATA (or tokenizer_dir=) at a "
            "directory holding minimind/tokenizer.json, or let the Hugging Face hub download "
            f"{HUB_REPO} once with internet (`python data/prepare_minimind.py`). The hub attempt failed: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        )
        raise (Offline(message, exc.reason) if isinstance(exc, Offline) else DataUnavailable(message)) from exc


def _find_jsonl(jsonl, data_dir) -> Path | None:
    if jsonl is not None:
        path = Path(jsonl).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"MiniMind jsonl {path} does not exist")
        return path
    env = os.environ.get("TL_MINIMAL_MINIMIND_JSONL", "").strip()
    if env:
        return _find_jsonl(env, None)
    root = local_root(data_dir)
    if root is not None and (root / "minimind" / "pretrain_hq.jsonl").is_file():
        return root / "minimind" / "pretrain_hq.jsonl"
    return None


def read_jsonl(path: Path, max_docs: int | None) -> list[str]:
    """The "text" field of the first ``max_docs`` lines of a jsonl file (a bad line is an error)."""
    docs = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if max_docs is not None and len(docs) >= max_docs:
                    break
                if not line.strip():
                    continue
                try:
                    docs.append(json.loads(line)["text"])
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise BadDataFile(
                        f"{path}:{number}: expected a JSON object with a 'text' field ({exc})"
                    ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadDataFile(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    return docs


def split_holdout(docs: list, every: int = HOLDOUT_EVERY) -> tuple[list, list]:
    """Deterministic 1-in-``every`` holdout: document i is held out when i % every == every - 1."""
    train = [d for i, d in enumerate(docs) if i % every != every - 1]
    held = [d for i, d in enumerate(docs) if i % every == every - 1]
    return train, held


def tokenize_stream(tokenizer, docs: list[str]) -> torch.Tensor:
    """Concatenate <|im_start|> doc <|im_end|> for every document -> int64 [N]."""
    ids = []
    for enc in tokenizer.encode_batch(docs, add_special_tokens=False):
        ids.append(BEGIN)
        ids.extend(enc.ids)
        ids.append(END)
    return torch.tensor(ids, dtype=torch.long)


@dataclass
class TokenCorpus:
    """Train and holdout token streams plus a sentence saying where they came from."""

    train: torch.Tensor  # [N_train] int64
    holdout: torch.Tensor  # [N_holdout] int64
    source: str
    vocab_size: int = VOCAB_SIZE

    def __repr__(self) -> str:
        sizes = f"train={len(self.train):,}, holdout={len(self.holdout):,} tokens"
        return f"TokenCorpus({sizes}, source={self.source!r})"


def load_corpus(
    jsonl: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    tokenizer=None,
    max_docs: int | None = 200_000,
) -> TokenCorpus:
    """Tokenized corpus with the 1-in-20 holdout (see the module docstring for the sources)."""
    where = "this tokenizer"
    if tokenizer is None:
        tokenizer, path = _local_tokenizer(data_dir)
        where = str(path) if path is not None else where
        tokenizer = tokenizer if tokenizer is not None else load_tokenizer(data_dir)
    vocab = tokenizer.get_vocab_size()
    specials = (tokenizer.token_to_id("<|im_start|>"), tokenizer.token_to_id("<|im_end|>"))
    if vocab > VOCAB_SIZE or specials != (BEGIN, END):
        raise BadDataFile(
            f"{where} is not the MiniMind tokenizer ({VOCAB_SIZE} ids, <|im_start|> = {BEGIN}, <|im_end|> = "
            f"{END}) nor one laid out like it with at most {VOCAB_SIZE} ids: it has {vocab} ids and "
            f"<|im_start|>, <|im_end|> = {specials}"
        )
    # the tests' tiny stand-in (tests/fixtures/data/tokenizer.json) has the layout but fewer ids
    name = "the MiniMind tokenizer" if vocab == VOCAB_SIZE else f"a {vocab:,}-id tokenizer laid out like MiniMind's"
    path = _find_jsonl(jsonl, data_dir)
    if path is not None:
        docs = read_jsonl(path, max_docs)
        source = f"MiniMind pretraining jsonl {path} (first {len(docs):,} documents)"
    else:
        split = load_split("train", data_dir)
        docs = split.text.split("\n")
        source = (
            f"no MiniMind jsonl: stand-in WikiText-2 train text tokenized with {name}, "
            f"one document per line ({len(docs):,} lines; {split.source})"
        )
    if len(docs) < HOLDOUT_EVERY:
        raise BadDataFile(
            f"{source}: {len(docs)} documents; a 1-in-{HOLDOUT_EVERY} holdout needs {HOLDOUT_EVERY} or more"
        )
    train_docs, held_docs = split_holdout(docs)
    source += f"; holdout = every {HOLDOUT_EVERY}th document ({len(held_docs):,})"
    return TokenCorpus(tokenize_stream(tokenizer, train_docs), tokenize_stream(tokenizer, held_docs), source)
