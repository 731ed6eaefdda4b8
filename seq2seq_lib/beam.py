r"""Chapter 9: beam search (two rules for finished hypotheses).

Greedy search (:func:`seq2seq_lib.decoding.greedy_search`) keeps one prefix after each step.
The searches here keep more, through the same step interface (:mod:`seq2seq_lib.decoding`):

* :func:`beam_search` keeps the :math:`k` best (the *beam*), chosen among the
  :math:`k|\mathcal Y|` one-token extensions; cost :math:`\mathcal O(k|\mathcal Y|T')`,
  and :math:`k = 1` is greedy search. A finished hypothesis keeps its slot in the beam;
* :func:`completed_beam_search` is the variant of the lecture notes and of CS224n: a
  finished hypothesis leaves the beam for a list of completed ones, and the search stops
  when :math:`k` are complete;
* :func:`seq2seq_lib.exhaustive.exhaustive_search` keeps all of them
  (:math:`\mathcal O(|\mathcal Y|^{T'})`, for tiny vocabularies only).

**Scores and lengths.** The searches rank finished candidates by the length-normalised score
of the d2l book (eq. 9.8.4)

.. math::

    \text{score}(y_1, \ldots, y_L) = \frac{1}{L^{\alpha}} \log P(y_1, \ldots, y_L \mid \mathbf c).

Here :math:`L` is the number of tokens the decoder *generated*, which is the number of terms
in the sum: ``<bos>`` does not count, and ``<eos>`` **counts** when the hypothesis ended with
it (its probability is a factor of :math:`P`). A hypothesis cut off at ``max_len`` without
``<eos>`` has :math:`L` = ``max_len``. :math:`\alpha = 0` ranks by :math:`\log P` alone;
:math:`\alpha = 1` by the mean log-probability per token (the lecture notes'
:math:`\frac1t\sum`);
:math:`\alpha = 0.75` is the book's suggestion.

**Worked examples** to run the searches on are hand-written probability tables
(:mod:`seq2seq_lib.search_examples`); :func:`beam_candidates` lists what a beam held at each
step. A real model runs a beam search through
:meth:`~seq2seq_lib.encoder_decoder.EncoderDecoder.generate` (or
:func:`seq2seq_lib.evaluation.translate` and :func:`~seq2seq_lib.evaluation.bleu`) with the
options bound: ``search=functools.partial(beam_search, beam_size=5, alpha=1.0)``;
:func:`beam_bleu` scores one beam size for several :math:`\alpha` from a single search.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

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
    cut_at_eos,
    index_state,
    search_device,
)
from seq2seq_lib.evaluation import (
    BleuResult,
    corpus_bleu,
    group_references,
    search_sources,
    writes_lower_case,
)
from seq2seq_lib.vocab import EOS_ID, TokenPair, Vocab


def length_normalized_score(log_prob: float, length: int, alpha: float) -> float:
    r"""The ranking score :math:`\frac{1}{L^{\alpha}} \log P` (``length`` is :math:`L`)."""
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    return log_prob / length**alpha

@dataclass
class BeamStepRecord:
    """The beam after one step (kept when ``keep_history=True``).

    ``tokens`` ``(B, k, t)``: the generated tokens of each beam entry (``<bos>`` excluded);
    ``log_probs`` ``(B, k)``: their :math:`\\log P` (``-inf`` for an empty slot);
    ``finished`` ``(B, k)``: whether the entry ends with ``<eos>``.
    """

    tokens: torch.Tensor
    log_probs: torch.Tensor
    finished: torch.Tensor

def _hypothesis(tokens: list[int], log_prob: float, eos: int, alpha: float) -> Hypothesis:
    """Cut ``tokens`` after the first ``<eos>`` and score it."""
    tokens, finished = cut_at_eos(tokens, eos)
    score = length_normalized_score(log_prob, len(tokens), alpha)
    return Hypothesis(tokens, log_prob, score, finished)


def _rank(hyps: list[Hypothesis], n_best: int | None) -> list[Hypothesis]:
    """Best first by score; candidates with probability 0 are dropped."""
    kept = sorted((h for h in hyps if math.isfinite(h.log_prob)), key=lambda h: -h.score)
    return kept if n_best is None else kept[:n_best]

# --------------------------------------------------------------------------- beam


def beam_step(
    scores: torch.Tensor, log_probs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""One beam-search step for ``B`` sentences with beams of size ``k``.

    Every beam entry :math:`j` with score :math:`s_j = \log P(y_1, \ldots, y_{t'-1})` is
    extended by every token :math:`y`, giving :math:`k|\mathcal Y|` candidates with scores
    :math:`s_j + \log P(y \mid y_1, \ldots, y_{t'-1}, \mathbf c)`; the :math:`k` best
    candidates of each sentence form the new beam.

    Args:
        scores: ``(B, k)`` current beam scores (``-inf`` marks an empty slot).
        log_probs: ``(B, k, V)`` next-token log-probabilities of each beam entry.

    Returns:
        ``(new_scores, beam_idx, token_idx)``, each ``(B, k)``, sorted by ``new_scores``
        descending: candidate ``i`` of sentence ``b`` extends beam entry ``beam_idx[b, i]``
        with token ``token_idx[b, i]``. ``k > V`` works: there are ``k * V >= k`` candidates.
    """
    if scores.dim() != 2 or log_probs.dim() != 3 or log_probs.shape[:2] != scores.shape:
        raise ValueError(
            f"need scores (B, k) and log_probs (B, k, V), got {tuple(scores.shape)} and "
            f"{tuple(log_probs.shape)}"
        )
    B, k, V = log_probs.shape
    candidates = (scores.unsqueeze(-1) + log_probs).reshape(B, k * V)
    new_scores, flat = candidates.topk(k, dim=1)
    return new_scores, flat // V, flat % V


def _start_beams(
    init_state: State, batch_size: int, bos: int, eos: int, beam_size: int, max_len: int,
    n_best: int, reorder_state: ReorderFn, device: torch.device | str | None,
) -> tuple[torch.device, torch.Tensor, State, torch.Tensor]:
    """Check a beam search's arguments; return its device, each sentence's first row
    ``(B, 1)``, the state repeated ``k`` times per sentence and the ``<bos>`` prefixes
    ``(B*k, 1)``."""
    check_search_args(batch_size, bos, eos, max_len)
    check_int("beam_size", beam_size, 1)
    check_int("n_best", n_best, 1)
    if n_best > beam_size:
        raise ValueError(f"n_best={n_best} cannot exceed beam_size={beam_size}")
    B, k = batch_size, beam_size
    dev = search_device(init_state, device)
    offsets = torch.arange(B, device=dev).unsqueeze(1) * k  # (B, 1): first row of sentence b
    state = reorder_state(init_state, torch.arange(B, device=dev).repeat_interleave(k))
    prefix = torch.full((B * k, 1), bos, dtype=torch.long, device=dev)
    return dev, offsets, state, prefix


@torch.no_grad()
def beam_search(
    step: StepFn,
    init_state: State,
    batch_size: int,
    *,
    bos: int,
    eos: int,
    beam_size: int,
    max_len: int,
    alpha: float = 0.0,
    n_best: int = 1,
    reorder_state: ReorderFn = index_state,
    keep_history: bool = False,
    device: torch.device | str | None = None,
) -> SearchResult:
    r"""Beam search for ``B`` sentences at once, all beams in one ``(B*k, ...)`` batch.

    Row ``b*k + j`` of the prefix and of the state is beam entry ``j`` of sentence ``b``.
    At the start only entry 0 (``<bos>``) is live; the others have score ``-inf``, so step 1
    picks the ``k`` best first tokens. Each step calls ``step`` once on all ``B*k`` rows and
    keeps the ``k`` best of the ``k|Y|`` candidates per sentence (:func:`beam_step`), ranked
    by :math:`\log P` (``alpha`` is used only for the final ranking, as in the book).

    Implementation note: each entry's ``k`` best tokens are shortlisted first (``topk`` on
    ``(B, k, |Y|)``), then :func:`beam_step` picks among the :math:`k^2` shortlisted
    candidates — the same beam as ranking all :math:`k|\mathcal Y|` candidates, since a
    candidate outside its entry's top ``k`` has ``k`` better candidates from that entry alone.

    A hypothesis that emits ``<eos>`` is *finished*: it keeps its beam slot and its score but
    is not extended (its only candidate is itself, padded with ``<eos>`` at log-probability
    0). The search stops after ``max_len`` steps, or earlier when every slot of every
    sentence holds a finished hypothesis. The final ``k`` entries of each sentence (finished,
    or cut at ``max_len``) are ranked by :math:`\log P / L^{\alpha}` (module docstring).

    Args:
        step, init_state, batch_size, bos, eos, max_len: as in
            :func:`~seq2seq_lib.decoding.greedy_search`.
        beam_size: :math:`k \ge 1` (it may exceed :math:`|\mathcal Y|`).
        alpha: the length-normalisation exponent :math:`\alpha`.
        n_best: how many hypotheses to return per sentence, ``1 <= n_best <= beam_size``
            (fewer when fewer than ``n_best`` have a non-zero probability).
        reorder_state: ``(state, index) -> state`` selecting rows; the default
            :func:`~seq2seq_lib.decoding.index_state` indexes dim 0.
        keep_history: record the beam after every step in ``result.history``.
        device: where the prefix tensor lives (default: the device of ``init_state``).
    """
    B, k = batch_size, beam_size
    dev, offsets, state, prefix = _start_beams(init_state, batch_size, bos, eos, beam_size,
                                               max_len, n_best, reorder_state, device)
    finished = torch.zeros(B, k, dtype=torch.bool, device=dev)
    scores: torch.Tensor | None = None
    stay: torch.Tensor | None = None
    stats, history = SearchStats(), ([] if keep_history else None)
    for _ in range(max_len):
        log_probs, state = call_step(step, prefix, state, eos)
        V = log_probs.shape[1]
        stats.add(B * k, V)
        log_probs = log_probs.view(B, k, V)
        kk = min(k, V)
        if scores is None:  # first step: only entry 0 of each beam is live
            scores = torch.full((B, k), -math.inf, dtype=log_probs.dtype, device=dev)
            scores[:, 0] = 0.0
            stay = torch.full((kk,), -math.inf, dtype=log_probs.dtype, device=dev)
            stay[0] = 0.0
        # The k best of the k|Y| candidates are among the k best extensions of each entry,
        # so shortlist those first: same result as beam_step on all k|Y|, less memory traffic.
        short_lp, short_tok = log_probs.topk(kk, dim=-1)  # (B, k, kk)
        if bool(finished.any()):  # a finished entry's only candidate: itself + <eos>, cost 0
            done = finished.unsqueeze(-1)
            short_lp = torch.where(done, stay, short_lp)
            short_tok = torch.where(done, torch.full_like(short_tok, eos), short_tok)
        scores, beam_idx, pos = beam_step(scores, short_lp)
        token_idx = short_tok.view(B, k * kk).gather(1, beam_idx * kk + pos)
        rows = (offsets + beam_idx).view(-1)
        prefix = torch.cat([prefix.index_select(0, rows), token_idx.view(-1, 1)], dim=1)
        state = reorder_state(state, rows)
        finished = finished.gather(1, beam_idx) | (token_idx == eos)
        if history is not None:
            tokens_so_far = prefix[:, 1:].view(B, k, -1).clone()
            history.append(BeamStepRecord(tokens_so_far, scores.clone(), finished.clone()))
        if bool((finished | torch.isinf(scores)).all()):
            break
    assert scores is not None
    tokens, log_p = prefix[:, 1:].tolist(), scores.view(-1).tolist()
    hyps = []
    for b in range(B):
        rows = range(b * k, (b + 1) * k)
        hyps.append(_rank([_hypothesis(tokens[r], log_p[r], eos, alpha) for r in rows], n_best))
    return SearchResult(hyps, stats, history)


@torch.no_grad()
def completed_beam_search(
    step: StepFn,
    init_state: State,
    batch_size: int,
    *,
    bos: int,
    eos: int,
    beam_size: int,
    max_len: int,
    alpha: float = 0.0,
    n_best: int = 1,
    reorder_state: ReorderFn = index_state,
    device: torch.device | str | None = None,
) -> SearchResult:
    r"""Beam search with a list of *completed* hypotheses (the lecture notes' and CS224n's).

    The rule: the beam holds only unfinished prefixes. At each step, a sentence with
    :math:`c` completed hypotheses keeps the :math:`k - c` best (by :math:`\log P`) of the
    one-token extensions of its beam entries. A kept candidate that ends with ``<eos>``
    leaves the beam for the completed list, so the beam shrinks by one; a completed
    hypothesis is never dropped again. The search stops when :math:`k` hypotheses are
    complete, or after ``max_len`` steps, when the prefixes still in the beam join the list
    cut without ``<eos>``. The list is ranked by :math:`\log P / L^{\alpha}`. (The notes
    stop at :math:`n` complete hypotheses and leave :math:`n` open; here :math:`n = k`.)

    :func:`beam_search` differs in one point: there a finished hypothesis keeps a slot and
    competes with the extensions at every later step, so :math:`k` better unfinished
    prefixes can push it out, and the beam then explores :math:`k` prefixes again. Neither
    rule is always the better search:
    :func:`~seq2seq_lib.search_examples.rule_examples` gives a table on which each one
    finds the most probable sentence and the other misses it.

    The arguments are :func:`beam_search`'s. Each step feeds all ``B*k`` rows to ``step``
    (a slot that is empty, or whose hypothesis has completed, has score ``-inf``).
    """
    B, k = batch_size, beam_size
    dev, offsets, state, prefix = _start_beams(init_state, batch_size, bos, eos, beam_size,
                                               max_len, n_best, reorder_state, device)
    rank = torch.arange(k, device=dev).unsqueeze(0)  # (1, k): the candidates' ranks
    completed: list[list[Hypothesis]] = [[] for _ in range(B)]
    scores: torch.Tensor | None = None
    stats = SearchStats()
    for _ in range(max_len):
        log_probs, state = call_step(step, prefix, state, eos)
        V = log_probs.shape[1]
        stats.add(B * k, V)
        if scores is None:  # first step: only entry 0 of each beam is live
            scores = torch.full((B, k), -math.inf, dtype=log_probs.dtype, device=dev)
            scores[:, 0] = 0.0
        scores, beam_idx, token_idx = beam_step(scores, log_probs.view(B, k, V))
        room = torch.tensor([k - len(c) for c in completed], device=dev).unsqueeze(1)
        scores = scores.masked_fill(rank >= room, -math.inf)  # keep the k - c best
        rows = (offsets + beam_idx).view(-1)
        prefix = torch.cat([prefix.index_select(0, rows), token_idx.view(-1, 1)], dim=1)
        state = reorder_state(state, rows)
        ended = (token_idx == eos) & torch.isfinite(scores)
        for b, j in ended.nonzero().tolist():  # they leave the beam for the completed list
            completed[b].append(_hypothesis(prefix[b * k + j, 1:].tolist(),
                                            scores[b, j].item(), eos, alpha))
        scores = scores.masked_fill(ended, -math.inf)
        if bool(torch.isinf(scores).all()):  # k complete (or nothing left) everywhere
            break
    assert scores is not None
    for b in range(B):  # at max_len: what is still in the beam, cut without <eos>
        for j in torch.isfinite(scores[b]).nonzero().flatten().tolist():
            completed[b].append(_hypothesis(prefix[b * k + j, 1:].tolist(),
                                            scores[b, j].item(), eos, alpha))
    return SearchResult([_rank(hyps, n_best) for hyps in completed], stats)


# --------------------------------------------------------------------------- what a beam held


def beam_candidates(
    history: Sequence[BeamStepRecord], sentence: int = 0
) -> list[tuple[list[int], float]]:
    """Every (tokens, :math:`\\log P`) the beam held after each step, in order (d2l's candidates).

    For :func:`~seq2seq_lib.search_examples.seed_beam_example` with beam size 2 this is the
    book's list of six candidates.
    Empty slots (``-inf``) are skipped.
    """
    out = []
    for record in history:
        for tokens, lp in zip(
            record.tokens[sentence].tolist(), record.log_probs[sentence].tolist(), strict=True
        ):
            if math.isfinite(lp):
                out.append((tokens, lp))
    return out


def beam_bleu(model: Any, pairs: Sequence[TokenPair], src_vocab: Vocab, tgt_vocab: Vocab, *,
              beam_size: int, alphas: Sequence[float], lang: str = "en",
              max_len: int = 20, limit: int | None = None, seed: int = 0,
              device: torch.device | str = "cpu",
              lowercase: bool | None = None) -> dict[float, BleuResult]:
    r"""Corpus BLEU of :func:`beam_search` with beam size ``beam_size``, for every
    length-normalisation exponent :math:`\alpha` in ``alphas``, from **one** search.

    The search prunes by :math:`\log P` whatever :math:`\alpha`; :math:`\alpha` only ranks
    the :math:`k` final entries of each sentence. So one search that keeps all :math:`k` gives
    the translation of ``beam_search`` with that ``alpha`` for every :math:`\alpha` at once:
    ``result[alpha]`` is what :func:`~seq2seq_lib.evaluation.bleu` returns with
    ``search=partial(beam_search, beam_size=beam_size, alpha=alpha)`` and the same other
    arguments (``lowercase`` included).
    """
    sources, refs = group_references(pairs, vocab=tgt_vocab, lang=lang, limit=limit, seed=seed)
    whole_beam = partial(beam_search, beam_size=beam_size, n_best=beam_size)  # alpha: below
    finals = search_sources(model, sources, src_vocab, search=whole_beam, max_len=max_len,
                            device=device)
    if lowercase is None:
        lowercase = writes_lower_case(tgt_vocab)
    results = {}
    for alpha in alphas:  # rank each sentence's final entries by log P / L^alpha
        best = [_rank([_hypothesis(h.tokens, h.log_prob, EOS_ID, alpha) for h in hyps], 1)[0]
                for hyps in finals]
        texts = [tgt_vocab.detokenize(tgt_vocab.decode(h.output), lang=lang) for h in best]
        results[alpha] = corpus_bleu(sources, texts, refs, lowercase=lowercase)
    return results
