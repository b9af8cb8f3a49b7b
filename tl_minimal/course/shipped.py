"""Shipped checkpoints: small trained models that come with the repository, for the "look inside" sections.

Two files per model in ``data/checkpoints/`` (package data ``tl_minimal.checkpoint_files`` in a wheel):
``<task>_<variant>_s<seed>_<steps>steps.pt`` (the float32 weights) and ``.json`` (the record: protocol,
command, commit, train time, loss log, evaluation), written by ``python -m tl_research.ship_checkpoint``.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..data import text as data_text
from ..registry import build_model
from ..training.evaluate import unigram_bits
from ..training.protocols import chunk_eval_set, protocol
from ..training.recipes import fit
from .files import checkpoint_dir

FORMAT = "tl_minimal shipped model 2"  # the file format (1.x wrote 1: tl_research.convert reads it)

PACKAGE = "tl_minimal.checkpoint_files"  # what data/checkpoints is called inside a wheel
SHIPPED = ("triple_latent", "triple_slot")  # the lm variants the repository ships (seed 0, 2,000 steps)
SHIPPED_RECALL = ("triple_latent",)  # the recall variants it ships (seed 0, RECALL_STEPS steps)
RECALL_STEPS = 200  # the paper's recall protocol trains 200 steps


class ShippedCheckpointMissing(FileNotFoundError):
    """A shipped checkpoint (or its record) that is not where a clone or an install keeps it."""


TASKS = ("lm", "recall")  # the protocols a shipped model can be trained on


def shipped_paths(variant: str, seed: int = 0, steps: int = 2000, folder=None, task: str = "lm") -> tuple[Path, Path]:
    """(weights ``.pt``, record ``.json``) of a shipped model, e.g. ``lm_triple_latent_s0_2000steps.pt``, in
    ``folder`` (default :func:`checkpoint_dir`)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r} for a shipped model: expected one of {', '.join(TASKS)}")
    stem = Path(folder if folder is not None else checkpoint_dir()) / f"{task}_{variant}_s{seed}_{steps}steps"
    return stem.with_suffix(".pt"), stem.with_suffix(".json")


def remake_command(variant: str, seed: int = 0, steps: int = 2000, task: str = "lm") -> str:
    """The command line that (re)makes a shipped model's two files."""
    on = "" if task == "lm" else f" --task {task}"
    return f"python -m tl_research.ship_checkpoint {variant}{on} --seed {seed} --steps {steps}"


def _require(path: Path, variant: str, seed: int, steps: int, task: str) -> None:
    if not path.is_file():
        raise ShippedCheckpointMissing(
            f"no shipped checkpoint {path}: the repository ships only {', '.join(SHIPPED)} (lm, seed 0, 2000 steps) "
            f"and {', '.join(SHIPPED_RECALL)} (recall, seed 0, {RECALL_STEPS} steps), in "
            f"data/checkpoints/ (in a wheel: {PACKAGE}). "
            f"Make it (a few minutes on a CPU) with: {remake_command(variant, seed, steps, task)}")


def read_record(variant: str, seed: int = 0, steps: int = 2000, folder=None, task: str = "lm") -> dict:
    """The record (JSON, utf-8) of a shipped model: how it was made and what it measured."""
    _, record_path = shipped_paths(variant, seed, steps, folder, task)
    _require(record_path, variant, seed, steps, task)
    return json.loads(record_path.read_text(encoding="utf-8"))


def load_shipped(variant: str, seed: int = 0, steps: int = 2000, folder=None, device="cpu", task: str = "lm"):
    """The shipped trained model (in eval mode, on ``device``) and its record: ``(model, record)``. The weights
    are read as plain data (``weights_only=True``); another variant or format is a ValueError saying so."""
    weights_path, _ = shipped_paths(variant, seed, steps, folder, task)
    _require(weights_path, variant, seed, steps, task)
    record = read_record(variant, seed, steps, folder, task)
    saved = torch.load(weights_path, map_location="cpu", weights_only=True)
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        found = saved.get("format") if isinstance(saved, dict) else None
        raise ValueError(f"{weights_path} is not a shipped tl_minimal 2.0 model (format {found!r}, expected "
                         f"{FORMAT!r}); a 1.x file converts in a clone with: "
                         "python -m tl_research.convert OLD.pt NEW.pt")
    if saved["variant"] != variant:
        raise ValueError(f"{weights_path} holds a {saved['variant']!r} model, not {variant!r}")
    model = build_model(variant, saved["vocab_size"], **saved["config"])
    model.load_state_dict(saved["model"])
    return model.to(device).eval(), record


def shipped_or_retrained(variant: str, retrain: bool = False, data=None, device="cpu", seed: int = 0,
                         steps: int = 2000, task: str = "lm"):
    """The shipped model and its record; ``retrain=True`` trains the model here instead, as it was made (the
    record is returned either way). ``data``: the lm task's training tokens (default: WikiText-2's train split)."""
    model, record = load_shipped(variant, seed, steps, device=device, task=task)
    if retrain:
        p = protocol(task, steps=record["steps"], seeds=(seed,))
        if task == "lm" and data is None:
            data = data_text.load_split("train").tokens
        model, _ = fit(variant, p, seed, data if task == "lm" else None, device=device, progress=True)
        model.eval()
    return model, record


def unigram_on_record_chunks(train_tokens: torch.Tensor, valid_tokens: torch.Tensor, record: dict) -> tuple[float, int]:
    """The unigram baseline (BPB) on the validation chunks a shipped lm model's ``val_bpb`` scored, and how many
    chunks that is: ``(unigram, n_chunks)``; train_tokens, valid_tokens: [N] byte ids of the two splits."""
    if record.get("protocol", {}).get("task") != "lm" or "val_bpb" not in record:
        raise ValueError("a unigram baseline beside a BPB needs a shipped lm model's record (with val_bpb); "
                         f"got one with keys {sorted(record)}")
    chunks = protocol("lm", eval_batches=record["protocol"]["eval_batches"],
                      eval_batch_size=record["protocol"]["eval_batch_size"])
    _, y = chunk_eval_set(valid_tokens, chunks)  # [n_chunks, seq_len]: the bytes val_bpb predicted
    return unigram_bits(train_tokens, y, data_text.VOCAB_SIZE), y.shape[0]
