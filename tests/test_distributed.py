"""The lm task under torchrun: two CPU processes (gloo) end with identical parameters."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tl_minimal.training import distributed

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TL_MINIMAL_DATA") or ROOT.parent / "shared" / "data")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_single_process_helpers_are_no_ops():
    assert not distributed.initialized() and distributed.rank() == 0 and distributed.world_size() == 1
    assert distributed.is_main() and distributed.any_rank(True) and not distributed.any_rank(False)


@pytest.mark.skipif(not (SHARED / "wikitext-2-raw").is_dir(), reason="offline data not found")
def test_two_cpu_processes_stay_in_step(tmp_path):
    out = tmp_path / "ddp.json"
    env = {**os.environ, "TL_MINIMAL_DATA": str(SHARED), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--master_addr=127.0.0.1",
        f"--master_port={_free_port()}",
        "-m",
        "tl_minimal.experiments",
        "lm",
        "--variants",
        "transformer",
        "--seeds",
        "0",
        "--steps",
        "3",
        "--eval-batches",
        "1",
        "--device",
        "cpu",
        "--no-progress",
        "--set",
        "d_model=16",
        "--set",
        "n_layers=1",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = json.loads(out.read_text())["runs"][0]
    assert run["world_size"] == 2 and run["ranks_agree"] is True and run["steps"] == 3
    assert done.stdout.count("wrote") == 1  # only rank 0 reports
