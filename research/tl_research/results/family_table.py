"""The family's language-model table (notebook 06b): each variant's BPB and its paired differences
against two yardsticks, ``triple_latent`` and the Transformer, from ``data/results/issue33/lm_family.json``.

Glossary (statistics -> code name)
    a_i, b_i        _finished(...)          BPB of two variants with the same seed i (shared batches)
    d_i = a_i - b_i PairedDifference        one per shared seed (positive: the variant is worse)
    row             FamilyRow               a variant's seeds, BPB per seed, mean, sd, parameters, and
                                            {yardstick: PairedDifference} (None against itself)
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .files import load, results_dir
from .intervals import PairedDifference, paired_difference
from .stats import finished, markdown

FAMILY_FILE = Path("issue33") / "lm_family.json"
FAMILY_2000_FILE = Path("issue33") / "lm_family_2000steps.json"  # the same protocol at 2,000 steps (family_2000)
# the yardsticks first, then the triple-latent layer's ablations, its relatives, and the hybrid's convolution with
# its memory (triple_hybrid) and without (conv_only): the pair that isolates the memory
FAMILY_ORDER = ("transformer", "transformer_rope", "triple_latent", "triple_key_shift", "triple_key_current", "gla",
                "deltanet", "h3", "triple_hybrid", "conv_only")
YARDSTICKS = ("triple_latent", "transformer")


@dataclass(frozen=True)
class FamilyRow:
    """One variant of the family table."""

    variant: str
    seeds: tuple
    values: tuple  # BPB per seed, in seed order
    mean: float
    sd: float
    params: int
    vs: dict  # {yardstick: PairedDifference, or None for the yardstick itself}


def rows_file(path=None) -> Path:
    """The family's results file: ``path`` (one that does not exist as given, such as ``FAMILY_2000_FILE``, is
    read under ``results_dir()``), or the committed 80-step one."""
    if path is None:
        return results_dir() / FAMILY_FILE
    path = Path(path)
    return path if path.is_absolute() or path.exists() else results_dir() / path


def budget(path=None) -> tuple[int, tuple]:
    """(training steps, seeds) of the file's protocol: the budget every verdict from it names."""
    protocol = load(rows_file(path))["protocol"]
    return protocol["steps"], tuple(protocol["seeds"])


def _finished(path, variants) -> dict:
    """{variant: {seed: BPB}} of the finished runs of ``variants`` that have one, in that order; one read."""
    found = finished(load(rows_file(path))["runs"])
    return {v: found[v] for v in variants if v in found}


def seeds_by_variant(path=None, variants=FAMILY_ORDER) -> dict:
    """{variant: (seeds with a finished run)} for the variants of ``variants`` that have one, in that order: a
    file still filling (the 2,000-step one runs seed by seed) has rows with fewer seeds than others."""
    return {v: tuple(sorted(values)) for v, values in _finished(path, variants).items()}


def seed_means(path=None, variants=FAMILY_ORDER) -> dict:
    """{variant: (number of seeds, mean BPB over them)}, as ``seeds_by_variant`` finds them: what a file still
    filling holds for the rows its paired table leaves out."""
    return {v: (len(values), statistics.fmean(values.values())) for v, values in _finished(path, variants).items()}


def paired_variants(path=None, variants=FAMILY_ORDER) -> tuple:
    """The variants of ``variants`` with the file's largest seed set (at least 2 seeds): the rows a paired table
    can hold with one seed count. The others are named with their seeds beside it, not mixed into it."""
    found = seeds_by_variant(path, variants)
    most = max(found.values(), key=len, default=())
    if len(most) < 2:
        raise ValueError(f"{rows_file(path)}: no variant has 2 finished seeds yet; a paired table needs them")
    return tuple(v for v, seeds in found.items() if set(most) <= set(seeds))


def family_rows(path=None, variants=FAMILY_ORDER, yardsticks=YARDSTICKS) -> list[FamilyRow]:
    """One row per variant, in ``variants`` order, each with paired 95% intervals against ``yardsticks``."""
    path = rows_file(path)
    runs = load(path)["runs"]
    by_seed = _finished(path, (*variants, *yardsticks))
    missing = [v for v in (*variants, *yardsticks) if v not in by_seed]
    if missing:
        raise ValueError(f"{path}: no finished run of {missing}")
    rows = []
    for v in variants:
        values = [by_seed[v][s] for s in sorted(by_seed[v])]
        params = {r["params"] for r in runs if r["variant"] == v}
        if len(params) != 1:
            raise ValueError(f"{path}: {v} has runs with different parameter counts {sorted(params)}")
        vs: dict[str, PairedDifference | None] = {
            y: None if y == v else paired_difference(by_seed[v], by_seed[y]) for y in yardsticks}
        rows.append(FamilyRow(v, tuple(sorted(by_seed[v])), tuple(values), statistics.fmean(values),
                              statistics.stdev(values) if len(values) > 1 else 0.0, params.pop(), vs))
    return rows


def family_markdown(rows: list[FamilyRow]) -> str:
    """Variant, parameters, mean BPB +- sd, and each paired difference with its 95% interval."""
    yardsticks = list(rows[0].vs)
    head = ["variant", "params", f"BPB (mean ± sd, {len(rows[0].seeds)} seeds)"]
    head += [f"minus {y} [95% interval]" for y in yardsticks]
    lines = []
    for r in rows:
        cells = [f"`{r.variant}`", f"{r.params:,}", f"{r.mean:.3f} ± {r.sd:.3f}"]
        for y in yardsticks:
            d = r.vs[y]
            cells.append("-" if d is None else f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]")
        lines.append(cells)
    return markdown(head, lines)
