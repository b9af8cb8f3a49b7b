"""Where the gated read puts its weight, in the studies of where recall breaks (notebook 07c): the
read at initialization on overwritten and aliased keys, and the read after training on aliases.

    overwrite_init_markdown   weight on the latest write, the earlier writes, elsewhere (per model)
    alias_init_markdown       the answer entry's place among the 126 entries, another alias vs the written token
    alias_read_markdown       a trained read: what the top-8 cut on missed and right questions, pairs and
                              tokens left out

Each reads the committed ``*_init_diagnosis*.json`` / ``alias_trained_read*.json`` files written by
``python -m tl_research study ...`` (the command is in each notebook cell's text); a file
not there yet leaves its rows out.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..studies.breaks import left_out_tokens  # the rule for "left out", with the study
from .files import override_label, results_dir


def _present(root, names):
    root = Path(root) if root is not None else results_dir()
    for name in names:
        path = root / name
        if path.exists():
            yield json.loads(path.read_text(encoding="utf-8"))


def overwrite_init_markdown(root=None) -> str:
    """Overwritten keys, at initialization: the read's weight on the latest write of the asked key."""
    lines = ["| model | weight on the latest write | on earlier writes | elsewhere | latest write first |",
             "|---|---|---|---|---|"]
    for diag in _present(root, ("overwrite_init_diagnosis.json", "overwrite_init_diagnosis_supersede.json")):
        label = f" ({override_label(diag['overrides'])})" if diag["overrides"] else ""
        for variant, row in diag["mean_over_seeds"].items():
            lines.append(f"| `{variant}{label}` | {row['latest']:.3f} | {row['earlier']:.3f} | {row['rest']:.3f} "
                         f"| {100 * row['latest_first']:.1f}% |")
    return "\n".join(lines)


def alias_init_markdown(root=None) -> str:
    """Aliased keys, at initialization: the answer entry (the written alias) among the 126 entries."""
    lines = ["| model | question | answer entry in the top-8 | ranked first | median rank | weight on it |",
             "|---|---|---|---|---|---|"]
    for name, asked in (("alias_init_diagnosis.json", "another alias"),
                        ("alias_init_diagnosis_same_alias.json", "the written token")):
        for diag in _present(root, (name,)):
            for variant, row in diag["mean_over_seeds"].items():
                lines.append(f"| `{variant}` | {asked} | {100 * row['in_kept']:.1f}% "
                             f"| {100 * row['answer_top1']:.1f}% | {row['answer_rank_median']:.0f} "
                             f"| {row['answer_weight']:.3f} |")
    return "\n".join(lines)


def alias_read_markdown(root=None) -> str:
    """Aliases, after training: per seed, how often the answer entry was cut from the top-8 (on missed
    and on right questions), how many (asked, written) alias pairs were learned, which tokens were left out."""

    lines = ["| row | seed | accuracy | missed (of 512) | missed: entry cut | their median rank (of 126) "
             "| right: entry cut | alias pairs learned / failed | tokens left out |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, row in (("alias_trained_read.json", "gated_hybrid_repaired"),
                      ("alias_trained_read_curriculum.json", "gated_hybrid_repaired (trained with 25% identical)")):
        for data in _present(root, (name,)):
            for run in data["runs"]:
                pairs = run["by_pair"]["pairs"]
                out, explains = left_out_tokens(pairs)
                failed = sum(p[3] < 0.5 for p in pairs)
                lines.append(f"| `{row}` | {run['seed']} | {100 * run['accuracy']:.1f}% | {run['missed']} "
                             f"| {100 * run['missed_cut']:.0f}% | {run['missed_answer_rank_median']:.0f} "
                             f"| {100 * run['right_cut']:.1f}% | {len(pairs) - failed} / {failed} "
                             f"| {', '.join(map(str, out))}{'' if explains else ' (not all)'} |")
    return "\n".join(lines)
