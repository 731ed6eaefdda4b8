"""From-scratch recurrent cells: one time step of a vanilla RNN, a GRU and an LSTM.

The cells use the book's symbols and its *row-vector* convention: a minibatch of inputs
``X_t`` is ``(B, d)``, a hidden state ``H_{t-1}`` is ``(B, h)`` and every gate reads

.. math::
    X_t W_{x\\ast} + H_{t-1} W_{h\\ast} + b_\\ast, \\qquad
    W_{x\\ast} \\in \\mathbb{R}^{d \\times h},\\; W_{h\\ast} \\in \\mathbb{R}^{h \\times h},\\;
    b_\\ast \\in \\mathbb{R}^{h}.

A cell stores the matrices of all its ``G`` gates side by side, in PyTorch's gate order, so
that one matrix product computes every gate at once:

========  =====================  =======================================================
cell      gates (column blocks)  parameters
========  =====================  =======================================================
RNN       ``h``                  ``W_x (d, h)``, ``W_h (h, h)``, ``b_x, b_h (h,)``
GRU       ``r, z, h``            ``W_x (d, 3h)``, ``W_h (h, 3h)``, ``b_x, b_h (3h,)``
LSTM      ``i, f, c, o``         ``W_x (d, 4h)``, ``W_h (h, 4h)``, ``b_x, b_h (4h,)``
========  =====================  =======================================================

``W_x`` is PyTorch's ``weight_ih`` transposed and ``W_h`` its ``weight_hh`` transposed.
Like PyTorch a cell has two bias vectors, ``b_x`` (``bias_ih``) and ``b_h`` (``bias_hh``);
the book's single bias of a gate is their sum, ``b_r = b_xr + b_hr``. Keeping both makes
a cell with copied weights compute *exactly* what ``nn.RNN/GRU/LSTM`` computes, gradients
of both biases included. :meth:`RecurrentCell.gate` returns the book's per-gate blocks as views.

Every cell splits its step in two so that a layer can hoist work out of the time loop:

* :meth:`RecurrentCell.project_input` — everything that does not depend on ``H_{t-1}`` (``X_t W_x`` plus
  the biases that can be added there); it accepts ``(B, d)`` or all steps ``(B, T, d)``;
* :meth:`RecurrentCell.step` — the recurrent part, given one projected input ``(B, G*h)``.

``cell(X, state)`` does both for one step, like ``nn.GRUCell``.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import torch
from torch import Tensor, nn

LSTMState = tuple[Tensor, Tensor]
State = Tensor | LSTMState
Gates = dict[str, Tensor]
StepOutput = State | tuple[State, Gates]
GRUVariant = Literal["pytorch", "cho"]


class GateParams(NamedTuple):
    """The parameters of one gate in the book's notation (views into the cell's weights)."""

    W_x: Tensor  # (d, h)
    W_h: Tensor  # (h, h)
    b_x: Tensor  # (h,)
    b_h: Tensor  # (h,)


class RecurrentCell(nn.Module):
    """The common part of :class:`RNNCell`, :class:`GRUCell` and :class:`LSTMCell`.

    Subclasses set ``gate_names`` (PyTorch's order) and implement :meth:`step`.
    """

    gate_names: tuple[str, ...] = ()

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        G, h = len(self.gate_names), hidden_size
        self.W_x = nn.Parameter(torch.empty(input_size, G * h))
        self.W_h = nn.Parameter(torch.empty(h, G * h))
        self.b_x = nn.Parameter(torch.empty(G * h))
        self.b_h = nn.Parameter(torch.empty(G * h))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation: every parameter ~ U(-1/sqrt(h), 1/sqrt(h))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    # -- the book's view of the parameters -------------------------------------------------
    def gate(self, name: str) -> GateParams:
        """The blocks ``W_x*, W_h*, b_x*, b_h*`` of gate ``name`` (e.g. ``"r"`` for a GRU)."""
        if name not in self.gate_names:
            raise ValueError(f"{type(self).__name__} has gates {self.gate_names}, not {name!r}")
        h = self.hidden_size
        cols = slice(self.gate_names.index(name) * h, (self.gate_names.index(name) + 1) * h)
        return GateParams(self.W_x[:, cols], self.W_h[:, cols], self.b_x[cols], self.b_h[cols])

    # -- PyTorch's layout --------------------------------------------------------------------
    @torch.no_grad()
    def load_torch_weights(
        self, weight_ih: Tensor, weight_hh: Tensor, bias_ih: Tensor, bias_hh: Tensor
    ) -> None:
        """Copy PyTorch's ``weight_ih (G*h, d)``, ``weight_hh (G*h, h)``, ``bias_* (G*h,)``."""
        for name, src, dst in (
            ("weight_ih", weight_ih.T, self.W_x),
            ("weight_hh", weight_hh.T, self.W_h),
            ("bias_ih", bias_ih, self.b_x),
            ("bias_hh", bias_hh, self.b_h),
        ):
            if src.shape != dst.shape:
                want = tuple(dst.T.shape) if dst.dim() == 2 else tuple(dst.shape)
                got = tuple(src.T.shape) if src.dim() == 2 else tuple(src.shape)
                raise ValueError(f"{name} has shape {got}, expected {want}")
            dst.copy_(src)

    # -- computing ---------------------------------------------------------------------------
    def init_state(self, batch_size: int, like: Tensor | None = None) -> State:
        """A zero state for ``batch_size`` sequences (on ``like``'s device and dtype)."""
        ref = self.W_h if like is None else like
        return ref.new_zeros(batch_size, self.hidden_size)

    def project_input(self, X: Tensor) -> Tensor:
        """``X W_x + b_x``: the gate pre-activations that do not depend on ``H_{t-1}``.

        ``X`` is ``(B, d)`` or ``(B, T, d)``; the result has ``G*h`` features.
        """
        return X @ self.W_x + self.b_x

    def step(self, XW: Tensor, state: State, return_gates: bool = False) -> StepOutput:
        """One time step from the projected input ``XW (B, G*h)``; see the subclass."""
        raise NotImplementedError

    def forward(
        self, X: Tensor, state: State | None = None, return_gates: bool = False
    ) -> StepOutput:
        """One time step: ``X (B, d)`` and the previous state give the new state.

        Returns the new state (``H`` or ``(H, C)``), and with ``return_gates=True`` also a
        dict of gate activations, each ``(B, h)``.
        """
        if not isinstance(X, Tensor) or X.dim() != 2 or X.size(1) != self.input_size:
            shape = tuple(X.shape) if isinstance(X, Tensor) else type(X).__name__
            raise ValueError(f"X must be (B, {self.input_size}), got {shape}")
        if state is None:
            state = self.init_state(X.size(0), like=X)
        self._check_state(state, X.size(0))
        return self.step(self.project_input(X), state, return_gates)

    def _check_state(self, state: State, batch_size: int) -> None:
        want = (batch_size, self.hidden_size)
        if not isinstance(state, Tensor) or tuple(state.shape) != want:
            got = tuple(state.shape) if isinstance(state, Tensor) else type(state).__name__
            raise ValueError(f"{type(self).__name__} state H must be {want}, got {got}")

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class RNNCell(RecurrentCell):
    """A vanilla RNN step (``nn.RNNCell``):

    .. math::
        H_t &= \\phi(X_t W_{xh} + H_{t-1} W_{hh} + b_h), \\\\
        \\phi &= \\tanh \\text{ or ReLU}, \\quad b_h = b_{xh} + b_{hh}.

    Shapes: ``X_t (B, d)``, ``H (B, h)``.
    """

    gate_names = ("h",)

    def __init__(
        self, input_size: int, hidden_size: int, nonlinearity: Literal["tanh", "relu"] = "tanh"
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size)
        self.nonlinearity = nonlinearity
        self._phi = torch.tanh if nonlinearity == "tanh" else torch.relu

    def project_input(self, X: Tensor) -> Tensor:
        """``X W_xh + b_xh + b_hh``: both biases are simply added to the pre-activation."""
        return X @ self.W_x + (self.b_x + self.b_h)

    def step(self, XW: Tensor, state: Tensor, return_gates: bool = False) -> StepOutput:
        H = self._phi(torch.addmm(XW, state, self.W_h))  # phi(X W_xh + b + H_{t-1} W_hh)
        return (H, {}) if return_gates else H

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, nonlinearity={self.nonlinearity!r}"


class GRUCell(RecurrentCell):
    """A gated recurrent unit step (Cho et al., 2014):

    .. math::
        R_t &= \\sigma(X_t W_{xr} + H_{t-1} W_{hr} + b_r) \\\\
        Z_t &= \\sigma(X_t W_{xz} + H_{t-1} W_{hz} + b_z) \\\\
        \\tilde H_t &= \\tanh(X_t W_{xh} + (R_t \\odot H_{t-1}) W_{hh} + b_h)
            && \\text{variant "cho"} \\\\
        \\tilde H_t &= \\tanh(X_t W_{xh} + b_{xh} + R_t \\odot (H_{t-1} W_{hh} + b_{hh}))
            && \\text{variant "pytorch"} \\\\
        H_t &= Z_t \\odot H_{t-1} + (1 - Z_t) \\odot \\tilde H_t

    The two variants differ only in *where the reset gate acts* in the candidate state:

    * ``"cho"`` (the paper, the lecture notes and d2l) resets the *old state* before the
      matrix product, ``(R_t ⊙ H_{t-1}) W_hh``: unit ``j`` of ``R_t`` silences the *input*
      ``j`` of the product;
    * ``"pytorch"`` (cuDNN, ``nn.GRU``, ``nn.GRUCell``) resets the *result* of the product,
      ``R_t ⊙ (H_{t-1} W_hh + b_hh)``: unit ``j`` silences *output* ``j``. This lets the
      product ``H_{t-1} W_h`` of all three gates be one matrix multiply that does not wait
      for ``R_t``, which is faster (Keras calls it ``reset_after=True``).

    With the same weights the two give different numbers. ``"pytorch"`` equals ``nn.GRU``
    with copied weights (see :mod:`seq2seq_lib.rnn`).
    Biases: ``b_r = b_xr + b_hr``, ``b_z = b_xz + b_hz``; for ``"cho"`` also
    ``b_h = b_xh + b_hh``.

    Shapes: ``X_t (B, d)``, ``H (B, h)``; the gates ``R, Z, H_tilde`` are ``(B, h)``.
    """

    gate_names = ("r", "z", "h")

    def __init__(self, input_size: int, hidden_size: int, variant: GRUVariant = "pytorch") -> None:
        if variant not in ("pytorch", "cho"):
            raise ValueError(f"variant must be 'pytorch' or 'cho', got {variant!r}")
        super().__init__(input_size, hidden_size)
        self.variant = variant

    def step(self, XW: Tensor, state: Tensor, return_gates: bool = False) -> StepOutput:
        H_prev, h = state, self.hidden_size
        XR, XZ, XH = XW.chunk(3, dim=1)  # X_t W_x* + b_x*, each (B, h)
        if self.variant == "pytorch":
            HR, HZ, HH = torch.addmm(self.b_h, H_prev, self.W_h).chunk(3, dim=1)
            R = torch.sigmoid(XR + HR)
            Z = torch.sigmoid(XZ + HZ)
            H_tilde = torch.tanh(XH + R * HH)  # R_t ⊙ (H_{t-1} W_hh + b_hh)
        else:
            HR, HZ = torch.addmm(self.b_h[: 2 * h], H_prev, self.W_h[:, : 2 * h]).chunk(2, dim=1)
            R = torch.sigmoid(XR + HR)
            Z = torch.sigmoid(XZ + HZ)
            RH = torch.addmm(self.b_h[2 * h :], R * H_prev, self.W_h[:, 2 * h :])
            H_tilde = torch.tanh(XH + RH)  # (R_t ⊙ H_{t-1}) W_hh + b_hh
        H = Z * H_prev + (1 - Z) * H_tilde
        return (H, {"R": R, "Z": Z, "H_tilde": H_tilde}) if return_gates else H

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, variant={self.variant!r}"


class LSTMCell(RecurrentCell):
    """A long short-term memory step (Hochreiter & Schmidhuber, 1997; ``nn.LSTMCell``):

    .. math::
        I_t &= \\sigma(X_t W_{xi} + H_{t-1} W_{hi} + b_i) \\\\
        F_t &= \\sigma(X_t W_{xf} + H_{t-1} W_{hf} + b_f) \\\\
        O_t &= \\sigma(X_t W_{xo} + H_{t-1} W_{ho} + b_o) \\\\
        \\tilde C_t &= \\tanh(X_t W_{xc} + H_{t-1} W_{hc} + b_c) \\\\
        C_t &= F_t \\odot C_{t-1} + I_t \\odot \\tilde C_t \\\\
        H_t &= O_t \\odot \\tanh(C_t)

    with ``b_* = b_x* + b_h*``. The gate blocks are stored in PyTorch's order
    ``i, f, c, o`` (PyTorch calls the candidate ``g``).

    Shapes: ``X_t (B, d)``; the state is the pair ``(H, C)``, each ``(B, h)``; the gates
    ``I, F, O, C_tilde`` are ``(B, h)``.
    """

    gate_names = ("i", "f", "c", "o")

    def init_state(self, batch_size: int, like: Tensor | None = None) -> LSTMState:
        H = super().init_state(batch_size, like)
        return H, torch.zeros_like(H)

    def project_input(self, X: Tensor) -> Tensor:
        """``X W_x + b_x + b_h``: both biases are simply added to the pre-activation."""
        return X @ self.W_x + (self.b_x + self.b_h)

    def step(self, XW: Tensor, state: LSTMState, return_gates: bool = False) -> StepOutput:
        H_prev, C_prev = state
        # the book's symbols I_t and O_t (ruff's E741 dislikes the names I and O)
        I, F, C_tilde, O = torch.addmm(XW, H_prev, self.W_h).chunk(4, dim=1)  # noqa: E741
        I, F, O = torch.sigmoid(I), torch.sigmoid(F), torch.sigmoid(O)  # noqa: E741
        C_tilde = torch.tanh(C_tilde)
        C = F * C_prev + I * C_tilde
        H = O * torch.tanh(C)
        if return_gates:
            return (H, C), {"I": I, "F": F, "O": O, "C_tilde": C_tilde}
        return H, C

    def _check_state(self, state: State, batch_size: int) -> None:
        if not isinstance(state, tuple) or len(state) != 2:
            raise ValueError(f"LSTMCell state must be a pair (H, C), got {type(state).__name__}")
        for name, part in zip(("H", "C"), state, strict=True):
            want = (batch_size, self.hidden_size)
            if not isinstance(part, Tensor) or tuple(part.shape) != want:
                got = tuple(part.shape) if isinstance(part, Tensor) else type(part).__name__
                raise ValueError(f"LSTMCell state {name} must be {want}, got {got}")


CellType = Literal["rnn", "gru", "lstm"]


def make_cell(
    cell_type: CellType,
    input_size: int,
    hidden_size: int,
    *,
    gru_variant: GRUVariant = "pytorch",
    nonlinearity: Literal["tanh", "relu"] = "tanh",
) -> RecurrentCell:
    """Build an :class:`RNNCell`, :class:`GRUCell` or :class:`LSTMCell` by name."""
    if cell_type == "rnn":
        return RNNCell(input_size, hidden_size, nonlinearity)
    if cell_type == "gru":
        return GRUCell(input_size, hidden_size, gru_variant)
    if cell_type == "lstm":
        return LSTMCell(input_size, hidden_size)
    raise ValueError(f"cell_type must be 'rnn', 'gru' or 'lstm', got {cell_type!r}")


_TORCH_CELLS: dict[type[nn.Module], type[RecurrentCell]] = {
    nn.RNNCell: RNNCell,
    nn.GRUCell: GRUCell,
    nn.LSTMCell: LSTMCell,
}


def _check_pair(cell: RecurrentCell, torch_cell: nn.Module) -> None:
    want = _TORCH_CELLS.get(type(torch_cell))
    if want is None:
        raise TypeError(
            f"expected nn.RNNCell, nn.GRUCell or nn.LSTMCell, got {type(torch_cell).__name__}"
        )
    if type(cell) is not want:
        raise TypeError(
            f"cannot copy between {type(cell).__name__} and {type(torch_cell).__name__}"
        )
    if not torch_cell.bias:
        raise ValueError("only cells with bias=True are supported")
    if (torch_cell.input_size, torch_cell.hidden_size) != (cell.input_size, cell.hidden_size):
        raise ValueError(
            f"sizes differ: scratch ({cell.input_size}, {cell.hidden_size}), "
            f"torch ({torch_cell.input_size}, {torch_cell.hidden_size})"
        )
    if isinstance(cell, RNNCell) and cell.nonlinearity != torch_cell.nonlinearity:
        raise ValueError(
            f"nonlinearity differs: scratch {cell.nonlinearity!r}, "
            f"torch {torch_cell.nonlinearity!r}"
        )


def copy_cell_from_torch(cell: RecurrentCell, torch_cell: nn.Module) -> RecurrentCell:
    """Copy the weights of an ``nn.RNNCell/GRUCell/LSTMCell`` into a scratch cell; returns it."""
    _check_pair(cell, torch_cell)
    cell.load_torch_weights(
        torch_cell.weight_ih, torch_cell.weight_hh, torch_cell.bias_ih, torch_cell.bias_hh
    )
    return cell
