"""The training recipe in one call, ``fit("triple_latent", protocol("lm"), seed=0, device=DEVICE)``: seed,
build with the protocol's sizes, make_sampler (batch k a pure function of (seed, k)), train (notebook 01)."""

from __future__ import annotations

import dataclasses

import torch

from ..data import text as data_text
from ..registry import build_model, setting_names
from .device import get_device
from .train import TrainConfig, seed_everything, train


def count_parameters(model: torch.nn.Module) -> int:
    """Trainable parameters, each shared tensor (the tied embedding) counted once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build(variant: str, protocol, overrides: dict | None = None) -> torch.nn.Module:
    """``tl_minimal.build_model`` with the protocol's model config (and ``--set`` overrides)."""
    return build_model(variant, protocol.vocab_size, **protocol.model_config(overrides, setting_names(variant)))


def seeded_model(variant: str, protocol, seed: int, overrides: dict | None = None) -> torch.nn.Module:
    """Seed every generator with ``seed``, then :func:`build`: the model a run with this seed starts from."""
    seed_everything(seed)
    return build(variant, protocol, overrides)


def make_sampler(protocol, seed: int, data=None, stream: int = 0):
    """The protocol's training batches: ``sampler(step) -> (x, y)``.

    lm: random windows of ``data`` (a token tensor [N]; None loads the WikiText-2 train split);
    recall / mqar: fresh synthetic examples, the protocol's :meth:`~.protocols.RecallProtocol.sampler`
    (its sizes and layout). ``stream`` separates the text windows of several processes (distributed training).
    """
    task = protocol.task
    if task == "lm":
        data = data_text.load_split("train").tokens if data is None else data
        return data_text.WindowSampler(data, protocol.batch_size, protocol.seq_len, seed, stream=stream)
    if task in ("recall", "mqar"):
        layout = protocol.layout()
        if layout.vocab_size > protocol.vocab_size:
            raise ValueError(f"{protocol.n_pairs} pairs among {layout.n_keys} key ids need a vocabulary of "
                             f"{layout.vocab_size} ids, the protocol has {protocol.vocab_size}: "
                             f"--protocol vocab_size={layout.vocab_size}")
        return protocol.sampler(seed)
    raise ValueError(f"no training data for task {task!r}: expected lm, recall or mqar "
                     "(other tasks pass their own sampler)")


def fit(variant: str, protocol, seed: int = 0, data=None, sampler=None, overrides: dict | None = None,
        config: TrainConfig | None = None, **config_changes):
    """Seed, build, sample and train ``variant`` under ``protocol``; returns (model, :func:`train.train`'s history).

    ``data``: a text task's token stream (:func:`make_sampler`); ``sampler``: the batches of a task
    :func:`make_sampler` does not know; ``overrides``: model settings on top of the protocol's (``--set``);
    ``config``: the TrainConfig (default: ``protocol.train_config()``), changed by keywords.
    """
    config = dataclasses.replace(config or protocol.train_config(), **config_changes)
    device = get_device(config.device)
    model = seeded_model(variant, protocol, seed, overrides).to(device)
    if sampler is None:
        sampler = make_sampler(protocol, seed, data)
    history = train(model, sampler, protocol.steps,
                    dataclasses.replace(config, device=device, desc=f"{protocol.task} {variant} s{seed}"))
    return model, history
