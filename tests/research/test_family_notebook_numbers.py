"""The numbers notebook 06b's prose quotes are the ones data/results/issue33/lm_family.json gives.

The notebook's verdict quotes paired differences as "`A` minus `B`: +0.009 BPB [-0.034, +0.053]"
(mean and 95% interval, three decimals) and names its budget ("80 training steps", "5 seeds").
This test finds every such quote in the notebook's Markdown, recomputes it from the result file
with the same paired t interval, and fails when one differs, or when the budget it names is not
the file's.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from tl_minimal.results.family_table import (
    FAMILY_ORDER,
    budget,
    paired_variants,
    rows_file,
    seeds_by_variant,
)
from tl_minimal.results.intervals import paired_difference, values_by_seed

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "06b_family.py"
RESULTS = ROOT / "data" / "results" / "issue33" / "lm_family.json"
RESULTS_2000 = RESULTS.with_name("lm_family_2000steps.json")
NUMBER = r"([+-]?\d+\.\d+)"
QUOTE = re.compile(rf"`(\w+)` minus `(\w+)`:\s+{NUMBER}\s+BPB\s+\[{NUMBER},\s+{NUMBER}\]")
# the 2,000-step verdict's quotes name their budget: "`gla` minus `triple_latent` at 2,000 steps: +0.009 BPB [...]"
QUOTE_2000 = re.compile(rf"`(\w+)` minus `(\w+)` at 2,000 steps:\s+{NUMBER}\s+BPB\s+\[{NUMBER},\s+{NUMBER}\]")


def _prose() -> str:
    """The notebook's Markdown cells as plain text (the '# ' of the percent format removed)."""
    text = NOTEBOOK.read_text(encoding="utf-8")
    cells = re.split(r"^# %%.*$", text, flags=re.MULTILINE)
    markdown = [c for c, head in zip(cells[1:], re.findall(r"^# %%.*$", text, flags=re.MULTILINE), strict=True)
                if "[markdown]" in head]
    return "\n".join(re.sub(r"^# ?", "", line) for cell in markdown for line in cell.splitlines())


def _quotes() -> list[tuple]:
    return QUOTE.findall(_prose())


def test_the_notebook_reads_the_committed_file():
    assert rows_file(RESULTS) == RESULTS and RESULTS.is_file()


def test_the_verdict_quotes_enough_differences():
    quoted = {(a, b) for a, b, *_ in _quotes()}
    # the verdict's three claims: against the Transformer, against the nearest relatives, the memory itself (the
    # hybrid with and without it: the pair that differs only there)
    for pair in [("triple_latent", "transformer"), ("gla", "triple_latent"), ("triple_key_shift", "triple_latent"),
                 ("conv_only", "triple_latent"), ("conv_only", "triple_hybrid")]:
        assert pair in quoted, f"the verdict no longer quotes `{pair[0]}` minus `{pair[1]}`"


@pytest.mark.parametrize("quote", _quotes(), ids=lambda q: f"{q[0]}-{q[1]}")
def test_each_quoted_difference_is_the_result_files(quote):
    a, b, mean, low, high = quote
    d = paired_difference(values_by_seed(RESULTS, a), values_by_seed(RESULTS, b))
    assert (f"{d.mean:+.3f}", f"{d.low:+.3f}", f"{d.high:+.3f}") == (mean, low, high), (
        f"notebook 06b says `{a}` minus `{b}`: {mean} [{low}, {high}]; {RESULTS.name} gives "
        f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]")


def test_the_budget_named_is_the_files():
    steps, seeds = budget(RESULTS)
    prose = _prose()
    assert f"**The verdict, at {steps} training steps and {len(seeds)} seeds.**" in prose
    named_steps = {int(s.replace(",", "")) for s in re.findall(r"([\d,]+) training steps", prose)}
    assert named_steps <= {steps}, f"the prose names {named_steps} training steps; the file has {steps}"


def test_the_2000_step_verdict_names_its_seeds_and_quotes_the_file():
    """The 2,000-step verdict names the seed count of the paired rows, quotes their differences as the file gives
    them, and names every row not yet paired with the seeds it has (lm_family_2000steps.json fills seed by seed)."""
    prose = " ".join(_prose().split())
    found = seeds_by_variant(RESULTS_2000)
    paired = paired_variants(RESULTS_2000)
    n = len(found[paired[0]])
    assert f"**The verdict at 2,000 steps and {n} seeds.**" in prose, "update the 2,000-step verdict of 06b"
    assert "VERDICT_2000" not in prose
    quotes = QUOTE_2000.findall(prose)
    assert {("triple_latent", "transformer_rope"), ("gla", "triple_latent")} <= {(a, b) for a, b, *_ in quotes}
    for a, b, mean, low, high in quotes:
        d = paired_difference(values_by_seed(RESULTS_2000, a), values_by_seed(RESULTS_2000, b))
        assert len(d.seeds) == n and (f"{d.mean:+.3f}", f"{d.low:+.3f}", f"{d.high:+.3f}") == (mean, low, high), (
            f"06b says `{a}` minus `{b}` at 2,000 steps: {mean} [{low}, {high}]; {RESULTS_2000.name} gives "
            f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] over {len(d.seeds)} seeds")
    unpaired = [v for v in found if v not in paired]
    if n < 5 or unpaired:  # until every row has 5 seeds, the verdict says which rows wait
        verdict = prose[prose.index("**The verdict at 2,000 steps"):]
        for v in unpaired:  # "`h3` (seed 0 only, 2.726 BPB" or "`h3` (3 seeds, 2.730 BPB": the mean of its seeds
            seeds, mean = found[v], statistics.fmean(values_by_seed(RESULTS_2000, v).values())
            named = f"`{v}` ({'seed 0 only' if seeds == (0,) else f'{len(seeds)} seeds'}, {mean:.3f} BPB"
            assert named in verdict, f"the 2,000-step verdict must name `{v}` and its seeds ({named}...)"
    for v in paired:  # a row in the table is not also named as waiting
        assert f"`{v}` (seed 0 only" not in prose and f"`{v}` (not run yet" not in prose, v
    for v in (v for v in FAMILY_ORDER if v not in found):
        assert f"`{v}` (not run yet" in prose, f"the 2,000-step verdict must say `{v}` has no run yet"


RECALL_FILE = ROOT / "data" / "results" / "recall_calibrated_family.json"
RECALL_MEAN = re.compile(r"`(\w+)` recalls (\d+\.\d)% over (\d+) seeds")
RECALL_DIFF = re.compile(r"`(\w+)` minus `(\w+)`:\s+([+-]\d+\.\d)\s+points\s+\[([+-]\d+\.\d),\s+([+-]\d+\.\d)\]")


def _recall_rows() -> dict:
    from tl_minimal.results.calibrated_table import FAMILY_FILE, calibrated_rows

    return {r.variant: r for r in calibrated_rows(FAMILY_FILE, root=RECALL_FILE.parent)}


def test_section_5_quotes_recall_rows_as_the_file_gives_them():
    """Section 5's verdict ("`gla` recalls 19.0% over 3 seeds") quotes rows of recall_calibrated_family.json
    (the table printed above it has them all) with the file's mean and seed count, and its budget."""
    rows = _recall_rows()
    prose = " ".join(_prose().split())
    quoted = {v: (mean, n) for v, mean, n in RECALL_MEAN.findall(prose)}
    assert {"deltanet", "gla", "triple_latent"} <= set(quoted)
    assert quoted == {v: (f"{100 * rows[v].mean:.1f}", str(len(rows[v].seeds))) for v in quoted}, (
        "update section 5 of 06b: `python -m tl_minimal.results.calibrated_table`")
    assert "**The verdict on recall, at 1,000 steps of the calibrated task.**" in prose
    assert "RECALL_VERDICT" not in prose and "LADDER_VERDICT" not in prose


def test_section_5_differences_are_the_files():
    """Each "`A` minus `B`: +6.5 points [-9.4, +22.5]" is the paired difference of the file (B: a yardstick)."""
    rows = _recall_rows()
    found = RECALL_DIFF.findall(" ".join(_prose().split()))
    assert found, "section 5 quotes no paired difference in points"
    for a, b, mean, low, high in found:
        d = {"transformer": rows[a].vs_transformer, "triple_latent": rows[a].vs_second}[b]
        assert (f"{100 * d.mean:+.1f}", f"{100 * d.low:+.1f}", f"{100 * d.high:+.1f}") == (mean, low, high), (
            f"06b says `{a}` minus `{b}`: {mean} points [{low}, {high}]")
