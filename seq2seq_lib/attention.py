r"""Chapter 8: attention scores, the masked softmax, and the attention read-out.

A decoder state :math:`h_t` (the *query*) is compared with every encoder state
:math:`\bar h_s` (the *keys*, which are also the *values* here) by a score function; a softmax
over the source positions turns the scores into alignment weights :math:`a_t(s)`, and the
context vector is the weighted sum of the encoder states:

.. math::

    a_t(s) = \frac{\exp \operatorname{score}(h_t, \bar h_s)}
                  {\sum_{s'} \exp \operatorname{score}(h_t, \bar h_{s'})}, \qquad
    c_t = \sum_s a_t(s)\, \bar h_s .

The score functions of Luong et al. (2015), exactly as the lecture writes them, and
Bahdanau et al.'s (2015) additive score:

.. math::

    \operatorname{score}(h_t, \bar h_s) =
    \begin{cases}
      h_t^\top \bar h_s & \text{dot} \\
      h_t^\top W_a \bar h_s & \text{general} \\
      v_a^\top \tanh(W_a [h_t; \bar h_s]) & \text{concat} \\
      v_a^\top \tanh(W_q h_t + W_k \bar h_s) & \text{additive (Bahdanau)}
    \end{cases}

The dot and general scores grow with the size of the vectors; Vaswani et al. (2017) divide
them by :math:`\sqrt{d_k}`, the keys' size (``"scaled_dot"``, ``"scaled_general"``:
:class:`ScaledScore`), so that large products do not push the softmax into its flat,
nearly one-hot regions, where little gradient passes.

Concat and additive are the same function: split :math:`W_a = [W_q\; W_k]` column-wise
(:func:`concat_as_additive` shows it). They differ in *which* decoder state is the query:
Luong's decoder attends with the new state :math:`h_t`, Bahdanau's with the previous one.

Shapes (batch first): queries ``(B, T, d_q)``, keys ``(B, S, d_k)``, scores ``(B, T, S)``;
a query of shape ``(B, d_q)`` (one decoder step) is also accepted and gives ``(B, S)``.
Source padding is excluded by ``mask`` ``(B, S)``, ``True`` on real tokens.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis that gives exactly 0 to masked (padding) positions.

    Args:
        scores: ``(B, S)`` or ``(B, T, S)``.
        mask: ``(B, S)`` boolean, ``True`` where the source token is real; ``None`` = no padding.

    Returns:
        weights of the shape of ``scores``; over the real positions of each row they sum to 1,
        on padded positions they are exactly 0. A row without any real position raises
        ``ValueError`` (every source has at least its ``<eos>``).
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor, got {mask.dtype}")
    if mask.shape != (scores.shape[0], scores.shape[-1]):
        raise ValueError(f"mask must be (B, S) = {(scores.shape[0], scores.shape[-1])}, "
                         f"got {tuple(mask.shape)}")
    if not mask.any(dim=-1).all():
        raise ValueError("a source sequence has no real token: nothing to attend to")
    m = mask if scores.dim() == 2 else mask.unsqueeze(1)  # (B, 1, S) broadcasts over T
    weights = torch.softmax(scores.masked_fill(~m, float("-inf")), dim=-1)
    return weights.masked_fill(~m, 0.0)  # exact zeros (softmax of -inf is 0 already)


def _as_3d(query: torch.Tensor) -> tuple[torch.Tensor, bool]:
    return (query.unsqueeze(1), True) if query.dim() == 2 else (query, False)


class DotScore(nn.Module):
    r""":math:`\operatorname{score}(h_t, \bar h_s) = h_t^\top \bar h_s` — no parameters;
    needs ``d_q == d_k``."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        q, squeeze = _as_3d(query)
        if q.shape[-1] != keys.shape[-1]:
            raise ValueError(f"dot score needs equal sizes, got query {q.shape[-1]} "
                             f"and keys {keys.shape[-1]}")
        scores = q @ keys.transpose(1, 2)  # (B, T, S)
        return scores.squeeze(1) if squeeze else scores


class GeneralScore(nn.Module):
    r""":math:`\operatorname{score}(h_t, \bar h_s) = h_t^\top W_a \bar h_s` with
    :math:`W_a \in \mathbb{R}^{d_q \times d_k}` (``self.W_a``)."""

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__()
        self.W_a = nn.Parameter(torch.empty(query_size, key_size))
        nn.init.xavier_uniform_(self.W_a)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        q, squeeze = _as_3d(query)
        scores = (q @ self.W_a) @ keys.transpose(1, 2)  # (B, T, d_k) @ (B, d_k, S)
        return scores.squeeze(1) if squeeze else scores


class ConcatScore(nn.Module):
    r""":math:`\operatorname{score}(h_t, \bar h_s) = v_a^\top \tanh(W_a [h_t; \bar h_s])` with
    :math:`W_a \in \mathbb{R}^{d_a \times (d_q + d_k)}` and :math:`v_a \in \mathbb{R}^{d_a}`.

    Computed without materialising every pair :math:`[h_t; \bar h_s]`:
    :math:`W_a [h_t; \bar h_s] = W_a^{(q)} h_t + W_a^{(k)} \bar h_s`.
    """

    def __init__(self, query_size: int, key_size: int, attention_size: int) -> None:
        super().__init__()
        self.query_size = query_size
        self.W_a = nn.Linear(query_size + key_size, attention_size, bias=False)
        self.v_a = nn.Linear(attention_size, 1, bias=False)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        q, squeeze = _as_3d(query)
        W_q = self.W_a.weight[:, : self.query_size]  # (d_a, d_q)
        W_k = self.W_a.weight[:, self.query_size :]  # (d_a, d_k)
        hidden = torch.tanh((q @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1))  # (B,T,S,d_a)
        scores = self.v_a(hidden).squeeze(-1)  # (B, T, S)
        return scores.squeeze(1) if squeeze else scores


class AdditiveScore(nn.Module):
    r"""Bahdanau et al.'s score :math:`v_a^\top \tanh(W_q h + W_k \bar h_s)`, with the two
    projections as separate layers (``W_q``, ``W_k``) so the keys' projection can be computed
    once per sentence and reused at every decoder step (:meth:`project_keys`)."""

    def __init__(self, query_size: int, key_size: int, attention_size: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_size, attention_size, bias=False)
        self.W_k = nn.Linear(key_size, attention_size, bias=False)
        self.v_a = nn.Linear(attention_size, 1, bias=False)

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """``(B, S, d_k) -> (B, S, d_a)``: the part of the score that depends on the source only."""
        return self.W_k(keys)

    def forward(self, query: torch.Tensor, keys: torch.Tensor,
                projected_keys: torch.Tensor | None = None) -> torch.Tensor:
        q, squeeze = _as_3d(query)
        k = self.project_keys(keys) if projected_keys is None else projected_keys
        hidden = torch.tanh(self.W_q(q).unsqueeze(2) + k.unsqueeze(1))  # (B, T, S, d_a)
        scores = self.v_a(hidden).squeeze(-1)
        return scores.squeeze(1) if squeeze else scores


class ScaledScore(nn.Module):
    r"""Another score divided by :math:`\sqrt{d_k}`:
    :math:`\operatorname{score}(h_t, \bar h_s) / \sqrt{d_k}` (Vaswani et al.'s scaling, here for
    the dot and general scores). ``self.score`` is the unscaled score, ``self.key_size`` is
    :math:`d_k`."""

    def __init__(self, score: nn.Module, key_size: int) -> None:
        super().__init__()
        self.score = score
        self.key_size = key_size

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return self.score(query, keys) / math.sqrt(self.key_size)


SCORES = ("dot", "general", "concat", "additive", "scaled_dot", "scaled_general")


def make_score(kind: str, query_size: int, key_size: int, attention_size: int | None = None) -> nn.Module:
    """Build a score function by name (one of :data:`SCORES`): ``"dot"``, ``"general"``,
    ``"concat"``, ``"additive"``, or ``"scaled_dot"`` / ``"scaled_general"`` (the dot or
    general score divided by :math:`\\sqrt{d_k}`, :class:`ScaledScore`)."""
    if kind in ("scaled_dot", "scaled_general"):
        return ScaledScore(make_score(kind.removeprefix("scaled_"), query_size, key_size),
                           key_size)
    if kind == "dot":
        if query_size != key_size:
            raise ValueError(f"dot score needs query_size == key_size, got {query_size}, {key_size}")
        return DotScore()
    if kind == "general":
        return GeneralScore(query_size, key_size)
    if kind in ("concat", "additive"):
        size = attention_size or query_size
        cls = ConcatScore if kind == "concat" else AdditiveScore
        return cls(query_size, key_size, size)
    raise ValueError(f"unknown score {kind!r}; choose one of {SCORES}")


class Attention(nn.Module):
    """Score, masked softmax and weighted sum in one module.

    ``forward(query, keys, mask)`` returns ``(context, weights)`` with context
    ``(B, T, d_k)`` (or ``(B, d_k)`` for a single query) and weights ``(B, T, S)``
    (or ``(B, S)``); the keys double as the values.
    """

    def __init__(self, score: nn.Module) -> None:
        super().__init__()
        self.score = score

    def forward(self, query: torch.Tensor, keys: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        weights = masked_softmax(self.score(query, keys), mask)
        if weights.dim() == 2:
            return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights
        return torch.bmm(weights, keys), weights


def concat_as_additive(concat: ConcatScore) -> AdditiveScore:
    """An :class:`AdditiveScore` computing exactly the same scores as ``concat``.

    Splitting :math:`W_a` column-wise into the query and key blocks turns Luong's concat score
    into Bahdanau's additive one: :math:`W_a[h; \\bar h] = W_q h + W_k \\bar h`.
    """
    d_a, total = concat.W_a.weight.shape
    d_q = concat.query_size
    add = AdditiveScore(d_q, total - d_q, d_a)
    with torch.no_grad():
        add.W_q.weight.copy_(concat.W_a.weight[:, :d_q])
        add.W_k.weight.copy_(concat.W_a.weight[:, d_q:])
        add.v_a.weight.copy_(concat.v_a.weight)
    return add
