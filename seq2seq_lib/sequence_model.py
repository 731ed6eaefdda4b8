"""A model for the synthetic tasks, its trainer, and gradient norms through time (chapters 2–5).

:class:`SequenceModel` (a fused ``nn.RNN/GRU/LSTM`` + a linear head on ``H_T``, built from a
:class:`SequenceConfig`),
:func:`train_sequence_model` and :func:`evaluate` run the experiment of chapters 2–3 on a
:class:`~seq2seq_lib.tasks.Task` within a fixed budget: a vanilla RNN learns a
long-dependency task for short ``T`` and fails as ``T`` grows, a GRU or an LSTM keeps
succeeding. :func:`hidden_grad_norms` measures ``||dL/dH_t||`` for every ``t``;
:func:`trained_sequence_model` and :func:`cached_length_sweep` train each model once and load
it from the model cache afterwards.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from seq2seq_lib.cache import Trained, train_or_load
from seq2seq_lib.cells import CellType, LSTMCell
from seq2seq_lib.device import CPU, SMOKE_UPDATES, Run
from seq2seq_lib.numerics import make_optimizer
from seq2seq_lib.rnn import scratch_like
from seq2seq_lib.tasks import Task, TaskName, make_task

_FUSED: dict[str, type[nn.Module]] = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}


@dataclass(frozen=True)
class SequenceConfig:
    """A :class:`SequenceModel`: its cell (``"rnn"``, ``"gru"`` or ``"lstm"``), the sizes of
    ``X_t`` (``input_size``), of ``H_t`` (``hidden_size``) and of the output, and the gate
    initialisation ``keep_bias`` (see :class:`SequenceModel`)."""

    cell_type: CellType
    input_size: int
    hidden_size: int
    output_size: int
    keep_bias: float = 0.0

    def __post_init__(self) -> None:
        if self.cell_type not in _FUSED:
            raise ValueError(f"cell_type must be 'rnn', 'gru' or 'lstm', got {self.cell_type!r}")


class SequenceModel(nn.Module):
    """A fused ``nn.RNN/GRU/LSTM(batch_first=True)`` and a linear head on the last state,
    built from a :class:`SequenceConfig` (kept as ``model.config``).

    ``y_hat = H_T W_hq + b_q``: ``X (B, T, d)`` gives ``(B, output_size)`` (regression
    values or class logits).

    ``keep_bias`` initialises the gates to *remember*: it is added to the bias of the gate
    that keeps the old state — the GRU's update gate ``Z_t``, the LSTM's forget gate
    ``F_t`` — so that at initialisation ``Z_t, F_t ≈ σ(keep_bias)`` instead of ``≈ 0.5``;
    for the LSTM it is also *subtracted* from the input gate's bias, so that
    ``I_t ≈ 1 - F_t`` as in the GRU, where ``Z_t`` and ``1 - Z_t`` are tied. This is the
    constant form of the "chrono" initialisation (Tallec & Ollivier, 2018); a forget bias
    of 1 alone is the classic recommendation (Gers et al., 2000; Jozefowicz et al., 2015).
    It is ignored for the vanilla RNN, which has no gate. Without it, gated cells start
    forgetting half of their state per step and need a longer budget to find long
    dependencies.
    """

    config_class: ClassVar[type] = SequenceConfig

    def __init__(self, config: SequenceConfig) -> None:
        super().__init__()
        c = self.config = config
        self.rnn = _FUSED[c.cell_type](c.input_size, c.hidden_size, batch_first=True)
        self.head = nn.Linear(c.hidden_size, c.output_size)
        if c.keep_bias and c.cell_type != "rnn":
            # PyTorch's gate order: GRU (r, z, n), LSTM (i, f, g, o): block 1 is z or f
            h, b = c.hidden_size, self.rnn.bias_ih_l0
            with torch.no_grad():
                b[h : 2 * h] += c.keep_bias
                if c.cell_type == "lstm":
                    b[:h] -= c.keep_bias  # the input gate I_t

    def forward(self, X: Tensor) -> Tensor:
        outputs, _ = self.rnn(X)
        return self.head(outputs[:, -1])


def train_sequence_model(
    model: SequenceModel,
    task: Task,
    *,
    steps: int = 200,
    batch_size: int = 32,
    lr: float = 1e-2,
    clip: float = 1.0,
    seed: int = 0,
    log_every: int = 10,
    run: Run = CPU,
) -> dict[str, Any]:
    """Train ``model`` in place with Adam on fresh batches of ``task``; return its history.

    Every step draws a new batch from a generator seeded with ``seed``; gradients are
    clipped to norm ``clip``. The history (plain numbers, for
    :func:`~seq2seq_lib.cache.train_or_load`) holds ``step`` and ``loss`` every
    ``log_every`` steps, the wall time ``seconds`` and the settings. The batches go to the
    model's device; ``run`` (:func:`~seq2seq_lib.device.setup`'s) matters only in a smoke run
    (``run.smoke``), which stops after ``SMOKE_UPDATES`` steps.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if run.smoke:  # a smoke run: the code path, not the result
        steps = min(steps, SMOKE_UPDATES)
    g = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    optimizer = make_optimizer(model.parameters(), lr)
    history: dict[str, Any] = {"step": [], "loss": [], "task": task.name, "seq_len": task.seq_len}
    start = time.perf_counter()
    model.train()
    for step in range(1, steps + 1):
        X, y = task.sample(batch_size, g)
        loss = task.loss_fn(model(X.to(device)), y.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        if step % log_every == 0 or step == steps:
            history["step"].append(step)
            history["loss"].append(loss.item())
    history["seconds"] = time.perf_counter() - start
    return history


@torch.no_grad()
def evaluate(model: nn.Module, task: Task, batch_size: int = 1000, seed: int = 12345) -> float:
    """The task's metric (MSE or accuracy) on one fixed held-out batch."""
    X, y = task.sample(batch_size, seed)
    device = next(model.parameters()).device
    model.eval()
    return task.metric(model(X.to(device)), y.to(device))


def hidden_grad_norms(model: SequenceModel, X: Tensor, y: Tensor, task: Task) -> Tensor:
    """``||dL/dH_t||`` for every ``t = 1..T``: how much the loss at the end feels each state.

    The fused ``nn.RNN/GRU/LSTM`` does not expose its intermediate states to autograd, so
    the weights are copied into a :class:`~seq2seq_lib.rnn.ScratchRNN` (same numbers) whose
    loop keeps every ``H_t``. ``dL/dH_t`` is the *total* derivative — every path from
    ``H_t`` to the loss through later steps (for an LSTM also through the cells ``C``).
    The norm is the Frobenius norm over the batch of the gradient of the mean loss.

    Returns a float tensor ``(T,)``; entry ``t-1`` belongs to ``H_t``.
    """
    if not isinstance(model, SequenceModel):
        raise TypeError(f"model must be a SequenceModel, got {type(model).__name__}")
    if X.dim() != 3:
        raise ValueError(f"X must be (B, T, d), got {tuple(X.shape)}")
    cell = scratch_like(model.rnn).cells[0]
    device = next(model.parameters()).device
    X, y = X.to(device), y.to(device)
    state = cell.init_state(X.size(0), like=X)
    XW = cell.project_input(X).unbind(1)
    hidden: list[Tensor] = []
    for XW_t in XW:
        state = cell.step(XW_t, state)
        H = state[0] if isinstance(cell, LSTMCell) else state
        H.retain_grad()
        hidden.append(H)
    loss = task.loss_fn(model.head(hidden[-1]), y)
    loss.backward()
    return torch.stack([H.grad.norm() for H in hidden]).detach().cpu()


def trained_sequence_model(
    cell_type: CellType,
    task_name: TaskName,
    seq_len: int,
    *,
    hidden_size: int = 32,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 1e-2,
    keep_bias: float = 3.0,
    seed: int = 0,
    run: Run = CPU,
) -> Trained:
    """One model of the length sweep, trained once and then loaded from the model cache.

    The recipe (``torch.manual_seed(seed)`` before the model is built, then
    :func:`train_sequence_model`), run through
    :func:`~seq2seq_lib.cache.train_or_load`, so that every chapter asking for the same
    configuration gets the same weights and trains only on the first call. ``keep_bias``
    is stored as 0 for the vanilla RNN, which has no gate (the model is the same).

    The returned ``history`` holds the training losses and ``metric``: the task's held-out
    metric from :func:`evaluate` (accuracy or MSE), computed right after training.
    """
    task = make_task(task_name, seq_len)
    keep_bias = 0.0 if cell_type == "rnn" else float(keep_bias)
    config = {
        "cell_type": cell_type, "task": task_name, "seq_len": seq_len,
        "hidden_size": hidden_size, "steps": steps, "batch_size": batch_size, "lr": lr,
        "keep_bias": keep_bias, "seed": seed,
    }  # fmt: skip

    def build() -> SequenceModel:
        torch.manual_seed(seed)
        return SequenceModel(SequenceConfig(cell_type, task.input_size, hidden_size,
                                            task.output_size, keep_bias=keep_bias))

    def train(model: nn.Module) -> dict[str, Any]:
        history = train_sequence_model(
            model, task, steps=steps, batch_size=batch_size, lr=lr, seed=seed, run=run
        )
        history["metric"] = evaluate(model, task)
        return history

    name = f"sweep-{task_name}-{cell_type}-T{seq_len}"
    return train_or_load(name, config, build, train, run=run)


def cached_length_sweep(
    cell_type: CellType,
    seq_lens: tuple[int, ...] | list[int],
    seeds: tuple[int, ...] | list[int] = (0,),
    *,
    task_name: TaskName = "first_token",
    keep_bias: float = 3.0,
    run: Run = CPU,
    **budget: Any,
) -> dict[int, list[float]]:
    """The held-out metric of one model per (length, seed), from :func:`trained_sequence_model`.

    Returns ``{T: [metric of seed s for s in seeds]}``. Every model is cached, so a later
    chapter that asks for the same cell, lengths and budget (``budget``: ``hidden_size``,
    ``steps``, ``batch_size``, ``lr``) loads them instead of training again.
    """
    return {
        T: [
            trained_sequence_model(
                cell_type, task_name, T, keep_bias=keep_bias, seed=s, run=run, **budget
            ).history["metric"]
            for s in seeds
        ]
        for T in seq_lens
    }
