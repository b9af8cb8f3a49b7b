"""The convolution path: loop == fast == step, causal by default, and the symmetric leak."""

import pytest
import torch

from tl_minimal.conv import LocalConv, conv_fast, conv_loop, conv_step


def _rel(a, b):
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


@pytest.mark.parametrize("T", [1, 3, 7, 20])
@pytest.mark.parametrize("causal", [True, False])
def test_loop_equals_fast(T, causal):
    torch.manual_seed(0)
    x = torch.randn(2, T, 6, dtype=torch.float64)
    w, c = torch.randn(6, 6, 5, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    assert _rel(conv_loop(x, w, c, causal), conv_fast(x, w, c, causal)) < 1e-12


def test_fast_matches_torch_conv1d_module():
    # the symmetric form is exactly nn.Conv1d(padding=k//2), the reference's layer
    torch.manual_seed(0)
    ref = torch.nn.Conv1d(4, 4, 5, padding=2).double()
    x = torch.randn(3, 9, 4, dtype=torch.float64)
    want = torch.nn.functional.gelu(ref(x.transpose(1, 2)).transpose(1, 2))
    assert _rel(conv_fast(x, ref.weight, ref.bias, causal=False), want) < 1e-12


@pytest.mark.parametrize("T", [1, 2, 9])
def test_step_equals_fast(T):
    torch.manual_seed(1)
    x = torch.randn(2, T, 6, dtype=torch.float64)
    w, c = torch.randn(6, 6, 5, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    state = torch.zeros(2, 4, 6, dtype=torch.float64)
    ys = []
    for t in range(T):
        y, state = conv_step(x[:, t], state, w, c)
        ys.append(y)
    assert _rel(torch.stack(ys, 1), conv_fast(x, w, c)) < 1e-12


def test_module_chunks_and_steps_match_whole():
    torch.manual_seed(2)
    m = LocalConv(6, kernel=5).double().eval()
    x = torch.randn(2, 11, 6, dtype=torch.float64)
    whole, _ = m(x)
    a, st = m(x[:, :2])          # a chunk shorter than k-1
    b, st = m(x[:, 2:7], st)
    outs = [a, b]
    for t in range(7, 11):
        o, st = m(x[:, t : t + 1], st)
        outs.append(o)
    assert _rel(torch.cat(outs, 1), whole) < 1e-12


def test_causal_does_not_leak_symmetric_does():
    torch.manual_seed(3)
    x = torch.randn(1, 10, 6)
    t = 4
    x2 = x.clone()
    x2[:, t + 1] += 1.0  # change only the NEXT position
    causal, leaky = LocalConv(6, causal=True).eval(), LocalConv(6, causal=False).eval()
    leaky.load_state_dict(causal.state_dict())
    y, _ = causal(x)
    y2, _ = causal(x2)
    assert torch.equal(y[:, : t + 1], y2[:, : t + 1])
    z, _ = leaky(x)
    z2, _ = leaky(x2)
    assert (z[:, t] - z2[:, t]).abs().max() > 1e-3      # position t saw token t+1: the leak
    assert torch.equal(z[:, : t - 1], z2[:, : t - 1])   # but not further back than t-1 (k=5)


def test_symmetric_has_no_step_and_bad_inputs():
    leaky = LocalConv(6, causal=False)
    with pytest.raises(NotImplementedError, match="no step form"):
        leaky.check_can_step()
    with pytest.raises(NotImplementedError, match="no step form"):
        leaky(torch.zeros(2, 1, 6), torch.zeros(2, 4, 6))
    with pytest.raises(ValueError, match="odd kernel"):
        LocalConv(6, kernel=4, causal=False)
    with pytest.raises(ValueError, match=r"\[B, T, d\]"):
        conv_fast(torch.zeros(3, 6), torch.zeros(6, 6, 5), torch.zeros(6))
