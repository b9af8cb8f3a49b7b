"""Merge results files written command by command into one file per table row group, runs unchanged.

Runs of one suite were often written by several commands (seeds 0 and 1-2 in parallel, one
variant per command), each to its own file (``overwrite_triple_slot_s0.json``,
``overwrite_triple_slot_s12.json``). A *row group* is every file of one task whose settings agree
(the ``protocol`` section minus seeds, environment and notes: :func:`suite.settings_of`), which is
exactly what the experiments command can resume into one file. Merging:

- concatenates the runs of a row group, file by file in name order, each run as it was;
- keeps each source in ``merged_from``: its file name, how many runs it gave, the volatile part of
  its protocol (seeds, environment with commit, date and command, data source) and every other
  top-level field it had (``planned``, ``complete``, ``resumed_by``, ...), so :func:`split` gives back
  every source file exactly;
- puts a file that repeats a (variant, seed) of its row group into a row group of its own (the same
  run may have been copied into two write-ups: both copies stay, as before);
- names each file after its task and the settings that set it apart from the task's protocol
  (:func:`file_name`): ``lm.json``, ``lm_S12.json``, ``alias_200steps_same_alias.json``, the recall
  retrain recipe ``recall_warmup50_lengths32-128-150_gatebias-2.json``.

    python -m tl_research.results merge            # the results folder, in place
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..protocols import PROTOCOLS
from ..suite import VOLATILE, settings_of
from .files import SHORT, is_gathered

TOP = ("task", "study", "protocol", "planned", "complete", "runs", "diverged", "constant_guess")
WORDS = {"same_alias": "same_alias", "same_alias_share": "curriculum", "eval_at": "eval",  # protocol key -> word
         "warmup_steps": "warmup", "length_curriculum": "lengths"}                           # in a file name
ALWAYS = {"mqar": ("n_pairs", "seq_len")}  # the axes of a task's table: always in its file names


def mergeable(data: dict) -> bool:
    """A suite's results file (runs of one task under one protocol), not a diagnosis, a benchmark or a
    gathered lr sweep (studies/calibrated.py: its runs come from several suite files, at each model's lr)."""
    return (isinstance(data.get("runs"), list) and bool(data["runs"]) and "protocol" in data
            and "task" in data and "mean_over_seeds" not in data and not is_gathered(data))


def is_merged(data: dict) -> bool:
    """Written by :func:`merged` (its ``merged_from`` entries carry each source's protocol part)."""
    parts = data.get("merged_from")
    return bool(parts) and all(isinstance(p, dict) and "protocol" in p and "runs" in p for p in parts)


def merged(sources: list[tuple[str, dict]]) -> dict:
    """One file from the (name, data) of files of one row group; see the module docstring."""
    first = sources[0][1]
    out = {k: first[k] for k in ("task", "study") if k in first}
    seeds = sorted({s for _, d in sources for s in d["protocol"].get("seeds") or []})
    out["protocol"] = {**first["protocol"], "seeds": seeds}
    if any("planned" in d for _, d in sources):
        out["planned"] = [p for i, (_, d) in enumerate(sources) for p in d.get("planned", [])
                          if p not in [q for _, e in sources[:i] for q in e.get("planned", [])]]
    if any("complete" in d for _, d in sources):
        out["complete"] = all(d.get("complete", True) for _, d in sources)
    out["runs"] = [r for _, d in sources for r in d["runs"]]
    if any("diverged" in d for _, d in sources):
        out["diverged"] = sum(d.get("diverged", 0) for _, d in sources)
    if "constant_guess" in first:
        out["constant_guess"] = first["constant_guess"]
    out["merged_from"] = [{"file": name, "runs": len(d["runs"]),
                           "protocol": {k: v for k, v in d["protocol"].items() if k in VOLATILE},
                           "kept": {k: v for k, v in d.items() if k not in ("task", "study", "protocol", "runs")}}
                          for name, d in sources]
    return out


def split(data: dict, name: str = "the merged file") -> dict[str, dict]:
    """The source files of a merged file, exactly as they were: {file name: data}. Runs the experiments
    command added to the file after the merge (it resumes a suite's file) come back as one more source,
    ``"<name> (added after the merge)"``, with the file's own ``resumed_by`` and other new fields."""
    out, start = {}, 0
    for part in data["merged_from"]:
        source = {k: data[k] for k in ("task", "study") if k in data}
        source.update(part["kept"])
        mine = part["protocol"]  # the merged file's key order, this source's seeds, environment and notes
        source["protocol"] = {k: mine.get(k, v) for k, v in data["protocol"].items() if k not in VOLATILE or k in mine}
        source["protocol"].update({k: v for k, v in mine.items() if k not in source["protocol"]})
        source["runs"] = data["runs"][start:start + part["runs"]]
        start += part["runs"]
        out[part["file"]] = source
    if start > len(data["runs"]):
        raise ValueError(f"{name}: merged_from accounts for {start} runs, the file has {len(data['runs'])}")
    if start < len(data["runs"]):
        added = {k: v for k, v in data.items() if k not in (*TOP, "merged_from")}  # e.g. resumed_by
        out[f"{name} (added after the merge)"] = {**{k: data[k] for k in ("task", "study") if k in data}, **added,
                                                  "protocol": data["protocol"], "runs": data["runs"][start:]}
    return out


def run_key(run: dict) -> tuple:
    """What a suite counts as one run (:meth:`Suite.has`): the variant and the seed."""
    return run.get("variant"), run.get("seed")


@dataclass
class Group:
    """Files of one task with equal settings and no run twice: one merged file."""
    key: tuple  # (task, study, settings as JSON)
    sources: list = field(default_factory=list)  # [(file name, data), ...]
    seen: set = field(default_factory=set)  # run keys

    def takes(self, data: dict) -> bool:
        return not any(run_key(r) in self.seen for r in data["runs"])

    def add(self, name: str, data: dict) -> None:
        self.sources.append((name, data))
        self.seen |= {run_key(r) for r in data["runs"]}


def group(sources: dict[str, dict]) -> list[Group]:
    """Row groups of {file name: data}, files taken in the order given (:func:`read_folder`: file names in
    order, a merged file's sources in its own order; see the module docstring)."""
    groups: list[Group] = []
    for name in sources:
        data = sources[name]
        key = (data["task"], data.get("study"), json.dumps(settings_of(data["protocol"]), sort_keys=True))
        home = next((g for g in groups if g.key == key and g.takes(data)), None)
        if home is None:
            home = Group(key)
            groups.append(home)
        home.add(name, data)
    return groups


def _value_word(value) -> str:
    if isinstance(value, (list, tuple)):
        return "-".join(_value_word(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _word(key: str, value) -> str:
    """One setting as a file-name word: 200 steps -> 200steps, d_model 60 -> d60, conv_causal False -> noncausal."""
    short = WORDS.get(key, SHORT.get(key, key))
    if isinstance(value, bool):
        return short if value else f"non{short}"
    if key == "steps":
        return f"{value}steps"
    if key == "max_seconds":
        return f"{_value_word(value)}s_budget"
    if key in ("n_pairs", "seq_len"):
        return f"{'pairs' if key == 'n_pairs' else 'seq'}{value}"
    numeric = isinstance(value, (int, float, list, tuple))  # d60, lr0.001, eval100-200; top_k-all
    return f"{short}{_value_word(value)}" if numeric else f"{short}-{_value_word(value)}"


def base_name(settings: dict) -> str:
    """The task, then each setting that differs from the task's protocol, then the ``--set`` overrides."""
    task = settings["task"]
    default = PROTOCOLS[task].to_dict() if task in PROTOCOLS else {}
    always = ALWAYS.get(task, ())
    words = []
    for key in ("steps", "max_seconds", "lr", "n_pairs", "seq_len", "same_alias", "same_alias_share", "warmup_steps",
                "length_curriculum"):
        value = settings.get(key)
        if key == "steps" and settings.get("max_seconds"):
            continue  # a time budget: the step count is only a cap
        if value not in (None, default.get(key)) or (key in always and value is not None):
            words.append(_word(key, value))
    words += [_word(k, v) for k, v in sorted((settings.get("overrides") or {}).items())]
    return "_".join([task, *words])


def file_names(groups: list[Group]) -> list[str]:
    """A file name per group: :func:`base_name`; groups sharing one, the largest keeps it and the others
    add the settings that differ from its own, or (same settings) their variants."""
    bases = [base_name(json.loads(g.key[2])) for g in groups]
    names = list(bases)
    for base in set(bases):
        members = sorted((i for i, b in enumerate(bases) if b == base), key=lambda i: -len(groups[i].seen))
        main = json.loads(groups[members[0]].key[2])
        for i in members[1:]:
            mine = json.loads(groups[i].key[2])
            extra = [_word(k, mine[k]) for k in sorted(mine) if k in main and mine[k] != main[k]
                     and k not in ("layout", "vocab_size", "model_config")]
            extra = extra or sorted({variant for variant, _ in groups[i].seen})
            names[i] = "_".join([base, *extra])
    if len(set(names)) != len(names):
        raise ValueError(f"two row groups would share a file name: {sorted(names)}")
    return [n + ".json" for n in names]


def read_folder(folder) -> tuple[dict[str, dict], dict[str, str]]:
    """({source file name: data}, {source name: the merged file it was read from}) of a folder's
    mergeable files; a merged file counts as the files it came from."""
    sources, came_from = {}, {}
    for path in sorted(Path(folder).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not mergeable(data):
            continue
        parts = split(data, path.name) if is_merged(data) else {path.name: data}
        for name, part in parts.items():
            if name in sources:
                raise ValueError(f"{name} appears twice ({came_from[name]} and {path.name})")
            sources[name], came_from[name] = part, path.name
    return sources, came_from


def merge_folder(folder, out=None, remove: bool = True) -> dict[str, list[str]]:
    """Merge a folder's results files by row group into ``out`` (default: the folder itself) and
    return {new file: [its sources]}. ``remove``: delete the files read (in ``folder``) that are not
    written again. Files that are not suites (diagnoses, benchmarks) are left alone."""
    folder = Path(folder)
    out = Path(out) if out is not None else folder
    sources, came_from = read_folder(folder)
    groups = group(sources)
    written = {}
    for name, g in zip(file_names(groups), groups, strict=True):
        text = json.dumps(merged(g.sources), indent=1, ensure_ascii=False) + "\n"
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
        written[name] = [n for n, _ in g.sources]
    if remove:
        for old in set(came_from.values()) - (set(written) if out.resolve() == folder.resolve() else set()):
            (folder / old).unlink()
    return written
