"""Read a model file saved by tl_minimal 1.x with 2.0: one command, the same weights.

    python -m tl_research.convert OLD.pt NEW.pt

What 2.0 no longer reads, and what the conversion writes instead (CHANGELOG.md, 2.0.0):

    shipped model (format "tl_minimal shipped model 1")   format "tl_minimal shipped model 2"
    setting temperature / learnable_temperature           score_scale / learnable_score_scale
    weight kv.log_temperature                              kv.log_score_scale
    variant gated_hybrid (its old name, round 5)           gated_hybrid_repaired

A training checkpoint (format "tl_minimal checkpoint 1", unchanged in 2.0) gets the same weight
rename, so a 1.x run can be resumed. The converted file is checked: a shipped model is rebuilt
from its settings and loads its weights strictly.
"""

from __future__ import annotations

import argparse
import sys

import torch

from tl_minimal.registry import RENAMED, build_model

SHIPPED_1, SHIPPED = "tl_minimal shipped model 1", "tl_minimal shipped model 2"
CHECKPOINT = "tl_minimal checkpoint 1"
RENAMED_SETTINGS = {"temperature": "score_scale", "learnable_temperature": "learnable_score_scale"}
RENAMED_WEIGHTS = {"log_temperature": "log_score_scale"}  # the last part of a state-dict key


def renamed_weights(state: dict) -> dict:
    """``state`` with every 1.x weight name replaced by its 2.0 name (same tensors, same order)."""
    def new(key: str) -> str:
        head, _, last = key.rpartition(".")
        if head and last in RENAMED_WEIGHTS:
            return f"{head}.{RENAMED_WEIGHTS[last]}"
        return RENAMED_WEIGHTS.get(key, key)
    return {new(k): v for k, v in state.items()}


def convert(saved: dict) -> dict:
    """A 1.x shipped model or training checkpoint (as ``torch.load`` gives it) in the 2.0 form."""
    fmt = saved.get("format") if isinstance(saved, dict) else None
    if fmt == SHIPPED:  # a 2.0 file: only a renamed variant changes
        return {**saved, "variant": RENAMED.get(saved["variant"], saved["variant"])}
    if fmt == CHECKPOINT:
        return {**saved, "model": renamed_weights(saved["model"])}
    if fmt != SHIPPED_1:
        raise ValueError(f"not a tl_minimal 1.x model file: format {fmt!r} "
                         f"(expected {SHIPPED_1!r} or {CHECKPOINT!r})")
    config = {RENAMED_SETTINGS.get(k, k): v for k, v in saved["config"].items()}
    out = {**saved, "format": SHIPPED, "variant": RENAMED.get(saved["variant"], saved["variant"]), "config": config,
           "model": renamed_weights(saved["model"])}
    # check: the 2.0 model of these settings takes every weight (strict)
    build_model(out["variant"], out["vocab_size"], **config).load_state_dict(out["model"])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tl_research.convert", description=__doc__.split("\n")[0])
    parser.add_argument("old", help="a model file saved by tl_minimal 1.x (.pt)")
    parser.add_argument("new", help="where to write the 2.0 file")
    args = parser.parse_args(argv)
    saved = torch.load(args.old, map_location="cpu", weights_only=True)
    try:
        converted = convert(saved)
    except ValueError as exc:
        print(f"error: {args.old}: {exc}", file=sys.stderr)
        return 2
    torch.save(converted, args.new)
    print(f"wrote {args.new} ({converted['format']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
