"""Timing and memory primitives of the speed benchmark (:mod:`tl_research.bench.speed`).

jobs        TrainStep (forward, loss, backward, AdamW), Forward (eval, no_grad),
            NextToken (one model.step continuing a carried state); each has .run(), which
            reads nothing back from the device (the token ids are valid by construction)
interleaved time several jobs in rotated rounds, synchronizing the device around each
            call, so a change of machine load hits every job alike
peak_step_memory_mb
            peak bytes allocated during one call above the level before it: CUDA's own
            counter on CUDA; elsewhere the allocation / free events of torch.profiler
op_profile  CPU time per aten op (and input shapes) of a training step, forward, backward
            and optimizer apart: torch.profiler's per-op times are elapsed time, which on a
            shared CPU mostly measures waiting; this reads the thread's CPU clock around
            every op (a TorchDispatchMode), so it needs no quiet machine
"""

from __future__ import annotations

import collections
import contextlib
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from tl_minimal.checks import trust_ids
from tl_minimal.training.device import synchronize
from tl_minimal.training.train import make_optimizer

VOCAB = 259  # byte-level protocol


class TrainStep:
    """One training step (forward, cross-entropy, backward, AdamW) on fixed random tokens."""

    def __init__(
        self, model, batch: int, seq_len: int, device, lr: float, weight_decay: float, seed: int = 0
    ):
        g = torch.Generator().manual_seed(seed)
        self.model, self.device = model.train(), device
        self.x = torch.randint(0, VOCAB, (batch, seq_len), generator=g).to(device)
        self.y = torch.randint(0, VOCAB, (batch, seq_len), generator=g).to(device)
        self.opt = make_optimizer(model, lr, weight_decay, device=device)  # what train() uses

    def run(self) -> None:
        with trust_ids():  # random ids in [0, VOCAB) by construction: no range check (a device sync)
            logits = self.model(self.x)  # [B, T, V]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.y.reshape(-1))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


class Forward:
    """One forward pass in eval mode without gradients (the paper's throughput measurement)."""

    def __init__(self, model, batch: int, seq_len: int, device, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.model = model.eval()
        self.x = torch.randint(0, VOCAB, (batch, seq_len), generator=g).to(device)

    @torch.no_grad()
    def run(self) -> None:
        with trust_ids():
            self.model(self.x)


class NextToken:
    """One model.step (batch 1) continuing a carried state; the prompt sets the context length."""

    def __init__(self, model, context: int, device, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.model = model.eval()
        prompt = torch.randint(0, VOCAB, (1, context), generator=g).to(device)
        with torch.no_grad():
            logits, self.state = model.run(prompt)
        self.token = logits[:, -1].argmax(-1)  # [1]

    @torch.no_grad()
    def run(self) -> None:
        with trust_ids():  # the token is the model's own argmax
            logits, self.state = self.model.step(self.token, self.state)
        self.token = logits.argmax(-1)  # greedy: the next input depends on this output


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def interleaved(
    jobs: dict, device, warmup: int, reps: int, max_seconds: float | None = None, clock: str = "wall"
) -> dict:
    """Seconds per call of every job, timed in rounds (round r rotates the order of the jobs).

    jobs: {name: object with .run()}. Returns {name: [seconds, ...]}. With ``max_seconds`` the
    rounds stop once that much time has been spent timing (at least 3 rounds are always run),
    and a job's warm-up stops after one call once it has taken a quarter of its share.
    ``clock``: "wall" (elapsed time, what a user waits) or "cpu" (this process's CPU time: with
    one torch thread on a shared CPU it leaves out the time spent waiting for a core).
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    if clock == "cpu" and torch.device(device).type != "cpu":
        raise ValueError("clock='cpu' counts host CPU time only; time an accelerator with clock='wall'")
    now = CLOCKS[clock]
    names = list(jobs)
    for name in names:
        started = time.perf_counter()
        for _ in range(warmup):
            jobs[name].run()
            if max_seconds is not None and time.perf_counter() - started > max_seconds / (4 * len(names)):
                break
    times = {name: [] for name in names}
    spent = 0.0
    for r in range(reps):
        for i in range(len(names)):
            name = names[(r + i) % len(names)]
            synchronize(device)
            t0 = now()
            jobs[name].run()
            synchronize(device)
            times[name].append(now() - t0)
            spent += times[name][-1]
        if max_seconds is not None and r >= 2 and spent > max_seconds:
            break
    return times


@contextlib.contextmanager
def _quiet_stderr():
    """Silence the profiler's C++ start/stop chatter (file descriptor 2) for the block."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _alloc_events(prof):
    """Allocation events (time, bytes, device type) from a torch.profiler run with profile_memory."""
    from torch._C._profiler import _EventType

    stack, found = list(prof.profiler.kineto_results.experimental_event_tree()), []
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.tag == _EventType.Allocation:
            f = node.extra_fields
            found.append((node.start_time_ns, f.alloc_size, torch.device(f.device).type))
    return sorted(found)


def peak_step_memory_mb(job: TrainStep, device) -> float | None:
    """Peak MB allocated during one call of ``job.run()`` above the level before it (see module doc)."""
    device = torch.device(device)
    if device.type == "cuda":
        synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        job.run()
        synchronize(device)
        return (torch.cuda.max_memory_allocated(device) - before) / 2**20
    try:
        from torch.profiler import ProfilerActivity, profile

        with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            job.run()
            synchronize(device)
        live = peak = 0
        for _, size, kind in _alloc_events(prof):
            if kind == device.type:
                live += size
                peak = max(peak, live)
        return peak / 2**20 if peak else None
    except (ImportError, AttributeError, RuntimeError):  # profiler internals moved: say "not measured"
        return None


def median_ms(seconds: list) -> float:
    """The median of times in seconds, in milliseconds."""
    return 1000 * statistics.median(seconds)


def quartiles_ms(seconds: list) -> list:
    """[25th, 75th] percentile of times in seconds, in milliseconds."""
    if len(seconds) < 2:
        return [1000 * seconds[0]] * 2
    q = statistics.quantiles(seconds, n=4, method="inclusive")
    return [1000 * q[0], 1000 * q[2]]


def op_profile(job: TrainStep, reps: int = 3, shapes: bool = True) -> dict:
    """{"forward" | "backward" | "optimizer": [(op, input shapes, ms per step, calls per step)]}.

    Runs ``reps`` training steps of ``job`` with every aten op timed by the thread's CPU clock;
    rows are sorted by time. The per-op bookkeeping adds a few microseconds per op, outside
    the measured intervals. CPU only (an accelerator runs its kernels asynchronously).
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    stats = collections.defaultdict(lambda: [0.0, 0])

    class CPUClock(TorchDispatchMode):
        phase = "forward"

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            t0 = time.thread_time()
            out = func(*args, **(kwargs or {}))
            spent = time.thread_time() - t0
            dims = str([tuple(a.shape) for a in args if isinstance(a, torch.Tensor)][:3]) if shapes else ""
            entry = stats[(self.phase, func.__name__, dims)]
            entry[0] += spent
            entry[1] += 1
            return out

    clock = CPUClock()
    with clock:
        for _ in range(reps):
            clock.phase = "forward"
            logits = job.model(job.x)  # [B, T, V]
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), job.y.reshape(-1))
            job.opt.zero_grad(set_to_none=True)
            clock.phase = "backward"
            loss.backward()
            clock.phase = "optimizer"
            job.opt.step()
    table = {"forward": [], "backward": [], "optimizer": []}
    for (phase, op, dims), (seconds, calls) in stats.items():
        table[phase].append((op, dims, 1000 * seconds / reps, calls // reps))
    return {phase: sorted(rows, key=lambda r: -r[2]) for phase, rows in table.items()}


def format_profile(table: dict, top: int = 15) -> str:
    """op_profile's table as text: each phase's total, its number of ops, and its ``top`` ops."""
    lines = []
    for phase, rows in table.items():
        total, calls = sum(r[2] for r in rows), sum(r[3] for r in rows)
        lines.append(f"  {phase}: {total:.2f} ms CPU time in {calls} ops per step")
        lines += [f"    {ms:8.3f} ms {n:4d}x {op:34s} {dims}" for op, dims, ms, n in rows[:top]]
    return "\n".join(lines)
