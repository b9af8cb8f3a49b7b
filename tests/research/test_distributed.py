"""The lm task under torchrun: two CPU processes (gloo) end with identical parameters."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import real_data_dir
from tl_research import distributed

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_single_process_helpers_are_no_ops():
    assert not distributed.initialized() and distributed.rank() == 0 and distributed.world_size() == 1
    assert distributed.is_main() and distributed.any_rank(True) and not distributed.any_rank(False)


@pytest.mark.slow
def test_two_cpu_processes_stay_in_step(tmp_path):
    out = tmp_path / "ddp.json"
    data = real_data_dir()  # TL_MINIMAL_DATA when set, else the committed fixture
    env = {**os.environ, "TL_MINIMAL_DATA": str(data), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "research")])}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--master_addr=127.0.0.1",
        f"--master_port={_free_port()}",
        "-m",
        "tl_research",
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
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False,
                          encoding="utf-8")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    assert run["world_size"] == 2 and run["ranks_agree"] is True and run["steps"] == 3
    assert done.stdout.count("wrote") == 1  # only rank 0 reports
