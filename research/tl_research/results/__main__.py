"""``python -m tl_research.results merge | index | paired | rate | calibrated | render``: organise and read the results
folder.

    merge [FOLDER] [--out DIR] [--keep]   one file per table row group (runs unchanged, sources in merged_from)
    index [FOLDER] [--check]              regenerate the index in FOLDER/README.md (--check: only compare)
    paired FILE A B [--confidence C]      A - B per shared seed of one results file, with its t interval
    rate K N [--confidence C]             the Clopper-Pearson interval for K successes in N trials
    calibrated [FOLDER]                   every gathered calibrated recall file's table (notebook 06b's)
    render [--check]                      rewrite course_reports.json, what notebooks 06b and 07 show (--check: compare)

FOLDER defaults to the results folder (:func:`results_dir`: $TL_MINIMAL_RESULTS or the clone's data/results).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import calibrated_table, render
from .files import results_dir
from .index import update
from .intervals import clopper_pearson, paired_difference
from .merge import merge_folder
from .stats import finished


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
    pd = sub.add_parser("paired", help="A - B per shared seed of one results file, with a t interval")
    pd.add_argument("file")
    pd.add_argument("a")
    pd.add_argument("b")
    rt = sub.add_parser("rate", help="Clopper-Pearson interval for K successes in N trials")
    rt.add_argument("k", type=int)
    rt.add_argument("n", type=int)
    for s in (pd, rt):
        s.add_argument("--confidence", type=float, default=0.95)
    c = sub.add_parser("calibrated", help="the tables of the gathered calibrated recall files")
    c.add_argument("folder", nargs="?", help="the folder (default: the results folder)")
    r = sub.add_parser("render", help="rewrite course_reports.json from the results files (notebooks 06b, 07)")
    r.add_argument("--check", action="store_true", help="only say whether the file is current (exit 1 if not)")
    return p


# the gathered calibrated recall files (studies/calibrated.py), table 4's task first
CALIBRATED = ("recall_calibrated.json", "recall_calibrated_decay4.json", "mqar_calibrated_pairs8.json",
              "mqar_calibrated_pairs16.json", calibrated_table.FAMILY_FILE)


def values_by_seed(path, variant: str) -> dict:
    """{seed: value} of one variant's finished runs in a result file (runs[] with variant, seed, value)."""
    found = finished(json.loads(Path(path).read_text(encoding="utf-8"))["runs"]).get(variant)
    if not found:
        raise ValueError(f"{path}: no finished run of {variant!r}")
    return found


def paired(file: str, a: str, b: str, confidence: float) -> str:
    """One line: the mean of A - B over the seeds both have, per seed, t, p and the interval."""
    d = paired_difference(values_by_seed(file, a), values_by_seed(file, b), confidence)
    per_seed = ", ".join(f"{s}: {x:+.4f}" for s, x in zip(d.seeds, d.differences, strict=True))
    return (f"{file}: {a} - {b}: mean difference {d.mean:+.4f} (per seed {per_seed}); sd {d.sd:.4f}, "
            f"t = {d.t:.2f} with {d.dof} dof, p = {d.p_value:.3f}; {100 * confidence:.0f}% interval "
            f"[{d.low:+.4f}, {d.high:+.4f}]")


def calibrated(folder) -> str:
    """Every gathered calibrated file of ``folder`` as a Markdown section (or a line saying it is not there)."""
    out = []
    for name in CALIBRATED:
        if (Path(folder) / name).exists():
            out.append(f"## {name} ({calibrated_table.budget(name, folder)})\n\n"
                       f"{calibrated_table.calibrated_markdown(name, folder)}\n")
        else:
            out.append(f"## {name}: not gathered yet (bash data/results/run_calibrated.sh gather)\n")
    return "\n".join(out)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.cmd == "paired":
            print(paired(args.file, args.a, args.b, args.confidence))
            return 0
        if args.cmd == "rate":
            lo, hi = clopper_pearson(args.k, args.n, args.confidence)
            print(f"{args.k}/{args.n} = {args.k / args.n:.4f}; {100 * args.confidence:.0f}% Clopper-Pearson "
                  f"[{lo:.4f}, {hi:.4f}]")
            return 0
        if args.cmd == "render":
            current = render.write(check=args.check)
            print(("reports are current" if current else "reports are out of date") if args.check
                  else "reports written to course_reports.json")
            return 0 if current or not args.check else 1
        folder = args.folder or results_dir()
        if args.cmd == "calibrated":
            print(calibrated(folder))
            return 0
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
