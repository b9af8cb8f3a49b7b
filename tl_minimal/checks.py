"""Input checks for the concept files and models: a wrong mode, chunk size, rank, dtype, device,
shape, setting or token id is a clear error that names what was expected. They live here so that
the concept files read as the math; nothing here computes anything."""

from __future__ import annotations

import numbers
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

import torch

# "loop": the for-loop over time, the specification; "fast": what models use (chunked for the
# recurrences, one conv1d for the convolution, all positions at once for the key-value read)
MODES = ("loop", "fast")
MAX_CHUNK = 256  # running_state.causal_decay builds a 0/1 segment matrix with C^3 entries


def check_mode(mode: str) -> str:
    """Return ``mode`` if it is a known op form, else raise ValueError listing the allowed ones."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: mode must be one of {', '.join(MODES)}")
    return mode


def check_form(mode: str, chunk_size: int) -> tuple[str, int]:
    """An op's form: a known mode (check_mode) and chunk_size an int in [2, MAX_CHUNK]."""
    check_mode(mode)
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or not 2 <= chunk_size <= MAX_CHUNK:
        raise ValueError(f"chunk_size must be an int in [2, {MAX_CHUNK}], got {chunk_size!r}")
    return mode, chunk_size


def check_causal_decay_length(C: int) -> int:
    if C > MAX_CHUNK:
        raise ValueError(f"causal_decay takes chunks of at most {MAX_CHUNK} steps (it builds a C x C^2 "
                         f"matrix), got {C}; split the sequence into chunks")
    return C


def check_sequence(name: str, x, ndim: int, like: torch.Tensor | None = None, shape=None) -> torch.Tensor:
    """Check a tensor's type, rank, dtype (floating, same as ``like``), device and shape."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(x.shape)}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating-point tensor (float32 or float64), got {x.dtype}")
    if like is not None and x.dtype != like.dtype:
        raise TypeError(f"{name} has dtype {x.dtype} but the other inputs have {like.dtype}; convert them to one dtype")
    if like is not None and x.device != like.device:
        raise ValueError(f"{name} is on {x.device} but the other inputs are on {like.device}")
    if shape is not None and tuple(x.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(x.shape)}")
    if ndim >= 3 and x.shape[1] == 0:
        raise ValueError(f"{name} has an empty time axis: need T >= 1")
    return x


def check_axes(*inputs) -> dict:
    """Inputs (name, tensor or None (skipped), axes such as "B T H S" or a tuple, an int a fixed size):
    each passes check_sequence with the first one's dtype and device, and an axis named before keeps
    its size. Returns the size of every named axis, e.g. {"B": 2, "T": 5, ...}."""
    sizes, like = {}, None
    for name, x, axes in inputs:
        if x is None:
            continue
        axes = axes.split() if isinstance(axes, str) else axes
        want = [a if isinstance(a, int) else sizes.get(a, a) for a in axes]  # a name not met yet stays a name
        known = all(isinstance(w, int) for w in want)
        check_sequence(name, x, len(axes), like=like, shape=want if known else None)
        for axis, w, n in zip(axes, want, x.shape, strict=True):
            if isinstance(w, int) and w != n:
                raise ValueError(f"{name} must have shape [{', '.join(map(str, axes))}] = "
                                 f"[{', '.join(map(str, want))}], got {tuple(x.shape)}")
            sizes[axis] = n
        like = x if like is None else like
    return sizes


def check_positions(positions, T: int) -> list[int]:
    """``positions`` (an int or ints in [0, T)) as a non-empty list; ValueError otherwise."""
    positions = [positions] if isinstance(positions, int) else list(positions)
    if not positions:
        raise ValueError("positions is empty: give at least one time index")
    for p in positions:
        if not is_int(p) or not 0 <= p < T:
            raise ValueError(f"positions must be ints in [0, {T}) (T = {T}), got {p!r}")
    return positions


def is_int(value) -> bool:
    """An integer (a Python or NumPy one), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value) -> bool:
    """A real number (int, float or a NumPy one), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive_ints(**sizes) -> None:
    """Every keyword's value is a positive int (not a bool); ValueError naming the first that is not."""
    for name, value in sizes.items():
        if not is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_heads(d_model, n_heads, **sizes) -> int:
    """check_positive_ints, and d_model splits into n_heads heads; returns the head size d_model // n_heads."""
    check_positive_ints(d_model=d_model, n_heads=n_heads, **sizes)
    if d_model % n_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
    return d_model // n_heads


def check_layer_input(n, d_model: int) -> torch.Tensor:
    """A mixer's input: a tensor [B, T, d_model] with T >= 1."""
    if not isinstance(n, torch.Tensor) or n.dim() != 3 or n.shape[-1] != d_model:
        got = tuple(n.shape) if isinstance(n, torch.Tensor) else type(n).__name__
        raise ValueError(f"input must be [B, T, d_model={d_model}], got {got}")
    if n.shape[1] == 0:
        raise ValueError("input has an empty time axis: need T >= 1")
    return n


def check_state(state, shapes: dict, like: torch.Tensor, keys_text: str | None = None) -> tuple:
    """A mixer's carried state, None or a dict with exactly the keys of ``shapes``, each a tensor of that
    shape with ``like``'s dtype and device: its tensors in the order of ``shapes`` (None for each key if
    None). ``keys_text`` describes the keys in the error (default: each key with its shape)."""
    if state is None:
        return (None,) * len(shapes)
    if not isinstance(state, dict) or set(state) != set(shapes):
        keys_text = keys_text or ", ".join(f"'{key}' {list(shape)}" for key, shape in shapes.items())
        raise ValueError(f"state must be None or a dict with keys {keys_text}")
    for key, shape in shapes.items():
        check_sequence(f"state['{key}']", state[key], len(shape), like=like, shape=shape)
    return tuple(state[key] for key in shapes)


def check_mixer_call(n, state, d_model: int, mode: str, chunk_size: int, shapes: dict,
                     keys_text: str | None = None) -> tuple:
    """A triple-latent mixer's input n [B, T, d_model], form (mode, chunk_size) and carried state
    (check_state; ``shapes`` without the batch axis); returns the state's tensors."""
    check_layer_input(n, d_model)
    check_form(mode, chunk_size)
    return check_state(state, {key: (n.shape[0], *shape) for key, shape in shapes.items()}, n, keys_text)


def check_conv_kernel(kernel: int, causal: bool) -> int:
    if kernel < 1:
        raise ValueError(f"conv kernel must be >= 1, got {kernel}")
    if not causal and kernel % 2 == 0:
        raise ValueError(f"the symmetric convolution (causal=False, setting conv_causal) needs an odd kernel "
                         f"(setting conv_kernel), got {kernel}")
    return kernel


def check_conv_input(x: torch.Tensor, weight: torch.Tensor, causal: bool = True, state=None) -> None:
    """x [B, T, d] with the d the kernel weight [d, d, k] expects; a carried state only if causal."""
    if x.dim() != 3:
        raise ValueError(f"x must be [B, T, d], got shape {tuple(x.shape)}")
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"x has d={x.shape[-1]} but the kernel expects d={weight.shape[1]}")
    if not causal and state is not None:
        raise ValueError("the symmetric (causal=False) convolution cannot continue from a state")


def check_can_step(causal: bool) -> None:
    """NotImplementedError for the symmetric convolution, which cannot continue from a state."""
    if not causal:
        raise NotImplementedError(
            "the symmetric convolution (conv_causal=False) has no step form: position t reads "
            "tokens t+1, t+2 that do not exist yet during generation (the future-token leak); "
            "use conv_causal=True to generate")


def check_conv_step_input(x_t: torch.Tensor) -> None:
    if x_t.dim() != 2:
        raise ValueError(f"x_t must be [B, d], got shape {tuple(x_t.shape)}")


def check_kv_config(c, query_aligns: tuple, read_gates: tuple) -> None:
    """A KVConfig's settings (kv_fusion.py), each error saying what is allowed."""
    if c.query_align not in query_aligns:
        raise ValueError(f"query_align must be one of {', '.join(query_aligns)}, got {c.query_align!r}")
    if not (c.top_k is None or c.top_k == "all" or (is_int(c.top_k) and c.top_k >= 1)):
        raise ValueError(f"top_k must be a positive int, 'all' or None (all entries), got {c.top_k!r}")
    if isinstance(c.score_scale, str) and c.score_scale == "printed":
        if not is_int(c.assoc_dim) or c.assoc_dim < 1:
            raise ValueError(f"score_scale='printed' means beta = 1/sqrt(assoc_dim) (the paper's printed "
                             f"score) and needs assoc_dim (D_kv), a positive int; got assoc_dim={c.assoc_dim!r}")
    elif not is_real(c.score_scale) or not c.score_scale > 0:
        raise ValueError(f"score_scale (beta) must be a number > 0 or 'printed' (1/sqrt(assoc_dim), the "
                         f"paper's printed score), got {c.score_scale!r}")
    if not isinstance(c.read_gate, str) or c.read_gate not in read_gates:
        raise ValueError(f"read_gate must be one of {', '.join(read_gates)}, got {c.read_gate!r}")
    if c.read_gate != "scalar" and c.gate_outside_norm:
        raise ValueError(f"gate_outside_norm=True applies a scalar read gate after the LayerNorm; "
                         f"read_gate={c.read_gate!r} is a vector over m_t (before W_m): use read_gate='scalar' "
                         f"or gate_outside_norm=False")


# --- token ids: checking them on a GPU reads a value back (the CPU waits for every queued kernel);
# loops of many forward passes check ids on the CPU batch, before it moves, and run inside checked_ids
_IDS_CHECKED: ContextVar[bool] = ContextVar("ids_checked", default=False)


def check_tokens(tokens, vocab_size: int, max_seq_len: int, start: int = 0) -> None:
    """A language model's input: int64 ids [B, T], positions start..start+T-1 < max_seq_len, ids in
    [0, vocab_size) (that last check skipped inside :func:`trust_ids`)."""
    if not isinstance(tokens, torch.Tensor):
        raise TypeError(f"tokens must be a torch.Tensor of dtype torch.long, got {type(tokens).__name__}")
    if tokens.dtype != torch.long:
        raise TypeError(f"tokens must have dtype torch.long (int64), got {tokens.dtype}; convert with tokens.long()")
    if tokens.dim() != 2 or 0 in tokens.shape:
        raise ValueError(f"tokens must be non-empty [B, T] (batch, time), got shape {tuple(tokens.shape)}")
    T = tokens.shape[1]
    if start + T > max_seq_len:
        where = f"positions {start}..{start + T - 1}" if start else f"T = {T}"
        raise ValueError(f"{where} exceed(s) max_seq_len = {max_seq_len} (learned positions "
                         f"exist for 0..{max_seq_len - 1})")
    if _IDS_CHECKED.get():  # checked by the caller on the CPU, or made by the model (see checked_ids)
        return
    if bool(((tokens < 0) | (tokens >= vocab_size)).any()):  # on a GPU: one host-device sync
        lo, hi = int(tokens.min()), int(tokens.max())
        raise ValueError(f"token ids must lie in [0, {vocab_size}) (vocab_size = {vocab_size}), "
                         f"got ids in [{lo}, {hi}]")


def check_generate_args(n_new, temperature, top_k) -> None:
    """generate's options: n_new an int >= 0, temperature a number >= 0, top_k None or a positive int."""
    if not is_int(n_new) or n_new < 0:
        raise ValueError(f"n_new must be an int >= 0, got {n_new!r}")
    if not is_real(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a number >= 0 (0 = greedy), got {temperature!r}")
    if top_k is not None and (not is_int(top_k) or top_k < 1):
        raise ValueError(f"top_k must be None or a positive int, got {top_k!r}")


def check_step_token(token) -> None:
    """A model's step input: one token per sequence, token [B]."""
    if not isinstance(token, torch.Tensor) or token.dim() != 1:
        got = tuple(token.shape) if isinstance(token, torch.Tensor) else type(token).__name__
        raise ValueError(f"step takes one token per sequence, token [B]; got {got}")


def check_setting_types(cfg: dict, positive_ints: tuple, bools: tuple, reals: tuple) -> None:
    """A model's settings (registry.py): sizes positive ints, switches bools, biases and dropout real numbers."""
    check_positive_ints(**{name: cfg[name] for name in positive_ints if name in cfg})
    for name in bools:
        if name in cfg and not isinstance(cfg[name], bool):
            raise ValueError(f"{name} must be True or False, got {cfg[name]!r}")
    for name in reals:
        if name in cfg and not is_real(cfg[name]):
            raise ValueError(f"{name} must be a real number, got {cfg[name]!r}")
    d = cfg["dropout"]
    if not is_real(d) or not 0 <= d < 1:
        raise ValueError(f"dropout must be a number in [0, 1), got {d!r}")


def check_choice(name: str, value, allowed: tuple) -> None:
    """``value`` is one of ``allowed``; ValueError listing them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


@contextmanager
def trust_ids():
    """Inside the block forward passes skip the token-range check (the caller vouches for the ids)."""
    token = _IDS_CHECKED.set(True)
    try:
        yield
    finally:
        _IDS_CHECKED.reset(token)


def checked_ids(model, tokens):
    """Range-check ``tokens`` now if they are on the CPU (no sync there) and return ``trust_ids()``;
    otherwise, or for a model without ``check_tokens`` (DDP's inner model is unwrapped), a no-op context."""
    inner = getattr(model, "module", model)
    if hasattr(inner, "check_tokens") and isinstance(tokens, torch.Tensor) and tokens.device.type == "cpu":
        inner.check_tokens(tokens)
        return trust_ids()
    return nullcontext()


def check_short_conv_input(x, weight, past=None, mode: str = "fast") -> None:
    """The short (depthwise) convolution's mode, input x [B, T, C], kernel weight [C, k], past [B, k-1, C]."""
    check_mode(mode)
    check_sequence("x", x, 3)
    B, _, C = x.shape
    check_sequence("weight", weight, 2, like=x)
    if weight.shape[0] != C:
        raise ValueError(f"x has C={C} channels but the kernel weight [C, k] has {weight.shape[0]}")
    if past is not None:
        check_sequence("past", past, 3, like=x, shape=(B, weight.shape[1] - 1, C))
