"""The research runs stay bit-identical across the move of their training features out of the course loop.

``tests/fixtures/run_seam_baseline.json`` holds, per research path, the losses (full precision), the
learning rates and the stop reason of a short seeded run, recorded on main before the warmup and cosine
schedule, the time budget, checkpoints and torchrun's helpers moved to ``tl_research.run_config``
(``python tests/research/test_run_seam.py --write`` records them again).
"""

import json
import sys
from pathlib import Path

import pytest
import torch

from tl_minimal.training.recipes import fit
from tl_research import distributed
from tl_research.checkpoint import Checkpoint
from tl_research.protocols import protocol
from tl_research.tasks.common import windows

BASELINE = Path(__file__).resolve().parents[1] / "fixtures" / "run_seam_baseline.json"
TINY = {"d_model": 16, "n_layers": 1, "n_heads": 2, "batch_size": 4}


def _run(history: dict) -> dict:
    return {"loss": [repr(v) for v in history["loss"]], "lr": [repr(v) for v in history["lr"]],
            "steps": history["steps"], "stopped": history["stopped"]}


def _batches(sampler, steps: int = 3) -> list:
    return [[int(t) for t in sampler(k)[i].flatten()[:40]] for k in range(steps) for i in (0, 1)]


def record(tmp: Path) -> dict:
    """Every affected research path, seeded, on the CPU."""
    out = {}
    cosine = protocol("recall", steps=6, seq_len=32, warmup_steps=2, lr_schedule="cosine", **TINY)
    out["cosine_warmup"] = _run(fit("triple_latent", cosine, 0, device="cpu", progress=False)[1])
    out["cosine_record"] = cosine.to_dict()
    budget = protocol("recall", steps=6, seq_len=32, **TINY)
    out["time_budget"] = _run(fit("triple_latent", budget, 1, device="cpu", progress=False, max_seconds=1e-9)[1])
    ckpt = tmp / "run.pt"
    first = fit("triple_latent", budget.replace(steps=3), 2, device="cpu", progress=False,
                checkpoint=Checkpoint(ckpt, every=2))[1]
    resumed = fit("triple_latent", budget, 2, device="cpu", progress=False, checkpoint=Checkpoint(ckpt, every=2))[1]
    out["checkpoint_first"], out["checkpoint_resumed"] = _run(first), _run(resumed)
    mqar = protocol("mqar", steps=4, seq_len=48, key_ids=16, hide_answers=True, answer_at_key=True,
                    pairs_mix="4:8", warmup_steps=1, **TINY)
    out["mqar_options"] = _run(fit("triple_latent", mqar, 3, device="cpu", progress=False)[1])
    out["mqar_batches"] = _batches(mqar.sampler(3))
    out["mqar_record"] = mqar.to_dict()
    tokens = torch.Generator().manual_seed(5)
    stream = torch.randint(0, 259, (4000,), generator=tokens)
    out["induction_batches"] = _batches(windows(protocol("induction", seq_len=32), 4, stream))
    tok = protocol("tokenized", steps=3, seq_len=24, d_model=16, n_layers=1)
    ids = torch.randint(0, tok.vocab_size, (3000,), generator=tokens)
    out["tokenized_batches"] = _batches(windows(tok, 1, ids))
    out["tokenized_run"] = _run(fit("triple_latent", tok, 1, sampler=windows(tok, 1, ids), device="cpu",
                                    progress=False)[1])
    lm = protocol("lm", steps=3, seq_len=32, warmup_steps=2, **TINY)
    out["distributed_fit"] = _run(distributed.fit("triple_latent", lm, 0, stream,
                                                  config=lm.train_config(device="cpu", progress=False))[1])
    out["lm_record"] = lm.to_dict()
    return json.loads(json.dumps(out))


@pytest.mark.slow
def test_research_runs_are_bit_identical_to_the_recording(tmp_path):
    expected = json.loads(BASELINE.read_text(encoding="utf-8"))
    got = record(tmp_path)
    for name in expected:
        assert got[name] == expected[name], name


if __name__ == "__main__" and "--write" in sys.argv:
    import tempfile

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        BASELINE.write_text(json.dumps(record(Path(d)), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {BASELINE}")
