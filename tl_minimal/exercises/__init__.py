"""Classroom exercises: one checker module per notebook of notebooks/exercises/ (01 running_state
... 06 kv_fusion), the shared ``harness``, and ``trained``, the tiny trained models of the internals
tasks. The instructor's side is tl_minimal.instructor."""

from . import conv, kv_fusion, pair_memory, readout, running_state, slots
from .answers import mark_prediction
from .conv import check_causal_conv, check_causal_pad, check_leak_prediction, check_leaks_future
from .harness import Result, graded, hidden_tests
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

__all__ = [  # noqa: RUF022  (grouped by notebook, in task order; then the shared pieces)
    "check_running_state_step", "check_running_state", "check_impulse_prediction", "check_half_life",
    "check_pair_memory_step", "check_pair_memory_from_states", "check_first_memory_prediction",
    "check_unrolled_weights",
    "check_readout_step", "check_readout_loop", "check_first_readout_prediction", "check_readout_scores",
    "check_slot_step", "check_slot_features", "check_dense_prediction", "check_slot_entropy",
    "check_causal_pad", "check_causal_conv", "check_leak_prediction", "check_leaks_future",
    "check_cosine_scores", "check_topk_read", "check_visible_prediction", "check_top_entry",
    "Result", "graded", "hidden_tests", "hidden_check", "mark_prediction", "layer_inputs",
    "sample_tokens", "tiny_model", "training_note", "conv", "kv_fusion", "pair_memory", "readout", "running_state",
    "slots",
]
