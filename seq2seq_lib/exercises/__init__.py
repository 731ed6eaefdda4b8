"""Automatic checkers for the exercises.

Each chapter with an auto-checked exercise has a module here (``exercises.bptt`` for
chapter 1, ...). A checker calls the reader's function on fresh inputs, compares the result
with a reference, and raises :class:`AssertionError` with a message that says *what* is
wrong — the type, the shape, or the first element that differs and by how much.
On success it prints one short line, so the solution cell's stored output is stable.

This module holds the comparison helpers every checker uses.
"""

from __future__ import annotations

from typing import Any

import torch


def assert_tensor(name: str, got: Any) -> torch.Tensor:
    """Fail with a readable message unless ``got`` is a tensor."""
    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"{name} should be a torch.Tensor, got {type(got).__name__}")
    return got


def assert_shape(name: str, got: torch.Tensor, shape: tuple[int, ...] | torch.Size) -> None:
    """Fail unless ``got.shape == shape``, naming both shapes."""
    assert_tensor(name, got)
    if tuple(got.shape) != tuple(shape):
        raise AssertionError(
            f"{name} has shape {tuple(got.shape)}, expected {tuple(shape)}"
        )


def assert_close(
    name: str,
    got: Any,
    expected: torch.Tensor,
    *,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> None:
    """Fail unless ``got`` matches ``expected`` element-wise (``|g - e| <= atol + rtol|e|``).

    The message names the first differing element (as an index tuple), both values, and
    how many elements differ, e.g.::

        dL/dU differs from the reference at index (1, 2): got 0.1234, expected 0.4321
        (3 of 16 elements differ; largest |difference| 0.31)
    """
    got = assert_tensor(name, got)
    assert_shape(name, got, expected.shape)
    got_d = got.detach().to(dtype=torch.float64, device="cpu")
    exp_d = expected.detach().to(dtype=torch.float64, device="cpu")
    if not torch.isfinite(got_d).all():
        bad = tuple(int(i) for i in torch.nonzero(~torch.isfinite(got_d))[0])
        raise AssertionError(f"{name} has a non-finite value at index {bad}: {got_d[bad].item()}")
    diff = (got_d - exp_d).abs()
    wrong = diff > atol + rtol * exp_d.abs()
    if wrong.any():
        first = tuple(int(i) for i in torch.nonzero(wrong)[0])
        raise AssertionError(
            f"{name} differs from the reference at index {first}: got {got_d[first].item():.6g}, "
            f"expected {exp_d[first].item():.6g} ({int(wrong.sum())} of {wrong.numel()} "
            f"elements differ; largest |difference| {diff.max().item():.3g})"
        )


def assert_differentiable(what: str, out: torch.Tensor) -> None:
    """Fail unless ``out`` carries a gradient (it was computed with torch operations)."""
    if not out.requires_grad:
        raise AssertionError(
            f"{what} is not differentiable (no grad_fn): compute it with torch operations, "
            "without .item(), .detach() or .numpy()"
        )


def passed(exercise: str) -> None:
    """Print the one line a checker prints on success."""
    print(f"{exercise}: all checks passed.")
