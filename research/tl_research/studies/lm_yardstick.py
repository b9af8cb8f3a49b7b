"""Issue 50, item 6: a fair language-model yardstick for "the compressed latent helps".

The course's earlier language-model comparison set the triple-latent models against a Transformer with learned
positions, a constant lr and no warm-up. Here every row gets the same recipe: byte-level WikiText-2, 2,000
steps x 16 sequences of 128 bytes, warm-up 200 + cosine, the lr of {1e-3, 3e-3} that is better on seed 0, then
seeds 0-4 at it (``data/results/run_gate_start.sh lm_yardstick``, files ``issue50/lm2000_cosine_{v}_lr{lr}.json``):

    transformer         learned positions
    transformer_rope    rotary positions
    triple_latent       the paper's gate start (gamma = sigmoid(0))
    ladder_1            triple_latent with the working start (gam_bias 4), the start that recalls

    python -m tl_research.studies.lm_yardstick    # writes data/results/lm_yardstick.json

Each comparison is the paired difference of bits per byte over the seeds both rows have (a - b < 0: a is
lower, i.e. better), with its t interval at 95%.
"""

from __future__ import annotations

import json
from pathlib import Path

from tl_research.results.intervals import paired_difference

from ..suite import write_atomic
from .calibrated import sweep_files

RESULTS = Path("data/results")
FOLDER = RESULTS / "issue50"
ROWS = ("transformer", "transformer_rope", "triple_latent", "ladder_1")
COMPARISONS = (("triple_latent", "transformer"), ("triple_latent", "transformer_rope"),
               ("ladder_1", "triple_latent"), ("ladder_1", "transformer_rope"), ("transformer_rope", "transformer"))
PROTOCOL = ("byte-level WikiText-2 (the offline head of train, the full validation split), 2,000 steps x 16 x 128, "
            "warm-up 200 + cosine, dropout 0.1, AdamW weight decay 0.05; lr of {1e-3, 3e-3} chosen on seed 0 "
            "(lower bits per byte), then seeds 0-4 at it")


def row(variant: str, folder: Path = FOLDER) -> dict:
    """One variant's seeds at the lr its seed 0 chose: {"lr", "seed0_by_lr", "by_seed", "mean"}."""
    paths = sweep_files(folder, f"lm2000_cosine_{variant}_lr", missing_ok=True)
    if not paths:
        return {"variant": variant, "note": "not run yet", "by_seed": {}}
    files = {lr: json.loads(p.read_text(encoding="utf-8"))["runs"] for lr, p in paths.items()}
    seed0 = {lr: next((r["value"] for r in runs if r["seed"] == 0 and r.get("value") is not None), None)
             for lr, runs in files.items()}
    ready = {lr: v for lr, v in seed0.items() if v is not None}
    if not ready:
        return {"variant": variant, "note": "seed 0 not finished", "by_seed": {}}
    lr = min(sorted(ready, key=float), key=lambda k: ready[k])  # lower is better; ties keep the smaller lr
    by_seed = {r["seed"]: r["value"] for r in files[lr] if r.get("value") is not None}
    return {"variant": variant, "lr": float(lr), "seed0_by_lr": seed0, "by_seed": by_seed,
            "mean": sum(by_seed.values()) / len(by_seed), "sources": sorted(p.name for p in paths.values())}


def gather(folder: Path = FOLDER, results: Path = RESULTS) -> dict:
    rows = {v: row(v, folder) for v in ROWS}
    comparisons = []
    for a, b in COMPARISONS:
        shared = sorted(set(rows[a]["by_seed"]) & set(rows[b]["by_seed"]))
        if len(shared) < 2:
            comparisons.append({"a": a, "b": b, "seeds": shared, "note": "fewer than 2 shared seeds"})
            continue
        d = paired_difference(rows[a]["by_seed"], rows[b]["by_seed"])
        comparisons.append({"a": a, "b": b, "seeds": list(d.seeds), "mean": d.mean, "low": d.low,
                            "high": d.high, "p_value": d.p_value})
    out = {"study": "a fair language-model yardstick (issue 50, item 6)", "metric": "bits per byte (lower is better)",
           "protocol": {"description": PROTOCOL},
           "rows": [{**r, "by_seed": {str(s): v for s, v in sorted(r["by_seed"].items())}} for r in rows.values()],
           "comparisons": comparisons}
    write_atomic(out, results / "lm_yardstick.json")
    return out


def main() -> None:
    out = gather()
    for r in out["rows"]:
        print(f"{r['variant']:<17}", r.get("lr"), r.get("note") or f"{r['mean']:.3f} over seeds {list(r['by_seed'])}")
    for c in out["comparisons"]:
        if "mean" in c:
            print(f"{c['a']} - {c['b']}: {c['mean']:+.3f} BPB [{c['low']:+.3f}, {c['high']:+.3f}], seeds {c['seeds']}")
        else:
            print(f"{c['a']} - {c['b']}: {c['note']}")


if __name__ == "__main__":
    main()
