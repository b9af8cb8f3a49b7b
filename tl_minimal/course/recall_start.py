"""The gate-start study's and the ladder's recall runs (notebooks 06a, 06b, 07), read from the committed
files ``recall_gate_start.json`` (rows: variant, gam_bias) and ``recall_ladder.json`` (rows: rung, change,
variant). Each row has ``values`` (accuracy per seed), ``mean``, ``recall`` (seeds at >= 95%) and
``recall_interval`` (Clopper-Pearson 95% of that rate).
"""

from __future__ import annotations

import json
import math

from .files import results_dir


def _rows(name: str) -> list[dict]:
    return json.loads((results_dir() / name).read_text(encoding="utf-8"))["rows"]


def gate_start_rows(variants=None) -> list[dict]:
    """The gate-start study's rows (all, or only ``variants``, in the file's order)."""
    return [r for r in _rows("recall_gate_start.json") if variants is None or r["variant"] in variants]


def ladder_rows() -> list[dict]:
    """The ladder's rungs 0-7 and the reverse arm, in order."""
    return _rows("recall_ladder.json")


def gate_start(bias: float, gate_norm: float = 1.0) -> str:
    """The pair gate's value at initialization, exp(logsigmoid(bias) / gate_norm) (a sigmoid when gate_norm
    is 1, GLA's gate when it is 16), and its half-life in tokens."""
    gamma = (1 / (1 + math.exp(-bias))) ** (1 / gate_norm)
    half_life = math.log(0.5) / math.log(gamma)
    return f"{gamma:.3f} (half-life {half_life:.0f} token{'s' * (round(half_life) != 1)})"


def rate(row: dict) -> str:
    """'k of n seeds (95% interval lo-hi%)': the seeds that recall (>= 95%), with Clopper-Pearson's interval."""
    if not row["values"]:
        return "not run yet"
    lo, hi = row["recall_interval"]
    n = len(row["values"])
    return f"{row['recall']} of {n} seed{'s' * (n != 1)} (95% interval {100 * lo:.0f}-{100 * hi:.0f}%)"


def markdown(rows: list[dict], keys=("variant", "gam_bias")) -> str:
    """A Markdown table: the row's keys, the lr, the accuracy per seed and their mean, and the rate that recall."""
    head = [*keys, "lr", "accuracy per seed", "mean", "seeds that recall"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        per_seed = " / ".join(f"{100 * v:.1f}" for v in r["values"]) or "-"
        mean = f"{100 * r['mean']:.1f}%" if r["mean"] is not None else "-"
        lr = f"{r['lr']:g}" if r.get("lr") else "-"
        cells = [f"`{r[k]}`" if k == "variant" else str(r[k]) for k in keys]
        lines.append("| " + " | ".join([*cells, lr, per_seed, mean, rate(r)]) + " |")
    return "\n".join(lines)
