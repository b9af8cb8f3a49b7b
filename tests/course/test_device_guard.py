"""Every variant, metric, plot, widget, notebook and exercise solution on a CPU stand-in for MPS
(and CUDA): what would break or slow down on a real accelerator fails here (tests/course/device_guard.py).

First the guard itself: each fault it exists to catch, on a small deliberately wrong snippet.
Then the library under it, then the notebooks as scripts in one subprocess.
"""

from __future__ import annotations

import gc
import inspect
import math
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from device_guard import DeviceFault, DeviceGuard

from conftest import real_data_dir
from tl_minimal import VARIANTS, build_model, get_device
from tl_minimal.conv import conv_fast
from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.registry import RESEARCH_VARIANTS  # registered: this file imports tl_research
from tl_minimal.training.evaluate import mean_token_loss, recall_accuracy
from tl_minimal.training.train import LOG_EVERY, seed_everything, train
from tl_minimal.views import plots, plots_conv, plots_retrieval, plots_slots, widgets
from tl_research.checkpoint import Checkpoint, load_checkpoint
from tl_research.run_config import RunConfig

ROOT = Path(__file__).resolve().parents[2]
TINY = {"d_model": 16, "n_layers": 1, "n_heads": 2, "max_seq_len": 32, "dropout": 0.1}


@pytest.fixture(autouse=True)
def _close_figures_and_no_tl_device(monkeypatch):
    monkeypatch.delenv("TL_DEVICE", raising=False)  # "auto" must find the stand-in
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- the guard catches
def _fault(snippet, words, kind="mps"):
    with pytest.raises(DeviceFault, match=words), DeviceGuard(kind):
        snippet(torch.device(kind))


def test_a_device_tensor_reports_the_stand_in_and_leaves_by_copy():
    with DeviceGuard("mps") as guard:
        host = torch.ones(3)
        dev = host.to(get_device())
        assert get_device() == torch.device("mps") and dev.device == torch.device("mps", 0)
        assert host.device.type == "cpu" and guard.on(dev) and not guard.on(host)  # the host tensor stays
        back = (dev * 2).cpu()
        assert back.device.type == "cpu" and not guard.on(back) and guard.syncs == 1
        model = torch.nn.Linear(3, 2).to("mps")
        assert all(p.device.type == "mps" for p in model.parameters())
        model(dev).sum().backward()
        assert model.weight.grad.device.type == "mps"


def test_float64_on_the_device_is_caught():
    _fault(lambda d: torch.zeros(3, device=d).double(), "float64")
    _fault(lambda d: torch.zeros(3, device=d, dtype=torch.float64), "float64")
    _fault(lambda d: torch.zeros(3, dtype=torch.float64).to(d), "float64")


def test_casting_to_float64_before_leaving_the_device_is_caught():
    # the old plots._numpy: x.detach().to("cpu", torch.float64) casts on MPS (blank heatmaps)
    _fault(lambda d: torch.ones(3, device=d).detach().to("cpu", torch.float64), "before it left the device")
    with DeviceGuard("mps"):
        assert torch.ones(3, device="mps").cpu().double().dtype == torch.float64  # the right order


def test_mixing_a_device_tensor_with_a_host_tensor_is_caught():
    # the old exercises/trained.py: torch.arange without device= added to device embeddings
    _fault(lambda d: torch.ones(2, 3, device=d) + torch.arange(3), "mixes a device tensor with a host tensor")
    _fault(lambda d: torch.cat([torch.ones(2, device=d), torch.ones(2)]), "mixes")
    _fault(lambda d: torch.ones(4)[torch.tensor([1], device=d)], "host tensor indexed")
    with DeviceGuard("mps"):
        x = torch.ones(3, device="mps")
        x[torch.tensor([0, 2])] * torch.tensor(2.0)  # 0-dim host scalars and host indices are fine


def test_a_model_left_on_the_host_with_device_inputs_is_caught():
    # the old diagnose_recall.read_gate_gradient: model(x) with x on the CPU, the model on the device
    model = torch.nn.Embedding(5, 3)
    _fault(lambda d: model.to(d)(torch.tensor([[1, 2]])), "mixes")


def test_numpy_of_a_device_tensor_is_caught():
    _fault(lambda d: torch.ones(3, device=d).numpy(), "numpy")
    _fault(lambda d: np.asarray(torch.ones(3, device=d)), "numpy")


def test_a_cpu_generator_drawing_device_numbers_is_caught():
    _fault(lambda d: torch.randn(3, device=d, generator=torch.Generator()), "CPU generator")
    _fault(lambda d: torch.multinomial(torch.ones(2, 4, device=d), 1, generator=torch.Generator()), "CPU generator")
    _fault(lambda d: torch.randn(3, generator=torch.Generator(d)), "device's generator drawing numbers for the CPU")
    with DeviceGuard("mps"):
        g = torch.Generator("mps").manual_seed(0)
        assert g.device.type == "mps" and torch.randn(3, device="mps", generator=g).device.type == "mps"


def test_a_random_state_restored_from_the_device_is_caught():
    # the old load_checkpoint: map_location=device moved the saved RNG bytes onto the device
    _fault(lambda d: torch.mps.set_rng_state(torch.get_rng_state().to(d)), "ByteTensor")
    _fault(lambda d: torch.cuda.set_rng_state(torch.get_rng_state().to(d)), "ByteTensor", kind="cuda")


def test_a_sync_every_training_step_is_caught():
    def loop(d):
        model = torch.nn.Linear(3, 1).to(d)
        opt = torch.optim.AdamW(model.parameters())
        for _ in range(5):
            loss = model(torch.ones(2, 3, device=d)).pow(2).mean()
            print(loss.item())  # the old train.py: one read per step
            opt.zero_grad()
            loss.backward()
            opt.step()

    _fault(loop, "host-device syncs in 2 training steps")


def test_a_new_optimizer_starts_its_own_sync_count():
    """Reads between two trainings (an evaluation, a report) belong to neither loop, even when the
    second optimizer lands at the first one's freed address (what made CI fail once)."""
    def train_quietly(d, steps):
        model = torch.nn.Linear(3, 1).to(d)
        opt = torch.optim.AdamW(model.parameters())
        for _ in range(steps):
            loss = model(torch.ones(2, 3, device=d)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return model

    with DeviceGuard("mps") as guard:
        d = torch.device("mps")
        for _ in range(20):  # freed optimizers: CPython often hands the next one the same id()
            model = train_quietly(d, 3)
            model.weight.tolist(), model.bias.cpu()  # two reads after training, as a report does
            del model
        gc.collect()  # should an optimizer sit in a reference cycle, its entry goes with it
        assert len(guard._loops) == 0 and guard.syncs == 40


def test_a_fault_swallowed_by_except_exception_still_fails_the_block():
    with pytest.raises(DeviceFault, match="float64"), DeviceGuard("mps"):
        try:
            torch.ones(2, device="mps").double()
        except Exception:  # what a checker does with a student's error
            pass


def test_the_guard_leaves_torch_as_it_found_it():
    before = (torch.Generator, torch.mps.synchronize, torch._C._group_tensors_by_device_and_dtype)
    with DeviceGuard("cuda"):
        assert get_device() == torch.device("cuda")
    assert (torch.Generator, torch.mps.synchronize, torch._C._group_tensors_by_device_and_dtype) == before
    assert get_device("cpu").type == "cpu"


# ----------------------------------------------------------------------------- the library under the guard
def _lm(variant, seed=0):
    seed_everything(seed)
    return build_model(variant, data_text.VOCAB_SIZE, **TINY)


def _text_sampler(seed=0):
    tokens = torch.randint(0, 256, (4000,), generator=torch.Generator().manual_seed(1))
    return tokens, data_text.WindowSampler(tokens, 4, TINY["max_seq_len"], seed)


@pytest.mark.slow
@pytest.mark.parametrize("variant", (*VARIANTS, *RESEARCH_VARIANTS))
def test_every_variant_trains_evaluates_generates_and_shows_its_internals(variant):
    steps = 2 * LOG_EVERY + 2
    tokens, sampler = _text_sampler()
    with DeviceGuard("mps") as guard:
        model = _lm(variant)
        history = train(model, sampler, steps, lr=3e-3, progress=False)  # device: auto -> the stand-in
        assert len(history["loss"]) == steps and all(np.isfinite(history["loss"]))
        assert guard.syncs / steps <= 0.25, guard.sync_kinds  # the whole call, first and last steps too
        assert next(model.parameters()).device.type == "mps"

        guard.syncs = 0
        batches = data_text.eval_batches(tokens, TINY["max_seq_len"], 4, max_batches=3)
        assert np.isfinite(mean_token_loss(model, batches)) and guard.syncs == 1  # one read, not one per batch

        x, y = data_recall.eval_set(6, seq_len=TINY["max_seq_len"])
        guard.syncs = 0
        assert 0.0 <= recall_accuracy(model, x, y, batch_size=2)["accuracy"] <= 1.0
        assert guard.syncs == 1  # the whole set's hits come back at once (not one read per batch)

        prompt = data_text.encode("ab")[None].to("mps")
        guard.syncs = 0
        if variant != "gated_hybrid_paper":  # the paper's leaky convolution cannot continue a state
            out = model.generate(prompt, 8, temperature=0.8, top_k=5, generator=torch.Generator("mps").manual_seed(0))
            assert out.shape == (1, prompt.shape[1] + 8) and guard.syncs <= 1  # the prompt's check, no per-token sync
        logits, record = model.internals(prompt, snapshot_at=(1,), attention=True)
        assert logits.device.type == "mps" and record["layers"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mps", "cuda"])
def test_a_checkpoint_resumes_bit_exactly_on_the_device(kind, tmp_path):
    _, sampler = _text_sampler()
    with DeviceGuard(kind):
        full = train(_lm("triple_latent"), sampler, 8, lr=3e-3, progress=False, seed=3)["loss"]
        ckpt = tmp_path / "run.pt"
        train(_lm("triple_latent"), sampler, 4, RunConfig(lr=3e-3, progress=False, seed=3, checkpoint=Checkpoint(ckpt)))
        seed_everything(99)  # disturb every generator: resuming restores them
        resumed = train(_lm("triple_latent"), sampler, 8, RunConfig(lr=3e-3, progress=False,
                                                                   checkpoint=Checkpoint(ckpt)))["loss"]
        assert resumed == full  # dropout included: the device generator's state came back
        assert load_checkpoint(ckpt, _lm("triple_latent").to(kind))["rng"]["torch"].keys() == {"cpu", kind}


@pytest.mark.slow
def test_the_commands_run_on_the_device(tmp_path, capsys):
    from tl_research import cli
    from tl_research.studies.diagnose_recall import read_gate_gradient, retrieval_report

    with DeviceGuard("cuda"):
        out = tmp_path / "r.json"
        assert cli.main(["recall", "--variants", "gated_hybrid_repaired", "--seeds", "0", "--steps", "3",
                         "--eval-examples",
                         "16", "--set", "d_model=16", "--set", "n_layers=1", "--no-progress", "--out", str(out)]) == 0
        written = out.read_text(encoding="utf-8")
        assert '"device": "cuda"' in written and "CPU stand-in for CUDA" in written
        assert cli.main(["study", "train", "--variants", "transformer", "--seeds", "0", "--eval-at", "2",
                                  "--eval-examples", "16", "--set", "d_model=16", "--set", "n_layers=1"]) == 0
    with DeviceGuard("mps"):
        model = build_model("gated_hybrid_paper", 64, **TINY).to("mps")
        x, y = data_recall.eval_set(4, seq_len=32)
        assert retrieval_report(model, x, y)["correct"].shape == (4,)
        assert read_gate_gradient(model, x, y)["value_grad"] >= 0
    capsys.readouterr()


# ----------------------------------------------------------------------------- every picture
def _public(module):
    return {n for n, f in vars(module).items()
            if inspect.isfunction(f) and f.__module__ == module.__name__ and not n.startswith("_")}


@pytest.mark.slow
def test_every_plot_and_widget_helper_takes_device_tensors():
    drawn = set()

    def call(module, name, *args, **kwargs):
        drawn.add((module.__name__, name))
        return getattr(module, name)(*args, **kwargs)

    with DeviceGuard("mps"):
        d = get_device()
        lm = _lm("triple_latent").to(d).eval()
        kv = build_model("gated_hybrid_paper", 64, **TINY).to(d)
        text = widgets.byte_prompt("hello there", 32)
        tokens = call(widgets, "byte_prompt", "hello there", 32).to(d)
        call(plots, "byte_label", 65)
        labels = call(plots, "token_labels", tokens)
        call(plots, "token_strip", labels, ids=tokens.tolist())
        x, y = data_recall.eval_set(2, seq_len=32)
        call(plots, "recall_strip", x[0].to(d), y[0].to(d))
        call(plots, "half_life", 0.9)
        call(plots, "pulse_response", 0.9, 8)
        call(plots, "pulse_memory", (0.5, 0.9), 8)
        M = torch.randn(3, 3, device=d)
        call(plots, "as_numpy", M)
        call(plots, "matrix_heatmap", M)
        call(plots, "outer_product_step", M[0], M[1], M, M, 0.5, t=1)
        snaps = call(plots, "model_pair_memories", lm, tokens, [0, 3])[0]
        call(plots, "pair_memory_grid", {t: P.to(d) for t, P in snaps.items()})
        gates = call(plots, "model_gates", lm, tokens, "lam")
        call(plots, "gate_heatmaps", gates.to(d))
        call(plots, "loss_curves", {"a": {"loss": [3.0, 2.0, 1.5]}}, bits=True)
        call(plots, "metric_bars", {"a": 2.0}, {"a": 2.1})
        g = torch.rand(6, 2, 3, device=d).softmax(-1)
        call(plots_slots, "slot_usage", g)
        call(plots_slots, "spectra", {"P": M})
        call(plots_slots, "toy_memories", M.abs(), {"a": M.abs(), "b": M.abs() / 2, "c": M.abs() / 3})
        call(plots_slots, "entropy_bars", {80: torch.rand(1, 2, device=d)}, math.log(3))
        runs = {s: {"dense": torch.randn(4, 2, 3, 3, device=d), "slot": torch.randn(4, 2, 3, 3, device=d),
                    "cos": torch.rand(4, 2, device=d),
                    "reads": (torch.rand(4, 2, device=d), torch.rand(4, 2, device=d))} for s in (80, 2000)}
        call(plots_slots, "dense_against_slots", runs, t=1, head=0)
        call(plots_slots, "memories_alike", runs, head=0)
        call(plots_slots, "slot_widget", _lm("triple_slot").to(d).eval(), "a sentence", 32, 80)
        W, c = torch.randn(3, 3, 4, device=d), torch.randn(3, device=d)
        influence = call(plots_conv, "conv_influence", lambda v: conv_fast(v.to(d), W, c, causal=True), T=6, d=3)
        call(plots_conv, "influence_maps", {"x2": influence})
        call(plots_conv, "tap_norms", {"k": (torch.randn(2, 2, 5, device=d), True)})
        call(plots_retrieval, "prediction_strips", tokens[:4], {"m": lm(tokens[None])[0, :4].argmax(-1)})
        call(plots_retrieval, "recall_sequence", [(5, 13), (6, 20)], ask=6, n_filler=3)
        read = call(plots_retrieval, "read_at", kv, x.to(d), y.to(d))
        _, ax = plt.subplots()
        call(plots_retrieval, "position_bars", ax, read["weights"][0].to(d))
        marks = call(plots_retrieval, "recall_marks", x[0].to(d), y[0].to(d))
        call(plots_retrieval, "retrieval_grid", {"m": [{"values": read["weights"][0].to(d), "marks": marks}]})
        call(plots_retrieval, "read_panels", read, read, x.to(d), y.to(d))
        call(plots_retrieval, "state_sizes", [1, 2], {"cache": [2, 4]})
        call(plots_retrieval, "perfect_match", [1.0, 2.0], [0.3, 0.5], 1.0, 2.0)
        call(plots_retrieval, "cosines_at_init", {"a": [torch.rand(5, device=d)]}, {"a": [torch.rand(5, device=d)]})
        call(plots_retrieval, "recall_training", {"a": {"loss": [2.0, 1.5]}}, {"a": 0.5}, steps=2)
        gates = {key: torch.rand(2, 1, 8, 2, device=d) for key in ("lam", "gam")}
        call(plots_retrieval, "gates_along_recall", gates, (2, 5))
        call(plots_retrieval, "kept_across_gap", {key: -torch.rand(2, 1, 2, device=d) for key in ("lam", "gam")}, 3)
        call(plots_retrieval, "gradient_reach", [{"variant": "a", "reach": [1.0, 0.5, 0.0], "pair_reach": 0.0}])
        call(plots, "labelled", plt.subplots()[1], legend=None, xlabel="x")
        call(plots, "finish", plt.figure(), "title")
        call(widgets, "interactive", lambda lam: plots.pulse_memory((lam,), 8), lam=widgets.Slider(0.5, 0.1, 0.9, 0.1))
        call(widgets, "pulse_memory_widget", 0.8)
        call(widgets, "pair_memory_widget", {t: P.to(d) for t, P in snaps.items()}, plots.token_labels(text))
        call(widgets, "gate_widget", lm, "a sentence", key="lam")
        call(widgets, "option_values", [("λ", "lam"), "gam"])
        call(widgets, "pair_rule")
        call(widgets, "parse_pairs", "k5=v13 k6=v20")
        call(widgets, "recall_widget", {"kv": kv}, pairs="k5=v13 k6=v20", ask="k6", filler=3, max_len=32)
        widgets.recall_widget({"kv": kv}, pairs="k5=v13 k6=v20", ask="k6", filler=3, max_len=32, static=False)
    modules = (plots, plots_slots, plots_conv, plots_retrieval, widgets)
    missing = {(m.__name__, n) for m in modules for n in _public(m)} - drawn
    assert missing <= {("tl_minimal.views.widgets", "has_frontend")}, f"not drawn under the guard: {missing}"


# ----------------------------------------------------------------------------- notebooks
@pytest.mark.slow
@pytest.mark.repo
def test_every_notebook_and_exercise_solution_runs_on_the_stand_in():
    scripts = sorted(ROOT.glob("notebooks/[0-9]*.py")) + sorted(ROOT.glob("notebooks/exercises/solutions/*.py"))
    assert len(scripts) >= 15
    # the data: TL_MINIMAL_DATA when set, else the committed fixture, so that a fresh clone without
    # network runs notebooks 05-07 too (they train on text; smoke mode needs only a few KB of it)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "research")]), "TL_SMOKE": "1",
           "MPLBACKEND": "Agg", "TL_DEVICE": "",
           "OMP_NUM_THREADS": "1",  # tiny models: one thread is faster than two waiting on each other
           "TL_MINIMAL_DATA": str(real_data_dir())}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("device_guard.py")), *map(str, scripts)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False, encoding="utf-8")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
