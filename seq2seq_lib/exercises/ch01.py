"""Checkers for chapter 1 (backpropagation through time).

A solution that calls what it should compute is refused (:func:`~seq2seq_lib.exercises.refuse_reference`): for
exercise 1.1 the library's :func:`seq2seq_lib.bptt.bptt` and PyTorch's autograd (``.backward()``,
``torch.autograd.grad``, ``torch.func``), for exercise 1.3 ``torch.nn.utils.clip_grad_norm_``
and its relatives. ``bptt.forward``, for the states, stays allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from seq2seq_lib import bptt
from seq2seq_lib.exercises import assert_close, checker, passed, refuse_reference

_AUTOGRAD = "PyTorch's autograd, which computes the gradients your function is checked against"
#: What exercise 1.1 may not call — the reference and autograd.
BPTT_REFERENCES = (
    "seq2seq_lib.bptt.bptt",
    *((path, _AUTOGRAD) for path in (
        ".backward", "torch.autograd.grad", "torch.autograd.backward",
        "torch.autograd.functional.vjp", "torch.autograd.functional.jacobian",
        "torch.func.grad", "torch.func.vjp", "torch.func.jacrev")),
)
#: What exercise 1.3 may not call — PyTorch's clipping.
CLIP_REFERENCES = (
    "torch.nn.utils.clip_grad_norm_",
    ("torch.nn.utils.clip_grad_norm", "PyTorch's clipping"),
    ("torch.nn.utils.clip_grads_with_norm_", "PyTorch's clipping"),
)

BPTTFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
                  Sequence[torch.Tensor]]


def _problem(n: int, d_h: int, d_in: int, seed: int, last_only: bool):
    g = torch.Generator().manual_seed(seed)
    U = torch.randn(d_h, d_h, generator=g, dtype=torch.float64) / d_h**0.5
    W = torch.randn(d_h, d_in, generator=g, dtype=torch.float64) / d_in**0.5
    xs = torch.randn(n, d_in, generator=g, dtype=torch.float64)
    h0 = torch.randn(d_h, generator=g, dtype=torch.float64) * 0.1
    dL_dh = torch.randn(n, d_h, generator=g, dtype=torch.float64)
    if last_only:
        dL_dh[:-1] = 0
    return U, W, xs, h0, dL_dh


@checker
def check_bptt(fn: BPTTFn, exercise: str = "Exercise 1.1") -> None:
    """Check a hand-written BPTT ``fn(U, W, xs, h0, dL_dh) -> (dU, dW, dh0)`` (exercise 1.1).

    Shapes: ``U (d_h, d_h)``, ``W (d_h, d_in)``, ``xs (n, d_in)``, ``h0 (d_h,)``,
    ``dL_dh (n, d_h)`` (direct gradient of the loss w.r.t. each ``h_t``). The reference is
    PyTorch's autograd on :func:`seq2seq_lib.bptt.forward`, in float64, for lengths 1, 3 and 12
    and for losses on the last state only and on every state. A solution that calls
    ``bptt.bptt`` or autograd is refused.
    """
    refuse_reference(fn, BPTT_REFERENCES, exercise,
                     "with the backward recursion of this chapter (bptt.forward for the states "
                     "is fine)")
    for case, (n, last_only) in enumerate([(1, True), (3, True), (3, False), (12, False)]):
        U, W, xs, h0, dL_dh = _problem(n, d_h=4, d_in=3, seed=100 + case, last_only=last_only)
        Ur, Wr, h0r = (t.clone().requires_grad_() for t in (U, W, h0))
        trace = bptt.forward(Ur, Wr, xs, h0r)
        (trace.h * dL_dh).sum().backward()
        result = fn(U.clone(), W.clone(), xs.clone(), h0.clone(), dL_dh.clone())
        if not isinstance(result, (tuple, list)) or len(result) != 3:
            raise AssertionError(
                f"return a tuple (dU, dW, dh0); got {type(result).__name__}"
                + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else "")
            )
        where = f" (n={n}, loss on {'the last state' if last_only else 'every state'})"
        assert_close("dU" + where, result[0], Ur.grad, atol=1e-10, rtol=1e-8)
        assert_close("dW" + where, result[1], Wr.grad, atol=1e-10, rtol=1e-8)
        assert_close("dh0" + where, result[2], h0r.grad, atol=1e-10, rtol=1e-8)
    passed(exercise)


@checker
def check_clip_by_global_norm(
    fn: Callable[[list[torch.Tensor], float], list[torch.Tensor]],
    exercise: str = "Exercise 1.3",
) -> None:
    """Check ``fn(grads, max_norm) -> clipped grads`` (exercise 1.3) against
    :func:`torch.nn.utils.clip_grad_norm_`, for a norm above and one below ``max_norm``;
    a solution that calls PyTorch's clipping is refused."""
    refuse_reference(fn, CLIP_REFERENCES, exercise,
                     "with the global norm and one scale factor for every tensor")
    g = torch.Generator().manual_seed(7)
    for max_norm, scale in [(1.0, 10.0), (5.0, 0.1)]:
        grads = [torch.randn(3, 4, generator=g) * scale, torch.randn(5, generator=g) * scale]
        params = [torch.nn.Parameter(torch.zeros_like(t)) for t in grads]
        for p, t in zip(params, grads, strict=True):
            p.grad = t.clone()
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        out = fn([t.clone() for t in grads], max_norm)
        if not isinstance(out, (list, tuple)) or len(out) != len(grads):
            raise AssertionError(f"return a list of {len(grads)} tensors, one per gradient")
        for i, (o, p) in enumerate(zip(out, params, strict=True)):
            assert_close(f"clipped gradient {i} (max_norm={max_norm})", o, p.grad,
                         atol=1e-6, rtol=1e-5)
    passed(exercise)
