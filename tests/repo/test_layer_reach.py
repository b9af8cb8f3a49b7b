"""The triple-latent layer reads in four files: tests/repo/layer_reach.py's limits (issue 51, item 2)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import layer_reach

ROOT = Path(__file__).resolve().parents[2]
MODULES = layer_reach.load_package()
REACH = layer_reach.walk(MODULES)
ROWS = layer_reach.report(REACH, MODULES)


def test_the_script_prints_the_files_and_lines_and_exits_0_within_the_limits():
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "repo" / "layer_reach.py")], capture_output=True,
                         text=True, encoding="utf-8", check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert all(path in out.stdout for path, _ in ROWS) and "kernels.decays" in out.stdout


def test_a_reader_of_the_layer_reads_at_most_4_files_and_400_code_lines():
    total = sum(n for _, n in ROWS)
    assert len(ROWS) <= layer_reach.MAX_FILES and total <= layer_reach.MAX_CODE_LINES, ROWS


def test_the_walk_reaches_the_maths_and_the_one_input_check():
    reached = {name for _, name in REACH.members}
    # the chunked forms, the step forms and the decays, through names imported from other files
    assert {"triple_latent", "triple_latent_step", "running_state_chunked", "pair_readout_chunked",
            "decayed_attention", "decayed_cumsum", "chunk_decays", "pair_memory_step"} <= reached
    # the input checks: one call in forward, none inside the maths
    forward = next(n for n in MODULES["tl_minimal.readout"].defs["TripleLatentMixer"].body
                   if getattr(n, "name", None) == "forward")
    calls = [c.func.id for c in ast.walk(forward) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
    assert [c for c in calls if c.startswith("check_")] == ["check_mixer_call"]
    checks = dict(ROWS)["tl_minimal/checks.py"]
    assert checks < sum(n for _, n in ROWS) / 2  # the maths is the most


def test_the_seam_is_one_call_site_and_what_it_reaches_is_tested_equal_to_plain_torch():
    assert len(REACH.seam_sites) == 1, sorted(REACH.seam_sites)
    kernel_tests = (ROOT / "tests" / "model" / "test_kernels.py").read_text(encoding="utf-8")
    for name in REACH.seam_names:
        assert f"def test_{name}_" in kernel_tests, f"kernels.{name} has no test of its own in test_kernels.py"
    # and the layer that calls it is held equal to its for-loop form
    readout_tests = (ROOT / "tests" / "model" / "test_readout.py").read_text(encoding="utf-8")
    assert "def test_mixer_loop_and_chunked_agree_with_gradients" in readout_tests
