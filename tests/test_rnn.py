"""ScratchRNN against nn.RNN / nn.GRU / nn.LSTM: deep, bidirectional, both copy directions."""

from __future__ import annotations

import pytest
import torch
from helpers import flat_state
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from seq2seq_lib.rnn import (
    ScratchRNN,
    copy_from_torch,
    run_cell,
    scratch_like,
)

TORCH = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
TOL = {torch.float32: 1e-5, torch.float64: 1e-10}


def _initial_state(kind, n, B, h, dtype):
    H0 = torch.randn(n, B, h, dtype=dtype, requires_grad=True)
    return (H0, torch.randn(n, B, h, dtype=dtype, requires_grad=True)) if kind == "lstm" else H0


def _scratch_grads_in_torch_layout(scratch):
    """Gradients of every cell in the order of PyTorch's ``module.parameters()``."""
    out = []
    for cell in scratch.cells:  # PyTorch order: l0, l0_reverse, l1, ... each (ih, hh, b_ih, b_hh)
        out += [cell.W_x.grad.T, cell.W_h.grad.T, cell.b_x.grad, cell.b_h.grad]
    return out


def _compare(kind, L, bidirectional, dtype, B=3, T=6, d=4, h=5, seed=0):
    """Forward and backward of nn.* and of its scratch copy; assert equality."""
    torch.manual_seed(seed)
    ref = TORCH[kind](d, h, L, batch_first=True, bidirectional=bidirectional).to(dtype)
    scratch = scratch_like(ref)
    D = 2 if bidirectional else 1
    X = torch.randn(B, T, d, dtype=dtype, requires_grad=True)
    state = _initial_state(kind, L * D, B, h, dtype)
    out_ref, st_ref = ref(X, state)
    out, st_new = scratch(X, state)
    tol = TOL[dtype]
    assert out.shape == out_ref.shape == (B, T, D * h)
    torch.testing.assert_close(out, out_ref, atol=tol, rtol=tol)
    for a, b in zip(flat_state(st_new), flat_state(st_ref), strict=True):
        assert a.shape == (L * D, B, h)
        torch.testing.assert_close(a, b, atol=tol, rtol=tol)
    # weight every output and final state randomly; compare all gradients
    w_out = torch.randn_like(out)
    w_st = [torch.randn_like(s) for s in flat_state(st_new)]

    def loss(o, s):
        return (w_out * o).sum() + sum((w * x).sum() for w, x in zip(w_st, flat_state(s), strict=True))

    inputs = [X, *flat_state(state)]
    g_ref = torch.autograd.grad(loss(out_ref, st_ref), inputs + list(ref.parameters()))
    loss(out, st_new).backward(inputs=inputs + list(scratch.parameters()))
    g_new = [X.grad, *(s.grad for s in flat_state(state))] + _scratch_grads_in_torch_layout(scratch)
    assert len(g_ref) == len(g_new)
    for a, b in zip(g_new, g_ref, strict=True):
        torch.testing.assert_close(a, b, atol=tol, rtol=tol)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("L", [1, 2, 3])
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_matches_torch_float64(kind, L, bidirectional):
    _compare(kind, L, bidirectional, torch.float64)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_matches_torch_float32(kind, bidirectional):
    _compare(kind, 2, bidirectional, torch.float32)


@settings(max_examples=12, deadline=None)
@given(
    kind=st.sampled_from(["rnn", "gru", "lstm"]),
    L=st.integers(1, 2),
    bidirectional=st.booleans(),
    B=st.integers(1, 4),
    T=st.integers(1, 7),
    d=st.integers(1, 5),
    h=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_random_shapes_match_torch(kind, L, bidirectional, B, T, d, h, seed):
    _compare(kind, L, bidirectional, torch.float64, B=B, T=T, d=d, h=h, seed=seed)


def test_gru_cho_layer_differs_from_nn_gru():
    torch.manual_seed(2)
    ref = nn.GRU(4, 5, batch_first=True).double()
    cho = scratch_like(ref, gru_variant="cho")
    X = torch.randn(2, 6, 4, dtype=torch.float64)
    out_cho, _ = cho(X)
    out_ref, _ = ref(X)
    assert (out_cho - out_ref).abs().max() > 1e-3
    # ... and equals the Cho cell applied step by step
    H, cell = torch.zeros(2, 5, dtype=torch.float64), cho.cells[0]
    for t in range(6):
        H = cell(X[:, t], H)
        torch.testing.assert_close(out_cho[:, t], H, atol=1e-12, rtol=1e-12)


def test_backward_direction_reads_time_reversed():
    """The backward cell on X equals a forward run on X flipped in time."""
    torch.manual_seed(3)
    scratch = ScratchRNN("gru", 3, 4, bidirectional=True).double()
    X = torch.randn(2, 5, 3, dtype=torch.float64)
    out, H_n = scratch(X)
    back = scratch.cells[1]
    H_rev, last, _ = run_cell(back, X.flip(1), back.init_state(2, like=X))
    torch.testing.assert_close(out[..., 4:], H_rev.flip(1))
    torch.testing.assert_close(H_n[1], last)


def test_return_gates_shapes_and_order():
    torch.manual_seed(4)
    lstm = ScratchRNN("lstm", 3, 4, num_layers=2, bidirectional=True)
    X = torch.randn(2, 5, 3)
    out, _, gates = lstm(X, return_gates=True)
    assert len(gates) == 4 and set(gates[0]) == {"I", "F", "O", "C_tilde"}
    assert all(g.shape == (2, 5, 4) for cell in gates for g in cell.values())
    torch.testing.assert_close(out, lstm(X)[0])
    # time index t holds the gates of the step that read X_t, in both directions:
    # the forward cell reads X_1 first, the backward cell reads X_T first
    fwd, bwd = lstm.cells[0], lstm.cells[1]
    _, g_fwd = fwd(X[:, 0], return_gates=True)
    _, g_bwd = bwd(X[:, -1], return_gates=True)
    for name in ("I", "F", "O", "C_tilde"):
        torch.testing.assert_close(gates[0][name][:, 0], g_fwd[name])
        torch.testing.assert_close(gates[1][name][:, -1], g_bwd[name])
    gru = ScratchRNN("gru", 3, 4)
    _, _, g = gru(X, return_gates=True)
    _, g_1 = gru.cells[0](X[:, 0], return_gates=True)
    torch.testing.assert_close(g[0]["R"][:, 0], g_1["R"])
    assert set(g[0]) == {"R", "Z", "H_tilde"}


def test_bad_input_is_rejected_with_clear_errors():
    scratch = ScratchRNN("lstm", 4, 5, num_layers=2)
    with pytest.raises(ValueError, match="batch first"):
        scratch(torch.randn(3, 4))
    with pytest.raises(ValueError, match="no time steps"):
        scratch(torch.randn(3, 0, 4))
    with pytest.raises(ValueError, match="pair"):
        scratch(torch.randn(3, 6, 4), torch.zeros(2, 3, 5))
    with pytest.raises(ValueError, match=r"H_0 must be \(L\*D, B, h\)"):
        scratch(torch.randn(3, 6, 4), (torch.zeros(1, 3, 5), torch.zeros(1, 3, 5)))
    with pytest.raises(ValueError, match="num_layers"):
        ScratchRNN("gru", 4, 5, num_layers=0)
    with pytest.raises(TypeError, match="nn.LSTM"):
        copy_from_torch(scratch, nn.GRU(4, 5, 2))
    with pytest.raises(ValueError, match="differ"):
        copy_from_torch(scratch, nn.LSTM(4, 5, 3))
    with pytest.raises(ValueError, match="proj_size"):
        copy_from_torch(scratch, nn.LSTM(4, 5, 2, proj_size=2))
    with pytest.raises(ValueError, match="nonlinearity"):
        copy_from_torch(ScratchRNN("rnn", 4, 5), nn.RNN(4, 5, nonlinearity="relu"))
    with pytest.raises(TypeError, match="nn.RNN, nn.GRU or nn.LSTM"):
        scratch_like(nn.Linear(4, 5))
