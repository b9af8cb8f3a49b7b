"""Classroom exercises: checkers that compare a student's code with the library.

Every ``check_*`` function takes the student's function (or answer), tries it on several
random inputs (T = 1, odd lengths, gates near 0 and 1), prints ``correct: ...``, ``not done
yet: ...`` or ``not quite: <a specific hint>``, and returns a :class:`Result` (``passed``,
``message``). In self-study a checker never raises and never shows a traceback; in graded mode
(``TL_GRADED=1`` when the kernel starts, nbgrader's autograder) a failed check raises
``AssertionError`` with the same hint. ``hidden_tests()`` reruns checks on other inputs and sizes,
raising on a failure in any mode; ``hidden_check`` runs one on every hidden shape (the graded
edition's hidden tests, which import this package afresh first; under the instructor's ``grade``
they record the outputs for a clean process to judge, see ``record``); ``mark_prediction`` judges a
prediction from the key its hidden test carries.

One module per concept, in the order of the notebooks (notebooks/exercises/):
    running_state   01   s_t = lam_t s_{t-1} + (1 - lam_t) a_t
    pair_memory     02   P_t = gam_t P_{t-1} + (1 - gam_t) outer(s_{t-1}, b_t)
    readout         03   r_t = (P_t^T q^l_t) * q^r_t
    slots           04   slot-compressed pair memory
    conv            05   causal local convolution, the future-token leak
    kv_fusion       06   key-value memory, top-k read, read gate
and the shared pieces: ``harness`` (compare, diagnose, report), ``trained`` (tiny trained
models for the internals tasks), ``answers`` (the prediction questions' checks). What only the
instructor runs (the nbgrader command, the blanks' generator) is in ``tl_minimal.instructor``.
"""

from . import conv, kv_fusion, pair_memory, readout, running_state, slots
from .answers import mark_prediction
from .conv import check_causal_conv, check_causal_pad, check_leak_prediction, check_leaks_future
from .harness import Result, graded, hidden_tests, more_cases
from .kv_fusion import check_cosine_scores, check_top_entry, check_topk_read, check_visible_prediction
from .pair_memory import (
    check_first_memory_prediction,
    check_pair_memory_from_states,
    check_pair_memory_step,
    check_unrolled_weights,
)
from .readout import (
    check_first_readout_prediction,
    check_readout_loop,
    check_readout_scores,
    check_readout_step,
)
from .record import hidden_check
from .running_state import (
    check_half_life,
    check_impulse_prediction,
    check_running_state,
    check_running_state_step,
)
from .slots import check_dense_prediction, check_slot_entropy, check_slot_features, check_slot_step
from .trained import layer_inputs, sample_tokens, tiny_model, training_note

__all__ = [  # noqa: RUF022  (grouped by notebook, in task order)
    # 01 running state
    "check_running_state_step", "check_running_state", "check_impulse_prediction", "check_half_life",
    # 02 pair memory
    "check_pair_memory_step", "check_pair_memory_from_states", "check_first_memory_prediction",
    "check_unrolled_weights",
    # 03 readout
    "check_readout_step", "check_readout_loop", "check_first_readout_prediction", "check_readout_scores",
    # 04 slots
    "check_slot_step", "check_slot_features", "check_dense_prediction", "check_slot_entropy",
    # 05 convolution
    "check_causal_pad", "check_causal_conv", "check_leak_prediction", "check_leaks_future",
    # 06 key-value memory
    "check_cosine_scores", "check_topk_read", "check_visible_prediction", "check_top_entry",
    # shared
    "Result", "graded", "hidden_tests", "hidden_check", "more_cases", "mark_prediction", "layer_inputs",
    "sample_tokens", "tiny_model",
    "training_note",
    "conv", "kv_fusion", "pair_memory", "readout", "running_state", "slots",
]
