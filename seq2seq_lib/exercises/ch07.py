"""Checker for the chapter-7 exercise on padded batches: the masked cross-entropy.

The reader writes ``masked_cross_entropy(logits, targets, pad_id)`` — the mean token-level
cross-entropy over the real (non-padding) tokens of a ``(B, T, V)`` batch — and
:func:`check_masked_cross_entropy` compares it with :func:`seq2seq_lib.losses.masked_cross_entropy`
and with ``F.cross_entropy(..., ignore_index=pad_id)``, and checks that padding changes nothing.

A solution that calls the library's loss (or the library's masked sum of chapter 6) is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`); ``F.cross_entropy`` itself, with
``reduction="none"`` and a mask,
is the expected building block.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from seq2seq_lib.exercises import (
    assert_close,
    assert_differentiable,
    assert_shape,
    assert_tensor,
    checker,
    passed,
    refuse_reference,
)
from seq2seq_lib.losses import masked_cross_entropy

#: What the loss may not call — the library's version, and its masked sum of chapter 6.
LOSS_REFERENCES = (
    "seq2seq_lib.losses.masked_cross_entropy",
    ("seq2seq_lib.losses.sequence_log_prob", "the library's masked sum of chapter 6"),
)

LossFn = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]


def _batch(
    seed: int, lengths: list[int], vocab: int, pad_id: int, extra: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits ``(B, T, V)`` and targets ``(B, T)`` with sentence ``b`` of ``lengths[b]`` tokens."""
    g = torch.Generator().manual_seed(seed)
    steps = max(lengths) + extra
    logits = torch.randn(len(lengths), steps, vocab, generator=g, dtype=torch.float64) * 2
    targets = torch.randint(0, vocab - 1, (len(lengths), steps), generator=g)
    targets[targets >= pad_id] += 1  # real tokens never equal pad_id, but do use id 0
    for b, n in enumerate(lengths):
        targets[b, n:] = pad_id
    return logits, targets


def _diagnose(got: float, logits: torch.Tensor, targets: torch.Tensor, pad_id: int) -> str:
    """Name the usual mistake when ``got`` matches a wrong formula."""
    per_token = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    mask = (targets != pad_id).to(per_token.dtype)
    wrong = {
        "the mean over all positions, padding included: average over real tokens only": (
            per_token.mean()
        ),
        "the sum over real tokens: divide by the number of real tokens": (per_token * mask).sum(),
        "the mean of per-sentence means: average over all real tokens of the batch at once": (
            ((per_token * mask).sum(1) / mask.sum(1)).mean()
        ),
        "the real-token sum divided by the batch size: divide by the number of real tokens": (
            (per_token * mask).sum() / targets.shape[0]
        ),
    }
    for hint, value in wrong.items():
        if abs(got - float(value)) <= 1e-6 * max(1.0, abs(float(value))):
            return f" It equals {hint}."
    return ""


def _call(fn: LossFn, logits: torch.Tensor, targets: torch.Tensor, pad_id: int) -> torch.Tensor:
    before = (logits.detach().clone(), targets.clone())
    out = fn(logits, targets, pad_id)
    assert_tensor("your loss", out)
    if not (torch.equal(before[0], logits.detach()) and torch.equal(before[1], targets)):
        raise AssertionError("your function changed its inputs in place; compute on copies")
    assert_shape("your loss", out, ())
    return out


@checker
def check_masked_cross_entropy(fn: LossFn, exercise: str = "Exercise 7.1") -> None:
    """Check ``fn(logits (B,T,V), targets (B,T), pad_id) -> scalar`` (the masked mean CE).

    Checks, on fresh seeded batches of sentences of different lengths:

    1. the value equals the reference and ``F.cross_entropy(..., ignore_index=pad_id)``;
    2. it works for a padding id other than 0 (and id 0 used as a real word);
    3. changing the logits at padding positions changes nothing;
    4. appending more padding columns changes nothing;
    5. the gradient equals the reference gradient and is 0 at padding positions.

    A solution that calls the library's loss (:data:`LOSS_REFERENCES`) is refused.
    """
    refuse_reference(fn, LOSS_REFERENCES, exercise,
                     'with torch operations (F.cross_entropy with reduction="none" is fine)')
    vocab = 7
    cases = [(0, [5, 2, 4, 1], 0), (1, [3, 6, 6], 4), (2, [1, 1, 7, 2, 5], 6)]
    for seed, lengths, pad_id in cases:
        logits, targets = _batch(seed, lengths, vocab, pad_id)
        got = _call(fn, logits, targets, pad_id)
        expected = masked_cross_entropy(logits, targets, pad_id)
        torch_ce = F.cross_entropy(
            logits.reshape(-1, vocab), targets.reshape(-1), ignore_index=pad_id
        )
        if not torch.isclose(expected, torch_ce):  # the reference itself is wrong
            raise RuntimeError("reference masked_cross_entropy disagrees with F.cross_entropy")
        try:
            assert_close(f"loss (pad_id={pad_id}, lengths {lengths})", got, expected)
        except AssertionError as err:
            hint = _diagnose(float(got), logits, targets, pad_id)
            raise AssertionError(str(err) + hint) from None

        # 3. garbage logits at padding positions must not matter
        noisy = logits.clone()
        pad = targets == pad_id
        noisy[pad] = noisy[pad] * 10 + 5
        changed = _call(fn, noisy, targets, pad_id)
        if not torch.isclose(changed.double(), got.double(), rtol=1e-6, atol=1e-9):
            raise AssertionError(
                f"changing the logits at padding positions changed your loss from "
                f"{float(got):.6g} to {float(changed):.6g}: padding must be ignored"
            )

        # 4. more padding columns must not matter
        wider_logits, wider_targets = _batch(seed + 100, lengths, vocab, pad_id, extra=3)
        wider_logits[:, : logits.shape[1]] = logits
        wider_targets[:, : targets.shape[1]] = targets
        wider = _call(fn, wider_logits, wider_targets, pad_id)
        if not torch.isclose(wider.double(), got.double(), rtol=1e-6, atol=1e-9):
            raise AssertionError(
                f"adding 3 columns of padding changed your loss from {float(got):.6g} to "
                f"{float(wider):.6g}: the loss must be a mean over real tokens only"
            )

        # 5. gradients
        leaf = logits.clone().requires_grad_(True)
        out = fn(leaf, targets, pad_id)
        assert_differentiable("your loss", out)
        (grad,) = torch.autograd.grad(out, leaf)
        ref_leaf = logits.clone().requires_grad_(True)
        (ref_grad,) = torch.autograd.grad(masked_cross_entropy(ref_leaf, targets, pad_id), ref_leaf)
        if grad[pad].abs().max() > 0:
            raise AssertionError("your loss has a non-zero gradient at padding positions")
        assert_close("d loss / d logits", grad, ref_grad)
    passed(exercise)
