"""Synthetic long-dependency tasks: offline, deterministic, the answer far back in the sequence.

* :func:`adding_problem` (Hochreiter & Schmidhuber, 1997): add the two marked numbers;
* :func:`first_token_task`: name the class of the first token after ``T - 1`` distractors;
* :func:`lookahead_task` (chapter 5): tag every position with the token ``lag`` steps ahead.

A vanilla RNN learns the first two for short ``T`` and fails as ``T`` grows; a GRU or an LSTM
keeps succeeding. A :class:`Task` bundles one of them at a fixed length with its loss, metric
and chance level (:func:`make_task`); :mod:`seq2seq_lib.sequence_model` trains models on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

Seed = int | torch.Generator
TaskName = Literal["adding", "first_token"]


def _generator(seed: Seed) -> torch.Generator:
    if isinstance(seed, torch.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int or a torch.Generator, got {type(seed).__name__}")
    return torch.Generator().manual_seed(seed)


def _check_sizes(batch_size: int, seq_len: int, min_len: int) -> None:
    for name, value, low in (("batch_size", batch_size, 1), ("seq_len", seq_len, min_len)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def adding_problem(batch_size: int, seq_len: int, seed: Seed = 0) -> tuple[Tensor, Tensor]:
    """The adding problem (Hochreiter & Schmidhuber, 1997; the variant of Le et al., 2015).

    Each step has two channels: a value ``~ U(0, 1)`` and a marker in ``{0, 1}``. Exactly
    two steps are marked, one uniformly in the first half ``[0, T//2)`` and one in the
    second half ``[T//2, T)``; the target is the sum of the two marked values.

    Chance level: always predicting ``1.0`` (the mean of the target) gives
    ``MSE = Var(U_1 + U_2) = 2/12 ≈ 0.167``; a model must beat that to have learned anything.

    Args:
        batch_size: ``B``.
        seq_len: ``T >= 2``.
        seed: an int or a ``torch.Generator`` (CPU); the same seed gives the same batch.

    Returns:
        ``X (B, T, 2)`` float32 (``X[..., 0]`` values, ``X[..., 1]`` markers) and the
        targets ``y (B, 1)``.
    """
    _check_sizes(batch_size, seq_len, 2)
    g = _generator(seed)
    B, T, half = batch_size, seq_len, seq_len // 2
    values = torch.rand(B, T, generator=g)
    first = torch.randint(0, half, (B,), generator=g)
    second = torch.randint(half, T, (B,), generator=g)
    markers = torch.zeros(B, T)
    rows = torch.arange(B)
    markers[rows, first] = 1.0
    markers[rows, second] = 1.0
    y = (values[rows, first] + values[rows, second]).unsqueeze(1)
    return torch.stack([values, markers], dim=2), y


def first_token_task(
    batch_size: int,
    seq_len: int,
    num_classes: int = 4,
    num_distractors: int = 4,
    seed: Seed = 0,
) -> tuple[Tensor, Tensor]:
    """Remember the first token: its class must be named after ``T - 1`` distractors.

    The vocabulary has ``V = num_classes + num_distractors`` tokens. Token ``X_1`` is a class
    ``c ~ U{0, ..., K-1}``; tokens ``X_2 .. X_T`` are drawn uniformly from the distractor
    tokens ``K .. V-1``, so they carry no information about ``c``. The model reads the whole
    sequence and predicts ``c`` from its last state ``H_T``.

    Chance level: accuracy ``1/K`` (cross-entropy ``log K``).

    Args:
        batch_size: ``B``.
        seq_len: ``T >= 1``.
        num_classes: ``K >= 2``.
        num_distractors: ``>= 1`` distractor tokens.
        seed: an int or a ``torch.Generator`` (CPU).

    Returns:
        one-hot ``X (B, T, V)`` float32 and the classes ``y (B,)`` int64.
    """
    _check_sizes(batch_size, seq_len, 1)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an int >= 2, got {num_classes!r}")
    if (
        isinstance(num_distractors, bool)
        or not isinstance(num_distractors, int)
        or num_distractors < 0
    ):
        raise ValueError(f"num_distractors must be an int >= 0, got {num_distractors!r}")
    g = _generator(seed)
    K, V = num_classes, num_classes + num_distractors
    y = torch.randint(0, K, (batch_size,), generator=g)
    low = 0 if num_distractors == 0 else K
    tokens = torch.randint(low, V, (batch_size, seq_len), generator=g)
    tokens[:, 0] = y
    return F.one_hot(tokens, V).float(), y


IGNORE_INDEX = -100  # the label of a position without a target (``F.cross_entropy`` skips it)


def lookahead_task(
    batch_size: int, seq_len: int, vocab_size: int = 8, lag: int = 2, seed: Seed = 0
) -> tuple[Tensor, Tensor]:
    """A tagging task that needs the *future*: tag every token with the token ``lag`` steps later.

    Tokens ``x_1 .. x_T`` are drawn uniformly from ``{0, ..., V-1}``; the tag of position
    ``t`` is ``y_t = x_{t+lag}``. The last ``lag`` positions have no later token; their tag
    is :data:`IGNORE_INDEX`. A model that reads left to right has not seen ``x_{t+lag}``
    when it must tag ``x_t``, so the best it can do is accuracy ``1/V``; a bidirectional
    model can read it from its backward state.

    Args:
        batch_size: ``B``.
        seq_len: ``T > lag``.
        vocab_size: ``V >= 2``.
        lag: ``>= 1``, how far ahead the tag lies.
        seed: an int or a ``torch.Generator`` (CPU).

    Returns:
        one-hot ``X (B, T, V)`` float32 and the tags ``y (B, T)`` int64.
    """
    for name, value, low in (("lag", lag, 1), ("vocab_size", vocab_size, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    _check_sizes(batch_size, seq_len, lag + 1)
    tokens = torch.randint(0, vocab_size, (batch_size, seq_len), generator=_generator(seed))
    y = torch.full_like(tokens, IGNORE_INDEX)
    y[:, :-lag] = tokens[:, lag:]
    return F.one_hot(tokens, vocab_size).float(), y


# -- one object per task: data, loss, metric, chance level ---------------------------------------
@dataclass(frozen=True)
class Task:
    """A task at a fixed length: how to sample it, its loss, its metric and chance level."""

    name: TaskName
    seq_len: int
    input_size: int
    output_size: int
    metric_name: str  # "mse" (lower is better) or "accuracy" (higher is better)
    chance: float  # the metric of the best input-blind guess
    sampler: Callable[[int, torch.Generator], tuple[Tensor, Tensor]]
    loss_fn: Callable[[Tensor, Tensor], Tensor]

    def sample(self, batch_size: int, seed: Seed = 0) -> tuple[Tensor, Tensor]:
        """A batch ``(X, y)``; see :func:`adding_problem` / :func:`first_token_task`."""
        return self.sampler(batch_size, _generator(seed))

    def metric(self, logits: Tensor, y: Tensor) -> float:
        """Mean squared error (adding) or accuracy (first token) of a batch of outputs."""
        if self.metric_name == "mse":
            return F.mse_loss(logits, y).item()
        return (logits.argmax(dim=1) == y).float().mean().item()


def make_task(name: TaskName, seq_len: int, num_classes: int = 4, num_distractors: int = 4) -> Task:
    """The :class:`Task` ``"adding"`` or ``"first_token"`` at length ``seq_len``."""
    if name == "adding":
        return Task(
            name, seq_len, 2, 1, "mse", 2 / 12,
            lambda b, g: adding_problem(b, seq_len, g), F.mse_loss,
        )  # fmt: skip
    if name == "first_token":
        return Task(
            name, seq_len, num_classes + num_distractors, num_classes, "accuracy",
            1 / num_classes,
            lambda b, g: first_token_task(b, seq_len, num_classes, num_distractors, g),
            F.cross_entropy,
        )  # fmt: skip
    raise ValueError(f"task must be 'adding' or 'first_token', got {name!r}")
