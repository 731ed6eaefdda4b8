"""Checkers for the beam-search chapter (:mod:`seq2seq_lib.beam`).

A beam step that calls :func:`seq2seq_lib.beam.beam_step`, the reference, is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from seq2seq_lib import beam
from seq2seq_lib.exercises import (
    assert_close,
    assert_shape,
    assert_tensor,
    checker,
    passed,
    refuse_reference,
)

#: What a beam step may not call.
BEAM_REFERENCES = ("seq2seq_lib.beam.beam_step",)

BeamStepFn = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]


def _cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(2024)
    cases = []
    # (name, scores (B, k), log_probs (B, k, V))
    for name, B, k, V, first in [
        ("3 sentences, k=4, |Y|=7", 3, 4, 7, False),
        ("first step: only beam entry 0 is live (scores 0, -inf, -inf)", 2, 3, 5, True),
        ("k=6 larger than |Y|=4", 2, 6, 4, False),
        ("k=1 (greedy)", 4, 1, 9, False),
    ]:
        log_probs = torch.log_softmax(torch.randn(B, k, V, generator=g, dtype=torch.float64), -1)
        if first:
            scores = torch.full((B, k), -math.inf, dtype=torch.float64)
            scores[:, 0] = 0.0
        else:
            scores = -torch.rand(B, k, generator=g, dtype=torch.float64) * 5
        cases.append((name, scores, log_probs))
    return cases


@checker
def check_beam_step(fn: BeamStepFn, exercise: str = "Exercise 9.1") -> None:
    """Check one beam-search step ``fn(scores, log_probs) -> (new_scores, beam_idx, token_idx)``.

    ``scores`` is ``(B, k)`` (the log-probabilities of the current beam entries, ``-inf`` for
    an empty slot), ``log_probs`` is ``(B, k, V)``. The answer must be three ``(B, k)``
    tensors, best first: the new scores, which beam entry each candidate extends and with
    which token. The reference is :func:`seq2seq_lib.beam.beam_step`; a solution that
    calls it is refused.
    """
    refuse_reference(fn, BEAM_REFERENCES, exercise, "with torch operations such as topk")
    for name, scores, log_probs in _cases():
        result = fn(scores.clone(), log_probs.clone())
        if not isinstance(result, tuple | list) or len(result) != 3:
            raise AssertionError(
                "return a tuple (new_scores, beam_idx, token_idx); got "
                f"{type(result).__name__}"
            )
        exp_scores, exp_beam, exp_token = beam.beam_step(scores, log_probs)
        got_scores, got_beam, got_token = result
        B, k = scores.shape
        where = f" [{name}]"
        for what, got in [("new_scores", got_scores), ("beam_idx", got_beam),
                          ("token_idx", got_token)]:
            assert_tensor(what + where, got)
            assert_shape(what + where, got, (B, k))
        if got_beam.dtype.is_floating_point or got_token.dtype.is_floating_point:
            raise AssertionError("beam_idx and token_idx must be integer tensors" + where)
        if (got_scores[:, :-1] < got_scores[:, 1:]).any():
            raise AssertionError("new_scores must be sorted best first (descending)" + where)
        assert_close("new_scores" + where, got_scores, exp_scores, atol=1e-9, rtol=1e-9)
        if not torch.equal(got_beam.long(), exp_beam):
            raise AssertionError(
                f"beam_idx{where} is {got_beam.tolist()}, expected {exp_beam.tolist()} "
                "(the index of the beam entry each candidate extends, 0..k-1)"
            )
        if not torch.equal(got_token.long(), exp_token):
            raise AssertionError(
                f"token_idx{where} is {got_token.tolist()}, expected {exp_token.tolist()} "
                "(the token id appended, 0..V-1)"
            )
    passed(exercise)
