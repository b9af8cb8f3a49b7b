"""Step 5: the local convolution path of the hybrid, and the future-token leak.

Glossary (paper symbol -> code name -> shape)
    x_t          x            [B, T, d]     input of the path (embedding + position)
    W            conv.weight  [d, d, k]     the kernel; W[:, :, i] is tap i
    c            conv.bias    [d]
    k            kernel       int           conv_kernel, 5 in the paper
    y_t          y            [B, T, d]     GELU(conv(x))_t, the update added to x_t
    state        state        [B, k-1, d]   the last k-1 inputs, carried for one-token steps

The path, once before the triple-latent blocks:  x <- x + Dropout(GELU(Conv1d(d, d, k)(x))).
Which neighbours a tap reads is decided by the padding (notebook 05):

    causal (default)      y_t = GELU(c + sum_{i=0..k-1} W[:, :, i] x_{t-(k-1)+i})    (x_{<0} = 0)
    symmetric             tap i reads x_{t-(k-1)/2+i}: position t sees t+1, t+2 (the reference's
    (causal=False)        padding=k//2, the *future-token leak*; it has no one-token step form)

Three forms, held equal by tests/model/test_conv.py: ``conv_loop`` (explicit sum over the taps,
the specification), ``conv_fast`` (one F.conv1d call, what the model uses), ``conv_step`` (one
token with the carried state, for generation).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_can_step, check_conv_input, check_conv_kernel, check_conv_step_input, check_mode
from .recording import Recorder


def _left_context(x: torch.Tensor, weight: torch.Tensor, causal: bool, state=None):
    """Pad x along time so that a plain 'valid' convolution gives the wanted alignment."""
    k = weight.shape[-1]
    B, _, d = x.shape
    if causal:
        # causal: the k-1 inputs before position 0 are the carried state (or zeros)
        past = state if state is not None else x.new_zeros(B, k - 1, d)  # [B, k-1, d]
        return torch.cat([past, x], dim=1)  # [B, k-1+T, d]
    # symmetric: (k-1)/2 zeros on each side, so position t also sees t+1 .. t+(k-1)/2
    pad = x.new_zeros(B, (k - 1) // 2, d)  # [B, (k-1)/2, d]
    return torch.cat([pad, x, pad], dim=1)  # [B, k-1+T, d]


def conv_loop(x, weight, bias, causal: bool = True, state=None) -> torch.Tensor:
    """Reference: y_t = GELU(c + sum_i W[:, :, i] x_{t-(k-1)+i}) (causal) as an explicit sum."""
    check_conv_input(x, weight, causal, state)                      # input checks (checks.py)
    k, T = weight.shape[-1], x.shape[1]
    xp = _left_context(x, weight, causal, state)  # [B, k-1+T, d]
    pre = bias.expand(x.shape[0], T, -1)  # [B, T, d]
    for i in range(k):
        # tap i reads padded position t+i: x_{t-(k-1)+i} (causal) or x_{t-(k-1)/2+i} (symmetric)
        pre = pre + xp[:, i : i + T] @ weight[:, :, i].T  # [B, T, d]
    return F.gelu(pre)


def conv_fast(x, weight, bias, causal: bool = True, state=None) -> torch.Tensor:
    """Fast form: the same sum as one F.conv1d over the padded sequence."""
    check_conv_input(x, weight, causal, state)                      # input checks (checks.py)
    xp = _left_context(x, weight, causal, state)  # [B, k-1+T, d]
    # conv1d wants channels first: [B, d, time]
    pre = F.conv1d(xp.transpose(1, 2), weight, bias)  # [B, d, T]
    return F.gelu(pre.transpose(1, 2))  # [B, T, d]


def conv_step(x_t, state, weight, bias):
    """One token: y_t from x_t and the last k-1 inputs; returns (y_t [B, d], new state [B, k-1, d])."""
    check_conv_step_input(x_t)                                      # input check (checks.py)
    window = torch.cat([state, x_t[:, None]], dim=1)  # [B, k, d]: x_{t-k+1} .. x_t
    # y_t = GELU(c + sum_i W[:, :, i] x_{t-(k-1)+i})
    pre = bias + torch.einsum("bid,edi->be", window, weight)  # [B, d]
    return F.gelu(pre), window[:, 1:]  # [B, d], [B, k-1, d]


class LocalConv(Recorder, nn.Module):
    """The hybrid's convolution path: x <- x + Dropout(GELU(Conv1d(x))), causal by default.

    ``forward(x, state=None) -> (x_new, state)`` follows the mixer convention
    of :mod:`tl_minimal.models`, except that it returns the *residual sum*, not the update.
    The state is the last k-1 inputs [B, k-1, d] (causal only; ``None`` for causal=False).
    While recording (recording.py), ``record["update"]`` = y = GELU(conv(x)) [B, T, d].
    """

    def __init__(self, d_model: int, kernel: int = 5, dropout: float = 0.0, causal: bool = True,
                 mode: str = "fast"):
        super().__init__()
        check_conv_kernel(kernel, causal)                           # checks.py
        self.kernel, self.causal, self.mode = kernel, causal, check_mode(mode)
        self.conv = nn.Conv1d(d_model, d_model, kernel)  # weight [d, d, k], bias [d]
        self.drop = nn.Dropout(dropout)

    def check_can_step(self) -> None:
        """Raise NotImplementedError if this convolution cannot continue from a carried state."""
        check_can_step(self.causal)                                 # checks.py

    def forward(self, x, state=None):
        if state is not None:
            self.check_can_step()
        w, c = self.conv.weight, self.conv.bias
        if self.mode == "loop":
            y = conv_loop(x, w, c, self.causal, state)  # [B, T, d]
        elif x.shape[1] == 1 and state is not None:
            y_t, _ = conv_step(x[:, 0], state, w, c)
            y = y_t[:, None]  # [B, 1, d]
        else:
            y = conv_fast(x, w, c, self.causal, state)  # [B, T, d]
        self.save_record(update=y)
        # the new state (causal only): the last k-1 inputs, older ones from the old state if T < k-1
        new_state = _left_context(x, w, True, state)[:, x.shape[1]:] if self.causal else None  # [B, k-1, d]
        # x <- x + Dropout(GELU(Conv1d(x)))
        return x + self.drop(y), new_state
