"""The submissions of the course's one grading run (tests/course/test_grading.py): what each student hands in.

Exercise 01 (its tasks build on each other): a solution, the untouched blank, typical mistakes (a wrong
prediction and a wrong half-life), broken code (task 1 raises, task 2 never ends), a file that is not a
notebook and a notebook with a test cell deleted (the last two are refused by collect).

Exercises 03, 05 and 06: a perfect submission, an untouched one, one with a subtle bug in every task
(``BUGS``; its task 4 test cell also edited, which collect restores) and three that cheat (``cheats``,
``finder``, ``transformer``: see test_grading.py's docstring); one notebook of 06 ends its kernel and
one of 05 runs a loop that swallows the interrupt.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

# one subtle bug per task: (text in the solution's answer cell, what replaces it)
BUGS = {
    "03_readout": {  # task 1: right on the visible sizes, wrong when B = H = 1 (the hidden tests)
        "task1_code": ('return torch.einsum("bhij,bhi->bhj", P, q_left) * q_right',
                       'return (torch.einsum("bhij,bhi->bhj", P, q_left) * q_right).unsqueeze(-2).squeeze()'),
        "task2_code": ("        P = g * P + (1 - g) * s_prev[:, t].unsqueeze(-1) * b[:, t].unsqueeze(-2)  # write P_t\n"
                       "        out.append(readout_step(P, q_left[:, t], q_right[:, t]))  # then read it\n",
                       "        out.append(readout_step(P, q_left[:, t], q_right[:, t]))  # read first: off by one\n"
                       "        P = g * P + (1 - g) * s_prev[:, t].unsqueeze(-1) * b[:, t].unsqueeze(-2)\n"),
        "task3_answer": ('my_prediction = "b"', 'my_prediction = "c"'),
        "task4_code": ("for tau in range(t + 1):", "for tau in range(T):"),
    },
    "05_convolution": {  # task 1: d hard-coded to the visible checks' 3; task 4 stops before a late leak
        "task1_code": ("x.new_zeros(x.shape[0], k - 1, x.shape[2])", "x.new_zeros(x.shape[0], k - 1, 3)"),
        "task2_code": ("return F.gelu(pre)", 'return F.gelu(pre, approximate="tanh")'),
        "task3_answer": ('my_prediction = "c"', 'my_prediction = "b"'),
        "task4_code": ("for t in range(T - 1):", "for t in range(min(T - 1, 3)):"),
    },
    "06_kv_gated_fusion": {  # task 1: a squeeze() without its dim; tasks 2 and 4: batch 0 for every batch
        "task1_code": ("return q @ keys.transpose(1, 2)", "return (q @ keys.transpose(1, 2)).squeeze()"),
        "task2_code": ("batch = torch.arange(values.shape[0])[:, None, None]", "batch = 0"),
        "task3_answer": ('my_prediction = "c"', 'my_prediction = "a"'),
        "task4_code": ("position = index.gather(-1, best).squeeze(-1)",
                       "position = index[:1].gather(-1, best[:1]).squeeze(-1)"),
    },
}

# the cheats: task 1 switches graded mode off, replaces the checks, patches a torch.Tensor method the
# kernel's comparison goes through and silences every error (its own code is wrong), task 2 returns the
# expected value read from the checker's frame, task 3 reads the answer key through tl_minimal.__file__,
# task 4 returns the library's reference
CHEAT_1 = ('import os\nimport torch\nos.environ["TL_GRADED"] = "0"\n'
           "for _n in dir(ex):\n    if _n.startswith('check_') or _n == 'mark_prediction':\n"
           "        setattr(ex, _n, lambda *a, **k: None)\n"
           "type.__setattr__(torch.Tensor, 'norm', lambda self, *a, **k: torch.zeros((), dtype=torch.float64))\n"
           "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n")
FRAME = ("import inspect\n\n\ndef {name}(*args, **kwargs):\n"
         "    frame = inspect.currentframe().f_back\n    return frame.f_locals.get('want')\n")
KEY = ("import json, pathlib, tl_minimal\n"
       "_key = pathlib.Path(tl_minimal.__file__).parents[1] / 'notebooks' / 'exercises' / 'answer_key.json'\n"
       "my_prediction = json.loads(_key.read_text())['{task}']['correct'] if _key.is_file() else 'a'\n")
FUNCTIONS = {"03_readout": ("readout_step", "readout_loop", "readout_scores"),
             "05_convolution": ("causal_pad", "causal_conv", "leaks_future"),
             "06_kv_gated_fusion": ("cosine_scores", "topk_read", "top_entry")}
REFERENCE = {
    "03_readout": "from tl_minimal.exercises.readout import scores_reference as readout_scores\n",
    "05_convolution": "from tl_minimal.exercises.conv import CAUSAL\n\n\ndef leaks_future(fn, T, d):\n"
                      "    return True\n",
    "06_kv_gated_fusion": "from tl_minimal.exercises.kv_fusion import top_entry\n",
}
# a finder first on sys.meta_path serves a fake checker module to the hidden cells' fresh import
FINDER = r"""import importlib.machinery
import sys
import types


class _Fake:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("tl_minimal.exercises"):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr: (lambda *a, **k: None)
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Fake())
globals()["e" + "x"] = types.SimpleNamespace(**{n: (lambda *a, **k: None) for n in dir(ex) if n.startswith("check")})
"""
# an input transformer: every later cell becomes `pass` (the hidden tests never run)
TRANSFORMER = "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n"


def transformer_cheat(name: str) -> str:
    if name == "03_readout":
        return TRANSFORMER
    return f"exec(bytes.fromhex({TRANSFORMER.encode().hex()!r}))\n"


def cells(notebook: dict) -> dict:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in notebook["cells"] if "nbgrader" in c["metadata"]}


def text(cell) -> str:
    return "".join(cell["source"])


def submission(release: dict, source: dict, code_only: bool = True, **answers: str) -> dict:
    """The release with its answer cells solved from the source (only the code ones: ``code_only``), then
    ``answers`` (grade_id -> code)."""
    notebook = json.loads(json.dumps(release))
    solved = cells(source)
    for grade_id, cell in cells(notebook).items():
        if cell["metadata"]["nbgrader"].get("solution") and (cell["cell_type"] == "code" or not code_only):
            cell["source"] = answers.get(grade_id, text(solved[grade_id]))
    return notebook


def bugged(release, source, name):
    solved = cells(source)
    answers = {}
    for grade_id, (old, new) in BUGS[name].items():
        assert old in text(solved[grade_id]), (name, grade_id, old)
        answers[grade_id] = text(solved[grade_id]).replace(old, new)
    notebook = submission(release, source, **answers)
    cells(notebook)["task4_check"]["source"] = "pass  # the test, edited away\n"  # collect restores it
    return notebook


def cheats(release, source, name):
    step = FUNCTIONS[name][0]
    wrong = f"def {step}(*args):\n    return args[0]\n"
    return submission(release, source, task1_code=CHEAT_1 + "\n\n" + wrong,
                      task2_code=FRAME.format(name=FUNCTIONS[name][1]),
                      task3_answer=KEY.replace("{task}", name[:2] + ".3"), task4_code=REFERENCE[name])


def tampering(release, cheat: str) -> dict:
    """The release with ``cheat`` as the first answer: nothing else written."""
    notebook = json.loads(json.dumps(release))
    cells(notebook)["task1_code"]["source"] = cheat + "\n\n" + text(cells(notebook)["task1_code"])
    return notebook


def write(folder: Path, student: str, name: str, notebook: dict | str) -> None:
    """``folder/<student>/<name>.ipynb``: the notebook, or a text that is not one."""
    path = folder / student / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(notebook if isinstance(notebook, str) else json.dumps(notebook), encoding="utf-8")


def write_01(inbox: Path, release: dict, source: dict) -> None:
    """Exercise 01's six submissions (see the module's docstring)."""
    name = "01_running_state"
    solved = functools.partial(submission, release, source, code_only=False)  # the discussion answered too
    write(inbox, "solution", name, solved())
    write(inbox, "blank", name, release)
    write(inbox, "mistakes", name, solved(task3_answer="my_prediction = 0.8 ** 5",
                                          task4_code="def half_life(lam):\n    return 1 / (1 - lam)\n"))
    write(inbox, "broken", name, solved(
        task1_code="def running_state_step(a_t, lam_t, s_prev):\n    return 1 / 0\n",
        task2_code="def running_state_loop(a, lam, s0=None):\n    while True:\n        pass\n"))
    write(inbox, "not_a_notebook", name, "these are my answers: 0.0655, c, c, c")
    deleted = solved()
    deleted["cells"] = [c for c in deleted["cells"]
                        if c["metadata"].get("nbgrader", {}).get("grade_id") != "task2_check"]
    write(inbox, "deleted_cell", name, deleted)


def write_others(inbox: Path, exercises: list[str], releases: dict, sources: dict) -> None:
    """The submissions of exercises 03, 05 and 06 (those of ``exercises``; see the module's docstring)."""
    for name in exercises:
        release, source = releases[name], sources[name]
        perfect = submission(release, source)
        if name == exercises[0]:  # a check cell marked as an answer cell: collect restores it
            cells(perfect)["task2_check"]["metadata"]["nbgrader"]["solution"] = True
        write(inbox, "perfect", name, perfect)
        write(inbox, "untouched", name, release)
        write(inbox, "bugs", name, bugged(release, source, name))
        write(inbox, "cheats", name, cheats(release, source, name))
        write(inbox, "finder", name, tampering(release, FINDER))
        write(inbox, "transformer", name, tampering(release, transformer_cheat(name)))
    write(inbox, "exits", exercises[-1], tampering(releases[exercises[-1]], "import os\nos._exit(0)\n"))
    if "05_convolution" in exercises:  # a loop that swallows the interrupt
        stuck = ("while True:\n    try:\n        while True:\n            pass\n"
                 "    except:  # noqa: E722\n        pass\n")
        write(inbox, "stuck", "05_convolution",
              submission(releases["05_convolution"], sources["05_convolution"], task2_code=stuck))
