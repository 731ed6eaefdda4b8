"""Checker for the chapter-6 exercise: the log-probability of a whole target sequence.

The reader writes ``sequence_log_prob(log_probs, targets, pad_id)`` — for each sequence
:math:`\\log p(y \\mid x) = \\sum_t \\log p(y_t \\mid y_{<t}, x)` over its real (non-padding)
tokens — and :func:`check_sequence_log_prob` compares it with
:func:`seq2seq_lib.losses.sequence_log_prob`. A solution that calls that function is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from seq2seq_lib.exercises import (
    assert_close,
    assert_differentiable,
    assert_shape,
    assert_tensor,
    checker,
    passed,
    refuse_reference,
)
from seq2seq_lib.losses import sequence_log_prob

#: What the score may not call — the library's version.
SCORE_REFERENCES = ("seq2seq_lib.losses.sequence_log_prob",)

ScoreFn = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]


def _case(
    seed: int, lengths: list[int], vocab: int, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    steps = max(lengths) + 1
    log_probs = torch.log_softmax(
        torch.randn(len(lengths), steps, vocab, generator=g, dtype=torch.float64) * 2, -1
    )
    targets = torch.randint(0, vocab - 1, (len(lengths), steps), generator=g)
    targets[targets >= pad_id] += 1  # real tokens never equal pad_id
    for b, n in enumerate(lengths):
        targets[b, n:] = pad_id
    return log_probs, targets


def _diagnose(
    got: torch.Tensor, log_probs: torch.Tensor, targets: torch.Tensor, pad_id: int
) -> str:
    token = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    mask = (targets != pad_id).to(token.dtype)
    wrong = {
        "the sum over all positions, padding included: add only the real tokens": token.sum(1),
        "the mean over real tokens: log p(y|x) is a sum, not a mean": (
            (token * mask).sum(1) / mask.sum(1)
        ),
        "a probability, not a log-probability: return the log": (token * mask).sum(1).exp(),
        "the log-probability of the most likely tokens, not of the targets": (
            log_probs.max(-1).values * mask
        ).sum(1),
    }
    for hint, value in wrong.items():
        if torch.allclose(got.double(), value, atol=1e-6):
            return f" It equals {hint}."
    return ""


@checker
def check_sequence_log_prob(fn: ScoreFn, exercise: str = "Exercise 6.1") -> None:
    r"""Check ``fn(log_probs (N,T,V), targets (N,T), pad_id) -> (N,)``.

    1. values equal the reference for several padding ids and lengths;
    2. the result has shape ``(N,)``, one score per sequence;
    3. changing the log-probabilities at padding positions changes nothing, even to
       :math:`-\infty` (a mask multiplied in gives :math:`-\infty \cdot 0 =` NaN there);
    4. the gradient with respect to ``log_probs`` equals the reference.

    A solution that calls the library's version (:data:`SCORE_REFERENCES`) is refused.
    """
    refuse_reference(fn, SCORE_REFERENCES, exercise, "with gather and a mask")
    for seed, lengths, pad_id in [(0, [3, 1, 5], 0), (1, [4, 4], 2), (2, [1, 6, 2, 3], 5)]:
        log_probs, targets = _case(seed, lengths, 7, pad_id)
        got = assert_tensor("your score", fn(log_probs, targets, pad_id))
        assert_shape("your score (one value per sequence)", got, (len(lengths),))
        expected = sequence_log_prob(log_probs, targets, pad_id)
        try:
            assert_close(f"log p(y|x) (pad_id={pad_id}, lengths {lengths})", got, expected)
        except AssertionError as err:
            raise AssertionError(str(err) + _diagnose(got, log_probs, targets, pad_id)) from None
        noisy = log_probs.clone()
        noisy[targets == pad_id] -= 3.0
        assert_close("your score after changing log-probs at padding positions",
                     fn(noisy, targets, pad_id), expected)
        blocked = log_probs.clone()
        blocked[targets == pad_id] = -math.inf
        got = fn(blocked, targets, pad_id)
        if torch.is_tensor(got) and bool(torch.isnan(got).any()):
            raise AssertionError(
                f"{exercise}: with log-probabilities of -inf at the padding positions your score "
                "is NaN: -inf * 0 is NaN, so multiplying by the mask does not remove them. "
                "Select with torch.where(mask, token, 0) instead.")
        assert_close("your score with log-probs of -inf at padding positions", got, expected)
        leaf = log_probs.clone().requires_grad_(True)
        out = fn(leaf, targets, pad_id)
        assert_differentiable("your score", out)
        (grad,) = torch.autograd.grad(out.sum(), leaf)
        ref = log_probs.clone().requires_grad_(True)
        (ref_grad,) = torch.autograd.grad(sequence_log_prob(ref, targets, pad_id).sum(), ref)
        assert_close("d score / d log_probs", grad, ref_grad)
    passed(exercise)
