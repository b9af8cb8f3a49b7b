"""Fetch, cache, export or verify WikiText-2 (raw) for tl-minimal.

    python data/prepare_wikitext2.py                  # download once into the Hugging Face cache
    python data/prepare_wikitext2.py --out ~/tl-data  # also write ~/tl-data/wikitext-2-raw/wiki.*.raw
    python data/prepare_wikitext2.py --verify DIR     # check local files against known sha256 sums

After ``--out DIR``, ``export TL_MINIMAL_DATA=DIR`` makes every run read the local copy
(no network needed again). ``--verify`` says which files are the full splits, which is
only the head of the train split (as in the offline copy), and which are unknown.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

KNOWN = {  # sha256 of the files in the project's offline copy (see data/README.md)
    "wiki.valid.raw": (
        "4cd0f6876d07a413aa911261ff6d363c72d757d47f0fdd6015702014c89cb9c7",
        "full validation split",
    ),
    "wiki.test.raw": ("173c87a53759e0201f33e0ccf978e510c2042d7f2cb78229d9a50d79b9e7dd08", "full test split"),
    "wiki.train.head1MB.txt": (
        "202fe8b8c4853f1de79b459d8af874d7f043f8299995c769604ffde1b07eb860",
        "first 1,000,000 bytes of the train split (blank lines removed)",
    ),
}
FILES = {"train": "wiki.train.raw", "validation": "wiki.valid.raw", "test": "wiki.test.raw"}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(root: Path) -> int:
    folder = root / "wikitext-2-raw" if (root / "wikitext-2-raw").is_dir() else root
    found = sorted(p for p in folder.glob("wiki.*") if p.is_file())
    if not found:
        print(f"no wiki.* files under {folder}", file=sys.stderr)
        return 1
    for path in found:
        digest = sha256(path)
        known = KNOWN.get(path.name)
        if known and known[0] == digest:
            verdict = f"ok: {known[1]}"
        elif known:
            verdict = "MISMATCH: not the file the project expects"
        else:
            verdict = "unknown file (written by --out? lines are the raw split)"
        print(f"{path.name:<24} {path.stat().st_size:>12,} bytes  {verdict}")
    if not (folder / "wiki.train.raw").exists():
        print("note: no full wiki.train.raw; runs will train on the head of the split and say so")
    return 0


def download(out: Path | None) -> int:
    try:
        import datasets
    except ImportError:
        print("the `datasets` package is missing: pip install datasets", file=sys.stderr)
        return 1
    for split, name in FILES.items():
        rows = datasets.load_dataset("wikitext", "wikitext-2-raw-v1", split=split)
        text = "".join(rows["text"])
        print(f"{split:<11} {len(rows):>6,} rows, {len(text.encode()):>12,} bytes (cached by datasets)")
        if out is not None:
            path = out / "wikitext-2-raw" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"            wrote {path}")
    if out is not None:
        print(f"now: export TL_MINIMAL_DATA={out}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the raw splits under OUT/wikitext-2-raw/")
    parser.add_argument("--verify", type=Path, metavar="DIR", help="check local files instead of downloading")
    args = parser.parse_args(argv)
    if args.verify is not None:
        return verify(args.verify.expanduser())
    return download(args.out.expanduser() if args.out else None)


if __name__ == "__main__":
    raise SystemExit(main())
