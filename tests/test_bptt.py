"""Chapter 1: the hand-written BPTT equals autograd; the helpers do what the chapter says."""


import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_lib import bptt


def problem(n, d_h, d_in, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    U = torch.randn(d_h, d_h, generator=g, dtype=dtype) / d_h**0.5
    W = torch.randn(d_h, d_in, generator=g, dtype=dtype)
    xs = torch.randn(n, d_in, generator=g, dtype=dtype)
    h0 = torch.randn(d_h, generator=g, dtype=dtype)
    dL_dh = torch.randn(n, d_h, generator=g, dtype=dtype)
    return U, W, xs, h0, dL_dh


def autograd_grads(U, W, xs, h0, dL_dh):
    Ur, Wr, h0r = (t.clone().requires_grad_() for t in (U, W, h0))
    (bptt.forward(Ur, Wr, xs, h0r).h * dL_dh).sum().backward()
    return Ur.grad, Wr.grad, h0r.grad


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), d_h=st.integers(1, 6), d_in=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_bptt_equals_autograd_float64(n, d_h, d_in, seed):
    args = problem(n, d_h, d_in, seed)
    mine = bptt.bptt(*args)
    ref = autograd_grads(*args)
    for ours, theirs in zip((mine.dU, mine.dW, mine.dh0), ref, strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-10)


def test_bptt_equals_autograd_float32():
    args = problem(40, 8, 3, seed=1, dtype=torch.float32)
    mine = bptt.bptt(*args)
    for ours, theirs in zip((mine.dU, mine.dW, mine.dh0), autograd_grads(*args), strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_forward_matches_the_four_equations():
    U, W, xs, h0, _ = problem(3, 4, 2, seed=0)
    tr = bptt.forward(U, W, xs, h0)
    h = h0
    for t in range(3):
        torch.testing.assert_close(tr.a[t], U @ h)
        torch.testing.assert_close(tr.b[t], W @ xs[t])
        torch.testing.assert_close(tr.c[t], tr.a[t] + tr.b[t])
        h = torch.tanh(tr.c[t])
        torch.testing.assert_close(tr.h[t], h)


def test_shape_errors_are_clear():
    U, W, xs, h0, dL_dh = problem(3, 4, 2, seed=0)
    with pytest.raises(ValueError, match="U must be square"):
        bptt.forward(U[:, :3], W, xs, h0)
    with pytest.raises(ValueError, match="xs must be"):
        bptt.forward(U, W, xs[:, :1], h0)
    with pytest.raises(ValueError, match="at least one"):
        bptt.forward(U, W, xs[:0], h0)
    with pytest.raises(ValueError, match="dL_dh must be"):
        bptt.bptt(U, W, xs, h0, dL_dh[:2])


def test_hidden_state_grad_norms_match_autograd():
    U, W, xs, h0, _ = problem(12, 5, 3, seed=4)
    top = torch.randn(5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    norms = bptt.hidden_state_grad_norms(U, W, xs, h0, top)
    hs = []
    h = h0.clone().requires_grad_()
    for x in xs:
        h = torch.tanh(U @ h + W @ x)
        h.retain_grad()
        hs.append(h)
    (hs[-1] * top).sum().backward()
    expected = torch.stack([hh.grad.norm() for hh in hs])
    torch.testing.assert_close(norms, expected)


def test_scaled_orthogonal_has_all_singular_values_rho():
    U = bptt.scaled_orthogonal(16, 0.7, torch.Generator().manual_seed(0))
    torch.testing.assert_close(torch.linalg.svdvals(U), torch.full((16,), 0.7, dtype=U.dtype))
    with pytest.raises(ValueError):
        bptt.scaled_orthogonal(0, 1.0)


def test_underflow_powers_are_the_ieee_ones():
    # 0.01**162 = 1e-324 is below float64's smallest subnormal (about 4.9e-324)
    assert bptt.first_underflow_power(0.01, torch.float64) == 162
    assert 0.01**162 == 0.0 and 0.01**161 > 0.0
    assert bptt.first_underflow_power(0.01, torch.float32) == 23  # 1e-46 < 1.4e-45
    with pytest.raises(ValueError):
        bptt.first_underflow_power(1.5, torch.float32)
