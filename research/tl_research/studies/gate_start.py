"""Issue 50: the pair gate's start, the ladder from triple_latent to gla, and the gradient that reaches the pairs.

``data/results/run_gate_start.sh`` trains on the calibrated 4-pair recall task (run_calibrated.sh's protocol),
one resumable file per row and lr in data/results/issue50/:

    recall4_{variant}_gam{bias}_lr{lr}.json    the gate-start study: --set gam_bias=bias (lambda's bias 0)
    recall4_{rung}_lr{lr}.json                  the ladder's rungs 3-6 and the reverse arm (presets of ``ladder``)

This module gathers them with issue 32's rows at the paper's start (gam_bias 0: recall_calibrated.json and
recall_calibrated_family.json, each variant at its chosen lr) and measures the gradient at initialization:

    python -m tl_research.studies.gate_start gather      # recall_gate_start.json, recall_ladder.json
    python -m tl_research.studies.gate_start tables      # RECALL_STUDY.md section 13's tables from them
    python -m tl_research.studies.gate_start gradient    # gradient_reach.json (about a minute)
    python -m tl_research.studies.gate_start capacity    # recall_capacity.json (planned points, bytes)
    python -m tl_research.studies.gate_start best-lr triple_latent 4   # the queue's lr rule

A row: its seeds' accuracies at the lr best on seed 0 (ties, within one point: the lr run on more seeds, then
the smaller; seed 0 cannot tell tied lrs apart, and the one with more seeds is the better-measured row), their
mean, and the seeds that recall (accuracy >= WIN, 0.95) with the Clopper-Pearson 95% interval of that rate.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tl_minimal.course.gradient_reach import measure
from tl_minimal.course.recall_start import markdown
from tl_minimal.data.recall import layout_for
from tl_minimal.ladder import CHANGES
from tl_minimal.registry import build_model
from tl_minimal.views.plots_capacity import recall_vs_state_bytes
from tl_research.results.intervals import clopper_pearson

from ..suite import write_atomic
from .calibrated import sweep_files
from .state_size import state_bytes

WIN = 0.95
# seed 0's accuracies closer than this are a tie: one seed's score over 8,192 questions has a binomial standard
# deviation of 0.4 points at chance (1/8), so 12.2% against 12.6% does not choose an lr
TIE = 0.01
RESULTS = Path("data/results")
FOLDER = RESULTS / "issue50"
# the gate study's rows (variant, gamma's start); gam_bias 0 is the paper's start (issue 32's files)
GATE_VARIANTS = ("triple_latent", "triple_key_shift", "triple_slot", "triple_hybrid", "triple_key_current",
                 "gated_hybrid_paper")
GATE_BIASES = (0.0, 2.0, 4.0)
PAPER_START_FILES = ("recall_calibrated.json", "recall_calibrated_family.json")
MQAR8_PAPER_START = "mqar_calibrated_pairs8.json"  # section 12's MQAR with 8 pairs: the rows at the paper's start
# the ladder: (rung, what changed, where its runs are); rungs 0-2 and 7 are rows of other studies
LADDER = [(0, "the triple-latent layer (the paper's start)", ("paper_start", "triple_latent")),
          (1, CHANGES[0][0], ("gate", "triple_latent", 4.0)),
          (2, CHANGES[1][0], ("gate", "triple_key_current", 4.0)),
          *[(i, CHANGES[i - 1][0], ("ladder", f"ladder_{i}")) for i in range(3, 7)],
          (7, CHANGES[6][0] + ": gla", ("paper_start", "gla")),
          ("reverse", "gla with its gate normaliser 1 (gamma starts at 0.5)", ("ladder", "gla_short_start"))]
# the rows of the gradient figure: (label, variant, settings)
REACH_ROWS = [("transformer", "transformer", {}), ("transformer_rope", "transformer_rope", {}),
              *[(f"triple_latent, gam_bias {b:g}", "triple_latent", {"gam_bias": b}) for b in GATE_BIASES],
              ("triple_key_shift", "triple_key_shift", {}), ("triple_slot", "triple_slot", {}),
              ("triple_key_current, gam_bias 4", "triple_key_current", {"gam_bias": 4.0}),
              ("triple_latent, gam_bias 4, init fan_in_all", "triple_latent", {"gam_bias": 4.0, "init": "fan_in_all"}),
              ("gla, init fan_in_all", "gla", {"init": "fan_in_all"}),
              ("gated_hybrid_paper", "gated_hybrid_paper", {}), ("gla", "gla", {}), ("h3", "h3", {}),
              ("deltanet", "deltanet", {}), ("gla_short_start", "gla_short_start", {}),
              *[(f"ladder_{i}", f"ladder_{i}", {}) for i in range(3, 7)]]


def _row(runs: list[dict], **keys) -> dict:
    values = [r["value"] for r in sorted(runs, key=lambda r: r["seed"]) if r.get("value") is not None]
    wins = sum(v >= WIN for v in values)
    lo, hi = clopper_pearson(wins, len(values)) if values else (None, None)
    return {**keys, "seeds": sorted(r["seed"] for r in runs if r.get("value") is not None), "values": values,
            "mean": sum(values) / len(values) if values else None, "recall": wins, "recall_interval": [lo, hi]}


def _chosen(files: dict[str, dict], seed0: dict, variant: str) -> str | None:
    """The lr text with the best seed 0; among lrs tied on it (within ``TIE``), the one with more seeds, then
    the smaller."""
    ready = {lr: v for lr, v in seed0.items() if v is not None}
    if not ready:
        return None
    top = max(ready.values())
    tied = [lr for lr, v in ready.items() if v >= top - TIE]
    seeds = {lr: sum(r["variant"] == variant and r.get("value") is not None for r in files[lr]["runs"]) for lr in tied}
    return min(tied, key=lambda lr: (-seeds[lr], float(lr)))


def _swept(prefix: str, variant: str, folder: Path = FOLDER) -> dict | None:
    """The row of one sweep (files ``{prefix}{lr}.json``): its runs at the chosen lr and every lr's seed 0."""
    paths = sweep_files(folder, prefix, missing_ok=True)
    if not paths:
        return None
    files = {lr: json.loads(p.read_text(encoding="utf-8")) for lr, p in paths.items()}
    seed0 = {lr: next((r["value"] for r in d["runs"] if r["variant"] == variant and r["seed"] == 0), None)
             for lr, d in files.items()}
    lr = _chosen(files, seed0, variant)
    runs = [r for r in files[lr]["runs"] if r["variant"] == variant] if lr else []
    return {**_row(runs, lr=float(lr) if lr else None), "lr_text": lr, "seed0_by_lr": seed0,
            "sources": sorted(p.name for p in paths.values())}


def _paper_runs(results: Path) -> dict[str, list[dict]]:
    """{file name: runs} of issue 32's gathered files, read once for every row at the paper's start."""
    return {name: json.loads((results / name).read_text(encoding="utf-8"))["runs"] for name in PAPER_START_FILES}


def _paper_start(variant: str, paper: dict[str, list[dict]]) -> dict | None:
    for name, file_runs in paper.items():
        runs = [r for r in file_runs if r["variant"] == variant]
        if runs:
            return {**_row(runs, lr=runs[0]["lr"]), "sources": [name]}
    return None


NOT_RUN = {"seeds": [], "values": [], "mean": None, "note": "not run yet"}


def _mqar8_paper_runs(results: Path) -> dict[str, list[dict]]:
    """{file name: runs} of section 12's MQAR-8 file at the paper's start (its runs with no gate bias set), read
    once for every row; empty when the file is absent."""
    path = results / MQAR8_PAPER_START
    if not path.exists():
        return {}
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    return {path.name: [r for r in runs if not r["config"].get("gam_bias")]}


def _mqar8(kind: str, variant: str, bias: list, folder: Path, paper8: dict[str, list[dict]]) -> dict:
    """The same row on MQAR with 8 pairs at its calibrated budget (stage mqar_rows; the paper's start: section
    12's file, ``paper8``): files ``mqar8_{variant}[_gam{bias}]_lr{lr}.json``, the lr chosen as for recall."""
    if kind == "paper_start":
        return _paper_start(variant, paper8) or NOT_RUN
    tag = f"_gam{bias[0]:g}" if bias else ""
    return _swept(f"mqar8_{variant}{tag}_lr", variant, folder) or NOT_RUN


def gate_rows(folder: Path = FOLDER, results: Path = RESULTS) -> list[dict]:
    rows, paper, paper8 = [], _paper_runs(results), _mqar8_paper_runs(results)
    for variant in GATE_VARIANTS:
        for bias in GATE_BIASES:
            row = _swept(f"recall4_{variant}_gam{bias:g}_lr", variant, folder)
            if row is None and bias == 0:
                row = _paper_start(variant, paper)
            rows.append({"variant": variant, "gam_bias": bias, "lam_bias": 0.0, **(row or NOT_RUN),
                         "mqar8": _mqar8("gate", variant, [bias], folder, paper8) if bias else
                         _mqar8("paper_start", variant, [], folder, paper8)})
    return rows


def ladder_rows(folder: Path = FOLDER, results: Path = RESULTS) -> list[dict]:
    rows, paper, paper8 = [], _paper_runs(results), _mqar8_paper_runs(results)
    for rung, change, (kind, variant, *bias) in LADDER:
        if kind == "paper_start":
            row = _paper_start(variant, paper)
        elif kind == "gate":
            row = _swept(f"recall4_{variant}_gam{bias[0]:g}_lr", variant, folder)
        else:
            row = _swept(f"recall4_{variant}_lr", variant, folder)
        rows.append({"rung": rung, "change": change, "variant": variant, **(row or NOT_RUN),
                     "mqar8": _mqar8(kind, variant, bias, folder, paper8)})
    return rows


PROTOCOL = {"description": "calibrated 4-pair recall (run_calibrated.sh's protocol): MQAR in Zoology's form, "
            "4 pairs, 4 questions, 1,000 steps x 32 sequences of 128 tokens, warm-up 100 + cosine, dropout 0, "
            "init fan_in; lr swept on seed 0 over {1e-3, 3e-3, 1e-2} where seed0_by_lr lists them; a seed "
            "recalls at accuracy >= 0.95"}


def gather(folder: Path = FOLDER, results: Path = RESULTS) -> tuple[dict, dict]:
    gate = {"study": "the pair gate's start (issue 50, item 1)", "protocol": PROTOCOL,
            "rows": gate_rows(folder, results)}
    ladder = {"study": "the ladder from triple_latent to gla, one change per rung (issue 50, item 3)",
              "protocol": PROTOCOL, "rows": ladder_rows(folder, results)}
    write_atomic(gate, results / "recall_gate_start.json")
    write_atomic(ladder, results / "recall_ladder.json")
    return gate, ladder


SWEPT_LRS = ("1e-3", "3e-3", "1e-2")


def lr_sweep_markdown(rows: list[dict], keys: tuple) -> str:
    """Seed 0's accuracy at each lr of the sweep (rows that ran one: ``seed0_by_lr``), and the lr chosen."""
    head = [*keys, *(f"seed 0 at lr {lr}" for lr in SWEPT_LRS), "lr chosen"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if not r.get("seed0_by_lr"):
            continue
        runs = [r["seed0_by_lr"].get(lr) for lr in SWEPT_LRS]
        cells = [f"`{r[k]}`" if k == "variant" else str(r[k]) for k in keys]
        cells += [f"{100 * v:.1f}%" if v is not None else "-" for v in runs]
        lines.append("| " + " | ".join([*cells, r["lr_text"]]) + " |")
    return "\n".join(lines)


def tables(gate: dict, ladder: dict) -> dict[str, str]:
    """RECALL_STUDY.md section 13's tables from the gathered files (``gather``'s two dicts), by name."""
    def mqar8(rows, keys):
        return markdown([{**r["mqar8"], **{k: r[k] for k in keys}} for r in rows], keys)

    long_start = [r for r in gate["rows"] if r["gam_bias"] == 4]
    return {"gate": markdown(gate["rows"], ("variant", "gam_bias")),
            "gate lrs": lr_sweep_markdown(gate["rows"], ("variant", "gam_bias")),
            "gate mqar8": mqar8(long_start, ("variant", "gam_bias")),
            "ladder": markdown(ladder["rows"], ("rung", "change", "variant")),
            "ladder lrs": lr_sweep_markdown(ladder["rows"], ("rung", "variant")),
            "ladder mqar8": mqar8(ladder["rows"], ("rung", "variant"))}


def gradient(results: Path = RESULTS, seeds=(0, 1, 2)) -> dict:
    rows = [{"label": label, **measure(variant, seeds=seeds, **settings)} for label, variant, settings in REACH_ROWS]
    out = {"study": "the gradient that reaches the pairs at initialization (issue 50, item 2)",
           "measure": "tl_minimal.course.gradient_reach.measure: the calibrated task's batch of 16, float32, "
                      "mean over the seeds; pair_reach = mean |dL/de| at the pairs' tokens over that at the "
                      "labelled question tokens; reach[k] = the same k tokens before the last label",
           "rows": rows}
    write_atomic(out, results / "gradient_reach.json")
    return out


# item 5: capacity (run_gate_start.sh stage capacity): MQAR with 32 and 64 pairs among 256 key ids
CAPACITY_IDS = 256
CAPACITY_ROWS = [("transformer", {}), ("gated_hybrid_repaired", {}),
                 *[("triple_latent", {"gam_bias": 4, "state_dim": S}) for S in (8, 16, 32, 64)],
                 *[(v, {"n_heads": h}) for v in ("gla", "deltanet", "h3") for h in (4, 2)]]


def capacity(folder: Path = FOLDER, results: Path = RESULTS) -> dict:
    """recall_capacity.json: every planned point with the bytes its model keeps after the sequence, and its
    runs where they exist ("not run yet" where not)."""
    points = []
    for pairs in (32, 64):
        seq = (7 * pairs + 63) // 64 * 64
        for variant, settings in CAPACITY_ROWS:
            tag = ",".join(f"{k}={v}" for k, v in settings.items()) or "-"
            flat = tag.replace("=", "-").replace(",", "-")
            name = f"mqar_capacity_pairs{pairs}_ids{CAPACITY_IDS}_{variant}_{flat}.json"
            model = build_model(variant, layout_for(max(pairs, CAPACITY_IDS)).vocab_size, max_seq_len=seq, **settings)
            path = folder / name
            runs = json.loads(path.read_text(encoding="utf-8"))["runs"] if path.exists() else []
            points.append({"n_pairs": pairs, "key_ids": CAPACITY_IDS, "seq_len": seq, "variant": variant,
                           "settings": settings, "state_bytes": state_bytes(model, seq), "file": name,
                           **(_row([r for r in runs if r["variant"] == variant]) if runs
                              else {"seeds": [], "values": [], "mean": None, "note": "not run yet"})})
    out = {"study": "capacity: MQAR in Zoology's form with 32 and 64 pairs among 256 key ids (issue 50, item 5)",
           "protocol": {"description": "run_gate_start.sh stage capacity: 3,000 steps x 32, warm-up + cosine, "
                                       "lr 1e-3, fan-in init, answers hidden, labels on the asked key; the bytes a "
                                       "model keeps after the sequence (studies/state_size.state_bytes)"},
           "points": points}
    write_atomic(out, results / "recall_capacity.json")
    return out


def capacity_rows(points: list[dict]) -> list[dict]:
    """recall_capacity.json's points as one row per seed that ran, in the form of the state-size picture
    (``plots_capacity.recall_vs_state_bytes``): a recurrent model's sizes along one line per variant."""
    return [{"task": "mqar", "variant": q["variant"], "n_pairs": q["n_pairs"], "accuracy": value,
             "state_bytes": q["state_bytes"], "state_dim": q["settings"].get("state_dim")}
            for q in points for value in q["values"]]


def capacity_figure(points: list[dict], out: Path):
    """The Based/Zoology frontier of the points run so far (accuracy against the bytes kept), saved to ``out``."""
    rows = capacity_rows(points)
    if not rows:
        raise SystemExit("capacity: no point has run yet, so there is no figure to draw")
    fig = recall_vs_state_bytes(rows, title="capacity: MQAR among 256 key ids, the points run so far")
    fig.savefig(out, dpi=110)
    return fig


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("gather", help="recall_gate_start.json and recall_ladder.json from the run files")
    sub.add_parser("tables", help="print RECALL_STUDY.md section 13's tables from the gathered files")
    sub.add_parser("gradient", help="gradient_reach.json: every row of the figure at initialization")
    cap = sub.add_parser("capacity", help="recall_capacity.json: the capacity points, their bytes and runs so far")
    cap.add_argument("--figure", type=Path, help="also draw the points run so far to this PNG file")
    best = sub.add_parser("best-lr", help="print the lr a row's seed 0 chose (the queue's rule)")
    best.add_argument("variant")
    best.add_argument("gam_bias", type=float)
    best.add_argument("--folder", default=str(FOLDER))
    args = parser.parse_args(argv)
    if args.command == "gather":
        gate, ladder = gather()
        for row in gate["rows"] + ladder["rows"]:
            print(row.get("rung", ""), row["variant"], row.get("gam_bias", ""), row.get("lr"), row["values"],
                  "MQAR-8:", row["mqar8"]["values"] or "not run yet")
    elif args.command == "tables":
        read = [json.loads((RESULTS / n).read_text(encoding="utf-8")) for n in ("recall_gate_start.json",
                                                                                "recall_ladder.json")]
        for name, table in tables(*read).items():
            print(f"{name}:\n{table}\n")
    elif args.command == "capacity":
        points = capacity()["points"]
        for q in points:
            print(q["n_pairs"], q["variant"], q["settings"], f"{q['state_bytes']:,} bytes",
                  q["values"] or "not run yet")
        if args.figure:
            capacity_figure(points, args.figure)
            print(f"wrote {args.figure}")
    elif args.command == "gradient":
        for row in gradient()["rows"]:
            print(f"{row['label']:<28} pair reach {row['pair_reach']:.3g}")
    else:
        row = _swept(f"recall4_{args.variant}_gam{args.gam_bias:g}_lr", args.variant, Path(args.folder))
        if row is None or row["lr"] is None:
            raise SystemExit(f"best-lr: {args.variant} at gam_bias {args.gam_bias:g} has no seed 0 yet")
        print(row["lr_text"])


if __name__ == "__main__":
    main()
