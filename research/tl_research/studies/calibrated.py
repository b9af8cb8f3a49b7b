"""The calibrated recall protocol's lr sweep, gathered: each variant's runs at the lr best on its seed 0.

``data/results/run_calibrated.sh`` (issue 32) trains every variant at two learning rates on seed 0 and
its other seeds at the better one; each lr is its own resumable suite file (one protocol per file):

    recall_calibrated_lr1e-3.json, recall_calibrated_lr3e-3.json     -> recall_calibrated.json
    recall_calibrated_lr1e-3_decay4.json, ..._lr3e-3_decay4.json     -> recall_calibrated_decay4.json
    mqar_calibrated_pairs8_lr1e-3.json, ...                          -> mqar_calibrated_pairs8.json

:func:`gather` writes the right-hand file: the run format of the suite files (``task``, ``protocol``,
``runs``), its protocol that of the sweep with ``lr`` replaced by the choice made, each run tagged with
its ``lr``, and the seed-0 runs at the lr not chosen kept apart in ``sweep_runs``. The rule (the same
as the queue's ``best_lr``): the higher seed-0 accuracy; a tie goes to the smaller lr.

    python -m tl_research.studies.calibrated recall_calibrated_lr
    python -m tl_research.studies.calibrated recall_calibrated_lr --suffix _decay4
    python -m tl_research.studies.calibrated recall_calibrated_lr --best-lr transformer  # prints 1e-3
    python -m tl_research.studies.calibrated recall_calibrated_lr --variants transformer gla \\
        --out recall_calibrated_family.json                   # only these rows (another table's file)
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from ..suite import write_atomic

LR_CHOICE = "per variant, the lr of the sweep with the better seed-0 accuracy (a tie: the smaller lr)"
UNSWEPT = "run at one lr chosen on another task (run_calibrated.sh mqar_rows: its 4-pair sweep's), not swept here"


def sweep_files(folder: Path, prefix: str, suffix: str = "", missing_ok: bool = False) -> dict[str, Path]:
    """{lr text: path} of ``{prefix}{lr}{suffix}.json`` in ``folder`` (e.g. "1e-3" -> ..._lr1e-3.json);
    none is an error unless ``missing_ok`` (then {})."""
    lr = r"(\d+(?:\.\d+)?e-?\d+|\d*\.\d+)"  # 1e-3, 3e-3, 0.001
    pattern = re.compile(re.escape(prefix) + lr + re.escape(suffix) + r"\.json")
    files = {m[1]: path for path in sorted(folder.glob("*.json")) if (m := pattern.fullmatch(path.name))}
    if not files and not missing_ok:
        raise FileNotFoundError(f"no {prefix}<lr>{suffix}.json in {folder}")
    return files


def best_lr(files: dict[str, dict], variant: str) -> str | None:
    """The lr text whose file has the better seed-0 value of ``variant``; None while an lr lacks seed 0."""
    scores = {}
    for lr, data in files.items():
        values = [r["value"] or 0.0 for r in data["runs"] if r["variant"] == variant and r["seed"] == 0]
        if not values:
            return None
        scores[lr] = max(values)
    return max(sorted(scores, key=float), key=lambda lr: scores[lr])  # max keeps the first (smaller) of ties


def chosen_lr(folder, prefix: str, variant: str, suffix: str = "") -> str:
    """The lr text :func:`best_lr` picks from the sweep files on disk; an error while a file lacks seed 0
    (a queue must not go on to seeds 1-4 at a guess)."""
    paths = sweep_files(Path(folder), prefix, suffix)
    files = {lr: json.loads(path.read_text(encoding="utf-8")) for lr, path in paths.items()}
    lr = best_lr(files, variant)
    if lr is None:
        raise ValueError(f"{variant} lacks seed 0 in one of {sorted(p.name for p in paths.values())}")
    return lr


def one_lr(files: dict[str, dict], variant: str) -> str | None:
    """The lr text of the only file holding seed 0 of ``variant`` (a variant run at one lr, not swept); None
    when no file or several do (then it is a sweep, for :func:`best_lr`)."""
    held = [lr for lr, data in files.items() if any(r["variant"] == variant and r["seed"] == 0 for r in data["runs"])]
    return held[0] if len(held) == 1 else None


def gather(folder, prefix, suffix: str = "", out=None, variants=None, unswept=()) -> dict:
    """Write (and return) the gathered file; ``out`` defaults to ``{prefix minus "_lr"}{suffix}.json``;
    ``variants``: only these (the sweep files also hold other tables' rows), all when None.

    ``prefix`` may be a list: sweeps whose files differ in a setting some variants need (the gated
    hybrids' query alignment in Zoology's form) are gathered into one file, each variant from its own.
    ``unswept``: variants run at one lr chosen elsewhere (``UNSWEPT``); each is gathered at the one lr it has,
    and the protocol lists them in ``lr_unswept``.
    """
    folder = Path(folder)
    prefixes = [prefix] if isinstance(prefix, str) else list(prefix)
    chosen, runs, sweep_runs, sources, first, given = {}, [], [], [], None, {}
    found = [files for one in prefixes if (files := sweep_files(folder, one, suffix, missing_ok=True))]
    if not found:
        raise FileNotFoundError(f"no {' or '.join(prefixes)}<lr>{suffix}.json in {folder}")
    for paths in found:  # a sweep not started yet is left out until it is
        files = {lr: json.loads(path.read_text(encoding="utf-8")) for lr, path in paths.items()}
        tasks = {data["task"] for data in files.values()} | ({first["task"]} if first else set())
        if len(tasks) != 1:
            raise ValueError(f"{', '.join(prefixes)}*{suffix}.json hold different tasks: {sorted(tasks)}")
        first = first or files[min(files, key=float)]
        sources += [paths[lr].name for lr in sorted(files, key=float)]
        for variant in dict.fromkeys(r["variant"] for data in files.values() for r in data["runs"]):
            if variants is not None and variant not in variants:
                continue
            lr = best_lr(files, variant)
            at_one_lr = lr is None and variant in unswept
            if at_one_lr:
                lr = one_lr(files, variant)
            if lr is None or variant in chosen:
                continue  # its sweep is not finished (left out until it is), or an earlier prefix has it
            chosen[variant] = float(lr)
            if at_one_lr:
                given[variant] = float(lr)
            for lr_text, data in files.items():
                for r in data["runs"]:
                    if r["variant"] == variant:
                        tagged = {**r, "lr": float(lr_text), "source": paths[lr_text].name}
                        (runs if lr_text == lr else sweep_runs).append(tagged)
    if not runs:
        raise ValueError(f"{' and '.join(prefixes)}*{suffix}.json: no variant has seed 0 at every lr yet, "
                         "nothing gathered")
    protocol = {**first["protocol"], "lr": LR_CHOICE, "lr_sweep": sorted({r["lr"] for r in runs + sweep_runs}),
                "lr_by_variant": chosen, **({"lr_unswept": {"variants": given, "note": UNSWEPT}} if given else {})}
    result = {"task": first["task"], "study": "calibrated recall (issue 32), gathered from the lr sweep",
              "protocol": protocol, "sources": sources, "runs": runs, "sweep_runs": sweep_runs}
    target = Path(out) if out else folder / f"{prefixes[0].removesuffix('_lr')}{suffix}.json"
    write_atomic(result, target)
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prefix", nargs="+",
                        help="file names up to the lr, e.g. recall_calibrated_lr (several: one file)")
    parser.add_argument("--suffix", default="", help="after the lr, e.g. _decay4")
    parser.add_argument("--folder", default="data/results/issue32")
    parser.add_argument("--out", default=None)
    parser.add_argument("--variants", nargs="+", default=None, help="gather only these (default: every variant)")
    parser.add_argument("--unswept", nargs="+", default=(), metavar="VARIANT",
                        help="variants run at one lr chosen on another task: gathered at the one lr they have")
    parser.add_argument("--best-lr", metavar="VARIANT", default=None,
                        help="print the lr this variant's seed 0 chose (the queue's rule) and write nothing")
    args = parser.parse_args(argv)
    try:  # a missing or unfinished sweep: one line that says so (a queue stops on it, set -e), no traceback
        if args.best_lr:
            print(chosen_lr(args.folder, args.prefix[0], args.best_lr, args.suffix))
            return
        result = gather(args.folder, args.prefix, args.suffix, args.out, args.variants, args.unswept)
    except (FileNotFoundError, ValueError) as error:
        raise SystemExit(f"{'best-lr' if args.best_lr else 'gather'}: {error}") from None
    print(f"{len(result['runs'])} runs at the chosen lr, {len(result['sweep_runs'])} sweep runs; "
          f"lr by variant {result['protocol']['lr_by_variant']}")


if __name__ == "__main__":
    main()
