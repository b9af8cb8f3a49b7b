"""Scale-out for the byte-level LM task: DistributedDataParallel under ``torchrun``.

Glossary
    world size  W      number of processes (``torchrun --nproc_per_node=W``)
    rank        r      this process, 0..W-1; rank 0 ("main") prints, evaluates and writes results
    local rank         the GPU index of this process on its machine
    backend            "nccl" on GPUs, "gloo" on CPUs

How it works: every rank builds the same model, DDP copies rank 0's parameters to all ranks,
each rank draws *different* training windows (the sampler's stream is the rank), and after
each backward pass DDP averages the gradients, so all ranks take the same optimizer step and
stay identical. The batch size in the protocol is per rank: the global batch is W x batch.

Usage (see data/README.md):
    torchrun --nproc_per_node=2 -m tl_research lm --variants transformer --seeds 0
Outside torchrun (no WORLD_SIZE in the environment) everything here is a no-op and :func:`fit` is
the course's recipe. The course's training loop knows nothing of ranks: :class:`~.run_config.RunConfig`
makes all ranks stop together (a NaN loss, a time budget) and rank 0 alone save; :func:`fit` lets rank 0
alone show progress.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

import torch
import torch.distributed as dist

from tl_minimal.training.device import get_device
from tl_minimal.training.recipes import make_sampler, seeded_model
from tl_minimal.training.train import TrainConfig, train


def launched() -> bool:
    """True when this process was started by torchrun with more than one process."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def initialized() -> bool:
    return dist.is_available() and dist.is_initialized()


def is_main() -> bool:
    """Rank 0, or the only process: the one that shows progress and saves."""
    return not initialized() or dist.get_rank() == 0


def any_rank(flag: bool) -> bool:
    """True on every rank if ``flag`` is True on at least one (so all ranks stop together)."""
    if not initialized():
        return flag
    t = torch.tensor([1.0 if flag else 0.0])
    if dist.get_backend() == "nccl":
        t = t.cuda()
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def rank() -> int:
    return dist.get_rank() if initialized() else 0


def world_size() -> int:
    return dist.get_world_size() if initialized() else 1


def setup(device: torch.device) -> torch.device:
    """Join the process group torchrun prepared; returns this rank's device.

    ``device`` is the device the user asked for: on CUDA each rank takes GPU ``LOCAL_RANK``
    and the backend is nccl; otherwise gloo on the CPU.
    """
    if not launched() or initialized():
        return device
    if device.type == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if local >= torch.cuda.device_count():
            raise RuntimeError(f"LOCAL_RANK {local} but only {torch.cuda.device_count()} GPU(s) here")
        torch.cuda.set_device(local)
        dist.init_process_group("nccl")
        return torch.device("cuda", local)
    if device.type != "cpu":
        raise RuntimeError(
            f"DistributedDataParallel here supports cuda (nccl) and cpu (gloo), not {device.type}"
        )
    dist.init_process_group("gloo")
    return device


def wrap(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """Wrap ``model`` (already on ``device``) in DDP when running distributed; else return it."""
    if not initialized():
        return model
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)


def parameter_digest(model: torch.nn.Module) -> str:
    """sha256 of all parameter bytes (CPU copies), in named order: equal digests = equal parameters."""
    h = hashlib.sha256()
    for name, p in model.named_parameters():
        h.update(name.encode())
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def ranks_agree(model: torch.nn.Module) -> bool:
    """Gather every rank's :func:`parameter_digest` and say whether they are all the same."""
    mine = parameter_digest(model)
    if not initialized():
        return True
    everyone = [None] * world_size()
    dist.all_gather_object(everyone, mine)
    return all(d == mine for d in everyone)


def barrier() -> None:
    if initialized():
        dist.barrier()


def teardown() -> None:
    if initialized():
        dist.destroy_process_group()


def fit(variant: str, protocol, seed: int, data=None, overrides: dict | None = None,
        config: TrainConfig | None = None):
    """The course's :func:`~tl_minimal.training.recipes.fit` under torchrun: each rank joins the process
    group, wraps the model in DDP and draws its own batches (``stream=rank``); without torchrun it is
    the same run, step for step. Returns (model, history); ``model`` may be the DDP wrapper."""
    config = config or protocol.train_config()
    if launched() and type(config).agree is TrainConfig.agree:  # the course's: each rank on its own
        raise TypeError("under torchrun the train config must be a tl_research.run_config.RunConfig (it keeps "
                        f"the ranks in step), got a {type(config).__name__}: use protocol.train_config()")
    device = setup(get_device(config.device))
    model = wrap(seeded_model(variant, protocol, seed, overrides).to(device), device)
    sampler = make_sampler(protocol, seed, data, stream=rank())
    history = train(model, sampler, protocol.steps, dataclasses.replace(
        config, device=device, desc=f"{protocol.task} {variant} s{seed}", progress=config.progress and is_main()))
    return model, history
