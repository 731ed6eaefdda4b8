"""Checkers for the exercises of the gated-RNN chapters: one GRU step, one LSTM step, and
an LSTM whose gates are coupled into a GRU.

The reader writes one time step with plain tensor operations, in the book's notation
(row vectors: ``X (B, d)``, ``H (B, h)``, ``W_x* (d, h)``, ``W_h* (h, h)``, ``b_* (h,)``)::

    def gru_step(X, H, params):
        R = torch.sigmoid(X @ params["W_xr"] + H @ params["W_hr"] + params["b_r"])
        ...
        return H_new                                   # (B, h)

    def lstm_step(X, H, C, params):
        ...
        return H_new, C_new                            # each (B, h)

and passes the function to :func:`check_gru_cell` or :func:`check_lstm_cell`. The checker
draws fresh inputs and weights for a few shapes, calls the function, and compares its
result with PyTorch's ``nn.GRUCell`` / ``nn.LSTMCell`` (holding the same weights) or, for
the book's GRU formula, with :class:`seq2seq_lib.cells.GRUCell` ``(variant="cho")``.

:func:`check_coupled_lstm` checks a function that turns a GRU's parameters into an LSTM's,
``coupled_lstm_params(p_gru) -> p_lstm``, so that the LSTM's cell update is the GRU's state
update; it runs both with :mod:`seq2seq_lib.cells`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from torch import Tensor, nn

from seq2seq_lib.cells import GRUCell, LSTMCell, copy_cell_from_torch
from seq2seq_lib.exercises import assert_close, assert_shape, assert_tensor, passed

Params = dict[str, Tensor]
# (B, d, h) of the trials: d != h catches swapped weight shapes, B = 1 catches bad broadcasting
_SHAPES = ((3, 4, 5), (1, 6, 2), (5, 3, 3))


def _call(fn: Callable, args: tuple, what: str):  # noqa: ANN202 - returns the reader's result
    """Call the reader's function; inputs must come back unchanged."""
    copies = [a.clone() if isinstance(a, Tensor) else None for a in args]
    try:
        out = fn(*args)
    except Exception as err:  # noqa: BLE001 - report any error of the reader's code as a failure
        raise AssertionError(f"your {what} raised {type(err).__name__}: {err}") from err
    for i, (arg, before) in enumerate(zip(args, copies, strict=True)):
        if before is not None and not torch.equal(arg, before):
            raise AssertionError(
                f"your {what} changed its argument {i} in place; return new tensors"
            )
    return out


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
    the problem (and the likely mistake, when it recognises one).
    """
    if variant not in ("cho", "pytorch"):
        raise ValueError(f"variant must be 'cho' or 'pytorch', got {variant!r}")
    for trial, (B, d, h) in enumerate(_SHAPES):
        torch.manual_seed(1000 + trial)
        torch_cell = nn.GRUCell(d, h)
        cell = copy_cell_from_torch(GRUCell(d, h, variant=variant), torch_cell)
        X, H = torch.randn(B, d), torch.randn(B, h)
        p = gru_params(cell)
        with torch.no_grad():
            expected = torch_cell(X, H) if variant == "pytorch" else cell(X, H)
        got = _call(fn, (X, H, p), "GRU step")
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


# -- LSTM --------------------------------------------------------------------------------
def lstm_params(cell: LSTMCell) -> Params:
    """The book's LSTM parameters of ``cell`` (copies): ``W_x*, W_h*, b_*`` for
    ``* = i, f, o, c`` (``b_* = b_x* + b_h*``)."""
    p: Params = {}
    for g in ("i", "f", "o", "c"):
        blk = cell.gate(g)
        p[f"W_x{g}"], p[f"W_h{g}"], p[f"b_{g}"] = blk.W_x, blk.W_h, blk.b_x + blk.b_h
    return {k: v.detach().clone() for k, v in p.items()}


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

    The reference is ``nn.LSTMCell`` holding the same weights.
    """
    for trial, (B, d, h) in enumerate(_SHAPES):
        torch.manual_seed(2000 + trial)
        torch_cell = nn.LSTMCell(d, h)
        p = lstm_params(copy_cell_from_torch(LSTMCell(d, h), torch_cell))
        X, H, C = torch.randn(B, d), torch.randn(B, h), torch.randn(B, h)
        with torch.no_grad():
            H_ref, C_ref = torch_cell(X, (H, C))
        out = _call(fn, (X, H, C, p), "LSTM step")
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
    for trial, (B, d, h) in enumerate(_SHAPES):
        torch.manual_seed(3000 + trial)
        gru = GRUCell(d, h, variant="cho")
        with torch.no_grad():
            gru.gate("r").b_x.fill_(40.0)  # R_t = 1 for any input: the LSTM has no reset gate
            gru.gate("r").b_h.zero_()
        p_gru = gru_params(gru)
        X, H = torch.randn(B, d), torch.randn(B, h)
        with torch.no_grad():
            H_gru, gates = gru(X, H, return_gates=True)
        p = _call(fn, ({k: v.clone() for k, v in p_gru.items()},), "coupled_lstm_params")
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
