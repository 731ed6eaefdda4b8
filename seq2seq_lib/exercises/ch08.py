"""Checkers for chapter 8 (attention).

A solution that calls the library's version instead of computing it is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`):
:func:`seq2seq_lib.attention.masked_softmax` for exercise 8.1,
:class:`seq2seq_lib.attention.GeneralScore` (and :func:`~seq2seq_lib.attention.make_score`)
for exercise 8.2. ``torch.softmax``, ``masked_fill`` and ``@`` are the building blocks.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from seq2seq_lib import attention
from seq2seq_lib.exercises import (
    assert_close,
    assert_shape,
    call_reader,
    checker,
    passed,
    refuse_reference,
)

#: What the masked softmax may not call.
SOFTMAX_REFERENCES = ("seq2seq_lib.attention.masked_softmax",)
#: What the general score may not call.
SCORE_REFERENCES = (
    "seq2seq_lib.attention.GeneralScore",
    ("seq2seq_lib.attention.make_score", "the library's factory of ready-made scores"),
)


@checker
def check_masked_softmax(
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], exercise: str = "Exercise 8.1"
) -> None:
    """Check ``fn(scores (B, T, S), mask (B, S) bool) -> weights (B, T, S)`` (exercise 8.1).

    Weights must be exactly 0 where ``mask`` is False, sum to 1 over the real positions, and
    equal :func:`seq2seq_lib.attention.masked_softmax` — also for huge scores on padding.
    A solution that calls it is refused.
    """
    refuse_reference(fn, SOFTMAX_REFERENCES, exercise, "with masked_fill and torch.softmax")
    g = torch.Generator().manual_seed(8)
    scores = torch.randn(3, 2, 6, generator=g) * 4
    scores[1, :, 4:] = 1e4  # a pad with a huge score must still get weight 0
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2, [True] + [False] * 5])
    got = call_reader(fn, (scores.clone(), mask.clone()), "masked softmax")
    assert_shape("weights", got, scores.shape)
    pad_weights = got.detach()[~mask.unsqueeze(1).expand_as(scores)]
    if pad_weights.abs().max() != 0:
        raise AssertionError("padded positions must get weight exactly 0 "
                             f"(largest weight on a pad: {pad_weights.abs().max().item():.3g})")
    assert_close("weights", got, attention.masked_softmax(scores, mask), atol=1e-6, rtol=1e-5)
    passed(exercise)


@checker
def check_general_score(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
    exercise: str = "Exercise 8.2",
) -> None:
    """Check ``fn(h_t (B, T, d_q), h_bar (B, S, d_k), W_a (d_q, d_k)) -> scores (B, T, S)``
    computing :math:`h_t^\\top W_a \\bar h_s` for every pair (exercise 8.2), compared with
    :class:`seq2seq_lib.attention.GeneralScore`; a solution that calls it is refused."""
    refuse_reference(fn, SCORE_REFERENCES, exercise, "with batched matrix products")
    g = torch.Generator().manual_seed(9)
    q, k = torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 6, generator=g)
    ref = attention.GeneralScore(4, 6)
    with torch.no_grad():
        ref.W_a.copy_(torch.randn(4, 6, generator=g))
    got = call_reader(fn, (q.clone(), k.clone(), ref.W_a.detach().clone()), "general score")
    assert_close("scores", got, ref(q, k).detach(), atol=1e-5, rtol=1e-5)
    passed(exercise)
