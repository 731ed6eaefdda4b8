"""The checkers of the gated-RNN exercises accept right solutions and reject wrong ones."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lib.exercises.gated import check_gru_cell, check_lstm_cell


def _gates(X, H, p):
    R = torch.sigmoid(X @ p["W_xr"] + H @ p["W_hr"] + p["b_r"])
    Z = torch.sigmoid(X @ p["W_xz"] + H @ p["W_hz"] + p["b_z"])
    return R, Z


def gru_cho(X, H, p):
    R, Z = _gates(X, H, p)
    H_tilde = torch.tanh(X @ p["W_xh"] + (R * H) @ p["W_hh"] + p["b_h"])
    return Z * H + (1 - Z) * H_tilde


def gru_pytorch(X, H, p):
    R, Z = _gates(X, H, p)
    H_tilde = torch.tanh(X @ p["W_xh"] + p["b_xh"] + R * (H @ p["W_hh"] + p["b_hh"]))
    return Z * H + (1 - Z) * H_tilde


def lstm(X, H, C, p):
    def gate(n, f):
        return f(X @ p[f"W_x{n}"] + H @ p[f"W_h{n}"] + p[f"b_{n}"])

    I, F, O = gate("i", torch.sigmoid), gate("f", torch.sigmoid), gate("o", torch.sigmoid)  # noqa: E741
    C = F * C + I * gate("c", torch.tanh)
    return O * torch.tanh(C), C


def test_right_solutions_pass(capsys):
    check_gru_cell(gru_cho)
    check_gru_cell(gru_pytorch, variant="pytorch", exercise="Exercise 2.2")
    check_lstm_cell(lstm)
    out = capsys.readouterr().out
    assert "Exercise 2.1: all checks passed." in out
    assert "Exercise 2.2: all checks passed." in out
    assert "Exercise 3.1: all checks passed." in out


def test_gru_wrong_variant_is_named():
    def pytorch_formula_with_book_params(X, H, p):
        R, Z = _gates(X, H, p)
        return Z * H + (1 - Z) * torch.tanh(X @ p["W_xh"] + R * (H @ p["W_hh"]) + p["b_h"])

    with pytest.raises(AssertionError, match="PyTorch's variant"):
        check_gru_cell(pytorch_formula_with_book_params)


def test_gru_swapped_update_gate_is_named():
    def swapped(X, H, p):
        R, Z = _gates(X, H, p)
        H_tilde = torch.tanh(X @ p["W_xh"] + (R * H) @ p["W_hh"] + p["b_h"])
        return (1 - Z) * H + Z * H_tilde

    with pytest.raises(AssertionError, match="swapped"):
        check_gru_cell(swapped)


def test_gru_bad_shape_and_in_place_and_errors():
    with pytest.raises(AssertionError, match="shape"):
        check_gru_cell(lambda X, H, p: gru_cho(X, H, p).T)
    with pytest.raises(AssertionError, match="in place"):
        check_gru_cell(lambda X, H, p: H.mul_(0.0) + 1.0)
    with pytest.raises(AssertionError, match="KeyError"):
        check_gru_cell(lambda X, H, p: p["W_ir"])
    with pytest.raises(AssertionError, match="torch.Tensor"):
        check_gru_cell(lambda X, H, p: gru_cho(X, H, p).tolist())
    with pytest.raises(ValueError, match="variant"):
        check_gru_cell(gru_cho, variant="keras")


def test_lstm_wrong_solutions_are_rejected():
    with pytest.raises(AssertionError, match="tanh is missing"):
        check_lstm_cell(
            lambda X, H, C, p: (lambda h, c: (h / torch.tanh(c) * c, c))(*lstm(X, H, C, p))
        )
    with pytest.raises(AssertionError, match=r"\(H_new, C_new\)"):
        check_lstm_cell(lambda X, H, C, p: lstm(X, H, C, p)[::-1])
    with pytest.raises(AssertionError, match="pair"):
        check_lstm_cell(lambda X, H, C, p: lstm(X, H, C, p)[0])

    def no_forget_gate(X, H, C, p):
        I = torch.sigmoid(X @ p["W_xi"] + H @ p["W_hi"] + p["b_i"])  # noqa: E741
        O = torch.sigmoid(X @ p["W_xo"] + H @ p["W_ho"] + p["b_o"])  # noqa: E741
        C = C + I * torch.tanh(X @ p["W_xc"] + H @ p["W_hc"] + p["b_c"])
        return O * torch.tanh(C), C

    with pytest.raises(AssertionError, match="C_new differs"):
        check_lstm_cell(no_forget_gate)
