r"""Decoding a sequence model one token at a time: the step interface and greedy search.

A decoder defines, for an output sentence :math:`y_1, \ldots, y_{T'}` and a context
:math:`\mathbf c`,

.. math::

    P(y_1, \ldots, y_L \mid \mathbf c)
    = \prod_{t'=1}^{L} P(y_{t'} \mid y_1, \ldots, y_{t'-1}, \mathbf c),

and *decoding* searches the output vocabulary :math:`\mathcal Y` (which contains ``<eos>``)
for a sentence with a high probability. :func:`greedy_search` keeps one prefix and extends it
by the most probable token, :math:`y_{t'} = \operatorname{argmax}_{y \in \mathcal Y}
P(y \mid y_1, \ldots, y_{t'-1}, \mathbf c)`, until ``<eos>``. Chapter 9's searches, which keep
more prefixes, use the same interface: beam search in :mod:`seq2seq_lib.beam`, exhaustive
search in :mod:`seq2seq_lib.exhaustive`. A model runs any of them through
:meth:`~seq2seq_lib.encoder_decoder.EncoderDecoder.generate` (:class:`Search`).

**The step interface.** Every search talks to the model through one function, a
:class:`StepFn`::

    log_probs, new_state = step(prefix, state)

``prefix`` is a ``(N, t)`` LongTensor: ``N`` prefixes, each starting with ``<bos>`` followed
by the ``t - 1`` tokens generated so far. ``log_probs`` is ``(N, |Y|)``:
:math:`\log P(y \mid \text{prefix}, \mathbf c)` for every next token :math:`y`. ``state`` is
whatever the model carries from step to step (an RNN's hidden state, the encoder outputs,
``None``): a tensor, or a tuple/list/dict of tensors, whose row ``i`` belongs to prefix ``i``.
A search that reorders prefixes reorders the state with ``reorder_state(state, index)``; the
default, :func:`index_state`, calls ``index_select(0, index)`` on every tensor. Pass your own
``reorder_state`` when a tensor is not batch-first, e.g. PyTorch's ``(num_layers, N, h)``
hidden state: ``lambda s, i: s.index_select(1, i)``. An RNN decoder looks at ``prefix[:, -1]``
only; a hand-written probability table (:class:`TableStep`, for teaching and tests) looks at
the whole prefix. :meth:`seq2seq_lib.encoder_decoder.EncoderDecoder.step` is the step function of
every model of the course.

A hypothesis :math:`y_1, \ldots, y_L` has the log-probability
:math:`\log P = \sum_{t'=1}^{L} \log P(y_{t'} \mid y_1, \ldots, y_{t'-1}, \mathbf c)`, where
:math:`L` counts the generated tokens: ``<bos>`` does not count, ``<eos>`` does when the
hypothesis ended with it. ``max_len`` bounds :math:`L`, ``<eos>`` included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

State = Any
"""A tensor, ``None``, or a tuple/list/dict (nested) of tensors whose leading dim is ``N``."""


class StepFn(Protocol):
    """One decoder step: ``(prefix (N, t) LongTensor, state) -> (log_probs (N, |Y|), state)``."""

    def __call__(self, prefix: torch.Tensor, state: State) -> tuple[torch.Tensor, State]: ...


ReorderFn = Callable[[State, torch.Tensor], State]


def index_state(state: State, index: torch.Tensor) -> State:
    """Select rows ``index`` (a 1-D LongTensor) along dim 0 of every tensor in ``state``.

    ``state`` may be ``None``, a tensor, or a (nested) tuple, list or dict of those.
    """
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.index_select(0, index.to(state.device))
    if isinstance(state, tuple | list):
        return type(state)(index_state(s, index) for s in state)
    if isinstance(state, Mapping):
        return {key: index_state(value, index) for key, value in state.items()}
    raise TypeError(
        f"cannot reorder a state of type {type(state).__name__}: use a tensor, None, or a "
        "tuple/list/dict of tensors, or pass reorder_state="
    )


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Hypothesis:
    """One decoded sentence.

    ``tokens`` are the generated ids (``<bos>`` excluded, ``<eos>`` included when
    ``finished``); ``log_prob`` is :math:`\\log P`; ``score`` is what the search ranked by:
    :math:`\\log P` for greedy search, :math:`\\log P / L^{\\alpha}` with :math:`L` =
    ``len(tokens)`` for beam search (:func:`seq2seq_lib.beam.length_normalized_score`).
    """

    tokens: list[int]
    log_prob: float
    score: float
    finished: bool

    @property
    def length(self) -> int:
        """:math:`L`, the number of generated tokens (``<eos>`` included)."""
        return len(self.tokens)

    @property
    def output(self) -> list[int]:
        """The generated tokens without the final ``<eos>``: the translation."""
        return self.tokens[:-1] if self.finished else list(self.tokens)


@dataclass
class SearchStats:
    """What a search cost.

    ``step_calls``: calls of the step function (decoder time steps); ``rows``: prefixes fed
    to it, summed over calls; ``scored``: candidate extensions scored, ``rows * |Y|`` summed
    over calls. Beam search scores :math:`B k |\\mathcal Y| T'` candidates for ``B`` sentences
    when it runs all :math:`T'` steps; greedy search is the case :math:`k = 1`.
    """

    step_calls: int = 0
    rows: int = 0
    scored: int = 0

    def add(self, n_rows: int, vocab_size: int) -> None:
        """Count one step call that fed ``n_rows`` prefixes and scored ``vocab_size`` tokens each."""
        self.step_calls += 1
        self.rows += n_rows
        self.scored += n_rows * vocab_size


@dataclass
class SearchResult:
    """``hypotheses[b]``: the returned hypotheses of sentence ``b``, best first.

    ``history``: with ``keep_history=True``, beam search's beam after every step
    (:class:`seq2seq_lib.beam.BeamStepRecord`).
    """

    hypotheses: list[list[Hypothesis]]
    stats: SearchStats
    history: list[Any] | None = field(default=None)

    @property
    def best(self) -> list[Hypothesis]:
        """The top hypothesis of every sentence."""
        return [hyps[0] for hyps in self.hypotheses]


# --------------------------------------------------------------------------- helpers


def check_int(name: str, value: Any, minimum: int) -> None:
    """Raise unless ``value`` is an ``int`` (not a ``bool``) ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _first_tensor(state: State) -> torch.Tensor | None:
    if isinstance(state, torch.Tensor):
        return state
    if isinstance(state, tuple | list):
        values = state
    elif isinstance(state, Mapping):
        values = list(state.values())
    else:
        return None
    for value in values:
        found = _first_tensor(value)
        if found is not None:
            return found
    return None


def search_device(state: State, device: torch.device | str | None) -> torch.device:
    """``device``, else the device of the first tensor in ``state``, else the CPU."""
    if device is not None:
        return torch.device(device)
    found = _first_tensor(state)
    return found.device if found is not None else torch.device("cpu")


def call_step(
    step: StepFn, prefix: torch.Tensor, state: State, eos: int
) -> tuple[torch.Tensor, State]:
    """``step(prefix, state)``, checked: a pair whose ``log_probs`` is ``(N, |Y|)`` with
    ``eos`` a token id of the vocabulary."""
    out = step(prefix, state)
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError("the step function must return a pair (log_probs, new_state)")
    log_probs, new_state = out
    n = prefix.shape[0]
    if not isinstance(log_probs, torch.Tensor) or log_probs.dim() != 2 or log_probs.shape[0] != n:
        shape = tuple(log_probs.shape) if isinstance(log_probs, torch.Tensor) else type(log_probs)
        raise ValueError(
            f"the step function must return log_probs of shape (N={n}, |Y|), got {shape}"
        )
    if not 0 <= eos < log_probs.shape[1]:
        raise ValueError(
            f"eos={eos} is not a token id of the vocabulary of size {log_probs.shape[1]}"
        )
    return log_probs, new_state


class Search(Protocol):
    """A search, as models call it
    (:meth:`~seq2seq_lib.encoder_decoder.EncoderDecoder.generate`):
    ``search(step, init_state, batch_size, *, bos, eos, max_len, device)``;
    :func:`greedy_search`, or chapter 9's searches with their own options bound by
    ``functools.partial``."""

    def __call__(self, step: StepFn, init_state: State, batch_size: int, *, bos: int, eos: int,
                 max_len: int, device: torch.device | str | None = None) -> SearchResult: ...




def cut_at_eos(tokens: list[int], eos: int) -> tuple[list[int], bool]:
    """``tokens`` up to and including the first ``<eos>``, and whether there was one."""
    if eos in tokens:
        return tokens[: tokens.index(eos) + 1], True
    return tokens, False


def check_search_args(batch_size: int, bos: int, eos: int, max_len: int) -> None:
    """Raise unless the arguments every search shares are valid."""
    check_int("batch_size", batch_size, 1)
    check_int("bos", bos, 0)
    check_int("eos", eos, 0)
    check_int("max_len", max_len, 1)


# --------------------------------------------------------------------------- greedy


@torch.no_grad()
def greedy_search(
    step: StepFn,
    init_state: State,
    batch_size: int,
    *,
    bos: int,
    eos: int,
    max_len: int,
    device: torch.device | str | None = None,
    on_step: Callable[[State], None] | None = None,
) -> SearchResult:
    r"""Greedy search: :math:`y_{t'} = \operatorname{argmax}_y P(y \mid y_{<t'}, \mathbf c)`.

    Args:
        step: the decoder step (see the module docstring).
        init_state: the state for the ``B`` = ``batch_size`` sentences (rows ``0..B-1``).
        bos, eos: the ids of ``<bos>`` (fed first) and ``<eos>``.
        max_len: the most tokens generated per sentence, ``<eos>`` included.
        device: where the prefix tensor lives (default: the device of ``init_state``).
        on_step: called with the new state after every step (e.g. to collect attention
            weights; a finished sentence's rows go on being computed and are ignored).

    Returns:
        a :class:`SearchResult` with one hypothesis per sentence (its ``score`` is its
        :math:`\log P`). A sentence stops at its
        ``<eos>``; the search stops when every sentence has stopped or after ``max_len`` steps.
        Ties go to the smallest token id (``torch.max``).
    """
    check_search_args(batch_size, bos, eos, max_len)
    dev = search_device(init_state, device)
    prefix = torch.full((batch_size, 1), bos, dtype=torch.long, device=dev)
    state, stats = init_state, SearchStats()
    log_p: torch.Tensor | None = None
    finished = torch.zeros(batch_size, dtype=torch.bool, device=dev)
    for _ in range(max_len):
        log_probs, state = call_step(step, prefix, state, eos)
        if on_step is not None:
            on_step(state)
        stats.add(batch_size, log_probs.shape[1])
        best, token = log_probs.max(dim=-1)
        # a finished sentence keeps padding with <eos> at no cost
        token = torch.where(finished, torch.full_like(token, eos), token)
        best = torch.where(finished, torch.zeros_like(best), best)
        log_p = best if log_p is None else log_p + best
        prefix = torch.cat([prefix, token[:, None]], dim=1)
        finished = finished | (token == eos)
        if bool(finished.all()):
            break
    assert log_p is not None
    hyps = []
    for tokens, lp in zip(prefix.tolist(), log_p.tolist(), strict=True):
        generated, finished_ = cut_at_eos(tokens[1:], eos)
        hyps.append([Hypothesis(generated, lp, lp, finished_)])
    return SearchResult(hyps, stats)


# --------------------------------------------------------------------------- a table as a model


ProbRow = Mapping[str, float] | Sequence[float]


class TableStep:
    """A step function read from a hand-written probability table (for teaching and tests).

    ``table`` maps a prefix (a tuple of generated tokens, ``<bos>`` excluded) to the
    distribution of the next token: a dict ``{token: probability}`` (missing tokens get 0) or
    a list in vocabulary order. Prefixes not in the table get ``default`` (same forms) or
    raise :class:`KeyError` when ``default`` is ``None``. A prefix that already contains
    ``<eos>`` (a finished beam entry, whose extensions the search ignores) gets a uniform row.
    Token ids are positions in ``vocab``; ``bos`` is ``len(vocab)``, outside the vocabulary.

    The state is not used: pass ``init_state=None`` and ``batch_size`` to the searches.
    """

    def __init__(
        self,
        vocab: Sequence[str],
        table: Mapping[tuple[str, ...], ProbRow],
        default: ProbRow | None = None,
        *,
        eos_token: str = "<eos>",
        dtype: torch.dtype = torch.float64,
    ) -> None:
        self.vocab = list(vocab)
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError(f"vocab has duplicate tokens: {self.vocab}")
        if eos_token not in self.vocab:
            raise ValueError(f"vocab must contain the end token {eos_token!r}")
        self.ids = {tok: i for i, tok in enumerate(self.vocab)}
        self.eos, self.bos, self.dtype = self.ids[eos_token], len(self.vocab), dtype
        self.table: dict[tuple[int, ...], list[float]] = {}
        for key, row in table.items():
            if not isinstance(key, tuple):
                raise TypeError(f"table keys must be tuples of tokens, got {key!r}")
            unknown = [tok for tok in key if tok not in self.ids]
            if unknown:
                raise ValueError(f"prefix {key} has tokens not in the vocabulary: {unknown}")
            self.table[tuple(self.ids[tok] for tok in key)] = self._row(row, f"table[{key}]")
        self.default = None if default is None else self._row(default, "default")

    def _row(self, row: ProbRow, where: str) -> list[float]:
        if isinstance(row, Mapping):
            unknown = [tok for tok in row if tok not in self.ids]
            if unknown:
                raise ValueError(f"{where} has tokens not in the vocabulary: {unknown}")
            probs = [float(row.get(tok, 0.0)) for tok in self.vocab]
        else:
            probs = [float(p) for p in row]
            if len(probs) != len(self.vocab):
                raise ValueError(
                    f"{where} has {len(probs)} probabilities for {len(self.vocab)} tokens"
                )
        if any(p < 0 for p in probs) or abs(sum(probs) - 1.0) > 1e-6:
            raise ValueError(f"{where} is not a probability distribution: {probs}")
        return probs

    def probs(self, prefix: Sequence[int]) -> list[float]:
        """:math:`P(\\cdot \\mid` ``prefix`` :math:`)` for a prefix of token ids."""
        key = tuple(prefix)
        if key in self.table:
            return self.table[key]
        if self.eos in key:
            return [1.0 / len(self.vocab)] * len(self.vocab)
        if self.default is None:
            raise KeyError(f"no probabilities for prefix {self.decode(key)} and no default")
        return self.default

    def __call__(self, prefix: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        rows = [self.probs(row) for row in prefix[:, 1:].tolist()]
        return torch.tensor(rows, dtype=self.dtype, device=prefix.device).log(), state

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.ids[tok] for tok in tokens]

    def decode(self, ids: Sequence[int]) -> list[str]:
        return [self.vocab[i] for i in ids]

    def sequence_prob(self, tokens: Sequence[str]) -> float:
        """:math:`P(y_1, \\ldots, y_L) = \\prod_{t'} P(y_{t'} \\mid y_{<t'})` of ``tokens``."""
        ids, p = self.encode(tokens), 1.0
        for t, y in enumerate(ids):
            p *= self.probs(ids[:t])[y]
        return p
