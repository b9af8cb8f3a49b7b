"""``python -m tl_research.results merge | index``: organise the results folder.

    merge [FOLDER] [--out DIR] [--keep]   one file per table row group (runs unchanged, sources in merged_from)
    index [FOLDER] [--check]              regenerate the index in FOLDER/README.md (--check: only compare)

FOLDER defaults to the results folder (:func:`results_dir`: $TL_MINIMAL_RESULTS or the clone's data/results).
"""

from __future__ import annotations

import argparse
import sys

from tl_minimal.results.files import results_dir

from .index import update
from .merge import merge_folder


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tl_research.results", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge", help="merge per-command results files into one file per table row group")
    m.add_argument("folder", nargs="?", help="the folder to read (default: the results folder)")
    m.add_argument("--out", help="write the merged files here (default: in place)")
    m.add_argument("--keep", action="store_true", help="keep the files that were merged")
    i = sub.add_parser("index", help="regenerate the index table in the folder's README.md")
    i.add_argument("folder", nargs="?", help="the folder (default: the results folder)")
    i.add_argument("--check", action="store_true", help="only say whether the index is current (exit 1 if not)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        folder = args.folder or results_dir()
        if args.cmd == "merge":
            written = merge_folder(folder, args.out, remove=not args.keep)
            for name, sources in sorted(written.items()):
                print(f"{name}: {len(sources)} file(s): {', '.join(sources)}")
            return 0
        current = update(folder, check=args.check)
        print(("index is current" if current else "index is out of date") if args.check
              else f"index written to {folder}/README.md")
        return 0 if current or not args.check else 1
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
