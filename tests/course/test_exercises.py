"""The classroom exercises: solutions pass, blanks say "not done yet", typical mistakes get their hint.

The solutions' functions are read from notebooks/exercises/solutions/*.py (every top-level
``def``), the blanks' from notebooks/exercises/*.py, so the tests check exactly what students
and instructors run. The wrong answers below are written the way a student would write them
(loops, slices, einsum), not as copies of the checkers' own mistake variants. The graded mode,
the hidden tests, the answer key and nbgrader's metadata are tested at the end; the course
command itself in tests/course/test_grading.py; that the committed blanks and answer key are what the
solutions make, in tests/research/test_blanks.py (their writer is a maintainer's tool).
"""

from __future__ import annotations

import ast
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from tl_minimal import exercises as ex
from tl_minimal.exercises.answers import KEY_FILE
from tl_minimal.instructor.blanks import blank_path
from tl_research.blanks import ANSWER_STUB, answer_key

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "notebooks" / "exercises"
SOLUTIONS = sorted((FOLDER / "solutions").glob("*_solutions.py"))

# notebook stem -> [(checker, name of the student's function)]
TASKS = {
    "01_running_state": [(ex.check_running_state_step, "running_state_step"),
                         (ex.check_running_state, "running_state_loop"), (ex.check_half_life, "half_life")],
    "02_pair_memory": [(ex.check_pair_memory_step, "pair_memory_step"),
                       (ex.check_pair_memory_from_states, "pair_memory_from_states"),
                       (ex.check_unrolled_weights, "unrolled_weights_row")],
    "03_readout": [(ex.check_readout_step, "readout_step"), (ex.check_readout_loop, "readout_loop"),
                   (ex.check_readout_scores, "readout_scores")],
    "04_slots": [(ex.check_slot_step, "slot_step"), (ex.check_slot_features, "slot_features"),
                 (ex.check_slot_entropy, "slot_entropy")],
    "05_convolution": [(ex.check_causal_pad, "causal_pad"), (ex.check_causal_conv, "causal_conv"),
                       (ex.check_leaks_future, "leaks_future")],
    "06_kv_gated_fusion": [(ex.check_cosine_scores, "cosine_scores"), (ex.check_topk_read, "topk_read"),
                           (ex.check_top_entry, "top_entry")],
}
PREDICTIONS = {"01_running_state": ex.check_impulse_prediction, "02_pair_memory": ex.check_first_memory_prediction,
               "03_readout": ex.check_first_readout_prediction, "04_slots": ex.check_dense_prediction,
               "05_convolution": ex.check_leak_prediction, "06_kv_gated_fusion": ex.check_visible_prediction}


@pytest.fixture
def in_exercises(monkeypatch):
    """Run where a self-study notebook runs: beside the answer key of the predictions."""
    monkeypatch.chdir(FOLDER)
    monkeypatch.setattr(ex.harness, "GRADED", False)


def functions_of(path: Path) -> dict:
    """Every top-level function (and the prediction variable) defined in a notebook script."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keep = [node for node in tree.body if isinstance(node, ast.FunctionDef)
            or (isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "my_prediction")]
    namespace = {"torch": torch, "F": F, "math": math}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _stem(solution: Path) -> str:
    return solution.name.removesuffix("_solutions.py")


def test_every_concept_has_an_exercise():
    assert sorted(_stem(s) for s in SOLUTIONS) == sorted(TASKS)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_solutions_pass_every_check(solution, capsys, in_exercises):
    code = functions_of(solution)
    for checker, name in TASKS[_stem(solution)]:
        result = checker(code[name])
        assert result.passed, f"{name}: {result.message}"
    assert PREDICTIONS[_stem(solution)](code["my_prediction"]).passed
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_blank_exercises_say_not_done_yet(solution, capsys, in_exercises):
    code = functions_of(blank_path(solution))
    for checker, name in TASKS[_stem(solution)]:
        result = checker(code[name])
        assert not result.passed and result.message.startswith("not done yet: "), result.message
    assert PREDICTIONS[_stem(solution)](code["my_prediction"]).message.startswith("not done yet")
    out = capsys.readouterr().out
    assert "Traceback" not in out and out.count("not done yet") == len(TASKS[_stem(solution)]) + 1


def test_result_object(capsys, in_exercises):
    result = ex.check_impulse_prediction(0.0655)
    assert result and result.passed and result.message.startswith("correct")
    assert capsys.readouterr().out.strip() == result.message


def test_checkers_never_raise_on_nonsense(capsys):
    assert not ex.check_running_state("not a function").passed
    assert not ex.check_running_state(lambda a, lam, s0=None: [1, 2]).passed
    assert not ex.check_running_state(lambda a, lam, s0=None: 1 / 0).passed
    assert not ex.check_leaks_future(lambda fn, T, d: "maybe").passed
    assert not ex.check_dense_prediction("z").passed
    out = capsys.readouterr().out
    assert "Traceback" not in out and "ZeroDivisionError" in out


# --- typical wrong answers, written the way students write them -------------------------------

def _lam(lam_t):
    return lam_t[..., None]


def rs_step_swapped(a_t, lam_t, s_prev):
    return (1 - _lam(lam_t)) * s_prev + _lam(lam_t) * a_t


def rs_step_no_one_minus(a_t, lam_t, s_prev):
    return _lam(lam_t) * s_prev + a_t


def rs_step_no_broadcast(a_t, lam_t, s_prev):
    return lam_t * s_prev + (1 - lam_t) * a_t


def rs_loop_stores_before(a, lam, s0=None):
    s, out = (torch.zeros_like(a[:, 0]) if s0 is None else s0), []
    for t in range(a.shape[1]):
        out.append(s)  # appended before the update: s_{t-1}
        s = _lam(lam[:, t]) * s + (1 - _lam(lam[:, t])) * a[:, t]
    return torch.stack(out, 1)


def rs_loop_ignores_s0(a, lam, s0=None):
    s, out = torch.zeros_like(a[:, 0]), []
    for t in range(a.shape[1]):
        s = _lam(lam[:, t]) * s + (1 - _lam(lam[:, t])) * a[:, t]
        out.append(s)
    return torch.stack(out, 1)



def pm_step_transposed(P_prev, s_prev_t, b_t, gam_t):
    outer = torch.einsum("bhj,bhi->bhij", s_prev_t, b_t)  # b on the rows
    return gam_t[..., None, None] * P_prev + (1 - gam_t[..., None, None]) * outer


def pm_step_no_one_minus(P_prev, s_prev_t, b_t, gam_t):
    return gam_t[..., None, None] * P_prev + s_prev_t[..., :, None] * b_t[..., None, :]


def pm_from_states_uses_s_t(s, b, gam):
    P, out = torch.zeros(*s.shape[:1], *s.shape[2:], s.shape[-1], dtype=s.dtype), []
    for t in range(s.shape[1]):
        g = gam[:, t, :, None, None]
        P = g * P + (1 - g) * s[:, t, :, :, None] * b[:, t, :, None, :]  # s_t: should be s_{t-1}
        out.append(P)
    return torch.stack(out, 1)


def pm_row_includes_own_gate(gam, t):
    w = torch.zeros_like(gam)
    for tau in range(t + 1):
        w[tau] = (1 - gam[tau]) * torch.prod(gam[tau:t + 1])
    return w


def pm_row_no_mask(gam, t):
    return torch.stack([(1 - gam[tau]) * torch.prod(gam[tau + 1:t + 1]) for tau in range(len(gam))])


def ro_step_not_transposed(P, q_left, q_right):
    return torch.einsum("bhij,bhj->bhi", P, q_left) * q_right


def ro_step_no_qr(P, q_left, q_right):
    return torch.einsum("bhij,bhi->bhj", P, q_left)


def ro_loop_reads_before_writing(s_prev, b, gam, q_left, q_right):
    P = torch.zeros(s_prev.shape[0], s_prev.shape[2], s_prev.shape[3], s_prev.shape[3], dtype=s_prev.dtype)
    out = []
    for t in range(s_prev.shape[1]):
        out.append(torch.einsum("bhij,bhi->bhj", P, q_left[:, t]) * q_right[:, t])  # reads P_{t-1}
        g = gam[:, t, :, None, None]
        P = g * P + (1 - g) * s_prev[:, t, :, :, None] * b[:, t, :, None, :]
    return torch.stack(out, 1)


def ro_scores_no_mask(s_prev, gam, q_left):
    c = torch.cumprod(gam, dim=1).permute(0, 2, 1)  # [B, H, T]
    w = (1 - gam).permute(0, 2, 1)[:, :, None, :] * c[:, :, :, None] / c[:, :, None, :]
    return w * torch.einsum("bthi,buhi->bhtu", q_left, s_prev)


def sl_step_no_g(L, R, s_prev_t, b_t, g_t, gam_t):
    k, w = gam_t[..., None, None], 1 - gam_t[..., None, None]
    return k * L + w * s_prev_t[:, :, None], k * R + w * b_t[:, :, None]


def sl_step_swapped(L, R, s_prev_t, b_t, g_t, gam_t):
    k, w = gam_t[..., None, None], (1 - gam_t[..., None, None]) * g_t[..., None]
    return k * L + w * b_t[:, :, None], k * R + w * s_prev_t[:, :, None]


def sl_features_sum(L, R, q_left, q_right):
    return torch.einsum("bhks,bhs->bhk", L, q_left) + torch.einsum("bhks,bhs->bhk", R, q_right)


def sl_features_swapped(L, R, q_left, q_right):
    return torch.einsum("bhks,bhs->bhk", L, q_right) * torch.einsum("bhks,bhs->bhk", R, q_left)


def sl_entropy_bits(g):
    return -(g * torch.log2(g)).sum(-1)


def sl_entropy_sign(g):
    return (g * torch.log(g)).sum(-1)


def cv_pad_symmetric(x, k):
    return F.pad(x, (0, 0, (k - 1) // 2, (k - 1) // 2))


def cv_pad_right(x, k):
    return F.pad(x, (0, 0, 0, k - 1))


def cv_pad_k(x, k):
    return F.pad(x, (0, 0, k, 0))


def cv_conv_symmetric(x, weight, bias):
    return F.gelu(F.conv1d(x.transpose(1, 2), weight, bias, padding=weight.shape[-1] // 2).transpose(1, 2))


def cv_conv_no_gelu(x, weight, bias):
    return F.conv1d(F.pad(x.transpose(1, 2), (weight.shape[-1] - 1, 0)), weight, bias).transpose(1, 2)


def cv_conv_flipped(x, weight, bias):
    k, T = weight.shape[-1], x.shape[1]
    xp = F.pad(x, (0, 0, k - 1, 0))
    return F.gelu(bias + sum(xp[:, i:i + T] @ weight[:, :, k - 1 - i].T for i in range(k)))


def cv_leaks_perturbs_t(fn, T, d):
    x = torch.randn(1, T, d, dtype=torch.float64)
    y = fn(x)
    for t in range(T):
        x2 = x.clone()
        x2[:, t] += 1  # perturbs position t itself
        if not torch.allclose(fn(x2)[:, :t + 1], y[:, :t + 1]):
            return True
    return False


def cv_leaks_only_next(fn, T, d):
    x = torch.randn(1, T, d, dtype=torch.float64)
    x2 = x.clone()
    x2[:, 1] += 1  # looks at one position only
    return not torch.allclose(fn(x2)[:, 0], fn(x)[:, 0])


def kv_scores_dot(q, keys):
    return torch.einsum("bta,bna->btn", q, keys)


def kv_read_no_topk(scores, values, k):
    return torch.softmax(scores, -1) @ values


def kv_read_softmax_first(scores, values, k):
    p = torch.softmax(scores, -1)
    w, idx = p.topk(k, -1)
    return torch.einsum("btk,btka->bta", w, values[torch.arange(values.shape[0])[:, None, None], idx])


def kv_top_rank(weights, index):
    return weights.argmax(-1)


WRONG = [
    (ex.check_running_state_step, rs_step_swapped, "gates are swapped"),
    (ex.check_running_state_step, rs_step_no_one_minus, "forgot the (1 - lam_t) factor"),
    (ex.check_running_state_step, rs_step_no_broadcast, "give it a last axis"),
    (ex.check_running_state, rs_loop_stores_before, "off by one in time"),
    (ex.check_running_state, rs_loop_ignores_s0, "s0 is ignored"),
    (ex.check_half_life, lambda lam: 1 / (1 - lam), "mean memory length"),
    (ex.check_half_life, lambda lam: torch.log(lam) / math.log(0.5), "upside down"),
    (ex.check_pair_memory_step, pm_step_transposed, "transposed"),
    (ex.check_pair_memory_step, pm_step_no_one_minus, "(1 - gam_t)"),
    (ex.check_pair_memory_from_states, pm_from_states_uses_s_t, "uses s_t instead of s_{t-1}"),
    (ex.check_unrolled_weights, pm_row_includes_own_gate, "off by one"),
    (ex.check_unrolled_weights, pm_row_no_mask, "leaks the future"),
    (ex.check_readout_step, ro_step_not_transposed, "P instead of P^T"),
    (ex.check_readout_step, ro_step_no_qr, "forgot to multiply by q^r"),
    (ex.check_readout_loop, ro_loop_reads_before_writing, "read P_t AFTER writing"),
    (ex.check_readout_scores, ro_scores_no_mask, "leaks the future"),
    (ex.check_slot_step, sl_step_no_g, "forgot the slot weights"),
    (ex.check_slot_step, sl_step_swapped, "L and R are swapped"),
    (ex.check_slot_features, sl_features_sum, "PRODUCT"),
    (ex.check_slot_features, sl_features_swapped, "queries are swapped"),
    (ex.check_slot_entropy, sl_entropy_bits, "bits"),
    (ex.check_slot_entropy, sl_entropy_sign, "the sign"),
    (ex.check_causal_pad, cv_pad_symmetric, "leaks the future"),
    (ex.check_causal_pad, cv_pad_right, "on the right"),
    (ex.check_causal_pad, cv_pad_k, "pad k-1 zeros, not k"),
    (ex.check_causal_conv, cv_conv_symmetric, "leaks the future"),
    (ex.check_causal_conv, cv_conv_no_gelu, "forgot the GELU"),
    (ex.check_causal_conv, cv_conv_flipped, "taps are reversed"),
    (ex.check_leaks_future, cv_leaks_perturbs_t, "is causal but your test says it leaks"),
    (ex.check_leaks_future, cv_leaks_only_next, "reads the future but your test says it does not"),
    (ex.check_cosine_scores, kv_scores_dot, "dot product"),
    (ex.check_topk_read, kv_read_no_topk, "no top-k"),
    (ex.check_topk_read, kv_read_softmax_first, "what the draft computes"),
    (ex.check_top_entry, kv_top_rank, "not the memory position"),
]


@pytest.mark.parametrize("checker, wrong, hint", WRONG, ids=lambda v: getattr(v, "__name__", None))
def test_typical_mistakes_get_their_hint(checker, wrong, hint, capsys):
    result = checker(wrong)
    assert not result.passed
    assert result.message.startswith("not quite") and hint in result.message, result.message
    assert "Traceback" not in capsys.readouterr().out


@pytest.mark.parametrize("checker, answer, hint", [
    (ex.check_impulse_prediction, 0.8 ** 5, "work out s_0"),
    (ex.check_first_memory_prediction, "b", "s_{-1}"),
    (ex.check_first_readout_prediction, "(c)", "state it had before"),
    (ex.check_dense_prediction, "A", "which pairs"),
    (ex.check_leak_prediction, "a", "EACH side"),
    (ex.check_visible_prediction, "a", "leaks the future"),
])
def test_wrong_predictions_get_a_hint(checker, answer, hint, in_exercises):
    result = checker(answer)
    assert not result.passed and hint in result.message, result.message


# --- the committed notebooks show what students and instructors will see ------------------------

def _printed(ipynb: Path) -> list[str]:
    import json
    lines = []
    for cell in json.loads(ipynb.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{ipynb.name} has an error output"
            if out.get("output_type") == "stream":
                lines += "".join(out["text"]).splitlines()
    return lines


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_committed_solutions_show_their_outputs(solution):
    # each function's check cell: the visible check, then the hidden one on each of the three hidden
    # shapes; the prediction's: the visible check and its hidden test
    n_checks = 4 * len(TASKS[_stem(solution)]) + 2
    solved = _printed(solution.with_suffix(".ipynb"))
    assert sum(line.startswith("correct: ") for line in solved) == n_checks, solved


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_committed_blank_notebooks_carry_no_outputs(solution):
    """A student receives the blank as it will be before running it: no printed check, no figure."""
    import json
    cells = json.loads(blank_path(solution).with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, "no code cells"
    assert all(c["outputs"] == [] for c in code), "run python -m tl_research.blanks (blanks carry no outputs)"
    assert all(c["execution_count"] is None for c in code), "blank notebooks carry no execution counts"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_discussion_prompts_have_model_answers_in_the_solutions_only(solution):
    text = solution.read_text(encoding="utf-8")
    assert "**To discuss:**" in text
    answers = [cell for cell in text.split("# %%")[1:] if 'tags=["solution"]' in cell.split("\n")[0]]
    assert answers and all("**Model answer.**" in cell for cell in answers), "each discussion needs a model answer"
    blank = blank_path(solution).read_text(encoding="utf-8")
    assert "**To discuss:**" in blank and "Model answer" not in blank
    assert blank.count(f"# {ANSWER_STUB}") == len(answers)  # where the student writes, graded by hand


def test_training_note_states_the_rate_and_the_unit():
    _, info = ex.tiny_model("gated_hybrid_repaired", task="recall", steps=2)
    note = ex.training_note(info)
    assert info["lr"] == ex.trained.LR and f"lr {ex.trained.LR:g}" in note and "10x the notebooks'" in note
    assert info["loss_bits"][0] == pytest.approx(info["losses"][0] / math.log(2))
    assert "bits per answer token" in note and "constant guess: 3.00" in note


@pytest.mark.parametrize("variant", ["triple_latent", "triple_slot"])
def test_layer_inputs_match_the_models_own_record(variant):
    model, info = ex.tiny_model(variant, task="recall", steps=1)
    tokens = ex.sample_tokens(info)
    _, inside = model.internals(tokens)
    parts = ex.layer_inputs(model, tokens)
    assert torch.equal(parts["lam"], inside["layers"][0]["lam"])
    assert torch.equal(parts["gam"], inside["layers"][0]["gam"])
    if variant == "triple_slot":
        assert torch.allclose(parts["g"], inside["layers"][0]["slot_weights"])


# --- the classroom edition: graded mode, hidden tests, the answer key, nbgrader's metadata ------

def test_graded_mode_raises_the_same_hint(monkeypatch, capsys):
    printed = ex.check_running_state_step(rs_step_swapped).message
    monkeypatch.setattr(ex.harness, "GRADED", True)  # what TL_GRADED=1 at the kernel's start does
    with pytest.raises(AssertionError, match="gates are swapped") as raised:
        ex.check_running_state_step(rs_step_swapped)
    assert printed in str(raised.value) and str(raised.value).startswith("01.1 running_state_step: ")
    assert ex.check_running_state_step(functions_of(SOLUTIONS[0])["running_state_step"]).passed  # passing: no raise
    with pytest.raises(AssertionError, match="not done yet"):
        ex.check_half_life(functions_of(blank_path(SOLUTIONS[0]))["half_life"])
    monkeypatch.setattr(ex.harness, "GRADED", False)
    assert not ex.check_running_state_step(rs_step_swapped).passed  # self-study again: prints, never raises


def test_graded_mode_is_fixed_when_the_kernel_starts():
    """A cell writing os.environ["TL_GRADED"] = "0" does not turn the checks print-only."""
    code = ("import os\nfrom tl_minimal import exercises as ex\nos.environ['TL_GRADED'] = '0'\n"
            "try:\n    ex.check_causal_pad(lambda x, k: x)\nexcept AssertionError:\n    print('RAISED')\n")
    env = {**os.environ, "TL_GRADED": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "research")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, encoding="utf-8",
                          timeout=120, check=False)
    assert "RAISED" in done.stdout, done.stderr


def test_hidden_tests_raise_in_any_mode_and_use_other_sizes(monkeypatch):
    monkeypatch.setattr(ex.harness, "GRADED", False)
    shapes = []
    with ex.hidden_tests():
        ex.check_readout_step(
            lambda P, ql, qr: shapes.append(tuple(P.shape)) or (ql.unsqueeze(-2) @ P).squeeze(-2) * qr)
    assert shapes[0] == (1, 3, 5, 5)  # B = 1 with H > 1, and another S
    shapes.clear()
    with ex.hidden_tests(shape=1):
        ex.check_readout_step(
            lambda P, ql, qr: shapes.append(tuple(P.shape)) or (ql.unsqueeze(-2) @ P).squeeze(-2) * qr)
    assert shapes[0] == (3, 1, 3, 3)  # B > 1 with H = 1
    def squeezed(P, ql, qr):  # no dim given to squeeze: wrong if B or H is 1
        return ((ql.unsqueeze(-2) @ P) * qr.unsqueeze(-2)).squeeze()

    assert ex.check_readout_step(squeezed).passed  # the visible sizes cannot see it
    with pytest.raises(AssertionError, match=r"03\.1"), ex.hidden_tests():
        ex.check_readout_step(squeezed)
    assert ex.check_readout_step(squeezed).passed  # outside hidden_tests(): the visible sizes again


def test_the_answer_is_computed_after_the_students_code_ran():
    """No frame the student's function can reach holds the expected value while it runs."""
    import inspect

    def peek(P, ql, qr):
        frame = inspect.currentframe().f_back
        while frame is not None:
            assert "want" not in frame.f_locals, "the expected value was reachable"
            frame = frame.f_back
        return (ql.unsqueeze(-2) @ P).squeeze(-2) * qr

    assert ex.check_readout_step(peek).passed


def test_warnings_inside_a_check_go_to_stdout(capsys):
    def warns(x, k):
        x = torch.tensor(x)  # UserWarning: copy construct from a tensor
        return torch.cat([x.new_zeros(x.shape[0], k - 1, x.shape[2]), x], dim=1)

    assert ex.check_causal_pad(warns).passed
    out, err = capsys.readouterr()
    assert "note: your code warned (UserWarning" in out and err == ""


def test_a_leak_only_late_in_the_sequence_is_caught():
    def first_half(fn, T, d):  # perturbs and compares only at t < 4
        x = torch.randn(1, T, d, dtype=torch.float64)
        for t in range(min(T - 1, 3)):
            x2 = x.clone()
            x2[:, t + 1:] += 1
            if not torch.allclose(fn(x2)[:, :t + 1], fn(x)[:, :t + 1]):
                return True
        return False

    result = ex.check_leaks_future(first_half)
    assert not result.passed and "t >= 4" in result.message


def test_hidden_tests_draw_other_inputs():
    seen = []
    for shift in (1000, 2000):  # the same hidden shape, another seed: other numbers
        with ex.hidden_tests(shift=shift), pytest.raises(AssertionError):
            ex.check_running_state_step(lambda a, lam, s: seen.append(a.clone()) or s)
    assert len(seen) == 2 and seen[0].shape == seen[1].shape and not torch.equal(seen[0], seen[1])


def test_hidden_tests_hold_every_answer_key():
    for solution in SOLUTIONS:
        key = answer_key(solution.read_text(encoding="utf-8"))
        assert list(key) == [f"{_stem(solution)[:2]}.3"], "one prediction per exercise, judged by a hidden test"
    assert not (FOLDER / KEY_FILE).exists(), "the key left the students' folder"


def _keys() -> dict:
    return {k: v for s in SOLUTIONS for k, v in answer_key(s.read_text(encoding="utf-8")).items()}


def test_the_sealed_key_names_no_answer_and_opens_only_an_answer_given(in_exercises):
    text = (FOLDER / "solutions" / KEY_FILE).read_text(encoding="utf-8")
    for _task_id, key in _keys().items():
        assert key["explanation"] not in text and f"'{key['correct']}'" not in text
        for hint in key.get("hints", {}).values():
            assert hint not in text or key.get("tolerance") is not None  # a number's one hint is not an answer
    assert ex.check_leak_prediction("c").passed and "t-2 .. t+2" in ex.check_leak_prediction("c").message
    assert "EACH side" in ex.check_leak_prediction("a").message
    assert ex.check_impulse_prediction(0.0655).passed and not ex.check_impulse_prediction(0.07).passed


def test_no_prediction_answer_in_the_package_or_the_blanks():
    package = "".join(p.read_text(encoding="utf-8") for p in Path(ex.__file__).parent.glob("*.py"))
    blanks = "".join(blank_path(s).read_text(encoding="utf-8") for s in SOLUTIONS)
    for key in _keys().values():
        for secret in [key["explanation"], *key["hints"].values()]:
            assert secret not in package and secret not in blanks, secret
    assert "correct=" not in package.replace("correct=<the answer>", "")  # answers.py's docstring
    blank_01 = blank_path(SOLUTIONS[0]).read_text(encoding="utf-8")
    assert "ex.running_state.half_life" not in blank_01 and "[half_life(layer" in blank_01  # the student's own


def test_predictions_without_a_key_or_graded_are_not_judged(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # a course release: no answer key beside the notebook
    for name in ("JPY_SESSION_NAME", "TL_ANSWER_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(ex.harness, "GRADED", False)
    for letter in "abc":
        result = ex.check_leak_prediction(letter)
        assert result.message.startswith("answered: ") and "EACH side" not in result.message
        assert "TL_ANSWER_KEY" in result.message  # self-study: how to get the verdict now
    assert "answer with one letter (a, b, c, d)" in ex.check_leak_prediction("z").message
    monkeypatch.chdir(FOLDER)  # the key is here, but graded mode never judges in the visible check
    monkeypatch.setenv("TL_ANSWER_KEY", str(FOLDER / "solutions" / KEY_FILE))  # nor when named outright
    monkeypatch.setattr(ex.harness, "GRADED", True)
    assert {ex.check_leak_prediction(x).message for x in "abcd"} == {f"answered: {x!r} is recorded; it is marked "
                                                                    "when your notebook is graded" for x in "abcd"}
    with pytest.raises(AssertionError, match="not done yet"):
        ex.check_leak_prediction(None)
    key = _keys()["05.3"]
    with pytest.raises(AssertionError, match="EACH side"):  # the hidden test: judged, with the hint
        ex.mark_prediction("a", **key)
    assert ex.mark_prediction(key["correct"], **key).passed


@pytest.mark.parametrize("where", ["clone root", "notebooks", "elsewhere, JupyterLab", "elsewhere, TL_ANSWER_KEY"])
def test_self_study_judges_at_once_wherever_the_kernel_starts(tmp_path, monkeypatch, where):
    """Issue 52: a prediction got no verdict until grading when the kernel's folder was not the notebook's
    (VS Code starts it at the clone's root; a hub may start it anywhere). Self-study finds the key anyway."""
    for name in ("JPY_SESSION_NAME", "TL_ANSWER_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(ex.harness, "GRADED", False)
    monkeypatch.chdir({"clone root": FOLDER.parents[1], "notebooks": FOLDER.parent}.get(where, tmp_path))
    if where == "elsewhere, JupyterLab":  # the notebook's path, as JupyterLab gives it to the kernel
        monkeypatch.setenv("JPY_SESSION_NAME", str(FOLDER / "02_pair_memory.ipynb"))
    if where == "elsewhere, TL_ANSWER_KEY":
        monkeypatch.setenv("TL_ANSWER_KEY", str(FOLDER / "solutions" / KEY_FILE))
    key = _keys()["02.3"]
    wrong = next(letter for letter in "abcd" if letter != key["correct"])
    assert ex.check_first_memory_prediction(key["correct"]).passed
    result = ex.check_first_memory_prediction(wrong)
    assert not result.passed and result.message.startswith("not quite: ")


def _nbgrader_cells(path: Path) -> list[dict]:
    import jupytext

    return [dict(c.metadata["nbgrader"], cell_type=c.cell_type, source=c.source)
            for c in jupytext.read(path).cells if "nbgrader" in c.metadata]


@pytest.mark.parametrize("solution", SOLUTIONS, ids=_stem)
def test_solutions_carry_nbgrader_metadata(solution):
    pytest.importorskip("jupytext")
    cells = _nbgrader_cells(solution)
    ids = [c["grade_id"] for c in cells]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    checks = [c for c in cells if c["grade"] and c["cell_type"] == "code"]
    assert len(checks) == 4 and all(c["locked"] and c["points"] > 0 and "### BEGIN HIDDEN TESTS" in c["source"]
                                    for c in checks)
    answers = [c for c in cells if c["solution"] and c["cell_type"] == "code"]
    assert all("### BEGIN SOLUTION" in c["source"] for c in answers) and len(answers) == 4
    manual = [c for c in cells if c["solution"] and c["grade"]]
    assert [c["cell_type"] for c in manual] == ["markdown"] and "**Model answer.**" in manual[0]["source"]


@pytest.mark.slow
def test_jupytext_sync_keeps_the_grading_metadata(tmp_path):
    """Edit the .ipynb (as in JupyterLab), sync: the .py keeps nbgrader's metadata, and back."""
    pytest.importorskip("jupytext")
    shutil.copy(FOLDER.parents[1] / "jupytext.toml", tmp_path)
    source = SOLUTIONS[0]
    for suffix in (".py", ".ipynb"):
        shutil.copy(source.with_suffix(suffix), tmp_path / source.with_suffix(suffix).name)
    ipynb = tmp_path / source.with_suffix(".ipynb").name
    notebook = json.loads(ipynb.read_text(encoding="utf-8"))
    notebook["cells"][0]["source"] = ["# Exercise 01 · edited in JupyterLab"]
    ipynb.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
    jupytext = [sys.executable, "-m", "jupytext"]
    subprocess.run([*jupytext, "--sync", str(ipynb)], check=True, capture_output=True, cwd=tmp_path)
    script = ipynb.with_suffix(".py")
    assert "edited in JupyterLab" in script.read_text(encoding="utf-8")
    assert _nbgrader_cells(script) == _nbgrader_cells(source)
    script.write_text(script.read_text(encoding="utf-8").replace("edited in JupyterLab", "edited as text"),
                      encoding="utf-8")
    subprocess.run([*jupytext, "--sync", str(script)], check=True, capture_output=True, cwd=tmp_path)
    cells = json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
    before = json.loads(source.with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"]
    assert [c["metadata"].get("nbgrader") for c in cells] == [c["metadata"].get("nbgrader") for c in before]


def test_blank_cell_keeps_hidden_tests_for_nbgrader():
    """nbgrader records each test cell (SaveCells) before it clears the hidden tests: the release's
    preprocessor must leave them for it, or the autograder never runs them."""
    from tl_minimal.instructor.blanks import blank_cell

    check = "ex.check(f)\n### BEGIN HIDDEN TESTS\nwith ex.hidden_tests():\n    ex.check(f)\n### END HIDDEN TESTS"
    assert blank_cell(check) == ("ex.check(f)", False)
    assert blank_cell(check, keep_hidden=True) == (check, False)
    code = ("def f():\n    ### BLANK: raise NotImplementedError\n"
            "    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
    assert blank_cell(code, keep_hidden=True) == ("def f():\n    raise NotImplementedError", True)
