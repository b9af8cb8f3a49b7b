"""Shipped checkpoints: small trained models that come with the repository, for the "look inside" sections.

    model, record = load_shipped("triple_latent")          # 2,000 steps of byte-level WikiText-2, seed 0
    record["val_bpb"], record["train_seconds"], record["command"]
    model, record = shipped_or_retrained("triple_latent", retrain=RETRAIN)   # what notebooks 01-04 call

An 80-step model has barely moved from its initialization: its gates sit near where they
started, its pair memory is nearly rank one, its slots nearly uniform. The notebooks therefore
also look inside a model trained 25 times longer, exactly as the committed 2,000-step runs
(``data/results/lm_2000steps.json``) were trained. Training one takes a few minutes on a CPU, so
the repository ships the result: two files per model in ``data/checkpoints/``

    lm_<variant>_s<seed>_<steps>steps.pt     {"format", "variant", "vocab_size", "config", "model"}
                                             (the weights, float32, read with weights_only=True)
    lm_<variant>_s<seed>_<steps>steps.json   the record: protocol, config, command, commit, date, torch
                                             version, train time, the loss log, the validation BPB
                                             (the lm protocol's evaluation) and a small-eval BPB

The command that writes them is ``python -m tl_minimal.experiments.ship_checkpoint`` (its
docstring says how); ``tests/course/test_shipped_checkpoints.py`` retrains a few steps and checks the
losses equal the record's, and checks the weights still give the recorded small-eval BPB.

Where the files are (:func:`checkpoint_dir`): in a clone, ``data/checkpoints`` beside the package
(``tl_minimal/../data/checkpoints``); in a normal install (``pip install .``, a wheel) the same
files ship as the package data ``tl_minimal.checkpoint_files``. A missing file is a
:class:`ShippedCheckpointMissing` that names the path and the command that makes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..convert import SHIPPED as FORMAT
from ..data import text as data_text
from ..registry import build_model
from ..training.protocols import protocol
from ..training.recipes import fit
from .files import checkpoint_dir

PACKAGE = "tl_minimal.checkpoint_files"  # what data/checkpoints is called inside a wheel
SHIPPED = ("triple_latent", "triple_slot")  # the variants the repository ships (seed 0, 2,000 steps)


class ShippedCheckpointMissing(FileNotFoundError):
    """A shipped checkpoint (or its record) that is not where a clone or an install keeps it."""


def shipped_name(variant: str, seed: int = 0, steps: int = 2000) -> str:
    """The file name, without suffix, of a shipped byte-level LM model: ``lm_triple_latent_s0_2000steps``."""
    return f"lm_{variant}_s{seed}_{steps}steps"


def shipped_paths(variant: str, seed: int = 0, steps: int = 2000, folder=None) -> tuple[Path, Path]:
    """(weights ``.pt``, record ``.json``) of a shipped model, in ``folder`` (default :func:`checkpoint_dir`)."""
    stem = Path(folder if folder is not None else checkpoint_dir()) / shipped_name(variant, seed, steps)
    return stem.with_suffix(".pt"), stem.with_suffix(".json")


def remake_command(variant: str, seed: int = 0, steps: int = 2000) -> str:
    """The command line that (re)makes a shipped model's two files."""
    return f"python -m tl_minimal.experiments.ship_checkpoint {variant} --seed {seed} --steps {steps}"


def _require(path: Path, variant: str, seed: int, steps: int) -> None:
    if not path.is_file():
        raise ShippedCheckpointMissing(
            f"no shipped checkpoint {path}: the repository ships only {', '.join(SHIPPED)}, seed 0, 2000 steps, in "
            f"data/checkpoints/ (in a wheel: {PACKAGE}). "
            f"Make it (a few minutes on a CPU) with: {remake_command(variant, seed, steps)}")


def read_record(variant: str, seed: int = 0, steps: int = 2000, folder=None) -> dict:
    """The record (JSON, utf-8) of a shipped model: how it was made and what it measured."""
    _, record_path = shipped_paths(variant, seed, steps, folder)
    _require(record_path, variant, seed, steps)
    return json.loads(record_path.read_text(encoding="utf-8"))


def load_shipped(variant: str, seed: int = 0, steps: int = 2000, folder=None, device="cpu"):
    """The shipped trained model (in eval mode, on ``device``) and its record: ``(model, record)``.

    The weights are read as plain data (``weights_only=True``); a file for another variant or
    another format is a ValueError saying what it holds.
    """
    weights_path, _ = shipped_paths(variant, seed, steps, folder)
    _require(weights_path, variant, seed, steps)
    record = read_record(variant, seed, steps, folder)
    saved = torch.load(weights_path, map_location="cpu", weights_only=True)
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        found = saved.get("format") if isinstance(saved, dict) else None
        raise ValueError(f"{weights_path} is not a shipped tl_minimal 2.0 model (format {found!r}, expected "
                         f"{FORMAT!r}); a 1.x file converts with: python -m tl_minimal.convert OLD.pt NEW.pt")
    if saved["variant"] != variant:
        raise ValueError(f"{weights_path} holds a {saved['variant']!r} model, not {variant!r}")
    model = build_model(variant, saved["vocab_size"], **saved["config"])
    model.load_state_dict(saved["model"])
    return model.to(device).eval(), record


def save_shipped(model, variant: str, vocab_size: int, record: dict, seed: int = 0, steps: int = 2000,
                 folder=None) -> tuple[Path, Path]:
    """Write a trained model's weights (float32) and its record; returns the two paths."""
    weights_path, record_path = shipped_paths(variant, seed, steps, folder)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu", torch.float32) if v.is_floating_point() else v.detach().cpu()
             for k, v in model.state_dict().items()}
    torch.save({"format": FORMAT, "variant": variant, "vocab_size": vocab_size,
                "config": model.config.settings(), "model": state}, weights_path)
    record_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return weights_path, record_path


def shipped_or_retrained(variant: str, retrain: bool = False, data=None, device="cpu", seed: int = 0,
                         steps: int = 2000):
    """The shipped model and its record; ``retrain=True`` trains the model here instead, as it was made.

    What the notebooks' "look inside" sections call: the record (how the shipped model was made) is
    returned either way. ``data``: the training tokens (default: the lm protocol's, WikiText-2's train split).
    """
    model, record = load_shipped(variant, seed, steps, device=device)
    if retrain:
        p = protocol("lm", steps=record["steps"], seeds=(seed,))
        model, _ = fit(variant, p, seed, data_text.load_split("train").tokens if data is None else data,
                       device=device, progress=True)
        model.eval()
    return model, record
