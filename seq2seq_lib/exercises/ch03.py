"""Checkers for the exercises of chapter 3 (LSTM): one LSTM step, and an LSTM whose gates
are coupled into a GRU.

The reader writes one time step with plain tensor operations, in the book's notation
(row vectors: ``X (B, d)``, ``H, C (B, h)``, ``W_x* (d, h)``, ``W_h* (h, h)``, ``b_* (h,)``)::

    def lstm_step(X, H, C, params):
        ...
        return H_new, C_new                            # each (B, h)

and passes the function to :func:`check_lstm_cell`, which compares it with ``nn.LSTMCell``
holding the same weights. :func:`check_coupled_lstm` checks a function that turns a GRU's
parameters into an LSTM's, ``coupled_lstm_params(p_gru) -> p_lstm``, so that the LSTM's cell
update is the GRU's state update; it runs both with :mod:`seq2seq_lib.cells`.

An LSTM step that calls a ready-made LSTM instead of the formulas is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`, :data:`LSTM_REFERENCES`). Exercise 3.2 asks for parameters,
which no library function computes: there is no reference to call, and nothing to refuse.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from seq2seq_lib.cells import GRUCell, LSTMCell, copy_cell_from_torch
from seq2seq_lib.exercises import (
    assert_close,
    assert_shape,
    assert_tensor,
    call_reader,
    checker,
    passed,
    refuse_reference,
)
from seq2seq_lib.exercises.ch02 import SHAPES, WRITE_A_STEP, Params, gru_params

#: What an LSTM step may not call — an LSTM someone else wrote.
LSTM_REFERENCES = (
    ("torch.nn.LSTMCell", "PyTorch's LSTM cell, the reference it is checked against"),
    ("seq2seq_lib.cells.LSTMCell", "the library's LSTM cell"),
    ("torch.nn.LSTM", "PyTorch's ready-made LSTM layer"),
    ("torch.lstm_cell", "the kernel inside nn.LSTMCell"),
    ("torch.lstm", "the kernel inside nn.LSTM"),
    ("seq2seq_lib.cells.make_cell", "the library's factory of ready-made cells"),
    ("seq2seq_lib.rnn.ScratchRNN", "the library's ready-made RNN layers"),
)


# -- LSTM --------------------------------------------------------------------------------
def lstm_params(cell: LSTMCell) -> Params:
    """The book's LSTM parameters of ``cell`` (copies): ``W_x*, W_h*, b_*`` for
    ``* = i, f, o, c`` (``b_* = b_x* + b_h*``)."""
    p: Params = {}
    for g in ("i", "f", "o", "c"):
        blk = cell.gate(g)
        p[f"W_x{g}"], p[f"W_h{g}"], p[f"b_{g}"] = blk.W_x, blk.W_h, blk.b_x + blk.b_h
    return {k: v.detach().clone() for k, v in p.items()}


@checker
def check_lstm_cell(
    fn: Callable[[Tensor, Tensor, Tensor, Params], tuple[Tensor, Tensor]],
    exercise: str = "Exercise 3.1",
) -> None:
    """Check ``fn(X, H, C, params) -> (H_new, C_new)``, one LSTM step from the formulas.

    ``X (B, d)``, ``H, C (B, h)``; ``params`` holds ``W_xi, W_hi, b_i, W_xf, W_hf, b_f,
    W_xo, W_ho, b_o, W_xc, W_hc, b_c`` (``W_x* (d, h)``, ``W_h* (h, h)``, ``b_* (h,)``)::

        I_t = σ(X_t W_xi + H_{t-1} W_hi + b_i)      (F_t and O_t likewise)
        C̃_t = tanh(X_t W_xc + H_{t-1} W_hc + b_c)
        C_t = F_t ⊙ C_{t-1} + I_t ⊙ C̃_t
        H_t = O_t ⊙ tanh(C_t)

    The reference is ``nn.LSTMCell`` holding the same weights; a step that calls a
    ready-made LSTM (:data:`LSTM_REFERENCES`) is refused.
    """
    refuse_reference(fn, LSTM_REFERENCES, exercise, WRITE_A_STEP)
    for trial, (B, d, h) in enumerate(SHAPES):
        torch.manual_seed(2000 + trial)
        torch_cell = nn.LSTMCell(d, h)
        p = lstm_params(copy_cell_from_torch(LSTMCell(d, h), torch_cell))
        X, H, C = torch.randn(B, d), torch.randn(B, h), torch.randn(B, h)
        with torch.no_grad():
            H_ref, C_ref = torch_cell(X, (H, C))
        out = call_reader(fn, (X, H, C, p), "LSTM step")
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise AssertionError(
                f"your LSTM step should return the pair (H_new, C_new), got {type(out).__name__}"
            )
        H_new, C_new = (assert_tensor(n, t) for n, t in zip(("H_new", "C_new"), out, strict=True))
        assert_shape(f"H_new (B={B}, d={d}, h={h})", H_new, (B, h))
        assert_shape(f"C_new (B={B}, d={d}, h={h})", C_new, (B, h))
        try:
            assert_close("C_new", C_new, C_ref, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            hint = ""
            if torch.allclose(C_new.detach().float(), H_ref, atol=1e-5):
                hint = "\nHint: you returned (C_new, H_new); return (H_new, C_new)."
            raise AssertionError(f"{err}{hint}") from None
        try:
            assert_close("H_new", H_new, H_ref, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            O = torch.sigmoid(X @ p["W_xo"] + H @ p["W_ho"] + p["b_o"])  # noqa: E741 - book's O_t
            hint = ""
            if torch.allclose(H_new.detach().float(), O * C_ref, atol=1e-5):
                hint = "\nHint: H_t = O_t ⊙ tanh(C_t) — the tanh is missing."
            raise AssertionError(f"{err}{hint}") from None
    passed(exercise)


# -- an LSTM coupled into a GRU ------------------------------------------------------------
_LSTM_KEYS = tuple(f"{w}{g}" for g in ("i", "f", "o", "c") for w in ("W_x", "W_h", "b_"))


def _load_lstm(p: Params, d: int, h: int) -> LSTMCell:
    """An :class:`LSTMCell` holding the book's parameters ``p`` (``b_x* = b_*``, ``b_h* = 0``)."""
    cell = LSTMCell(d, h)
    with torch.no_grad():
        for g in ("i", "f", "o", "c"):
            blk = cell.gate(g)
            blk.W_x.copy_(p[f"W_x{g}"])
            blk.W_h.copy_(p[f"W_h{g}"])
            blk.b_x.copy_(p[f"b_{g}"])
            blk.b_h.zero_()
    return cell


@checker
def check_coupled_lstm(
    fn: Callable[[Params], Params],
    exercise: str = "Exercise 3.2",
) -> None:
    """Check ``fn(p_gru) -> p_lstm``: LSTM parameters whose cell update is the GRU's update.

    ``p_gru`` holds the book's GRU parameters (``variant="cho"``): ``W_xr, W_hr, b_r, W_xz,
    W_hz, b_z, W_xh, W_hh, b_h``. ``fn`` returns the LSTM parameters of
    :func:`check_lstm_cell` (``W_x*, W_h*, b_*`` for ``* = i, f, o, c``) chosen so that::

        F_t = Z_t,   I_t = 1 - F_t,   O_t = 1 (to 1e-4),   C̃_t = the GRU's H̃_t with R_t = 1

    The checker holds the GRU's reset gate open (``b_r`` = +40, so ``R_t = 1``: an LSTM has
    no reset gate), loads the parameters into :class:`seq2seq_lib.cells.LSTMCell`, runs one
    step of both cells from the same state (``H_{t-1} = C_{t-1}`` = the GRU's state) and
    requires the LSTM's ``C_t`` to equal the GRU's ``H_t`` and its ``H_t`` to be
    ``tanh(C_t)``. Raises ``AssertionError`` naming the first gate that is wrong.
    """
    for trial, (B, d, h) in enumerate(SHAPES):
        torch.manual_seed(3000 + trial)
        gru = GRUCell(d, h, variant="cho")
        with torch.no_grad():
            gru.gate("r").b_x.fill_(40.0)  # R_t = 1 for any input: the LSTM has no reset gate
            gru.gate("r").b_h.zero_()
        p_gru = gru_params(gru)
        X, H = torch.randn(B, d), torch.randn(B, h)
        with torch.no_grad():
            H_gru, gates = gru(X, H, return_gates=True)
        p = call_reader(fn, ({k: v.clone() for k, v in p_gru.items()},), "coupled_lstm_params")
        if not isinstance(p, dict):
            raise AssertionError(
                f"coupled_lstm_params should return a dict of LSTM parameters, "
                f"got {type(p).__name__}"
            )
        missing = [k for k in _LSTM_KEYS if k not in p]
        if missing:
            raise AssertionError(f"your LSTM parameters lack {', '.join(missing)}")
        for g in ("i", "f", "o", "c"):
            assert_shape(f"W_x{g} (d={d}, h={h})", assert_tensor(f"W_x{g}", p[f"W_x{g}"]), (d, h))
            assert_shape(f"W_h{g} (h={h})", assert_tensor(f"W_h{g}", p[f"W_h{g}"]), (h, h))
            assert_shape(f"b_{g} (h={h})", assert_tensor(f"b_{g}", p[f"b_{g}"]), (h,))
        p = {k: p[k].detach().float() for k in _LSTM_KEYS}
        lstm = _load_lstm(p, d, h)
        # both cells start from the GRU's state: the LSTM's gates read H_{t-1} = H and its
        # cell is C_{t-1} = H (a coupled LSTM run on its own would have H_{t-1} = tanh(C_{t-1}))
        with torch.no_grad():
            (H_new, C_new), lg = lstm(X, (H, H), return_gates=True)
        Z = gates["Z"]
        try:
            assert_close("F_t (the forget gate)", lg["F"], Z, atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            hint = ""
            if torch.allclose(lg["F"], 1 - Z, atol=1e-5):
                hint = ("\nHint: your F_t is 1 - Z_t. The forget gate keeps the old memory, "
                        "as Z_t keeps the old state: F_t = Z_t.")
            raise AssertionError(f"{err}{hint}") from None
        try:
            assert_close("I_t (the input gate)", lg["I"], 1 - lg["F"], atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            raise AssertionError(
                f"{err}\nHint: I_t must be 1 - F_t, and σ(-a) = 1 - σ(a): give the input "
                "gate minus the forget gate's weights and bias."
            ) from None
        try:
            assert_close("O_t (the output gate)", lg["O"], torch.ones_like(Z), atol=1e-4, rtol=0)
        except AssertionError as err:
            raise AssertionError(
                f"{err}\nHint: O_t = 1 needs zero output-gate weights and a large bias "
                "(σ(30) = 1 in float32)."
            ) from None
        try:
            assert_close("C_t (the LSTM's new cell) vs the GRU's H_t", C_new, H_gru,
                         atol=1e-5, rtol=1e-4)
        except AssertionError as err:
            raise AssertionError(
                f"{err}\nHint: the candidate cell must be the GRU's candidate state with "
                "R_t = 1: W_xc = W_xh, W_hc = W_hh, b_c = b_h."
            ) from None
        assert_close("H_t (the LSTM's new hidden state) vs tanh(C_t)", H_new,
                     torch.tanh(C_new), atol=1e-4, rtol=0)
    passed(exercise)
