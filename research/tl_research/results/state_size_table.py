"""Recall against state size (notebook 07): ``data/results/recall_state_size.json`` as a table, one row
per (task, pair count, variant, S) with its measured state bytes and one accuracy per seed. The research
study ``python -m tl_research.studies.state_size gather`` writes the file."""

from __future__ import annotations

from . import stats


def points(result: dict) -> list[dict]:
    """The picture's points: runs grouped by (task, pair count, variant, S), in the order they were gathered,
    each with its state bytes, seeds and accuracies (one per seed) and their mean."""
    groups: dict[tuple, dict] = {}
    for r in result["runs"]:
        key = (r.get("task", "mqar"), r["n_pairs"], r["variant"], r["state_dim"])
        point = groups.setdefault(key, {"task": key[0], "n_pairs": key[1], "variant": key[2], "state_dim": key[3],
                                        "state_bytes": r["state_bytes"], "seeds": [], "accuracies": []})
        if r["state_bytes"] != point["state_bytes"]:
            raise ValueError(f"{key}: runs keep {point['state_bytes']} and {r['state_bytes']} bytes; "
                             "expected one state size per point")
        if r["seed"] in point["seeds"]:  # e.g. a state-size file repeating a gathered table's run
            raise ValueError(f"{key}: seed {r['seed']} twice ({r.get('source')}); expected one run per seed")
        point["seeds"].append(r["seed"])
        point["accuracies"].append(r["accuracy"])
    for point in groups.values():
        point["mean"] = sum(point["accuracies"]) / len(point["accuracies"])
    return sorted(groups.values(), key=lambda q: (q["task"] != "recall", q["n_pairs"], q["state_bytes"]))


def markdown(result: dict) -> str:
    """The points as a Markdown table, smallest state first within each task and pair count."""
    rows = []
    for q in points(result):
        task = f"{q['n_pairs']}-pair recall" if q["task"] == "recall" else f"MQAR, {q['n_pairs']} pairs"
        per_seed = " / ".join(f"{100 * a:.1f}" for a in q["accuracies"])
        rows.append([task, f"`{q['variant']}`", str(q["state_dim"] or "-"), f"{q['state_bytes']:,}",
                     str(len(q["seeds"])), f"{100 * q['mean']:.1f}%", per_seed])
    return stats.markdown(["task", "variant", "S", "state bytes", "seeds", "mean", "per seed"], rows)
