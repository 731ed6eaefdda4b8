"""Tests of seq2seq_lib.losses and its exercise checker seq2seq_lib.exercises.ch07."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from seq2seq_lib.exercises.ch07 import check_masked_cross_entropy
from seq2seq_lib.losses import masked_cross_entropy


def _batch(seed: int = 0, pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 5, 6, generator=g)
    targets = torch.randint(1, 6, (3, 5), generator=g)
    targets[0, 3:] = pad_id
    targets[2, 1:] = pad_id
    return logits, targets


def test_equals_torch_ignore_index() -> None:
    for pad_id in (0, 4):
        logits, targets = _batch(pad_id=pad_id)
        expected = F.cross_entropy(logits.reshape(-1, 6), targets.reshape(-1), ignore_index=pad_id)
        torch.testing.assert_close(masked_cross_entropy(logits, targets, pad_id), expected)


def test_reductions() -> None:
    logits, targets = _batch()
    per_token = masked_cross_entropy(logits, targets, 0, reduction="none")
    assert per_token.shape == (3, 5)
    assert (per_token[targets == 0] == 0).all()
    manual = -torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(per_token[targets != 0], manual[targets != 0])
    total = masked_cross_entropy(logits, targets, 0, reduction="sum")
    torch.testing.assert_close(total, manual[targets != 0].sum())
    torch.testing.assert_close(
        masked_cross_entropy(logits, targets, 0), total / (targets != 0).sum()
    )


def test_padding_is_ignored_even_with_non_finite_logits() -> None:
    logits, targets = _batch()
    noisy = logits.clone()
    noisy[targets == 0] = float("inf")
    torch.testing.assert_close(
        masked_cross_entropy(noisy, targets, 0), masked_cross_entropy(logits, targets, 0)
    )


def test_all_padding_gives_zero_loss_and_zero_gradient() -> None:
    logits = torch.randn(2, 3, 4, requires_grad=True)
    loss = masked_cross_entropy(logits, torch.zeros(2, 3, dtype=torch.long), 0)
    assert loss.item() == 0.0
    loss.backward()
    assert (logits.grad == 0).all()


def test_bad_input() -> None:
    logits, targets = _batch()
    with pytest.raises(ValueError, match=r"\(B, T, V\)"):
        masked_cross_entropy(logits[0], targets, 0)
    with pytest.raises(ValueError, match="disagree"):
        masked_cross_entropy(logits, targets[:, :4], 0)
    with pytest.raises(TypeError, match="integer"):
        masked_cross_entropy(logits, targets.float(), 0)
    with pytest.raises(ValueError, match="reduction"):
        masked_cross_entropy(logits, targets, 0, reduction="max")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the checker


def _correct(logits: torch.Tensor, targets: torch.Tensor, pad_id: int) -> torch.Tensor:
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    mask = targets != pad_id
    return nll[mask].mean()


def test_checker_accepts_correct_solutions(capsys: pytest.CaptureFixture[str]) -> None:
    check_masked_cross_entropy(_correct)
    check_masked_cross_entropy(
        lambda lo, ta, p: F.cross_entropy(lo.transpose(1, 2), ta, ignore_index=p)
    )
    assert capsys.readouterr().out.count("Exercise 7.1: all checks passed.") == 2
    with pytest.raises(AssertionError, match="itself"):  # the reference is the answer key
        check_masked_cross_entropy(masked_cross_entropy)


def _mean_with_padding(logits, targets, pad_id):  # noqa: ANN001, ANN202
    return F.cross_entropy(logits.transpose(1, 2), targets)


def _per_sentence_mean(logits, targets, pad_id):  # noqa: ANN001, ANN202
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    mask = (targets != pad_id).to(nll.dtype)
    return ((nll * mask).sum(1) / mask.sum(1)).mean()


def _sum_only(logits, targets, pad_id):  # noqa: ANN001, ANN202
    return F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=pad_id, reduction="sum")


def _pad_zero_hard_coded(logits, targets, pad_id):  # noqa: ANN001, ANN202
    return F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=0)


def _python_float(logits, targets, pad_id):  # noqa: ANN001, ANN202
    return _correct(logits, targets, pad_id).item()


def _detached(logits, targets, pad_id):  # noqa: ANN001, ANN202
    return torch.tensor(_correct(logits, targets, pad_id).item(), dtype=logits.dtype)


def _in_place(logits, targets, pad_id):  # noqa: ANN001, ANN202
    out = _correct(logits, targets, pad_id)
    targets[targets == pad_id] = -100
    return out


def _shape_1(logits, targets, pad_id):  # noqa: ANN001, ANN202
    return _correct(logits, targets, pad_id).reshape(1)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (_mean_with_padding, "padding included"),
        (_per_sentence_mean, "per-sentence means"),
        (_sum_only, "sum over real tokens"),
        (_pad_zero_hard_coded, "pad_id=4"),
        (_python_float, "should be a torch.Tensor"),
        (_detached, "not differentiable"),
        (_in_place, "in place"),
        (_shape_1, r"shape \(1,\)"),
    ],
)
def test_checker_rejects_wrong_solutions(fn, message: str) -> None:  # noqa: ANN001
    with pytest.raises(AssertionError, match=message):
        check_masked_cross_entropy(fn)
