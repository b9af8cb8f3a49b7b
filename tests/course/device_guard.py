"""A CPU stand-in for an accelerator: run the library as if on Apple MPS (or CUDA) on a machine
without one, and fail where a real MPS or CUDA device would break or slow down.

    with DeviceGuard("mps") as guard:
        device = get_device()                        # torch.device("mps"): the stand-in
        model = build_model(...).to(device)
        train(model, sampler, steps=20, device=device)
    guard.syncs                                      # host-device syncs seen

    python tests/course/device_guard.py [--kind mps|cuda] notebooks/01_running_state.py ...

How it works. A ``torch.overrides.TorchFunctionMode`` sees every torch call. A call that names
the stand-in device (``x.to("mps")``, ``model.to(device)``, ``torch.zeros(..., device=device)``,
``x.cuda()``) runs on the CPU instead, and its results are *tagged* as living on the device.
Results of ops with a tagged input are tagged; ``.cpu()`` / ``.to("cpu")`` return untagged
copies. A tagged tensor reports ``.device == mps:0`` (or cuda:0), so library code that reads
devices behaves as on the real machine. The library's ``available_devices`` says the stand-in
exists, ``torch.Generator("mps")`` gives a CPU generator marked as the device's, and
``torch.mps`` / ``torch.cuda`` get stand-ins for synchronize, random states and device names.
The numbers are the CPU's: only the device semantics are simulated.

What fails, with :class:`DeviceFault` (raised at once and again when the block ends, so code
that catches exceptions cannot hide it):
    float64        a tagged tensor of dtype float64 (MPS has none), including a cast to float64
                   of a tagged tensor before it leaves the device (``x.to("cpu", torch.float64)``)
    mixed devices  an op with a tagged input and an untagged input of more than one number (a
                   0-dim CPU tensor is allowed, as torch allows it); a host tensor indexed by a
                   device tensor
    numpy          ``.numpy()`` (or ``np.asarray``) of a tagged tensor
    generator      a CPU generator drawing numbers for the device, or the device's for the CPU
    rng state      a random state handed to ``set_rng_state`` that is not a CPU uint8 tensor
    syncs          more host-device syncs per training step than ``syncs_per_step`` (0.25): the
                   syncs between one optimizer step and the next are counted per optimizer, and
                   an explicit ``synchronize`` (timing code) does not count.
A host-device sync is a value read back from a tagged tensor: ``.item()``, ``bool()``,
``int()``, ``float()``, ``.tolist()``, ``.cpu()``, ``.to("cpu")``, printing, ``torch.equal``,
and ops whose output size depends on the values (``nonzero``, boolean-mask indexing, ``unique``).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import importlib
import io
import os
import sys
import time
import weakref

import torch
from torch.overrides import TorchFunctionMode

KINDS = ("mps", "cuda")
SYNCS_PER_STEP = 0.25  # the training loop's budget (at most one read per logging interval)
SYNC_OPS = {
    "item", "tolist", "__bool__", "__int__", "__float__", "__index__", "__complex__", "__contains__",
    "__repr__", "__str__", "__format__", "nonzero", "argwhere", "masked_select", "unique",
    "unique_consecutive", "equal", "allclose", "cpu",
}
NUMPY_OPS = {"numpy", "__array__"}
# ops that may take tensors of both devices: metadata checks, and autograd (d device / d host is fine)
METADATA_OPS = {"_has_compatible_shallow_copy_type", "is_same_size", "is_set_to", "_is_zerotensor", "grad", "backward"}
GETTERS_ON_DEVICE = {"grad", "data", "real", "imag", "T", "mT", "H", "mH"}  # attributes that stay on the device


class DeviceFault(BaseException):
    """Code that would break (or run much slower) on a real accelerator. A BaseException, so that
    ``except Exception`` in checkers and notebooks cannot swallow it."""


def _tensors(args, kwargs):
    """Tensors among the arguments, one level into lists and tuples (torch.cat, foreach ops)."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    yield b


def _outputs(out):
    if isinstance(out, torch.Tensor):
        yield out
    elif isinstance(out, (list, tuple)):
        for o in out:
            if isinstance(o, torch.Tensor):
                yield o


def _describe(t: torch.Tensor) -> str:
    return f"{t.dtype} {list(t.shape)}"


class DeviceGuard(TorchFunctionMode):
    """The stand-in device (see the module docstring). ``kind``: "mps" or "cuda"."""

    def __init__(self, kind: str = "mps", syncs_per_step: float = SYNCS_PER_STEP):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.kind, self.syncs_per_step = kind, syncs_per_step
        self.device = torch.device(kind, 0)  # what tagged tensors report, as real ones do
        self.syncs = 0  # every host-device sync seen
        self.sync_kinds = collections.Counter()
        self.explicit_syncs = 0  # synchronize() calls (timing), not counted against training
        self.faults: list[str] = []
        self._tags: dict[int, weakref.ref] = {}
        # optimizer -> [steps done, syncs at the end of step 0]; weak keys, because an id() outlives
        # its optimizer: the next command's optimizer can get the same address and would inherit
        # the old loop's count and every sync made between the two (evaluation, saving)
        self._loops: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._undo: list = []

    # --- tags ---------------------------------------------------------------------------------
    def on(self, t) -> bool:
        """True if ``t`` lives on the stand-in device."""
        ref = self._tags.get(id(t))
        return ref is not None and ref() is t

    def tag(self, t: torch.Tensor) -> None:
        if not self.on(t):
            i = id(t)
            self._tags[i] = weakref.ref(t, lambda _, i=i, tags=self._tags: tags.pop(i, None))

    def untag(self, t: torch.Tensor) -> None:
        self._tags.pop(id(t), None)

    def is_standin(self, device) -> bool:
        if isinstance(device, int) and not isinstance(device, bool):
            return self.kind == "cuda"
        if isinstance(device, (str, torch.device)):
            return torch.device(device).type == self.kind
        return False

    def fault(self, message: str):
        self.faults.append(message)
        raise DeviceFault(message)

    def sync(self, what: str) -> None:
        self.syncs += 1
        self.sync_kinds[what] += 1

    # --- the mode -----------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if type(func).__name__ == "method-wrapper" and name in ("__get__", "__set__"):
            return self._attribute(func, name, args, kwargs)
        if name == "to":
            return self._to(func, args, kwargs)
        if name == "cpu":
            return self._leave(func, args[0], None) if self.on(args[0]) else func(*args, **kwargs)
        if name == "cuda" and self.kind == "cuda":
            return self._arrive(args[0], None)
        if name == "copy_":
            return self._copy(func, args, kwargs)

        factory = "device" in kwargs and self.is_standin(kwargs["device"])
        if factory:
            kwargs = {**kwargs, "device": "cpu"}
        inputs = list(_tensors(args, kwargs))
        tagged = [t for t in inputs if self.on(t)]
        if tagged and name not in METADATA_OPS:
            self._check_mixing(name, args, inputs)
            if name in NUMPY_OPS:
                self.fault(f".numpy() of a device tensor ({_describe(tagged[0])}): move it to the CPU first")
            if name in SYNC_OPS or (name == "__getitem__" and self._bool_index(args)):
                self.sync(name)
        elif name in ("__getitem__", "__setitem__", "index_select") and any(self.on(t) for t in inputs[1:]):
            self.fault(f"{name}: a host tensor indexed with a device tensor")
        on_device = factory or (bool(tagged) and kwargs.get("device") is None)
        self._check_generator(name, kwargs.get("generator"), on_device)
        out = func(*args, **kwargs)
        if on_device and name not in SYNC_OPS:
            for o in _outputs(out):
                if o.dtype in (torch.float64, torch.complex128):
                    self.fault(f"{name} made a {_describe(o)} tensor on the device: MPS has no float64 "
                               "(move to the CPU first, then cast)")
                self.tag(o)
        return out

    def _attribute(self, func, kind, args, kwargs):
        attr = getattr(func.__self__, "__name__", "")
        t = args[0]
        if kind == "__set__":
            out = func(*args, **kwargs)
            if attr == "data":
                (self.tag if self.on(args[1]) else self.untag)(t)
            return out
        if self.on(t):
            if attr == "device":
                return self.device
            if attr in ("is_cuda", "is_mps", "is_cpu"):
                return attr == f"is_{self.kind}"
        out = func(*args, **kwargs)
        if attr in GETTERS_ON_DEVICE and isinstance(out, torch.Tensor) and self.on(t):
            self.tag(out)
        return out

    def _to(self, func, args, kwargs):
        t, rest = args[0], args[1:]
        kwargs = dict(kwargs)
        copy = kwargs.pop("copy", False)
        if rest and isinstance(rest[0], torch.Tensor):  # t.to(other): other's device and dtype
            other = rest[0]
            device, dtype = (self.device if self.on(other) else other.device), other.dtype
            non_blocking = rest[1] if len(rest) > 1 else kwargs.get("non_blocking", False)
        else:
            device, dtype, non_blocking, _ = torch._C._nn._parse_to(*rest, **kwargs)
        if device is not None and self.is_standin(device):
            if not self.on(t):
                return self._arrive(t, dtype)
            out = func(t, dtype=dtype or t.dtype, non_blocking=non_blocking, copy=copy)  # stays on the device
        elif device is not None and device.type == "cpu" and self.on(t):
            return self._leave(func, t, dtype)
        else:  # a dtype change where the tensor is, host to host, or another device (a real error here)
            out = func(*args, **kwargs, **({"copy": copy} if copy else {}))
        if self.on(t) and (device is None or self.is_standin(device)):
            if out.dtype == torch.float64:
                self.fault(f"cast of a device tensor ({_describe(t)}) to float64 on the device: MPS has no float64")
            self.tag(out)
        return out

    def _arrive(self, t, dtype):
        """Host -> device: a tagged copy (never the host tensor itself, which stays a host tensor)."""
        if (dtype or t.dtype) == torch.float64:
            self.fault(f"a float64 tensor ({list(t.shape)}) moved to the device: MPS has no float64")
        out = torch.Tensor.to(t, dtype=dtype or t.dtype, copy=True)
        self.tag(out)
        return out

    def _leave(self, func, t, dtype):
        """Device -> host: an untagged copy, one sync; casting to float64 on the way is a fault."""
        if dtype == torch.float64 and t.dtype != torch.float64:
            self.fault(f"a device tensor ({_describe(t)}) cast to float64 before it left the device: "
                       "MPS has no float64 (use x.cpu().double())")
        self.sync("cpu")
        return torch.Tensor.to(t, "cpu", dtype=dtype or t.dtype, copy=True)

    def _copy(self, func, args, kwargs):
        dst, src = args[0], args[1]
        if self.on(src) and not self.on(dst):
            self.sync("copy_ to the host")
        out = func(*args, **kwargs)
        if self.on(dst) and out.dtype == torch.float64:
            self.fault("copy_ into a float64 device tensor")
        return out

    def _check_mixing(self, name, args, inputs):
        if name in ("__getitem__", "__setitem__", "index_put_", "index_put"):
            if not self.on(args[0]) and any(self.on(t) for t in inputs[1:]):
                self.fault(f"{name}: a host tensor indexed with (or given) a device tensor")
            return  # host indices into a device tensor are fine: torch moves them
        host = [t for t in inputs if not self.on(t) and t.dim() > 0]
        if host:
            self.fault(f"{name} mixes a device tensor with a host tensor of shape {list(host[0].shape)}: "
                       "move it to the device (or make it a 0-dim scalar)")

    def _bool_index(self, args) -> bool:
        index = args[1] if len(args) > 1 else None
        items = index if isinstance(index, tuple) else (index,)
        return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool and self.on(i) for i in items)

    def _check_generator(self, name, generator, on_device):
        if generator is None:
            return
        on_generator = bool(getattr(generator, "standin", False))
        if on_generator != on_device:
            where = ("a CPU generator drawing numbers for the device" if on_device
                     else "the device's generator drawing numbers for the CPU")
            self.fault(f"{name}: {where} (make the generator with torch.Generator(device))")

    # --- training steps -----------------------------------------------------------------------
    def _before_step(self, optimizer, args, kwargs):
        loop = self._loops.get(optimizer)
        if loop is None:
            return
        done, base = loop
        used = self.syncs - base
        if used > max(1.0, self.syncs_per_step * done):
            self.fault(f"{used} host-device syncs in {done} training steps (allowed {self.syncs_per_step:g} "
                       f"per step); syncs so far: {dict(self.sync_kinds)}")

    def _after_step(self, optimizer, args, kwargs):
        loop = self._loops.setdefault(optimizer, [0, self.syncs])
        loop[0] += 1

    # --- entering and leaving -----------------------------------------------------------------
    def _patch(self, owner, name, value):
        self._undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def _set_rng(self, state, *rest):
        if not isinstance(state, torch.Tensor) or self.on(state) or state.dtype != torch.uint8:
            self.fault(f"set_rng_state needs a CPU uint8 tensor (RNG state must be a torch.ByteTensor), got "
                       f"{'a device tensor' if isinstance(state, torch.Tensor) and self.on(state) else type(state)}")
        torch.set_rng_state(state)

    def _grouping(self, original):
        """torch's C++ grouping of tensors by (device, dtype) sees the real CPU: name the stand-in
        for groups of device tensors, as torch would on the real device (clip_grad_norm_, AdamW)."""

        def group(tensorlistlist, with_indices=False):
            groups = original(tensorlistlist, with_indices)
            return {(self.device if any(self.on(t) for t in lists[0] if t is not None) else device, dtype): lists_idx
                    for (device, dtype), lists_idx in groups.items()
                    for lists in [lists_idx[0]]}

        return group

    def _explicit_sync(self, *args, **kwargs):
        self.explicit_syncs += 1

    def __enter__(self):
        from tl_minimal.training import device as device_module

        guard, kind = self, self.kind

        class StandInGenerator(torch._C.Generator):
            """torch.Generator: a CPU generator; made for the stand-in device, it counts as the device's."""

            def __new__(cls, device="cpu"):
                return super().__new__(cls, "cpu" if guard.is_standin(device) else device)

            def __init__(self, device="cpu"):
                self.standin = guard.is_standin(device)

            @property
            def device(self):
                return guard.device if self.standin else super().device

        self._patch(device_module, "available_devices", lambda: [kind, "cpu"])
        # constants the library caches per device (running_state.segment_matrices) were made on the CPU
        # or under another guard, whose tags this one does not know: start with an empty cache
        # (the package's ``running_state`` is the function: import the module by its full name)
        running_state_module = importlib.import_module("tl_minimal.running_state")
        self._patch(running_state_module, "segment_matrices",
                    functools.cache(running_state_module.segment_matrices.__wrapped__))
        self._patch(device_module, "cuda_device_count", lambda: 1 if kind == "cuda" else 0)
        self._patch(torch, "Generator", StandInGenerator)
        self._patch(torch._C, "_group_tensors_by_device_and_dtype",
                    self._grouping(torch._C._group_tensors_by_device_and_dtype))
        backend = torch.mps if kind == "mps" else torch.cuda
        self._patch(backend, "synchronize", self._explicit_sync)
        self._patch(backend, "get_rng_state", lambda *a: torch.get_rng_state())
        self._patch(backend, "set_rng_state", self._set_rng)
        if kind == "cuda":
            for name, value in (("get_device_name", lambda *a: "CPU stand-in for CUDA"),
                                ("current_device", lambda: 0), ("device_count", lambda: 1),
                                ("memory_allocated", lambda *a: 0), ("max_memory_allocated", lambda *a: 0),
                                ("reset_peak_memory_stats", lambda *a: None)):
                self._patch(torch.cuda, name, value)
        else:
            for name in ("current_allocated_memory", "driver_allocated_memory"):
                self._patch(torch.mps, name, lambda: 0)
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        self._hooks = [register_optimizer_step_pre_hook(self._before_step),
                       register_optimizer_step_post_hook(self._after_step)]
        return super().__enter__()

    def __exit__(self, exc_type, exc, tb):
        super().__exit__(exc_type, exc, tb)
        for hook in self._hooks:
            hook.remove()
        for owner, name, value in reversed(self._undo):
            setattr(owner, name, value)
        self._undo.clear()
        if self.faults and exc_type is None:
            raise DeviceFault(self.faults[0] + (f" (and {len(self.faults) - 1} more)" if len(self.faults) > 1 else ""))
        return False


# ----------------------------------------------------------------------------- notebooks as scripts
def run_scripts(paths, kind: str = "mps") -> int:
    """Run each notebook script (jupytext percent format) under a fresh guard; 0 if all pass."""
    import matplotlib

    matplotlib.use("Agg")
    import runpy
    import warnings

    import matplotlib.pyplot as plt

    warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() under Agg
    failed, here = 0, os.getcwd()
    for path in paths:
        path = os.path.abspath(path)
        out, started = io.StringIO(), time.perf_counter()
        try:
            os.chdir(os.path.dirname(path))
            with contextlib.redirect_stdout(out), DeviceGuard(kind):
                runpy.run_path(path, run_name="__main__")
            status = "ok"
        except (DeviceFault, Exception) as exc:  # report every notebook, then fail
            failed += 1
            status = f"FAILED: {type(exc).__name__}: {exc}\n    last output: {out.getvalue()[-600:]!r}"
        finally:
            os.chdir(here)
            plt.close("all")
        print(f"{os.path.relpath(path, here)} [{kind} stand-in] {time.perf_counter() - started:.1f} s {status}",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="run notebook scripts on a CPU stand-in for MPS or CUDA")
    parser.add_argument("--kind", choices=KINDS, default="mps")
    parser.add_argument("paths", nargs="+")
    ns = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    sys.exit(run_scripts(ns.paths, ns.kind))
