"""Recurrent layers from scratch: loop a cell over time, stack layers, add a backward direction.

:class:`ScratchRNN` is a drop-in twin of ``nn.RNN``, ``nn.GRU`` and ``nn.LSTM`` with
``batch_first=True``: the same arguments, the same output and state shapes, and — with
weights copied by :func:`copy_from_torch` — the same numbers and gradients.

A *deep* RNN stacks ``L`` layers; layer ``l`` reads the hidden states of layer ``l-1``:

.. math::
    H_t^{(l)} = f\\big(H_t^{(l-1)}, H_{t-1}^{(l)}\\big), \\qquad H_t^{(0)} = X_t.

A *bidirectional* layer runs a second cell from ``t = T`` down to ``t = 1`` and
concatenates the two states, :math:`H_t = [\\overrightarrow{H}_t, \\overleftarrow{H}_t]`
of size ``2h``; the next layer reads that concatenation (as PyTorch does).

The cells live in ``self.cells`` in PyTorch's order of the state rows: index
``layer * D + direction`` (``D = 2`` when bidirectional, direction 1 = backward).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import torch
from torch import Tensor, nn

from seq2seq_lib.cells import (
    CellType,
    Gates,
    GRUVariant,
    LSTMCell,
    RecurrentCell,
    State,
    make_cell,
)

_TORCH_LAYERS: dict[str, type[nn.Module]] = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}


class ScratchRNN(nn.Module):
    """A multi-layer, optionally bidirectional RNN, GRU or LSTM built from scratch cells.

    Args:
        cell_type: ``"rnn"``, ``"gru"`` or ``"lstm"``.
        input_size: ``d``, the number of input features.
        hidden_size: ``h``, the number of hidden units per direction.
        num_layers: ``L``, the number of stacked layers.
        bidirectional: add a backward direction to every layer (``D = 2``).
        gru_variant: ``"pytorch"`` (equals ``nn.GRU``) or ``"cho"``; see
            :class:`~seq2seq_lib.cells.GRUCell`.
        nonlinearity: ``"tanh"`` or ``"relu"`` for ``cell_type="rnn"``.

    Inputs: ``X, state``
        * ``X (B, T, d)``
        * ``state``: ``H_0 (L*D, B, h)`` — for an LSTM the pair ``(H_0, C_0)`` — or
          ``None`` for zeros.

    Outputs: ``outputs, state`` (and ``gates`` with ``return_gates=True``)
        * ``outputs (B, T, D*h)``: the last layer's ``H_t`` for every ``t``;
        * ``state``: ``H_n (L*D, B, h)`` — for an LSTM ``(H_n, C_n)`` — the final state of
          each layer and direction (the backward direction ends at ``t = 1``);
        * ``gates``: a list with one dict per cell (same order as the state rows) mapping a
          gate name (``"R"``, ``"Z"``, ``"I"``, ...) to its activations ``(B, T, h)``.
    """

    def __init__(
        self,
        cell_type: CellType,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bidirectional: bool = False,
        gru_variant: GRUVariant = "pytorch",
        nonlinearity: Literal["tanh", "relu"] = "tanh",
    ) -> None:
        super().__init__()
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"num_layers must be a positive int, got {num_layers!r}")
        self.cell_type = cell_type
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bidirectional = bool(bidirectional)
        self.num_directions = 2 if bidirectional else 1
        cells = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else self.num_directions * hidden_size
            for _ in range(self.num_directions):
                cells.append(
                    make_cell(
                        cell_type,
                        layer_input,
                        hidden_size,
                        gru_variant=gru_variant,
                        nonlinearity=nonlinearity,
                    )
                )
        self.cells = nn.ModuleList(cells)

    def forward(
        self, X: Tensor, state: State | None = None, return_gates: bool = False
    ) -> tuple[Tensor, State] | tuple[Tensor, State, list[Gates]]:
        if not isinstance(X, Tensor) or X.dim() != 3 or X.size(2) != self.input_size:
            shape = tuple(X.shape) if isinstance(X, Tensor) else type(X).__name__
            raise ValueError(f"X must be (B, T, {self.input_size}) (batch first), got {shape}")
        B, T, _ = X.shape
        if T == 0:
            raise ValueError("X has no time steps (T = 0)")
        states = self._split_state(state, X)
        layer_input, final, gates = X, [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                i = layer * self.num_directions + direction
                H_all, last, cell_gates = run_cell(
                    self.cells[i],
                    layer_input,
                    states[i],
                    reverse=direction == 1,
                    return_gates=return_gates,
                )
                outputs.append(H_all)
                final.append(last)
                gates.append(cell_gates)
            layer_input = outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=2)
        if self.cell_type == "lstm":
            new_state = (torch.stack([s[0] for s in final]), torch.stack([s[1] for s in final]))
        else:
            new_state = torch.stack(final)
        return (layer_input, new_state, gates) if return_gates else (layer_input, new_state)

    def _split_state(self, state: State | None, X: Tensor) -> list[State]:
        """Turn ``(L*D, B, h)`` (or the LSTM pair) into one state per cell."""
        B, n = X.size(0), len(self.cells)
        if state is None:
            return [cell.init_state(B, like=X) for cell in self.cells]
        want = (n, B, self.hidden_size)
        parts = state if self.cell_type == "lstm" else (state,)
        if self.cell_type == "lstm" and (not isinstance(state, tuple) or len(state) != 2):
            raise ValueError(f"an LSTM state must be a pair (H_0, C_0), got {type(state).__name__}")
        for name, part in zip(("H_0", "C_0"), parts, strict=False):
            if not isinstance(part, Tensor) or tuple(part.shape) != want:
                got = tuple(part.shape) if isinstance(part, Tensor) else type(part).__name__
                raise ValueError(f"{name} must be (L*D, B, h) = {want}, got {got}")
        if self.cell_type == "lstm":
            return list(zip(state[0].unbind(0), state[1].unbind(0), strict=True))
        return list(state.unbind(0))

    def extra_repr(self) -> str:
        return (
            f"{self.cell_type!r}, {self.input_size}, {self.hidden_size}, "
            f"num_layers={self.num_layers}, bidirectional={self.bidirectional}"
        )


def run_cell(
    cell: RecurrentCell,
    X: Tensor,
    state: State,
    reverse: bool = False,
    return_gates: bool = False,
) -> tuple[Tensor, State, Gates]:
    """Run one cell over a whole sequence ``X (B, T, d)``, forwards or backwards in time.

    The input projections ``X_t W_x + b`` of all ``T`` steps are one matrix product before
    the loop; only ``H_{t-1} W_h`` stays inside it.

    Returns ``H_all (B, T, h)`` (``H_all[:, t]`` is the state after reading ``X_t``), the
    final state, and the gates stacked to ``(B, T, h)`` (an empty dict unless
    ``return_gates``).
    """
    XW = cell.project_input(X).unbind(1)  # T tensors (B, G*h), one matmul for all steps
    T = len(XW)
    steps = range(T - 1, -1, -1) if reverse else range(T)
    H_all: list[Tensor] = [X] * T  # placeholders, overwritten below
    gate_steps: list[Gates] = []
    for t in steps:
        if return_gates:
            state, step_gates = cell.step(XW[t], state, return_gates=True)
            gate_steps.append(step_gates)
        else:
            state = cell.step(XW[t], state)
        H_all[t] = state[0] if isinstance(cell, LSTMCell) else state
    gates: Gates = {}
    if return_gates:
        if reverse:
            gate_steps.reverse()
        gates = {k: torch.stack([g[k] for g in gate_steps], dim=1) for k in gate_steps[0]}
    return torch.stack(H_all, dim=1), state, gates


# -- weight copying -----------------------------------------------------------------------------
def _check_pair(scratch: ScratchRNN, module: nn.Module) -> None:
    if not isinstance(scratch, ScratchRNN):
        raise TypeError(f"expected a ScratchRNN, got {type(scratch).__name__}")
    want = _TORCH_LAYERS[scratch.cell_type]
    if type(module) is not want:
        raise TypeError(
            f"a ScratchRNN of cell_type={scratch.cell_type!r} pairs with nn.{want.__name__}, "
            f"got {type(module).__name__}"
        )
    if not module.bias:
        raise ValueError("only torch modules with bias=True are supported")
    if getattr(module, "proj_size", 0):
        raise ValueError("nn.LSTM with proj_size > 0 is not supported")
    ours = (scratch.input_size, scratch.hidden_size, scratch.num_layers, scratch.bidirectional)
    theirs = (module.input_size, module.hidden_size, module.num_layers, module.bidirectional)
    if ours != theirs:
        raise ValueError(
            "(input_size, hidden_size, num_layers, bidirectional) differ: "
            f"scratch {ours}, torch {theirs}"
        )
    if scratch.cell_type == "rnn" and scratch.cells[0].nonlinearity != module.nonlinearity:
        raise ValueError(
            f"nonlinearity differs: scratch {scratch.cells[0].nonlinearity!r}, "
            f"torch {module.nonlinearity!r}"
        )


def _torch_names(layer: int, direction: int) -> tuple[str, str, str, str]:
    sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
    return (f"weight_ih{sfx}", f"weight_hh{sfx}", f"bias_ih{sfx}", f"bias_hh{sfx}")


def _pairs(scratch: ScratchRNN) -> Iterator[tuple[RecurrentCell, tuple[str, ...]]]:
    """Each cell with the names of its four PyTorch parameters."""
    for layer in range(scratch.num_layers):
        for direction in range(scratch.num_directions):
            cell = scratch.cells[layer * scratch.num_directions + direction]
            yield cell, _torch_names(layer, direction)


def copy_from_torch(scratch: ScratchRNN, module: nn.Module) -> ScratchRNN:
    """Copy the weights of ``nn.RNN/GRU/LSTM`` into ``scratch``; returns ``scratch``.

    PyTorch's ``weight_ih_l{k}[_reverse] (G*h, d)`` becomes the cell's ``W_x (d, G*h)``
    (transposed; the gate blocks keep PyTorch's order: GRU ``r, z, n`` = the book's
    ``r, z, h``; LSTM ``i, f, g, o`` = ``i, f, c, o``), ``weight_hh`` becomes ``W_h``,
    ``bias_ih`` ``b_x`` and ``bias_hh`` ``b_h``.
    """
    _check_pair(scratch, module)
    for cell, names in _pairs(scratch):
        cell.load_torch_weights(*(getattr(module, n) for n in names))
    return scratch


def scratch_like(module: nn.Module, gru_variant: GRUVariant = "pytorch") -> ScratchRNN:
    """A :class:`ScratchRNN` with the configuration and the weights of ``nn.RNN/GRU/LSTM``."""
    kinds = {nn.RNN: "rnn", nn.GRU: "gru", nn.LSTM: "lstm"}
    if type(module) not in kinds:
        raise TypeError(f"expected nn.RNN, nn.GRU or nn.LSTM, got {type(module).__name__}")
    ref = next(module.parameters())
    scratch = ScratchRNN(
        kinds[type(module)],
        module.input_size,
        module.hidden_size,
        module.num_layers,
        module.bidirectional,
        gru_variant=gru_variant,
        nonlinearity=getattr(module, "nonlinearity", "tanh"),
    ).to(device=ref.device, dtype=ref.dtype)
    return copy_from_torch(scratch, module)
