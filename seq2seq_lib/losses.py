"""The sequence loss: token-level cross-entropy that ignores padding, and log p(y | x).

A batch of target sentences of different lengths is padded to a common length ``T``. The
decoder still produces a distribution at the padded positions, but those are not words of
the sentence, so they must not count. With logits :math:`o_{b,t} \\in \\mathbb{R}^{V}`,
targets :math:`y_{b,t}` and the mask :math:`m_{b,t} = [y_{b,t} \\ne \\text{pad}]`,

.. math::

    \\ell_{b,t} = -\\log \\operatorname{softmax}(o_{b,t})_{y_{b,t}}, \\qquad
    L = \\frac{\\sum_{b,t} m_{b,t}\\, \\ell_{b,t}}{\\sum_{b,t} m_{b,t}}

— the mean over *real* tokens of the whole batch (not the mean of per-sentence means, which
would weight a word of a short sentence more than a word of a long one). It equals
``F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=pad_id)``, and
:math:`\\exp(L)` is the per-token perplexity.

:func:`sequence_log_prob` sums the other way, per sentence: :math:`\\log p(y \\mid x) =
\\sum_t m_t \\log p(y_t \\mid y_{<t}, x)`, the score that ranks candidate translations.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F


def masked_cross_entropy(
    logits: torch.Tensor,
    targets: torch.Tensor,
    pad_id: int,
    *,
    reduction: Literal["mean", "sum", "none"] = "mean",
) -> torch.Tensor:
    """Cross-entropy over the non-padding tokens of a batch of sequences.

    Args:
        logits: ``(B, T, V)`` unnormalised scores :math:`o_{b,t}`.
        targets: ``(B, T)`` integer token ids :math:`y_{b,t}`; positions equal to ``pad_id``
            are ignored.
        pad_id: the padding id.
        reduction: ``"mean"`` — :math:`L` above, a scalar (0 for a batch that is all padding,
            instead of PyTorch's NaN); ``"sum"`` — :math:`\\sum m_{b,t}\\ell_{b,t}`, a scalar
            (sum it over an epoch and divide by the token count for an exact epoch mean);
            ``"none"`` — ``(B, T)`` with :math:`m_{b,t}\\ell_{b,t}` (0 at padding).

    Raises:
        ValueError: wrong ranks or mismatched ``(B, T)``, or an unknown ``reduction``.
        TypeError: ``targets`` is not an integer tensor.
    """
    if logits.dim() != 3 or targets.dim() != 2:
        raise ValueError(
            f"expected logits (B, T, V) and targets (B, T), got {tuple(logits.shape)} and "
            f"{tuple(targets.shape)}"
        )
    if logits.shape[:2] != targets.shape:
        raise ValueError(
            f"logits {tuple(logits.shape)} and targets {tuple(targets.shape)} disagree on (B, T)"
        )
    if targets.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"targets must hold integer ids, got dtype {targets.dtype}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    mask = targets != pad_id
    # pad positions get class 0 so gather is always in range; their loss is masked to 0
    safe = targets.masked_fill(~mask, 0).long()
    token_losses = F.cross_entropy(logits.transpose(1, 2), safe, reduction="none")
    losses = torch.where(mask, token_losses, torch.zeros_like(token_losses))
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return total
    return total / mask.sum().clamp(min=1)


def sequence_log_prob(log_probs: torch.Tensor, targets: torch.Tensor, pad_id: int) -> torch.Tensor:
    """:math:`\\log p(y \\mid x) = \\sum_t m_t \\log p(y_t \\mid y_{<t}, x)` per sequence.

    Args:
        log_probs: ``(N, T, V)`` log-probabilities (log-softmax of the decoder's logits).
        targets: ``(N, T)`` token ids; positions equal to ``pad_id`` (:math:`m_t = 0`) add 0.

    Returns:
        ``(N,)``: the log-probability of each whole target sequence.
    """
    if log_probs.dim() != 3 or targets.shape != log_probs.shape[:2]:
        raise ValueError(
            f"expected log_probs (N, T, V) and targets (N, T), got {tuple(log_probs.shape)} "
            f"and {tuple(targets.shape)}"
        )
    mask = targets != pad_id
    token = log_probs.gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, token, torch.zeros_like(token)).sum(1)
