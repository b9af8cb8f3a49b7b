"""Fetch or verify the MiniMind tokenizer, and check a MiniMind pretraining jsonl, for tl-minimal.

    python data/prepare_minimind.py --out ~/tl-data          # tokenizer -> ~/tl-data/minimind/tokenizer.json
    python data/prepare_minimind.py --verify DIR             # sha256 of DIR/minimind/tokenizer.json
    python data/prepare_minimind.py --jsonl pretrain_hq.jsonl  # check the corpus format and count tokens

The tokenized benchmark uses the jsonl when ``--jsonl`` is passed to the experiments command,
when ``TL_MINIMAL_MINIMIND_JSONL`` names it, or when it lies at
``$TL_MINIMAL_DATA/minimind/pretrain_hq.jsonl``;
otherwise it tokenizes WikiText-2 with the same tokenizer and says so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HUB_REPO = "jingyaogong/MiniMind2"
TOKENIZER_SHA256 = "d98595c6aef70d95f72748582fb9b4f53d76dd58c1ae1dd702ad7c84e1caf5e4"


def fetch(out: Path) -> int:
    from tokenizers import Tokenizer

    try:
        tok = Tokenizer.from_pretrained(HUB_REPO)
    except Exception as exc:  # no network, no such repo, rate limit: all end here
        print(f"could not download the tokenizer from the hub ({HUB_REPO}): {exc}", file=sys.stderr)
        return 1
    path = out / "minimind" / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    print(f"wrote {path} (vocab {tok.get_vocab_size():,}); now: export TL_MINIMAL_DATA={out}")
    return 0


def verify(root: Path) -> int:
    path = root / "minimind" / "tokenizer.json"
    if not path.is_file():
        print(f"missing {path}", file=sys.stderr)
        return 1
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    same = digest == TOKENIZER_SHA256
    print(f"{path}: {'ok, the MiniMind2 tokenizer' if same else 'differs from the copy the project knows'}")
    from tokenizers import Tokenizer

    print(f"vocab size {Tokenizer.from_file(str(path)).get_vocab_size():,} (expected 6,400)")
    return 0


def check_jsonl(path: Path, lines: int) -> int:
    n_docs = n_chars = 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if number > lines:
                break
            try:
                n_chars += len(json.loads(line)["text"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                print(f"{path}:{number}: not a JSON object with a 'text' field ({exc})", file=sys.stderr)
                return 1
            n_docs += 1
    print(
        f"{path}: first {n_docs:,} documents ok ({n_chars:,} characters); "
        f"use it with: python -m tl_research tokenized --jsonl {path}"
    )
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the tokenizer to OUT/minimind/tokenizer.json")
    parser.add_argument("--verify", type=Path, metavar="DIR", help="check DIR/minimind/tokenizer.json")
    parser.add_argument("--jsonl", type=Path, help="check a MiniMind pretraining jsonl")
    parser.add_argument("--lines", type=int, default=1000, help="jsonl lines to check (default 1000)")
    args = parser.parse_args(argv)
    if not (args.out or args.verify or args.jsonl):
        parser.error("give --out, --verify or --jsonl")
    code = 0
    if args.out:
        code |= fetch(args.out.expanduser())
    if args.verify:
        code |= verify(args.verify.expanduser())
    if args.jsonl:
        code |= check_jsonl(args.jsonl.expanduser(), args.lines)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
