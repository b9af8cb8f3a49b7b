"""Moved: the recall study's commands are now ``python -m tl_research study ...``.

Running this module prints where each command went and exits with status 2; the code is
:mod:`tl_research.studies.recall_study`.
"""

import sys

MOVED = {
    "train": "study train",
    "init": "study init",
    "overwrite-init": "study overwrite-init",
    "alias-init": "study alias-init",
    "alias-trained": "study alias-trained",
    "baseline": "study baseline",
    "merge": "study merge",
}


def main(argv=None) -> int:
    """Say where the command moved (``--set A=1 B=2`` is now ``--set A=1 --set B=2``); returns 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    asked = argv[0] if argv else None
    print("error: python -m tl_research.recall_study has moved into the one command line:", file=sys.stderr)
    for old, new in MOVED.items():
        if asked in (None, old) or asked not in MOVED:
            print(f"    recall_study {old:<15} ->  python -m tl_research {new}", file=sys.stderr)
    print("  and --set takes one KEY=VALUE per flag: repeat it (--set a=1 --set b=2)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
