"""What the fast forms cost, counted term by term as the library computes them (notebooks 01b and 03b):
multiply-adds per head and per sequence, a matmul [m, k] @ [k, n] counting m k n, padding counted. A flop
counter on the library's forward sees twice the matmul terms (tests/course/test_cost.py).
"""

from __future__ import annotations

from ..running_state import DEFAULT_CHUNK

ELEMENTWISE = ("entering",)  # adding the decayed entering state, S numbers a token: not a matmul


def _chunks(T: int, C: int) -> tuple[int, int]:
    """(C used, number of chunks) as decayed_cumsum and decayed_attention choose them."""
    if T < 1 or C < 1:
        raise ValueError(f"T and C are at least 1; got T = {T}, C = {C}")
    C = min(C, T)
    return C, -(-T // C)


def running_state_cost(T: int, D: int, C: int = DEFAULT_CHUNK, elementwise: bool = True) -> dict[str, int]:
    """running_state(mode="fast") (decayed_cumsum) over T steps of D numbers (D = S), per head.
    mask      causal_decay: [C] log-gates @ [C, C^2] 0/1 matrix, C^3 per chunk
    within    W @ x: [C, C] @ [C, D], C^2 D per chunk
    entering  h_local + decay * h_enter, D per token (elementwise)
    carry     the same function on the N chunk-end states (N > 1), all its terms
    """
    C_used, N = _chunks(T, C)
    terms = {"mask": N * C_used**3, "within": N * C_used * C_used * D,
             "entering": N * C_used * D if elementwise else 0, "carry": 0}
    if N > 1:
        terms["carry"] = sum(running_state_cost(N, D, C, elementwise).values())
    return terms


def readout_cost(T: int, S: int, C: int = DEFAULT_CHUNK, elementwise: bool = True) -> dict[str, int]:
    """pair_readout(mode="fast") (decayed_attention) for T tokens, S x S memory, P0 = None, per head.
    mask      causal_decay over the T tokens' gates, C^3 per chunk
    scores    q @ k^T within each chunk, C^2 S per chunk
    weighted  scores @ values, C^2 S per chunk
    added     each chunk's addition U = (k * decay)^T @ v, C S^2 per chunk
    carry     decayed_cumsum over the N chunk-end memories of S^2 numbers (the running state's chunked
              form, so ~T S^2 + T C, not the T S^2 / C of a sequential carry)
    across    q @ M_enter, reading the entering memory, S^2 per token (only when N > 1)
    """
    C_used, N = _chunks(T, C)
    carried = running_state_cost(N, S * S, C, elementwise)
    return {"mask": N * C_used**3, "scores": N * C_used * C_used * S, "weighted": N * C_used * C_used * S,
            "added": N * C_used * S * S, "carry": sum(carried.values()),
            "across": N * C_used * S * S if N > 1 else 0}


def matmul_total(cost_fn, T: int, S: int, C: int = DEFAULT_CHUNK) -> int:
    """The matmul multiply-adds of ``cost_fn`` (running_state_cost or readout_cost): what a flop counter sees / 2."""
    terms = cost_fn(T, S, C, elementwise=False)
    return sum(v for k, v in terms.items() if k not in ELEMENTWISE)
