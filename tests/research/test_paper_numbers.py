"""The paper's numbers live in one place, the ``PAPER`` table; every write-up quotes the same values.

``PAPER`` (``tl_minimal/results/paper_numbers.py``) holds each number the paper prints that this repository
quotes. These tests check, against it:

- the parameter counts the paper prints: our model at the same configuration has exactly that
  many parameters (``PAPER["params"]`` is keyed by our row label, e.g. ``triple_latent (d=60, S=16)``);
- every quote listed in ``QUOTES`` below: a phrase in a write-up, followed within a few lines by
  the value ``PAPER`` holds (so a number changed in one place and not the other fails);
- the other direction for the notes' own tables (docs/paper.md section 5): every number in a row
  that reports the paper is a value of ``PAPER``.

Files are found by name anywhere in the clone, so a file moved to another folder is still found;
result JSON files are never named here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tl_minimal import build_model
from tl_minimal.results.paper_numbers import PAPER

ROOT = Path(__file__).resolve().parents[2]
WINDOW = 400  # characters after a phrase in which its number must appear (a wrapped sentence)




def doc(name: str) -> str:
    """The text of ``name`` (a path in the clone); if it moved, the one file of that name elsewhere."""
    path = ROOT / name
    if not path.is_file():
        hits = [p for p in ROOT.rglob(path.name) if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]
        assert len(hits) == 1, f"{name} is not in the clone, and its name is not unique: {[str(h) for h in hits]}"
        path = hits[0]
    return path.read_text(encoding="utf-8")


def paper(key: str, variant: str):
    return PAPER[key][variant]


def pct(value: float) -> str:
    """0.254 -> "25.4%", 0.1196 -> "11.96%" (as many digits as the paper prints)."""
    text = f"{100 * value:.2f}"
    return (text[:-1] if text.endswith("0") else text) + "%"


def seeds(values) -> list[str]:
    """Per-seed accuracies as the write-ups print them: 14.2, 100, 11.6."""
    return ["100" if v == 1 else f"{100 * v:.1f}" for v in values]


def f3(value: float) -> str:
    return f"{value:.3f}"


def f1(value: float) -> str:
    return f"{value:.1f}"


def f2(value: float) -> str:
    return f"{value:.2f}"


# (file, phrase, [(PAPER key, variant, format), ...]): each formatted value must follow the phrase
QUOTES = [
    ("docs/paper.md", "main table, matched width ($S = 16$)",
     [("lm_matched_width", v, f3) for v in ("transformer", "triple_latent", "triple_slot", "triple_hybrid")]),
    ("docs/paper.md", "main table, parameter-matched",
     [("lm_param_matched", v, f3) for v in ("transformer", "triple_latent", "triple_slot", "triple_hybrid")]),
    ("docs/paper.md", "budget sweep winner $d = 64$, $S = 8$: pilot run",
     [("lm_budget_winner", "triple_hybrid (pilot)", f3)]),
    ("docs/paper.md", "the same winner, 3 seeds",
     [("lm_budget_winner", "transformer", f3), ("lm_budget_winner", "triple_hybrid", f3)]),
    ("docs/paper.md", "The gated hybrid's byte-level number", [("lm_matched_width", "gated_hybrid_paper", f3)]),
    ("docs/paper.md", "tokenized MiniMind comparison",
     [("tokenized", v, f3) for v in ("transformer", "triple_hybrid", "transformer_plus_triple",
                                     "gated_hybrid_repaired")]),
    ("docs/paper.md", "main table, 200 steps",
     [("recall_200", "transformer", pct), ("recall_200", "triple_latent", pct)]),
    ("docs/paper.md", "recall table, 3 seeds (7, 19, 29), 500 steps",
     [("recall", v, pct) for v in ("transformer", "triple_hybrid", "gated_hybrid_paper")]),
    ("docs/paper.md", "width sweep of the gated hybrid",
     [("recall_width", f"gated_hybrid_paper (d={d})", pct) for d in (64, 80, 96)]),
    ("docs/paper.md", "gated hybrid retrained with a warm-up", [("recall_retrain", "gated_hybrid_paper", pct)]),
    ("docs/paper.md", "measured throughput, $T = 64$",
     [("slowdown_t64", v, f1) for v in ("triple_hybrid", "gated_hybrid_paper")]),
    ("docs/paper.md", "dominant forward FLOPs, $T = 128$",
     [("flops_t128", v, f1) for v in ("transformer", "triple_hybrid", "gated_hybrid_paper")]
     + [("flops_ratio_t128", v, f2) for v in ("triple_hybrid", "gated_hybrid_paper")]),
    ("docs/paper.md", "dominant forward FLOPs, $T = 512$",
     [("flops_t512", v, f1) for v in ("transformer", "triple_hybrid", "gated_hybrid_paper")]
     + [("flops_ratio_t512", v, f2) for v in ("triple_hybrid", "gated_hybrid_paper")]),
    ("docs/paper.md", "With the paper's padding the same model scores", [("lm_matched_width", "triple_hybrid", f3)]),
    ("docs/paper.md", "of the reference code loops over time",
     [("slowdown_t64", "triple_hybrid", f1), ("slowdown_t64", "gated_hybrid_paper", f1)]),
    ("data/results/README.md", "| `triple_latent` | 187,928",
     [("lm_matched_width", "triple_latent", f3), ("lm_param_matched", "triple_latent", f3)]),
    ("data/results/README.md", "| `triple_slot` | 188,024",
     [("lm_matched_width", "triple_slot", f3), ("lm_param_matched", "triple_slot", f3)]),
    ("data/results/README.md", "| `triple_hybrid` | 208,472",
     [("lm_matched_width", "triple_hybrid", f3), ("lm_param_matched", "triple_hybrid", f3),
      ("lm_budget_winner", "triple_hybrid", f3)]),
    ("data/results/README.md", "| `gated_hybrid_repaired` | 186,138", [("lm_matched_width",
                                                                        "gated_hybrid_repaired (causal=False)", f3)]),
    ("data/results/README.md", "| `transformer` | 162,368", [("recall", "transformer", pct)]),
    ("data/results/README.md", "| `triple_hybrid` | 195,992", [("recall", "triple_hybrid", pct)]),
    ("data/results/README.md", "| `gated_hybrid_paper` | 177,753", [("recall", "gated_hybrid_paper", pct)]),
    ("data/results/RECALL_STUDY.md", "The paper's 41.9%", [("recall", "gated_hybrid_paper", pct)]),
    ("data/results/RECALL_STUDY.md", "none reaches the paper's one 100%",
     [("recall", "gated_hybrid_paper", pct), ("recall_retrain", "gated_hybrid_paper", pct)]),
    ("data/results/RECALL_STUDY.md", "Paper at 200 steps",
     [("recall_200", "transformer", pct), ("recall_200", "triple_latent", pct)]),
    ("data/results/RECALL_STUDY.md", "Paper at 500 steps",
     [("recall", v, pct) for v in ("transformer", "triple_hybrid", "gated_hybrid_paper")]),
    ("notebooks/07b_diagnoses.py", "The paper's 41.9% for its gated hybrid",
     [("recall", "gated_hybrid_paper", pct)]),
    ("notebooks/exercises/05_convolution.py", "the paper's tables are collected in",
     [("lm_matched_width", "triple_hybrid", f3), ("lm_matched_width", "transformer", f3),
      ("lm_param_matched", "triple_hybrid", f3), ("lm_budget_winner", "triple_hybrid", f3),
      ("lm_budget_winner", "transformer", f3)]),
]

# the per-seed lists, quoted as "a / b / c" or "a, b, c"
SEED_QUOTES = [
    ("docs/paper.md", "the same runs per seed (7 / 19 / 29)", ("transformer", "triple_hybrid", "gated_hybrid_paper")),
    ("data/results/RECALL_STUDY.md", "none reaches the paper's one 100%", ("gated_hybrid_paper",)),
    ("data/results/README.md", "| `gated_hybrid_paper` | 177,753", ("gated_hybrid_paper",)),
    ("notebooks/07b_diagnoses.py", "The paper's 41.9% for its gated hybrid", ("gated_hybrid_paper",)),
]


def _after(text: str, phrase: str, where: str) -> str:
    at = text.find(phrase)
    assert at >= 0, f"{where}: the phrase {phrase!r} is gone; update tests/research/test_paper_numbers.py with the text"
    return text[at:at + len(phrase) + WINDOW]


@pytest.mark.parametrize("name, phrase, values", QUOTES, ids=[f"{q[0]}:{q[1][:30]}" for q in QUOTES])
def test_quotes_match_the_paper_table(name, phrase, values):
    window = _after(doc(name), phrase, name)
    for key, variant, form in values:
        expected = form(paper(key, variant))
        assert re.search(rf"(?<![\d.]){re.escape(expected)}(?![\d])", window), (
            f"{name}: after {phrase!r} expected PAPER[{key!r}][{variant!r}] = {expected}, got: {window!r}")


@pytest.mark.parametrize("name, phrase, variants", SEED_QUOTES, ids=[f"{q[0]}:{q[1][:30]}" for q in SEED_QUOTES])
def test_per_seed_quotes(name, phrase, variants):
    window = _after(doc(name), phrase, name)
    for variant in variants:
        a, b, c = seeds(paper("recall_seeds", variant))
        sep = r"%?\s*(?:[/,]|,? and)\s*(?:#\s*)?"  # "a / b / c", "a, b, c", "a%, b% and c" (over a comment line)
        pattern = rf"(?<![\d.]){re.escape(a)}{sep}{re.escape(b)}{sep}{re.escape(c)}(?![\d])"
        assert re.search(pattern, window), f"{name}: after {phrase!r} expected {a} / {b} / {c} ({variant})"


def _numbers(value) -> list[float]:
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, (tuple, list)):
        return [float(v) for v in value]
    if isinstance(value, str):
        return [float(x) for x in re.findall(r"\d+\.\d+", value)]
    return []


PAPER_VALUES = sorted({n for table in PAPER.values() for v in table.values() for n in _numbers(v)})


def _is_paper_value(text: str) -> bool:
    """True when a printed number (e.g. "25.4%", "5.022", "170,424", "0.95") is a PAPER value
    rounded to the digits printed (fractions may print as percentages)."""
    percent = text.endswith("%")
    number = float(text.rstrip("%").replace(",", ""))
    digits = len(text.rstrip("%").split(".")[1]) if "." in text else 0
    for v in PAPER_VALUES:
        for candidate in ((100 * v,) if percent else (v, 100 * v)):
            if round(candidate, digits) == number:
                return True
    return False


def test_the_notes_tables_hold_only_paper_values():
    """docs/paper.md section 5: every number in a row reporting the paper is in PAPER."""
    text = doc("docs/paper.md")
    section = text[text.index("## 5. The paper's numbers"):text.index("## 6. ")]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| in the paper")]
    assert len(rows) >= 15, "section 5's tables went missing"
    for row in rows:
        cells = row.strip("|").split("|")[1:-1]  # the paper's values: not the label, not "ours"
        for cell in cells:
            cell = re.sub(r"\[[^\]]*\]|\$[^$]*\$|`[^`]*`", "", cell)  # sources, math, file names
            for number in re.findall(r"\d[\d,]*\.\d+%?|\d{1,3}(?:,\d{3})+|\d+%", cell):
                assert _is_paper_value(number), f"docs/paper.md section 5: {number} in {row!r} is not in PAPER"


def _config(label: str) -> tuple[str, dict]:
    """"triple_latent (d=60, S=16)" -> ("triple_latent", {"d_model": 60, "state_dim": 16})."""
    names = {"d": "d_model", "S": "state_dim", "K": "num_slots"}
    m = re.fullmatch(r"(\w+)(?: \((.*)\))?", label)
    assert m, label
    config = {}
    for part in filter(None, (m.group(2) or "").split(", ")):
        key, value = part.split("=")
        config[names[key]] = int(value)
    return m.group(1), config


@pytest.mark.parametrize("label", sorted(PAPER["params"]))
def test_parameter_counts_equal_the_papers(label):
    """Each configuration the paper counts, built here at vocabulary 259, has the paper's count."""
    variant, config = _config(label)
    model = build_model(variant, 259, **config)
    assert sum(p.numel() for p in model.parameters()) == PAPER["params"][label], label

