"""Small helpers shared by the unit tests (kept generic on purpose)."""

import importlib.metadata
import importlib.util
import os
import shutil
from pathlib import Path

import pytest
import torch

from tl_minimal.data import offline
from tl_minimal.recording import recording


def relative_error(x: torch.Tensor, y: torch.Tensor) -> float:
    """||x - y|| / ||y|| (0 when both are zero): the error measure of the equivalence tests."""
    x, y = x.detach().cpu().double(), y.detach().cpu().double()  # to the CPU first: no float64 on MPS
    denom = y.norm().item()
    diff = (x - y).norm().item()
    return diff if denom == 0 else diff / denom


@pytest.fixture
def rel_err():
    return relative_error


@pytest.fixture
def no_local_data(monkeypatch, tmp_path):
    """No TL_MINIMAL_DATA, an empty Hugging Face cache, no offline variable, and a fresh probe."""
    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)
    for name in (*offline.OFFLINE_VARIABLES, "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(offline, "_probed", [])


def random_gates(shape, regime: str, dtype, generator: torch.Generator) -> torch.Tensor:
    """Gates in (0, 1): 'mid' in [0.2, 0.8], 'near0' log-uniform in [1e-6, 1e-3], 'near1' = 1 - that.

    Values are rounded to float32 first, so float32 and float64 runs see exactly the same gates
    and one float64 reference serves both."""
    u = torch.rand(shape, generator=generator, dtype=torch.float64)
    if regime == "mid":
        g = 0.2 + 0.6 * u
    elif regime in ("near0", "near1"):
        small = 10 ** (-6 + 3 * u)
        g = small if regime == "near0" else 1 - small
    else:
        raise ValueError(f"unknown gate regime {regime!r}")
    return g.float().to(dtype)


def randn(*shape, dtype=torch.float64, generator=None) -> torch.Tensor:
    """Standard normal numbers, rounded to float32 (the same values for every dtype), then cast."""
    return torch.randn(*shape, generator=generator, dtype=torch.float64).float().to(dtype)


def outputs_and_grads(fn, inputs, seed: int = 1):
    """Run ``fn`` on fresh leaf copies of ``inputs`` (None stays None), backpropagate a random linear
    loss sum_k <w_k, y_k> over its output(s), and return (outputs, grads of the non-None inputs).

    The weights w_k come from one generator seeded with ``seed``, so every form of an op sees the
    same loss and their gradients can be compared directly. Outputs come back as a tuple."""
    leaves = [None if x is None else x.detach().clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    gen = torch.Generator().manual_seed(seed)
    sum((y * randn(*y.shape, dtype=y.dtype, generator=gen)).sum() for y in outs).backward()
    return tuple(y.detach() for y in outs), [x.grad for x in leaves if x is not None]


def assert_forms_agree(forms: dict, reference, inputs, tol: float, grad_tol: float,
                       missing_grad_is_zero: bool = False) -> None:
    """Each of ``forms`` (name -> function) on ``inputs`` gives the outputs and gradients of ``reference``
    (the loop form's (outputs, grads) from :func:`outputs_and_grads`, usually in float64) within ``tol``
    and ``grad_tol``. ``missing_grad_is_zero``: an input that changes nothing may get no gradient at all
    (None), which then counts as zeros."""
    ref_outs, ref_grads = reference
    given = [x for x in inputs if x is not None]
    for name, form in forms.items():
        outs, grads = outputs_and_grads(form, inputs)
        assert all(relative_error(y, y_ref) < tol for y, y_ref in zip(outs, ref_outs, strict=True)), name
        for g, g_ref, x in zip(grads, ref_grads, given, strict=True):
            if missing_grad_is_zero:
                g, g_ref = (torch.zeros_like(x) if y is None else y for y in (g, g_ref))
            assert relative_error(g, g_ref) < grad_tol, name


def assert_steps_agree(mixer, n: torch.Tensor, split: int, tol: float = 1e-10) -> tuple:
    """A mixer's whole pass over n [B, T, d] equals its token-by-token pass (T calls with T = 1, the state
    carried) and two pieces split at ``split``, outputs and final state; returns the whole pass's (o, state)."""
    o, state = mixer(n)
    carried, outs = None, []
    for t in range(n.shape[1]):
        o_t, carried = mixer(n[:, t:t + 1], carried)
        outs.append(o_t)
    assert relative_error(torch.cat(outs, dim=1), o) < tol
    assert all(relative_error(carried[key], state[key]) < tol for key in state)
    o1, s1 = mixer(n[:, :split])
    assert relative_error(torch.cat([o1, mixer(n[:, split:], s1)[0]], dim=1), o) < tol
    return o, state


def assert_modes_agree(fast, loop, n: torch.Tensor, weight_seed: int, tol: float = 1e-10,
                       grad_tol: float = 1e-9) -> None:
    """Two copies of a mixer (same weights), ``mode="fast"`` and ``mode="loop"``, give the same outputs and
    final state on n, and the same gradient for every parameter of a weighted sum of the outputs."""
    o, state = fast(n)
    o_loop, state_loop = loop(n)
    assert relative_error(o_loop, o) < tol
    assert all(relative_error(state_loop[key], state[key]) < tol for key in state)
    w = randn(*o.shape, generator=torch.Generator().manual_seed(weight_seed))
    (o * w).sum().backward()
    (o_loop * w).sum().backward()
    for (name, p), q in zip(fast.named_parameters(), loop.parameters(), strict=True):
        assert p.grad is not None and relative_error(p.grad, q.grad) < grad_tol, name


def accelerators() -> list[str]:
    """Non-CPU devices present here ('cuda', 'mps'), for tests that also run on an accelerator."""
    found = []
    if torch.cuda.is_available():
        found.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        found.append("mps")
    return found


def recorded(module, *args, **options):
    """Call ``module(*args)`` while it records (recording.py); returns (its output, its record)."""
    with recording(module, **options):
        out = module(*args)
    return out, module.record



def fla_naive(op: str):
    """flash-linear-attention's ``fla/ops/<op>/naive.py`` (the peer reference of a relative: simple_gla,
    delta_rule, retention, ...), loaded from the installed fla-core (the dev extra) by path.

    Importing it as ``fla.ops.<op>.naive`` runs ``fla/ops/__init__.py``, which imports fla's Triton
    kernels and fails on a machine without triton; the naive file itself needs only torch and einops.
    """
    try:
        dist = importlib.metadata.distribution("fla-core")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("flash-linear-attention (fla-core) is not installed: pip install -e '.[dev]' brings it")
    pytest.importorskip("einops", reason="fla-core's naive references import einops (fla-core's dependency)")
    path = dist.locate_file(f"fla/ops/{op}/naive.py")
    spec = importlib.util.spec_from_file_location(f"fla_naive_{op}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

# --- data: the committed fixture, and the real directory when TL_MINIMAL_DATA is set ----------
FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"  # see its README.md


def data_dirs() -> list:
    """The data directories the data tests run on, as pytest params: the committed fixture
    (always, so a fresh clone without network skips nothing), and the directory
    ``TL_MINIMAL_DATA`` names when it is set (CI sets it to its offline copy of the real data)."""
    dirs = [pytest.param(FIXTURE_DATA, id="fixture")]
    raw = os.environ.get("TL_MINIMAL_DATA", "").strip()
    if raw:
        dirs.append(pytest.param(Path(raw).expanduser().resolve(), id="TL_MINIMAL_DATA"))
    return dirs


def real_data_dir() -> Path:
    """The directory ``TL_MINIMAL_DATA`` names when it is set, else the fixture."""
    return data_dirs()[-1].values[0]


def head_only_copy(root: Path, where: Path) -> Path:
    """A copy of ``root``'s WikiText-2 files in which the train split is only a head
    (``wiki.train.head1MB.txt``, the name an offline copy uses), to test how runs report it."""
    src, dst = root / "wikitext-2-raw", where / "wikitext-2-raw"
    dst.mkdir(parents=True)
    for name in ("wiki.valid.raw", "wiki.test.raw"):
        shutil.copy(src / name, dst / name)
    train = src / "wiki.train.raw"
    shutil.copy(train if train.is_file() else src / "wiki.train.head1MB.txt", dst / "wiki.train.head1MB.txt")
    return where
