"""What notebook 07 prints beside the language-model tables: where each file came from, table 6 in
bits, each variant's BPB against the length of training, and the unigram baseline every BPB is read against.
Each function reads the committed files through :data:`.tables.TABLES`."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

from tl_minimal.data import text as data_text
from tl_minimal.results.paper_numbers import PAPER
from tl_minimal.training.evaluate import unigram_bits
from tl_minimal.training.protocols import chunk_eval_set

from .files import provenance
from .stats import markdown
from .tables import TABLES, Row, markdown_table

LOCAL_PATH = re.compile(r" ?\(/[^()]*\)")  # where the offline copy lay on the machine that ran it
STEP_TABLES = ("lm_matched_width", "lm_time_matched", "lm_2000_steps")  # 80 steps, 40 s, 2,000 steps
LEAKY = ("triple_hybrid", "gated_hybrid_paper", "gated_hybrid_repaired")  # their paper numbers carry the leak


def provenance_markdown(files: list[Path]) -> str:
    """A Markdown table, one row per file (``+dirty``: other files of the tree were being edited)."""
    rows = [[f"`{i['file']}`", str(i["seeds"]), str(i["steps"]), str(i["device"]), str(i["threads"]),
             f"`{(i['git_commit'] or '-')[:7]}{'+dirty' if 'dirty' in (i['git_commit'] or '-') else ''}`",
             (i["date"] or "")[:16]] for i in provenance(files)]
    return markdown(["file", "seeds", "steps", "device", "threads", "commit", "date"], rows)


def data_sources(files: list[Path]) -> list[str]:
    """One line per distinct data source of ``files``, with its note when the file has one."""
    sources = {(LOCAL_PATH.sub("", i["data_source"] or ""), i["data_note"]) for i in provenance(files)}
    return [f"- {source}" + (f"\n  NOTE: {note}" if note else "") for source, note in sorted(sources, key=str)]


def tokenized_in_bits() -> tuple[list[Row], dict]:
    """Table 6's rows and the paper's tokenized numbers in bits per token (the files hold nats)."""
    ln2 = math.log(2)
    rows = [replace(r, values=[v / ln2 if v is not None else None for v in r.values])
            for r in TABLES["tokenized"].rows()]
    paper = {k: v / ln2 if isinstance(v, float) else v for k, v in PAPER["tokenized"].items()}
    return rows, paper


def tokenized_markdown(rows: list[Row], paper: dict) -> str:
    """Table 6 in bits per token, the paper's number beside each row."""
    return ("**6. Tokenized LM, MiniMind tokenizer (WikiText-2 text), 120 steps, bits per token**\n\n"
            + markdown_table(rows, paper, metric="bits per token"))


def tokenized_gaps_markdown(rows: list[Row], paper: dict) -> str:
    """Each model minus the Transformer (bits per token), ours beside the paper's gap."""
    ours_tf = next(r.mean for r in rows if r.label == "transformer")
    lines = []
    for r in rows:
        if r.label == "transformer":
            continue
        leaky_row = "causal=False" in r.label
        paper_value = paper.get(r.variant) if leaky_row else paper.get(r.label, paper.get(r.variant))
        paper_gap = f"{paper_value - paper['transformer']:+.3f}" if isinstance(paper_value, float) else "-"
        if r.variant in LEAKY and not leaky_row:
            paper_gap += " (the paper's, with the leaky convolution)"
        lines.append([f"`{r.label}`", f"{r.mean - ours_tf:+.3f}", paper_gap])
    return ("**Gaps to the Transformer (bits per token; negative = better than the Transformer)**\n\n"
            + markdown(["model", "ours: gap to the Transformer", "the paper's gap"], lines))


def bpb_by_steps(variants=None) -> dict[str, list[tuple[float, float, float]]]:
    """{variant: [(mean steps, mean BPB, std BPB) per table]} over tables 1, 3a and 3b, sorted by steps.

    ``variants``: the variants to keep (default: every plain row, i.e. no ``(...)`` in its label).
    """
    curves: dict[str, list[tuple[float, float, float]]] = {}
    for key in STEP_TABLES:
        for r in TABLES[key].rows():
            if not r.ok or "(" in r.label or (variants is not None and r.variant not in variants):
                continue
            steps = [s for s in r.steps if s]
            curves.setdefault(r.label, []).append((sum(steps) / len(steps), r.mean, r.std or 0.0))
    return {name: sorted(points) for name, points in curves.items()}


PANEL_TITLES = {"lm_matched_width": "1. byte WT2, matched width, 80 steps",
                "lm_param_matched": "2. byte WT2, parameter-matched, 80 steps",
                "tokenized": "6. MiniMind tokenizer (WT2 text), 120 steps"}


def beside_paper_panels() -> list[dict]:
    """Tables 1, 2 and 6 for :func:`tl_minimal.views.plots_reproduction.beside_paper`: the rows with results
    (label, mean, per-seed values), the paper's number per row (table 6 in bits per token) and whether the
    panel is in bytes (the picture draws the unigram line there)."""
    tok_rows, tok_paper = tokenized_in_bits()
    panels = []
    for key, title in PANEL_TITLES.items():
        if key == "tokenized":
            rows = [r for r in tok_rows if r.ok]
            refs = [tok_paper.get(r.label, tok_paper.get(r.variant)) for r in rows]
            panel = {"title": title, "rows": rows, "paper": refs, "paper_all": list(tok_paper.values()),
                     "ylabel": "bits per token", "bytes": False}
        else:
            table = TABLES[key]
            rows = [r for r in table.rows() if r.ok]
            panel = {"title": title, "rows": rows, "paper": [table.paper_number(r) for r in rows],
                     "paper_all": list(PAPER.get(table.paper, {}).values()), "ylabel": "BPB", "bytes": True}
        panel["rows"] = [{"label": r.label, "mean": r.mean, "ok": r.ok} for r in rows]
        panels.append(panel)
    return panels


def tables_unigram(p) -> float:
    """Bits per byte of the unigram model (train-split byte counts) on the chunks the tables are scored on.

    The chunks are protocol ``p``'s: the first ``eval_batches`` batches of ``eval_batch_size``
    chunks of ``seq_len`` bytes of its evaluation split (notebooks 07 and 07c read every BPB against it).
    """
    train, valid = data_text.load_split("train"), data_text.load_split(p.eval_split)
    _, y = chunk_eval_set(valid.tokens, p)  # [C, T]: the bytes the tables' BPB predicts
    return unigram_bits(train.tokens, y, data_text.VOCAB_SIZE)
