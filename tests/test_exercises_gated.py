"""The checkers of the gated-RNN exercises accept right solutions and reject wrong ones."""

from __future__ import annotations

import pytest
import torch
from helpers import gru_gates
from helpers import own_coupled as coupled

from seq2seq_lib.exercises.ch02 import check_gru_cell
from seq2seq_lib.exercises.ch03 import check_coupled_lstm, check_lstm_cell


def gru_cho(X, H, p):
    R, Z = gru_gates(X, H, p)
    H_tilde = torch.tanh(X @ p["W_xh"] + (R * H) @ p["W_hh"] + p["b_h"])
    return Z * H + (1 - Z) * H_tilde


def gru_pytorch(X, H, p):
    R, Z = gru_gates(X, H, p)
    H_tilde = torch.tanh(X @ p["W_xh"] + p["b_xh"] + R * (H @ p["W_hh"] + p["b_hh"]))
    return Z * H + (1 - Z) * H_tilde


def lstm(X, H, C, p):
    def gate(n, f):
        return f(X @ p[f"W_x{n}"] + H @ p[f"W_h{n}"] + p[f"b_{n}"])

    I, F, O = (gate(g, torch.sigmoid) for g in ("i", "f", "o"))  # noqa: E741
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
        R, Z = gru_gates(X, H, p)
        return Z * H + (1 - Z) * torch.tanh(X @ p["W_xh"] + R * (H @ p["W_hh"]) + p["b_h"])

    with pytest.raises(AssertionError, match="PyTorch's variant"):
        check_gru_cell(pytorch_formula_with_book_params)


def test_gru_swapped_update_gate_is_named():
    def swapped(X, H, p):
        R, Z = gru_gates(X, H, p)
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


def test_coupled_lstm_right_solution_passes(capsys):
    check_coupled_lstm(coupled)
    assert capsys.readouterr().out == "Exercise 3.2: all checks passed.\n"


def _changed(**changes):
    return lambda p: {**coupled(p), **{k: f(p) for k, f in changes.items()}}


def test_coupled_lstm_wrong_solutions_are_rejected():
    # I = F instead of 1 - F (the sign of the input gate forgotten)
    with pytest.raises(AssertionError, match=r"(?s)I_t \(the input gate\) differs.*σ\(-a\)"):
        check_coupled_lstm(_changed(W_xi=lambda p: p["W_xz"], W_hi=lambda p: p["W_hz"],
                                    b_i=lambda p: p["b_z"]))
    # "1 - b" is not how to get 1 - σ(b)
    with pytest.raises(AssertionError, match="input gate"):
        check_coupled_lstm(_changed(b_i=lambda p: 1 - p["b_z"]))
    # F = 1 - Z: the roles of the two interpolation weights swapped
    def swapped(p):
        q = coupled(p)
        for w in ("W_x", "W_h", "b_"):
            q[f"{w}f"], q[f"{w}i"] = q[f"{w}i"], q[f"{w}f"]
        return q

    with pytest.raises(AssertionError, match="your F_t is 1 - Z_t"):
        check_coupled_lstm(swapped)
    # the output gate left at a moderate bias: O_t = σ(3) ≈ 0.95, not 1
    with pytest.raises(AssertionError, match="(?s)O_t .*large bias"):
        check_coupled_lstm(_changed(b_o=lambda p: torch.full_like(p["b_z"], 3.0)))
    # the candidate taken from the reset gate's block
    with pytest.raises(AssertionError, match="(?s)C_t .*vs the GRU's H_t.*candidate"):
        check_coupled_lstm(_changed(W_xc=lambda p: p["W_xr"], W_hc=lambda p: p["W_hr"]))
    # the identity "coupling" of the old exercise: both sides the same, no LSTM at all
    with pytest.raises(AssertionError, match="lack"):
        check_coupled_lstm(lambda p: {"W_xf": p["W_xz"], "W_hf": p["W_hz"], "b_f": p["b_z"]})
    with pytest.raises(AssertionError, match="dict"):
        check_coupled_lstm(lambda p: list(coupled(p).values()))
    with pytest.raises(AssertionError, match=r"W_xc \(d=4, h=5\) has shape"):
        check_coupled_lstm(_changed(W_xc=lambda p: p["W_hh"]))
