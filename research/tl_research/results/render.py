"""What the required lessons show from the results files, computed once and written into
``data/results/course_reports.json`` (``python -m tl_research.results render``; ``--check`` only compares).

The course reads each report back by name (:func:`tl_minimal.results.report`); a test holds the committed
file equal to a fresh render, so a table in a lesson and the files it comes from cannot drift apart. A
report is JSON: Markdown tables as strings, plot points as lists and dicts.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from tl_minimal.results.files import RENDER, REPORTS, results_dir

from . import calibrated_table, family_table, lm_reports, state_size_table
from .files import load, load_runs
from .recall_tables import mqar_markdown, mqar_rows, recall_file_reports
from .stats import ORDER
from .tables import TABLES, sweep_markdown


def family_report(path, variants, yardsticks) -> dict:
    """A family table of notebook 06b: its Markdown and the rows its figure draws."""
    rows = family_table.family_rows(path, variants, yardsticks)
    steps, seeds = family_table.budget(path)
    return {"steps": steps, "seeds": list(seeds), "markdown": family_table.family_markdown(rows),
            "rows": [{"variant": r.variant, "params": r.params, "values": list(r.values), "mean": r.mean,
                      "vs": {y: None if d is None else {k: asdict(d)[k] for k in ("mean", "low", "high", "differences")}
                             for y, d in r.vs.items()}} for r in rows]}


def notebook_06b(root: Path) -> dict:
    """The family's language-model tables (80 and 2,000 steps) and its calibrated recall table."""
    path_2000 = family_table.FAMILY_2000_FILE
    later = family_report(path_2000, family_table.paired_variants(path_2000), ("triple_latent", "transformer_rope"))
    later["seed_means"] = {v: list(nm) for v, nm in family_table.seed_means(path_2000).items()}
    name = calibrated_table.FAMILY_FILE
    return {"family_80": family_report(None, family_table.FAMILY_ORDER, family_table.YARDSTICKS),
            "family_2000": later,
            "calibrated_family": {"budget": calibrated_table.budget(name, root),
                                  "markdown": calibrated_table.calibrated_markdown(name, root)}}


def notebook_07(root: Path) -> dict:
    """The language-model tables with their provenance, the yardstick's rows, the recall tables, MQAR, state size,
    table 6 and the two pictures beside the paper."""
    files = sorted({f for t in TABLES.values() for f in t.files(root)} | set(root.glob("lm_2000steps_lr*.json")))
    sweep = load_runs(root / "lm_2000steps.json") + load_runs(root / "lm_2000steps_lr*.json")
    mqar = mqar_rows()
    tok_rows, tok_paper = lm_reports.tokenized_in_bits()
    yard = json.loads((root / "lm_yardstick.json").read_text(encoding="utf-8"))  # one recipe for every row
    yardstick = [f"{r['variant']:<17} lr {r['lr']:g}, {len(r['by_seed'])} seeds: mean {r['mean']:.3f} BPB"
                 for r in yard["rows"]]
    yardstick += [f"{c['a']} minus {c['b']}: {c['mean']:+.3f} BPB [{c['low']:+.3f}, {c['high']:+.3f}], "
                  f"{len(c['seeds'])} seeds" for c in yard["comparisons"]]  # paired by seed
    return {
        "provenance": {"markdown": lm_reports.provenance_markdown(files),
                       "data_sources": "\n".join(lm_reports.data_sources(files))},
        "tables": {key: {"title": t.title, "markdown": t.markdown(root)} for key, t in TABLES.items()},
        "lr_sweep": sweep_markdown(sweep, "lr"),
        "yardstick": "\n".join(yardstick),
        "recall_files": [list(pair) for pair in recall_file_reports(root=root)],
        "mqar": {"markdown": mqar_markdown(mqar), "order": [v for v in ORDER if any(r.variant == v for r in mqar)],
                 "points": [{"variant": r.variant, "pairs": r.pairs, "seq_len": r.seq_len, "chance": r.chance,
                             "mean": r.stats(max(r.by_step))[0], "std": r.stats(max(r.by_step))[1]} for r in mqar]},
        "state_size": state_size_table.markdown(load(root / "recall_state_size.json")),
        "tokenized": {"markdown": lm_reports.tokenized_markdown(tok_rows, tok_paper),
                      "gaps": lm_reports.tokenized_gaps_markdown(tok_rows, tok_paper)},
        "beside_paper": lm_reports.beside_paper_panels(),
        "bpb_by_steps": lm_reports.bpb_by_steps(),
    }


def render() -> str:
    """The text of ``course_reports.json``, from the results folder (:func:`results_dir`)."""
    root = results_dir()
    reports = {**notebook_06b(root), **notebook_07(root)}
    return json.dumps({"command": RENDER, "reports": reports}, indent=1,
                      ensure_ascii=False) + "\n"


def write(check: bool = False) -> bool:
    """Write the reports file (``check``: only compare); True when the file on disk equals a fresh render."""
    path = results_dir() / REPORTS
    text = render()
    same = path.is_file() and path.read_text(encoding="utf-8") == text
    if not check and not same:
        path.write_text(text, encoding="utf-8")
    return same
