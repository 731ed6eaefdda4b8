r"""Chapter 9: exhaustive search, the exact optimum that greedy and beam search approximate.

:func:`exhaustive_search` scores *every* output sequence up to ``max_len`` tokens through the
step interface of :mod:`seq2seq_lib.decoding` and ranks them by the length-normalised score of
:mod:`seq2seq_lib.beam` (:func:`~seq2seq_lib.beam.length_normalized_score`), so it returns
what an infinitely wide beam would. Its cost grows like :math:`|\mathcal Y|^{T'}`: it is for
the tiny vocabularies of the worked examples and random tables of chapter 9, where it tells
how often :func:`~seq2seq_lib.beam.beam_search` finds the optimum.
"""

from __future__ import annotations

import heapq
import math

import torch

from seq2seq_lib.decoding import (
    Hypothesis,
    ReorderFn,
    SearchResult,
    SearchStats,
    State,
    StepFn,
    call_step,
    check_int,
    check_search_args,
    index_state,
    search_device,
)

#: One scored candidate: (score, log P, tokens, finished); it becomes a Hypothesis only if
#: it is returned (an exhaustive search scores thousands of them).
_Candidate = tuple[float, float, list[int], bool]


@torch.no_grad()
def exhaustive_search(
    step: StepFn,
    init_state: State,
    batch_size: int,
    *,
    bos: int,
    eos: int,
    max_len: int,
    alpha: float = 0.0,
    n_best: int | None = 1,
    reorder_state: ReorderFn = index_state,
    max_rows: int = 1_000_000,
    device: torch.device | str | None = None,
) -> SearchResult:
    r"""Score *every* output sequence up to ``max_len`` tokens and rank them.

    The candidates are all sequences :math:`y_1, \ldots, y_L` with :math:`L \le` ``max_len``
    that end with ``<eos>`` and contain no earlier ``<eos>``, plus the
    :math:`(|\mathcal Y|-1)^{\text{max\_len}}` sequences cut at ``max_len`` without one —
    the same candidates beam search can return. They are ranked by
    :math:`\log P / L^{\alpha}`; ``n_best=None`` returns all of them (probability-0
    sequences are dropped). The cost grows like :math:`|\mathcal Y|^{T'}`: a
    :class:`ValueError` is raised when a step would feed more than ``max_rows`` prefixes.
    """
    check_search_args(batch_size, bos, eos, max_len)
    if n_best is not None:
        check_int("n_best", n_best, 1)
    dev = search_device(init_state, device)
    prefix = torch.full((batch_size, 1), bos, dtype=torch.long, device=dev)
    owner = torch.arange(batch_size, device=dev)  # which sentence each row belongs to
    state, stats = init_state, SearchStats()
    log_p: torch.Tensor | None = None
    found: list[list[_Candidate]] = [[] for _ in range(batch_size)]
    for t in range(max_len):
        log_probs, state = call_step(step, prefix, state, eos)
        n, V = log_probs.shape
        stats.add(n, V)
        if log_p is None:
            log_p = torch.zeros(n, dtype=log_probs.dtype, device=dev)
            live_need = batch_size * (V - 1) ** (max_len - 1)
            if live_need > max_rows:
                raise ValueError(
                    f"exhaustive search would feed {live_need} prefixes in its last step "
                    f"(|Y|={V}, max_len={max_len}); the limit is max_rows={max_rows}"
                )
        candidates = log_p.unsqueeze(1) + log_probs  # (n, V)
        others = torch.tensor([y for y in range(V) if y != eos], dtype=torch.long, device=dev)
        ended = [(eos, candidates[:, eos])]  # sequences ending with <eos> now
        if t == max_len - 1:  # ... and, at max_len, the ones cut without it
            ended += [(int(y), candidates[:, y]) for y in others.tolist()]
        pre, who = prefix[:, 1:].tolist(), owner.tolist()
        scale = (t + 1) ** alpha  # L^alpha: every candidate of this step has L = t + 1 tokens
        for y, lp in ended:  # (score, log P, tokens, finished) of each candidate
            for i, value in enumerate(lp.tolist()):
                found[who[i]].append((value / scale, value, pre[i] + [y], y == eos))
        if t == max_len - 1 or others.numel() == 0:
            break
        rows = torch.arange(n, device=dev).repeat_interleave(others.numel())
        next_tok = others.repeat(n)
        prefix = torch.cat([prefix.index_select(0, rows), next_tok.unsqueeze(1)], dim=1)
        log_p = candidates[rows, next_tok]
        owner = owner.index_select(0, rows)
        state = reorder_state(state, rows)
    return SearchResult([_rank_candidates(c, n_best) for c in found], stats)


def _rank_candidates(candidates: list[_Candidate], n_best: int | None) -> list[Hypothesis]:
    """The ``n_best`` best candidates (all for ``None``) by score, ties in their order, as
    beam search ranks its final entries; probability-0 candidates are dropped."""
    kept = [c for c in candidates if math.isfinite(c[1])]
    # heapq.nsmallest(n, ...) == sorted(...)[:n]: the same ranking, ties included
    best = sorted(kept, key=_minus_score) if n_best is None else heapq.nsmallest(
        n_best, kept, key=_minus_score)
    return [Hypothesis(tokens, lp, score, finished) for score, lp, tokens, finished in best]


def _minus_score(candidate: _Candidate) -> float:
    return -candidate[0]
