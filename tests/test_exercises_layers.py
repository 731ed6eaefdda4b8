"""The checkers of the deep and bidirectional RNN exercises accept right solutions and name
the usual mistakes."""

from __future__ import annotations

import pytest
import torch
from helpers import own_bidirectional as bidirectional
from helpers import own_stacked as stacked
from helpers import run_cell as run

from seq2seq_lib.exercises.ch04 import check_stacked_gru
from seq2seq_lib.exercises.ch05 import check_bidirectional_gru


def test_right_solutions_pass(capsys):
    check_stacked_gru(stacked)
    check_bidirectional_gru(bidirectional)
    out = capsys.readouterr().out
    assert "Exercise 4.1: all checks passed." in out
    assert "Exercise 5.1: all checks passed." in out


def test_stacked_mistakes_are_named():
    def first_layer_only(X, cells):
        out, H = stacked(X, cells)
        return run(cells[0], X), H

    with pytest.raises(AssertionError, match="first layer's states"):
        check_stacked_gru(first_layer_only)

    def reversed_rows(X, cells):
        out, H = stacked(X, cells)
        return out, H.flip(0)

    with pytest.raises(AssertionError, match="reverse order"):
        check_stacked_gru(reversed_rows)

    with pytest.raises(AssertionError, match="pair"):
        check_stacked_gru(lambda X, cells: stacked(X, cells)[0])
    with pytest.raises(AssertionError, match="shape"):
        check_stacked_gru(lambda X, cells: (stacked(X, cells)[0][:, :-1], stacked(X, cells)[1]))

    def broken(X, cells):
        raise RuntimeError("boom")

    with pytest.raises(AssertionError, match="raised RuntimeError: boom"):
        check_stacked_gru(broken)


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        (lambda X, f, b: torch.cat([run(b, X, True), run(f, X)], 2), "swapped"),
        (lambda X, f, b: torch.cat([run(f, X), run(b, X, True).flip(1)], 2), "order they were"),
        (lambda X, f, b: torch.cat([run(f, X), run(b, X)], 2), "must read X_T"),
        (lambda X, f, b: torch.cat([run(f, X), run(f, X)], 2), "repeats the forward"),
        (lambda X, f, b: run(f, X), "shape"),
    ],
)
def test_bidirectional_mistakes_are_named(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check_bidirectional_gru(wrong)


def test_in_place_change_is_rejected():
    def in_place(X, f, b):
        out = bidirectional(X, f, b)
        X.zero_()
        return out

    with pytest.raises(AssertionError, match="in place"):
        check_bidirectional_gru(in_place)
