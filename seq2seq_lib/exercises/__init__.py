"""Automatic checkers for the exercises.

Each chapter with an auto-checked exercise has a module here, named by the chapter
(``exercises.ch01`` for chapter 1, ...). A checker calls the reader's function on fresh
inputs, compares the result with a reference, and raises :class:`AssertionError` with a
message that says *what* is wrong — the type, the shape, or the first element that differs
and by how much. On success it prints one short line, so the solution cell's stored output
is stable.

An exercise starts as a *stub*, a function whose body is ``raise NotImplementedError(...)``.
Every checker is wrapped by :func:`checker`: when the reader's function raises
``NotImplementedError`` the checker prints one line saying that the exercise is not solved
yet and returns, so running a whole notebook never stops at an exercise the reader has not
tried.

This module holds that wrapper and the comparison helpers every checker uses.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch


class NotSolvedYet(BaseException):
    """The reader's function is still the stub (it raised ``NotImplementedError``).

    A :class:`BaseException`, not an :class:`Exception`, so that a checker's own
    ``except Exception`` (which reports the reader's errors as failures) lets it through to
    :func:`checker`.
    """


def checker(check: Callable[..., None]) -> Callable[..., None]:
    """Make ``check(fn, ..., exercise="Exercise N.M")`` polite to an unsolved stub.

    The wrapped checker calls ``fn`` through a guard: if ``fn`` raises
    ``NotImplementedError``, it prints ``"Exercise N.M is not solved yet: ..."`` and returns
    ``None`` instead of raising. Any other outcome is the checker's own: one line on
    success, an :class:`AssertionError` with the diagnosis otherwise. The checker must take
    the reader's function first and have a parameter ``exercise`` (the label it prints).
    """
    signature = inspect.signature(check)
    if "exercise" not in signature.parameters:
        raise TypeError(f"{check.__name__} needs a parameter 'exercise' (the label it prints)")

    @functools.wraps(check)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        fn, *rest = bound.args
        name = getattr(fn, "__name__", "your function")

        @functools.wraps(fn)
        def guarded(*a: Any, **kw: Any) -> Any:
            try:
                return fn(*a, **kw)
            except NotImplementedError as err:
                raise NotSolvedYet(name) from err

        try:
            check(guarded, *rest, **bound.kwargs)
        except NotSolvedYet:
            print(f"{bound.arguments['exercise']} is not solved yet: replace the line "
                  f"`raise NotImplementedError(...)` in `{name}` with your code and run "
                  "this cell again.")

    return wrapper


def call_reader(fn: Callable[..., Any], args: tuple[Any, ...], what: str) -> Any:
    """Call the reader's ``fn(*args)``; any error it raises (but the stub's
    ``NotImplementedError``, see :func:`checker`) becomes an :class:`AssertionError` naming
    ``what``, and tensor arguments must come back unchanged (no in-place edits)."""
    copies = [a.clone() if isinstance(a, torch.Tensor) else None for a in args]
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
