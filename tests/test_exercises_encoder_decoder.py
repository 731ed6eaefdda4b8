"""The chapter-6 checker accepts a correct solution and explains the usual mistakes."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lib.exercises.ch06 import check_sequence_log_prob


def correct(log_probs, targets, pad_id):
    mask = targets != pad_id
    token = log_probs.gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, token, torch.zeros_like(token)).sum(1)


def mask_multiplied(log_probs, targets, pad_id):
    mask = targets != pad_id
    token = log_probs.gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    return (token * mask).sum(1)  # -inf * 0 = nan at padding


def with_padding(log_probs, targets, pad_id):
    return log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).sum(1)


def mean_not_sum(log_probs, targets, pad_id):
    mask = targets != pad_id
    return correct(log_probs, targets, pad_id) / mask.sum(1)


def detached(log_probs, targets, pad_id):
    return correct(log_probs.detach(), targets, pad_id)


def scalar(log_probs, targets, pad_id):
    return correct(log_probs, targets, pad_id).sum()


def test_correct_solution_passes(capsys):
    check_sequence_log_prob(correct)
    assert capsys.readouterr().out == "Exercise 6.1: all checks passed.\n"


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (with_padding, "padding included"),
        (mask_multiplied, "so multiplying by the mask does not remove them"),
        (mean_not_sum, "not a mean"),
        (detached, "not differentiable"),
        (scalar, "shape ()"),
    ],
)
def test_wrong_solutions_fail_with_a_useful_message(fn, message):
    with pytest.raises(AssertionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_sequence_log_prob(fn)


def test_not_a_tensor():
    with pytest.raises(AssertionError, match="torch.Tensor"):
        check_sequence_log_prob(lambda lp, t, p: [0.0])
    assert torch.is_tensor(correct(torch.zeros(1, 1, 2), torch.zeros(1, 1, dtype=torch.long), 0))
