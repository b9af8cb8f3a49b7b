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

    python -m tl_minimal.experiments.studies.calibrated recall_calibrated_lr
    python -m tl_minimal.experiments.studies.calibrated recall_calibrated_lr --suffix _decay4
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from ..suite import write_atomic

LR_CHOICE = "per variant, the lr of the sweep with the better seed-0 accuracy (a tie: the smaller lr)"


def sweep_files(folder: Path, prefix: str, suffix: str = "") -> dict[str, Path]:
    """{lr text: path} of ``{prefix}{lr}{suffix}.json`` in ``folder`` (e.g. "1e-3" -> ..._lr1e-3.json)."""
    lr = r"(\d+(?:\.\d+)?e-?\d+|\d*\.\d+)"  # 1e-3, 3e-3, 0.001
    pattern = re.compile(re.escape(prefix) + lr + re.escape(suffix) + r"\.json")
    files = {m[1]: path for path in sorted(folder.glob("*.json")) if (m := pattern.fullmatch(path.name))}
    if not files:
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


def gather(folder, prefix: str, suffix: str = "", out=None) -> dict:
    """Write (and return) the gathered file; ``out`` defaults to ``{prefix minus "_lr"}{suffix}.json``."""
    folder = Path(folder)
    paths = sweep_files(folder, prefix, suffix)
    files = {lr: json.loads(path.read_text(encoding="utf-8")) for lr, path in paths.items()}
    tasks = {data["task"] for data in files.values()}
    if len(tasks) != 1:
        raise ValueError(f"{prefix}*{suffix}.json hold different tasks: {sorted(tasks)}")
    variants = list(dict.fromkeys(r["variant"] for data in files.values() for r in data["runs"]))
    chosen, runs, sweep_runs = {}, [], []
    for variant in variants:
        lr = best_lr(files, variant)
        if lr is None:
            continue  # its sweep is not finished: left out until it is
        chosen[variant] = float(lr)
        for lr_text, data in files.items():
            for r in data["runs"]:
                if r["variant"] == variant:
                    tagged = {**r, "lr": float(lr_text), "source": paths[lr_text].name}
                    (runs if lr_text == lr else sweep_runs).append(tagged)
    first = files[min(files, key=float)]
    protocol = {**first["protocol"], "lr": LR_CHOICE, "lr_sweep": sorted(float(lr) for lr in files),
                "lr_by_variant": chosen}
    result = {"task": first["task"], "study": "calibrated recall (issue 32), gathered from the lr sweep",
              "protocol": protocol, "sources": [paths[lr].name for lr in sorted(files, key=float)],
              "runs": runs, "sweep_runs": sweep_runs}
    target = Path(out) if out else folder / f"{prefix.removesuffix('_lr')}{suffix}.json"
    write_atomic(result, target)
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prefix", help="file name up to the lr, e.g. recall_calibrated_lr")
    parser.add_argument("--suffix", default="", help="after the lr, e.g. _decay4")
    parser.add_argument("--folder", default="data/results/issue32")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    result = gather(args.folder, args.prefix, args.suffix, args.out)
    print(f"{len(result['runs'])} runs at the chosen lr, {len(result['sweep_runs'])} sweep runs; "
          f"lr by variant {result['protocol']['lr_by_variant']}")


if __name__ == "__main__":
    main()
