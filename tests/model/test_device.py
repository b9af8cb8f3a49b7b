"""The device helpers: TL_DEVICE, errors that name what is available, per-device options and
random states, each checked here on the CPU with the machine's devices monkeypatched."""

import pytest
import torch

from tl_minimal.training import device
from tl_minimal.training.train import make_optimizer
from tl_research import checkpoint, cli


@pytest.fixture
def mac(monkeypatch):
    """A machine with MPS (as far as the library can tell)."""
    monkeypatch.setattr(device, "available_devices", lambda: ["mps", "cpu"])
    monkeypatch.delenv("TL_DEVICE", raising=False)


def test_auto_prefers_mps_and_tl_device_overrides_it(mac, monkeypatch):
    assert device.get_device() == device.get_device("auto") == torch.device("mps")
    monkeypatch.setenv("TL_DEVICE", "cpu")
    assert device.get_device() == torch.device("cpu") and device.get_device("auto") == torch.device("cpu")
    monkeypatch.setenv("TL_DEVICE", "auto")
    assert device.get_device() == torch.device("mps")


@pytest.mark.parametrize("env, words", [
    ("cuda", "device 'cuda' was asked for by TL_DEVICE=cuda but is not available here; available: mps, cpu"),
    ("tpu", "unknown device 'tpu' (asked for by TL_DEVICE=tpu): expected one of auto, cpu, cuda, mps"),
    ("mps:1", "unknown device 'mps:1'"),
])
def test_a_bad_tl_device_is_the_same_clear_error(mac, monkeypatch, env, words):
    monkeypatch.setenv("TL_DEVICE", env)
    with pytest.raises((RuntimeError, ValueError)) as err:
        device.get_device()
    assert words in str(err.value)


def test_cuda_index_beyond_the_machine_is_an_error(monkeypatch):
    monkeypatch.setattr(device, "available_devices", lambda: ["cuda", "cpu"])
    monkeypatch.setattr(device, "cuda_device_count", lambda: 2)
    assert device.get_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(RuntimeError, match=r"only 2 CUDA device\(s\): cuda:0..cuda:1"):
        device.get_device("cuda:2")


def test_commands_refuse_an_unavailable_tl_device_before_any_work(mac, monkeypatch, capsys):
    monkeypatch.setenv("TL_DEVICE", "cuda")
    assert cli.main(["recall", "--variants", "transformer", "--steps", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: device 'cuda' was asked for by TL_DEVICE=cuda") and "\n" not in err
    assert cli.main(["study", "train", "--variants", "transformer", "--eval-at", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: device 'cuda' was asked for by TL_DEVICE=cuda") and "\n" not in err


def test_fused_adamw_on_accelerators_and_torch_default_on_the_cpu():
    assert device.optimizer_options("cuda:1") == device.optimizer_options("mps") == {"fused": True}
    assert device.optimizer_options("cpu") == {}
    model = torch.nn.Linear(3, 2)
    opt = make_optimizer(model, 1e-3, 0.0)
    assert not opt.defaults["fused"] and not opt.defaults["foreach"]  # the CPU path: unchanged numbers
    fused = make_optimizer(model, 1e-3, 0.0, device="mps")  # this torch has the fused kernel (CPU, MPS)
    assert fused.defaults["fused"] is True


def test_older_torch_without_a_fused_kernel_falls_back_to_foreach(monkeypatch):
    real = torch.optim.AdamW

    def no_fused(params, **kw):
        if kw.get("fused"):
            raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of supported devices")
        return real(params, **kw)

    monkeypatch.setattr(torch.optim, "AdamW", no_fused)
    assert make_optimizer(torch.nn.Linear(3, 2), 1e-3, 0.0, device="cuda").defaults["foreach"] is True


def test_clip_uses_foreach_only_where_torch_has_it():
    assert device.clip_options("cuda") == device.clip_options("cpu") == {"foreach": True}
    assert device.clip_options("mps") == {}
    foreach_utils = pytest.importorskip("torch.utils._foreach_utils")
    has = getattr(foreach_utils, "_device_has_foreach_support", None)
    if has is None:
        pytest.skip("this torch moved its foreach support rule")
    for kind in ("cuda", "cpu", "mps"):  # our rule is torch's rule (if torch adds MPS, this says so)
        assert has(torch.device(kind)) == bool(device.clip_options(kind))


def test_random_states_live_on_the_cpu_and_include_the_accelerators(monkeypatch):
    saved = {}
    monkeypatch.setattr(torch.mps, "get_rng_state", lambda: torch.arange(4, dtype=torch.uint8))
    monkeypatch.setattr(torch.mps, "set_rng_state", lambda s: saved.setdefault("mps", s))
    monkeypatch.setattr(torch.cuda, "get_rng_state", lambda d: torch.full((3,), d.index or 0, dtype=torch.uint8))
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda s, d: saved.setdefault("cuda", (s, d)))
    mps = checkpoint.rng_state("mps")
    assert set(mps) == {"cpu", "mps"} and all(s.device.type == "cpu" and s.dtype == torch.uint8 for s in mps.values())
    cuda = checkpoint.rng_state("cuda:1")
    assert set(cuda) == {"cpu", "cuda"} and cuda["cuda"].tolist() == [1, 1, 1]  # the generator of GPU 1
    assert set(checkpoint.rng_state("cpu")) == {"cpu"}
    checkpoint.set_rng_state(mps, "mps")
    checkpoint.set_rng_state(cuda, "cuda:1")
    assert saved["mps"].tolist() == [0, 1, 2, 3] and saved["cuda"][1] == torch.device("cuda", 1)
    with pytest.warns(UserWarning, match="not bit-exactly"):
        checkpoint.set_rng_state(mps, "cpu")


def test_synchronize_waits_on_the_device_asked_for(monkeypatch):
    seen = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: seen.append(d))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: f"GPU {i}")
    device.synchronize("cuda:1")
    device.synchronize("cpu")
    assert seen == [torch.device("cuda", 1)]
    assert device.device_name("cuda:1") == "GPU 1" and device.device_name("mps") is None
