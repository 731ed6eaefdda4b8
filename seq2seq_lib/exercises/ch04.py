"""Checkers for the exercises of chapter 4 (deep RNNs): a stacked GRU built from cells.

The reader builds a whole ``L``-layer GRU out of PyTorch's one-step cells ``nn.GRUCell``::

    def stacked_gru(X, cells):              # X (B, T, d); cells: L nn.GRUCell
        ...
        return outputs, H_n                 # (B, T, h) of the last layer, (L, B, h)

and passes the function to :func:`check_stacked_gru`, which draws fresh cells and inputs
for a few shapes, copies the cells' weights into ``nn.GRU(num_layers=L)`` and compares the
outputs. Layers start from zero states.

A solution that calls a ready-made layer instead of running the cells is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`, :data:`LAYER_REFERENCES`): ``nn.GRU`` and its kernel, the
library's RNN layers and loops over time, and this module's :func:`run_cell`. Calling the
cells themselves is the exercise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from seq2seq_lib.exercises import (
    assert_close,
    assert_shape,
    assert_tensor,
    call_reader,
    checker,
    passed,
    refuse_reference,
)

#: What a layer built from cells may not call — a layer, or a loop over time, someone else wrote.
LAYER_REFERENCES = (
    ("torch.nn.GRU", "PyTorch's GRU layer, the reference it is checked against"),
    ("torch.nn.RNNBase", "the base of PyTorch's ready-made RNN layers"),
    ("torch.gru", "the kernel inside nn.GRU"),
    ("seq2seq_lib.rnn.ScratchRNN", "the library's ready-made RNN layers"),
    ("seq2seq_lib.rnn.scratch_like", "the library's ready-made RNN layers"),
    ("seq2seq_lib.rnn.run_cell", "the library's loop of a cell over time"),
    ("seq2seq_lib.exercises.ch04.run_cell", "the checker's own loop of a cell over time"),
)
#: How a layer is meant to be built.
RUN_THE_CELLS = "by calling the cells step by step, cell(X_t, H)"

# (B, T, d, h, L): d != h catches a layer that reads the wrong width, B = 1 bad broadcasting
SHAPES = ((3, 5, 4, 6, 2), (1, 4, 3, 2, 3), (4, 6, 5, 5, 1))


def copy_cells(module: nn.GRU, cells: list[nn.GRUCell], names: list[str]) -> None:
    """Copy each cell's weights into ``module``'s layer named by the matching suffix
    (``"_l0"``, ``"_l0_reverse"``, ...)."""
    with torch.no_grad():
        for cell, sfx in zip(cells, names, strict=True):
            for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(module, f"{p}{sfx}").copy_(getattr(cell, p))


@torch.no_grad()
def run_cell(cell: nn.GRUCell, X: Tensor, reverse: bool = False) -> Tensor:
    """Run one cell over ``X (B, T, d)`` from a zero state; ``(B, T, h)`` in time order."""
    H = X.new_zeros(X.size(0), cell.hidden_size)
    steps = range(X.size(1) - 1, -1, -1) if reverse else range(X.size(1))
    out: list[Tensor] = [X] * X.size(1)
    for t in steps:
        H = cell(X[:, t], H)
        out[t] = H
    return torch.stack(out, dim=1)


# -- deep RNNs ------------------------------------------------------------------------------
@checker
def check_stacked_gru(
    fn: Callable[[Tensor, list[nn.GRUCell]], tuple[Tensor, Tensor]],
    exercise: str = "Exercise 4.1",
) -> None:
    """Check ``fn(X, cells) -> (outputs, H_n)``: an ``L``-layer GRU built from ``L`` cells.

    Layer ``l`` reads the states of layer ``l - 1`` (layer 1 reads ``X``):
    ``H_t^(l) = GRUCell_l(H_t^(l-1), H_{t-1}^(l))`` with ``H_0^(l) = 0``. ``outputs (B, T, h)``
    holds the last layer's ``H_t^(L)`` for every ``t``; ``H_n (L, B, h)`` the last state of
    every layer, layer 1 first. The reference is ``nn.GRU(d, h, num_layers=L,
    batch_first=True)`` holding the cells' weights; a solution that calls a ready-made layer
    (:data:`LAYER_REFERENCES`) is refused.
    """
    refuse_reference(fn, LAYER_REFERENCES, exercise, RUN_THE_CELLS)
    for trial, (B, T, d, h, L) in enumerate(SHAPES):
        torch.manual_seed(2000 + trial)
        cells = [nn.GRUCell(d if layer == 0 else h, h) for layer in range(L)]
        ref = nn.GRU(d, h, num_layers=L, batch_first=True)
        copy_cells(ref, cells, [f"_l{layer}" for layer in range(L)])
        X = torch.randn(B, T, d)
        with torch.no_grad():
            want_out, want_H = ref(X)
        out = call_reader(fn, (X, cells), "stacked GRU")
        if not isinstance(out, tuple) or len(out) != 2:
            raise AssertionError(
                f"your stacked GRU should return the pair (outputs, H_n), got {type(out).__name__}"
            )
        got_out, got_H = (assert_tensor(n, t) for n, t in zip(("outputs", "H_n"), out, strict=True))
        where = f"(B={B}, T={T}, d={d}, h={h}, L={L})"
        assert_shape(f"outputs {where}", got_out, (B, T, h))
        assert_shape(f"H_n {where}", got_H, (L, B, h))
        try:
            assert_close("outputs", got_out, want_out, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            hint = ""
            if L > 1 and torch.allclose(got_out.detach(), run_cell(cells[0], X), atol=1e-5):
                hint = "\nHint: these are the first layer's states; return the last layer's."
            raise AssertionError(f"{err}{hint}") from None
        try:
            assert_close("H_n", got_H, want_H, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            hint = ""
            if torch.allclose(got_H.detach().flip(0), want_H, atol=1e-5):
                hint = "\nHint: H_n's rows are in reverse order; row 0 is layer 1."
            elif torch.allclose(got_H.detach(), want_out[:, 0].expand(L, B, h), atol=1e-5):
                hint = "\nHint: H_n holds the states at t = 1; it should hold those at t = T."
            raise AssertionError(f"{err}{hint}") from None
    passed(exercise)
