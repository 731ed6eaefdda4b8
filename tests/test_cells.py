"""Scratch cells against nn.RNNCell / nn.GRUCell / nn.LSTMCell: values, gradients, copying."""

from __future__ import annotations

import pytest
import torch
from helpers import flat_state
from torch import nn

from seq2seq_lib.cells import (
    GRUCell,
    LSTMCell,
    RNNCell,
    copy_cell_from_torch,
    make_cell,
)

B, D, H = 3, 4, 5
TOL = {torch.float32: 1e-5, torch.float64: 1e-10}
PAIRS = {
    "rnn": (lambda: nn.RNNCell(D, H), lambda: RNNCell(D, H)),
    "rnn-relu": (lambda: nn.RNNCell(D, H, nonlinearity="relu"), lambda: RNNCell(D, H, "relu")),
    "gru": (lambda: nn.GRUCell(D, H), lambda: GRUCell(D, H)),
    "lstm": (lambda: nn.LSTMCell(D, H), lambda: LSTMCell(D, H)),
}
TORCH_PARAMS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _scratch_grads(cell):
    """The scratch cell's gradients in PyTorch's layout."""
    return (cell.W_x.grad.T, cell.W_h.grad.T, cell.b_x.grad, cell.b_h.grad)


def _state(kind, dtype):
    H0 = torch.randn(B, H, dtype=dtype, requires_grad=True)
    if kind == "lstm":
        return H0, torch.randn(B, H, dtype=dtype, requires_grad=True)
    return H0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", list(PAIRS))
def test_cell_matches_torch_values_and_gradients(kind, dtype):
    torch.manual_seed(0)
    make_torch, make_scratch = PAIRS[kind]
    ref = make_torch().to(dtype)
    cell = copy_cell_from_torch(make_scratch().to(dtype), ref)
    X = torch.randn(B, D, dtype=dtype, requires_grad=True)
    state = _state(kind, dtype)
    out_ref, out = flat_state(ref(X, state)), flat_state(cell(X, state))
    tol = TOL[dtype]
    for a, b in zip(out_ref, out, strict=True):
        torch.testing.assert_close(b, a, atol=tol, rtol=tol)
    # one random weighting of all outputs, so every output element gets its own gradient
    weights = [torch.randn_like(o) for o in out]
    grads_ref = torch.autograd.grad(
        sum((w * o).sum() for w, o in zip(weights, out_ref, strict=True)),
        [X, *flat_state(state), *(getattr(ref, n) for n in TORCH_PARAMS)],
    )
    loss = sum((w * o).sum() for w, o in zip(weights, out, strict=True))
    grads = torch.autograd.grad(loss, [X, *flat_state(state), cell.W_x, cell.W_h, cell.b_x, cell.b_h])
    n_in = 1 + len(flat_state(state))
    grads = list(grads[:n_in]) + [grads[n_in].T, grads[n_in + 1].T, *grads[n_in + 2 :]]
    for a, b in zip(grads_ref, grads, strict=True):
        torch.testing.assert_close(b, a, atol=tol, rtol=tol)


def _cho_reference(X, H_prev, cell):
    """Cho et al. (2014), eq. 5-8, written out with the book's per-gate blocks."""
    r, z, h = cell.gate("r"), cell.gate("z"), cell.gate("h")
    R = torch.sigmoid(X @ r.W_x + H_prev @ r.W_h + r.b_x + r.b_h)
    Z = torch.sigmoid(X @ z.W_x + H_prev @ z.W_h + z.b_x + z.b_h)
    H_tilde = torch.tanh(X @ h.W_x + (R * H_prev) @ h.W_h + h.b_x + h.b_h)
    return Z * H_prev + (1 - Z) * H_tilde


def test_gru_cho_variant_is_cho_formula_and_not_pytorch():
    torch.manual_seed(2)
    ref = nn.GRUCell(D, H).double()
    cho = copy_cell_from_torch(GRUCell(D, H, variant="cho").double(), ref)
    X, H0 = torch.randn(B, D, dtype=torch.float64), torch.randn(B, H, dtype=torch.float64)
    got = cho(X, H0)
    torch.testing.assert_close(got, _cho_reference(X, H0, cho), atol=1e-12, rtol=1e-12)
    assert (got - ref(X, H0)).abs().max() > 1e-3  # the variants really differ


def test_gate_views_are_the_books_blocks():
    torch.manual_seed(3)
    cell = LSTMCell(D, H)
    for k, name in enumerate(("i", "f", "c", "o")):
        blk = cell.gate(name)
        assert blk.W_x.shape == (D, H) and blk.W_h.shape == (H, H) and blk.b_x.shape == (H,)
        assert torch.equal(blk.W_x, cell.W_x[:, k * H : (k + 1) * H])
        assert torch.equal(blk.b_h, cell.b_h[k * H : (k + 1) * H])
    with pytest.raises(ValueError, match="gates"):
        cell.gate("r")


def test_return_gates_are_consistent_with_the_state():
    torch.manual_seed(4)
    X, H0, C0 = torch.randn(B, D), torch.randn(B, H), torch.randn(B, H)
    gru = GRUCell(D, H)
    H1, g = gru(X, H0, return_gates=True)
    assert set(g) == {"R", "Z", "H_tilde"}
    assert all(((v > 0) & (v < 1)).all() for k, v in g.items() if k != "H_tilde")
    torch.testing.assert_close(H1, g["Z"] * H0 + (1 - g["Z"]) * g["H_tilde"])
    lstm = LSTMCell(D, H)
    (H1, C1), g = lstm(X, (H0, C0), return_gates=True)
    assert set(g) == {"I", "F", "O", "C_tilde"}
    torch.testing.assert_close(C1, g["F"] * C0 + g["I"] * g["C_tilde"])
    torch.testing.assert_close(H1, g["O"] * torch.tanh(C1))
    H1, g = RNNCell(D, H)(X, H0, return_gates=True)
    assert g == {} and H1.shape == (B, H)


def test_zero_state_by_default():
    torch.manual_seed(5)
    X = torch.randn(B, D)
    cell = GRUCell(D, H)
    torch.testing.assert_close(cell(X), cell(X, torch.zeros(B, H)))
    H1, C1 = LSTMCell(D, H)(X)
    assert H1.shape == C1.shape == (B, H)


def test_bad_input_is_rejected_with_clear_errors():
    with pytest.raises(ValueError, match="variant"):
        GRUCell(D, H, variant="keras")
    with pytest.raises(ValueError, match="hidden_size"):
        RNNCell(D, 0)
    with pytest.raises(ValueError, match="cell_type"):
        make_cell("transformer", D, H)
    with pytest.raises(ValueError, match=r"X must be \(B, 4\)"):
        GRUCell(D, H)(torch.randn(B, D + 1))
    with pytest.raises(ValueError, match="state H"):
        GRUCell(D, H)(torch.randn(B, D), torch.randn(B, H + 1))
    with pytest.raises(ValueError, match="pair"):
        LSTMCell(D, H)(torch.randn(B, D), torch.randn(B, H))
    with pytest.raises(TypeError, match="GRUCell"):
        copy_cell_from_torch(LSTMCell(D, H), nn.GRUCell(D, H))
    with pytest.raises(ValueError, match="sizes differ"):
        copy_cell_from_torch(GRUCell(D, H), nn.GRUCell(D, H + 1))
    with pytest.raises(ValueError, match="nonlinearity"):
        copy_cell_from_torch(RNNCell(D, H), nn.RNNCell(D, H, nonlinearity="relu"))
    with pytest.raises(ValueError, match="bias"):
        copy_cell_from_torch(GRUCell(D, H), nn.GRUCell(D, H, bias=False))
