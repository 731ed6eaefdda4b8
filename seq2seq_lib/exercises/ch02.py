"""Checkers for the exercises of chapter 2 (GRU): one GRU step, in either variant.

The reader writes one time step with plain tensor operations, in the book's notation
(row vectors: ``X (B, d)``, ``H (B, h)``, ``W_x* (d, h)``, ``W_h* (h, h)``, ``b_* (h,)``)::

    def gru_step(X, H, params):
        R = torch.sigmoid(X @ params["W_xr"] + H @ params["W_hr"] + params["b_r"])
        ...
        return H_new                                   # (B, h)

and passes the function to :func:`check_gru_cell`. The checker draws fresh inputs and
weights for a few shapes, calls the function, and compares its result with PyTorch's
``nn.GRUCell`` (holding the same weights) or, for the book's GRU formula, with
:class:`seq2seq_lib.cells.GRUCell` ``(variant="cho")``.

A step that calls a ready-made GRU instead of the formulas is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`, :data:`GRU_REFERENCES`): the library's
and PyTorch's GRU cells and
layers, their kernels ``torch.gru_cell`` and ``torch.gru``, and this checker's own formula.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from torch import Tensor, nn

from seq2seq_lib.cells import GRUCell, copy_cell_from_torch
from seq2seq_lib.exercises import (
    assert_close,
    assert_shape,
    assert_tensor,
    call_reader,
    checker,
    passed,
    refuse_reference,
)

Params = dict[str, Tensor]

#: What a GRU step may not call — a GRU someone else wrote.
GRU_REFERENCES = (
    ("seq2seq_lib.cells.GRUCell", "the library's GRU cell, the reference of the book's variant"),
    ("torch.nn.GRUCell", "PyTorch's GRU cell, the reference of PyTorch's variant"),
    ("torch.nn.GRU", "PyTorch's ready-made GRU layer"),
    ("torch.gru_cell", "the kernel inside nn.GRUCell"),
    ("torch.gru", "the kernel inside nn.GRU"),
    ("seq2seq_lib.cells.make_cell", "the library's factory of ready-made cells"),
    ("seq2seq_lib.rnn.ScratchRNN", "the library's ready-made RNN layers"),
    ("seq2seq_lib.exercises.ch02._gru_formula", "the checker's own GRU formula"),
)
#: How a GRU or LSTM step is meant to be written.
WRITE_A_STEP = "with plain tensor operations (@, torch.sigmoid, torch.tanh)"
# (B, d, h) of the trials: d != h catches swapped weight shapes, B = 1 catches bad broadcasting
SHAPES = ((3, 4, 5), (1, 6, 2), (5, 3, 3))


# -- GRU ---------------------------------------------------------------------------------
def gru_params(cell: GRUCell) -> Params:
    """The book's GRU parameters of ``cell`` (copies), named as in the chapter.

    ``W_xr, W_hr, b_r, W_xz, W_hz, b_z, W_xh, W_hh`` and, for ``variant="cho"``, ``b_h``;
    for ``variant="pytorch"`` the candidate's two biases ``b_xh`` and ``b_hh``.
    """
    p: Params = {}
    for g in ("r", "z"):
        blk = cell.gate(g)
        p[f"W_x{g}"], p[f"W_h{g}"], p[f"b_{g}"] = blk.W_x, blk.W_h, blk.b_x + blk.b_h
    blk = cell.gate("h")
    p["W_xh"], p["W_hh"] = blk.W_x, blk.W_h
    if cell.variant == "cho":
        p["b_h"] = blk.b_x + blk.b_h
    else:
        p["b_xh"], p["b_hh"] = blk.b_x, blk.b_h
    return {k: v.detach().clone() for k, v in p.items()}


def _gru_formula(X: Tensor, H: Tensor, p: Params, reset: str, swap_z: bool) -> Tensor:
    """Plain GRU formulas, used to name a reader's likely mistake."""
    R = torch.sigmoid(X @ p["W_xr"] + H @ p["W_hr"] + p["b_r"])
    Z = torch.sigmoid(X @ p["W_xz"] + H @ p["W_hz"] + p["b_z"])
    b_x, b_h = (p["b_h"], 0.0) if "b_h" in p else (p["b_xh"], p["b_hh"])
    if reset == "before":  # Cho / the book: (R ⊙ H) W_hh
        H_tilde = torch.tanh(X @ p["W_xh"] + b_x + (R * H) @ p["W_hh"] + b_h)
    elif reset == "after":  # PyTorch: R ⊙ (H W_hh + b_hh)
        H_tilde = torch.tanh(X @ p["W_xh"] + b_x + R * (H @ p["W_hh"] + b_h))
    else:  # no reset gate at all
        H_tilde = torch.tanh(X @ p["W_xh"] + b_x + H @ p["W_hh"] + b_h)
    if swap_z:
        return (1 - Z) * H + Z * H_tilde
    return Z * H + (1 - Z) * H_tilde


_GRU_HINTS = (
    ("after", False, "you applied R_t after the product, R_t ⊙ (H_{t-1} W_hh + b), which is "
     "PyTorch's variant; this exercise wants (R_t ⊙ H_{t-1}) W_hh"),
    ("before", False, "you applied R_t before the product, (R_t ⊙ H_{t-1}) W_hh (Cho's / the "
     "book's variant); this exercise wants PyTorch's R_t ⊙ (H_{t-1} W_hh + b_hh)"),
    ("none", False, "your candidate state ignores the reset gate R_t"),
    ("before", True, "Z_t and 1 - Z_t are swapped: H_t = Z_t ⊙ H_{t-1} + (1 - Z_t) ⊙ H̃_t"),
    ("after", True, "Z_t and 1 - Z_t are swapped: H_t = Z_t ⊙ H_{t-1} + (1 - Z_t) ⊙ H̃_t"),
)  # fmt: skip


@checker
def check_gru_cell(
    fn: Callable[[Tensor, Tensor, Params], Tensor],
    variant: Literal["cho", "pytorch"] = "cho",
    exercise: str = "Exercise 2.1",
) -> None:
    """Check ``fn(X, H, params) -> H_new``, one GRU step written from the formulas.

    ``X (B, d)``, ``H (B, h)``; ``params`` holds ``W_xr, W_hr, b_r, W_xz, W_hz, b_z,
    W_xh, W_hh`` (``W_x* (d, h)``, ``W_h* (h, h)``, ``b_* (h,)``) and

    * ``variant="cho"`` (the book's formula, default): ``b_h``, and
      ``H̃_t = tanh(X_t W_xh + (R_t ⊙ H_{t-1}) W_hh + b_h)``; the reference is
      ``seq2seq_lib.cells.GRUCell(variant="cho")``;
    * ``variant="pytorch"``: ``b_xh, b_hh``, and
      ``H̃_t = tanh(X_t W_xh + b_xh + R_t ⊙ (H_{t-1} W_hh + b_hh))``; the reference is
      ``nn.GRUCell`` itself.

    In both, ``H_t = Z_t ⊙ H_{t-1} + (1 - Z_t) ⊙ H̃_t``. Raises ``AssertionError`` naming
    the problem (and the likely mistake, when it recognises one), or when ``fn`` calls a
    ready-made GRU (:data:`GRU_REFERENCES`).
    """
    if variant not in ("cho", "pytorch"):
        raise ValueError(f"variant must be 'cho' or 'pytorch', got {variant!r}")
    refuse_reference(fn, GRU_REFERENCES, exercise, WRITE_A_STEP)
    for trial, (B, d, h) in enumerate(SHAPES):
        torch.manual_seed(1000 + trial)
        torch_cell = nn.GRUCell(d, h)
        cell = copy_cell_from_torch(GRUCell(d, h, variant=variant), torch_cell)
        X, H = torch.randn(B, d), torch.randn(B, h)
        p = gru_params(cell)
        with torch.no_grad():
            expected = torch_cell(X, H) if variant == "pytorch" else cell(X, H)
        got = call_reader(fn, (X, H, p), "GRU step")
        got = assert_tensor("H_new", got)
        assert_shape(f"H_new (B={B}, d={d}, h={h})", got, (B, h))
        try:
            assert_close("H_new", got, expected, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            raise AssertionError(f"{err}{_gru_hint(got, X, H, p)}") from None
    passed(exercise)


def _gru_hint(got: Tensor, X: Tensor, H: Tensor, p: Params) -> str:
    for reset, swap_z, hint in _GRU_HINTS:
        wrong = _gru_formula(X, H, p, reset, swap_z)
        same_as_right = torch.allclose(
            wrong, _gru_formula(X, H, p, "before" if "b_h" in p else "after", False)
        )
        if not same_as_right and torch.allclose(got.detach().float(), wrong, atol=1e-5):
            return f"\nHint: {hint}."
    return ""
