"""A suite's results file: saved after every finished run, resumed by rerunning the same command.

A *suite* is one command's runs: every (variant, seed) of one task under one protocol and one set
of settings. Hours of runs must not be lost to a Ctrl-C, a crash or a closed laptop lid, so:

    suite = Suite.open("runs.json", task, protocol_section, planned, fresh=False)   # before any work
    for variant, seed in suite.todo():
        run = ...train and evaluate...
        suite.add(run)                          # the file now holds it (rewritten atomically)
    results = suite.finish()                   # the last write ("complete": true once every run is in)

- The output path is checked when the suite opens (:func:`prepare_output`): its folder is created,
  a test file is written beside it, and a directory or an unwritable place is an error at once.
- The file is rewritten after every run: a temporary file beside it, then ``os.replace``, so it
  is valid JSON at every moment (a killed process leaves the old or the new file, never half of
  one). It says ``"complete": false`` until every planned run is in it.
- Two processes may fill one file of the same settings: every write first takes in the runs the
  other added since (:meth:`Suite.write`), so neither loses the other's.
- Reopening a file resumes it: runs already there (same task, protocol and settings: the whole
  ``protocol`` section except the seeds, the environment and notes) are skipped. A file written
  under other settings is refused, naming what differs; ``fresh=True`` starts it afresh.
- Long runs keep checkpoints in a folder beside the file (``runs.checkpoints/``), named by task,
  variant, seed and a digest of the settings, so a checkpoint of other settings is never picked up;
  a run's checkpoint is deleted once the run is in the file.

File layout (what the experiments command writes)::

    {"task", "protocol": {...settings..., "environment": {...}}, "planned": [[variant, seed], ...],
     "complete": bool, "runs": [{"variant", "seed", "value", ...}, ...], "diverged": n,
     "resumed_by": [{"date", "git_commit", "command", "device", "runs_before"}, ...]}   (if resumed)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

VOLATILE = ("seeds", "environment", "data_source", "data_note", "model_config_note")  # not settings


class SuiteError(ValueError):
    """A bad output path, or a results file that belongs to another suite: one line, exit status 2."""


class SuiteInterrupted(KeyboardInterrupt):
    """Ctrl-C during a suite: everything finished is in the file. ``message`` says how to resume."""

    def __init__(self, saved: int, planned: int, path, command: str | None, checkpoint: str | None = None):
        self.saved, self.planned, self.path, self.command = saved, planned, str(path), command
        note = f"; the run in progress continues from its checkpoint {checkpoint}" if checkpoint else ""
        self.message = f"interrupted: {saved} of {planned} runs saved in {path}{note}"
        if command:
            self.message += f"\nresume with: {command}"
        super().__init__(self.message)


def _json(value):
    """The value as it reads back from a JSON file (tuples become lists, odd objects strings)."""
    return json.loads(json.dumps(value, default=str))


def prepare_output(path) -> Path:
    """Check that ``path`` can hold a results file, before any work: create its folder, write a
    test file beside it (where the atomic rewrite will write), refuse a directory."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise SuiteError(f"output {path} is a directory; give a file name, e.g. {path / 'results.json'}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".check"):
            pass
    except OSError as exc:
        raise SuiteError(f"cannot write the output {path}: {exc.strerror or exc} ({path.parent})") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise SuiteError(f"cannot write the output {path}: the file is read-only")
    return path


def write_atomic(results: dict, path) -> Path:
    """Write ``results`` as JSON to ``path`` through a temporary file beside it and os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(results, indent=2, default=str) + "\n")
        os.replace(tmp, path)
    except BaseException:  # Ctrl-C in the middle of writing: no stray temporary file, the old file stays
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def settings_of(protocol_section: dict) -> dict:
    """What must match for two files to be one suite: the protocol section minus VOLATILE keys."""
    return _json({k: v for k, v in protocol_section.items() if k not in VOLATILE})


def _differences(old: dict, new: dict) -> str:
    keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    shown = ", ".join(f"{k}: {old.get(k)!r} in the file, {new.get(k)!r} now" for k in keys[:3])
    return shown + (f" (and {len(keys) - 3} more)" if len(keys) > 3 else "")


class Suite:
    """One results file being filled (see the module docstring). Make it with :meth:`open`."""

    def __init__(self, path: Path, results: dict, planned: list, writer: bool = True):
        self.path, self.results, self.planned, self.writer = path, results, planned, writer
        self.replace_disk = False  # True (a --fresh start): the first write replaces the file, merging nothing

    @classmethod
    def open(cls, path, task: str, protocol_section: dict, planned, fresh: bool = False,
             environment: dict | None = None, writer: bool = True) -> Suite:
        """Check ``path``, then resume the file there (same suite) or start it (none, or ``fresh``).

        ``planned`` lists (variant, seed); ``protocol_section`` is the results' "protocol" dict
        (with its "environment"). Raises SuiteError for a bad path or another suite's file.
        ``writer=False`` (the other processes of a distributed run) reads but never writes.
        """
        path = prepare_output(path)
        planned = [[v, s] for v, s in planned]
        fresh_results = {"task": task, "protocol": _json(protocol_section), "planned": planned,
                         "complete": False, "runs": [], "diverged": 0}
        if fresh and writer:
            shutil.rmtree(cls.checkpoint_dir_of(path), ignore_errors=True)
        if fresh or not path.exists():
            suite = cls(path, fresh_results, planned, writer)
            suite.replace_disk = fresh
            return suite
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(old, dict) or not isinstance(old.get("runs"), list) or "protocol" not in old:
                raise ValueError("no 'protocol' and 'runs'")
        except (OSError, ValueError) as exc:
            raise SuiteError(f"{path} exists but is not a results file ({exc}); give another --out, or --fresh to "
                             "overwrite it") from None
        if old.get("task") != task:
            raise SuiteError(f"{path} holds {old.get('task')!r} results, not {task!r}; give another --out, or "
                             "--fresh to overwrite it")
        now, then = settings_of(protocol_section), settings_of(old["protocol"])
        if now != then:
            raise SuiteError(f"{path} was written under other settings ({_differences(then, now)}); give another "
                             "--out, or --fresh to start it afresh")
        known = {tuple(p) for p in old.get("planned", [])}
        merged_plan = old.get("planned", []) + [p for p in planned if tuple(p) not in known]
        results = {**old, "planned": merged_plan}
        if environment is not None:
            results.setdefault("resumed_by", []).append({**{k: environment.get(k) for k in
                                                            ("date", "git_commit", "command", "device")},
                                                         "runs_before": len(old["runs"])})
        return cls(path, results, planned, writer)

    # --- the runs ---------------------------------------------------------------------------
    def has(self, variant: str, seed: int) -> bool:
        return any(r.get("variant") == variant and r.get("seed") == seed for r in self.results["runs"])

    def todo(self) -> list:
        """The planned (variant, seed) pairs not yet in the file, in plan order."""
        return [(v, s) for v, s in self.planned if not self.has(v, s)]

    @property
    def saved(self) -> int:
        return len(self.results["runs"])

    def check_data(self, source: str, note: str | None = None) -> None:
        """Refuse to mix runs trained on other data (the data are loaded after the file is opened)."""
        old = self.results["protocol"].get("data_source")
        if self.results["runs"] and old is not None and old != source:
            raise SuiteError(f"{self.path} was trained on other data ({old!r}; now {source!r}); give another "
                             "--out, or --fresh to start it afresh")
        self.results["protocol"].update(data_source=source, data_note=note)

    def add(self, run: dict) -> None:
        """Put a finished run in the file now (atomically)."""
        self.results["runs"].append(_json(run))
        try:
            self.write()
        except BaseException:  # not written (Ctrl-C while writing): not counted as saved
            self.results["runs"].pop()
            raise

    def write(self) -> None:
        if not self.writer:
            return
        if not self.replace_disk:
            self._merge_from_disk()
        runs = self.results["runs"]
        self.results["diverged"] = sum(1 for r in runs if r.get("value") is None)
        self.results["complete"] = all(self.has(v, s) for v, s in self.results["planned"])
        write_atomic(self.results, self.path)
        self.replace_disk = False

    def _merge_from_disk(self) -> None:
        """Keep runs another process added to the file since it was opened (two queues may fill one file
        of the same settings); a file of other settings, or none, is left to the write to replace."""
        try:
            disk = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if settings_of(disk.get("protocol", {})) != settings_of(self.results["protocol"]):
            return
        for run in disk.get("runs", []):
            if not self.has(run.get("variant"), run.get("seed")):
                self.results["runs"].append(run)
        known = {tuple(p) for p in self.results["planned"]}
        self.results["planned"] += [p for p in disk.get("planned", []) if tuple(p) not in known]

    def finish(self) -> dict:
        """The last write; removes the checkpoint folder when nothing is left in it."""
        self.write()
        folder = self.checkpoint_dir
        if self.writer and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        return self.results

    # --- checkpoints of runs in progress ----------------------------------------------------
    @staticmethod
    def checkpoint_dir_of(path: Path) -> Path:
        return path.with_name(path.stem + ".checkpoints")

    @property
    def checkpoint_dir(self) -> Path:
        return self.checkpoint_dir_of(self.path)

    def checkpoint_path(self, variant: str, seed: int) -> Path:
        """Where (variant, seed) keeps its checkpoint: named by the settings' digest, so another
        suite's checkpoint in the same folder is never resumed by mistake."""
        digest = hashlib.sha256(json.dumps(settings_of(self.results["protocol"]), sort_keys=True).encode())
        return self.checkpoint_dir / f"{self.results['task']}-{variant}-s{seed}-{digest.hexdigest()[:10]}.pt"
