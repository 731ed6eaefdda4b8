"""Checkers for the exercises of chapter 5 (bidirectional RNNs): one bidirectional GRU
layer built from two cells.

The reader builds the layer out of PyTorch's one-step cells ``nn.GRUCell``::

    def bidirectional_gru(X, cell_f, cell_b):
        ...
        return outputs                      # (B, T, 2h): [forward H_t, backward H_t]

and passes the function to :func:`check_bidirectional_gru`, which draws fresh cells and
inputs for a few shapes, copies the cells' weights into ``nn.GRU(bidirectional=True)`` and
compares the outputs. Both directions start from zero states.

A solution that calls a ready-made layer instead of running the two cells is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`, :data:`seq2seq_lib.exercises.ch04.LAYER_REFERENCES`).
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
from seq2seq_lib.exercises.ch04 import (
    LAYER_REFERENCES,
    RUN_THE_CELLS,
    SHAPES,
    copy_cells,
    run_cell,
)


# -- bidirectional RNNs -------------------------------------------------------------------------
@checker
def check_bidirectional_gru(
    fn: Callable[[Tensor, nn.GRUCell, nn.GRUCell], Tensor],
    exercise: str = "Exercise 5.1",
) -> None:
    """Check ``fn(X, cell_f, cell_b) -> outputs``: one bidirectional GRU layer from two cells.

    ``cell_f`` reads ``X_1, ..., X_T`` (forward states ``→H_t``), ``cell_b`` reads
    ``X_T, ..., X_1`` (backward states ``←H_t``), both from zero states; ``outputs (B, T,
    2h)`` holds ``[→H_t, ←H_t]`` at position ``t``. The reference is
    ``nn.GRU(d, h, bidirectional=True, batch_first=True)`` holding the cells' weights; a
    solution that calls a ready-made layer (:data:`~seq2seq_lib.exercises.ch04.LAYER_REFERENCES`)
    is refused.
    """
    refuse_reference(fn, LAYER_REFERENCES, exercise, RUN_THE_CELLS)
    for trial, (B, T, d, h, _) in enumerate(SHAPES):
        torch.manual_seed(3000 + trial)
        cell_f, cell_b = nn.GRUCell(d, h), nn.GRUCell(d, h)
        ref = nn.GRU(d, h, bidirectional=True, batch_first=True)
        copy_cells(ref, [cell_f, cell_b], ["_l0", "_l0_reverse"])
        X = torch.randn(B, T, d)
        with torch.no_grad():
            want, _ = ref(X)
        got = assert_tensor("outputs", call_reader(fn, (X, cell_f, cell_b), "bidirectional GRU"))
        assert_shape(f"outputs (B={B}, T={T}, d={d}, h={h})", got, (B, T, 2 * h))
        try:
            assert_close("outputs", got, want, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            raise AssertionError(f"{err}{_bidirectional_hint(got, X, cell_f, cell_b)}") from None
    passed(exercise)


def _bidirectional_hint(got: Tensor, X: Tensor, cell_f: nn.GRUCell, cell_b: nn.GRUCell) -> str:
    fwd, bwd = run_cell(cell_f, X), run_cell(cell_b, X, reverse=True)
    got = got.detach()
    candidates = (
        (torch.cat([bwd, fwd], 2), "the two halves are swapped: forward first, then backward"),
        (
            torch.cat([fwd, bwd.flip(1)], 2),
            "the backward states are stored in the order they were computed; position t "
            "must hold the backward state that read X_t (t = T was computed first)",
        ),
        (
            torch.cat([fwd, run_cell(cell_b, X)], 2),
            "the backward cell read X_1, ..., X_T; it must read X_T, ..., X_1",
        ),
        (torch.cat([fwd, fwd], 2), "the second half repeats the forward states"),
    )
    for candidate, hint in candidates:
        if torch.allclose(got, candidate, atol=1e-5):
            return f"\nHint: {hint}."
    return ""
