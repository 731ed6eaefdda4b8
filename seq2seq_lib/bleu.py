r"""BLEU from scratch, computed the way sacrebleu 2.x computes it.

BLEU (Papineni et al., 2002) compares a hypothesis :math:`\hat y` with one or more
references through *clipped* n-gram precisions

.. math::

    p_n = \frac{\sum_{g \in \text{n-grams}(\hat y)}
                \min\bigl(\text{count}_{\hat y}(g),\ \max_r \text{count}_r(g)\bigr)}
               {\sum_{g \in \text{n-grams}(\hat y)} \text{count}_{\hat y}(g)},

summed over all sentences of the corpus before dividing, and a brevity penalty on the
total hypothesis length :math:`c` and reference length :math:`r` (for each sentence the
reference length closest to the hypothesis length, ties to the shorter one):

.. math::

    \text{BP} = \begin{cases} 1 & c \ge r \\ e^{1 - r/c} & c < r \end{cases}, \qquad
    \text{BLEU} = \text{BP} \cdot \exp\Bigl(\frac1N \sum_{n=1}^{N} \log p_n\Bigr), \quad N = 4.

Scores and precisions are reported in 0–100, like sacrebleu. Sentences are tokenised first
with the ``13a`` tokenizer (mteval-v13a, the WMT standard; :func:`tokenize_13a`).

When some :math:`p_n = 0` the geometric mean is 0; *smoothing* replaces zero precisions
(Chen & Cherry, 2014): ``exp`` (the default; the :math:`m`-th zero precision becomes
:math:`1 / (2^m \cdot \text{total}_n)`), ``floor`` (:math:`\epsilon/\text{total}_n`,
:math:`\epsilon = 0.1`), ``add-k`` (add :math:`k = 1` to the matches and totals for
:math:`n \ge 2`) or ``none``. *Effective order* (on by default in :func:`sentence_bleu`) takes
the mean over the orders :math:`n` that have at least one hypothesis n-gram only.

Besides :func:`corpus_bleu` and :func:`sentence_bleu` the module has the pieces the chapter
builds BLEU from (:func:`ngram_counts`, :func:`clipped_precision`, :func:`brevity_penalty`),
the simplified penalty :math:`\min(1, c/r)` of the lecture notes on BLEU (:func:`brevity_penalty_min`), d2l's
sentence-level variant (:func:`d2l_bleu`) and the word-level precision/recall/F1 that BLEU
replaces (:func:`precision_recall_f1`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_ORDER = 4
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None}
"""The smoothing methods and the default value of their parameter (sacrebleu's)."""

# --------------------------------------------------------------------------- tokenisation

# mteval-v13a splits off every ASCII symbol except the apostrophe, the hyphen, the period and
# the comma (the space is in the set too, which changes nothing once spaces are squeezed).
_SYMBOLS = " !\"#$%&()*+/:;<=>?@[\\]^_`{|}~"
_RULES = [
    (re.compile("([" + re.escape(_SYMBOLS) + "])"), r" \1 "),
    # a period or comma is split from what precedes it unless that is a digit ...
    (re.compile(r"([^0-9])([.,])"), r"\1 \2 "),
    # ... and from what follows it unless that is a digit (so 3.14 and 1,000 stay whole)
    (re.compile(r"([.,])([^0-9])"), r" \1 \2"),
    # a hyphen after a digit is split off (1990-2000 -> 1990 - 2000)
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]
_ENTITIES = [("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")]


@lru_cache(maxsize=2**16)
def tokenize_13a(line: str) -> str:
    """Tokenise like mteval-v13a / sacrebleu's ``13a``; returns the tokens joined by spaces.

    Drops ``<skipped>``, joins words hyphenated across a line break, turns newlines into
    spaces, unescapes ``&quot; &amp; &lt; &gt;``, splits off punctuation (rules above) and
    squeezes whitespace. Example: ``'Hello, world! It costs $3.50.'`` ->
    ``'Hello , world ! It costs $ 3.50 .'``.
    """
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, char in _ENTITIES:
            line = line.replace(entity, char)
    line = f" {line} "
    for pattern, replacement in _RULES:
        line = pattern.sub(replacement, line)
    return " ".join(line.split())


def tokenize_none(line: str) -> str:
    """No tokenisation: tokens are the whitespace-separated words."""
    return line


TOKENIZERS: dict[str, Callable[[str], str]] = {"13a": tokenize_13a, "none": tokenize_none}

# --------------------------------------------------------------------------- building blocks


def ngram_counts(tokens: Sequence[str], max_order: int = MAX_ORDER) -> Counter[tuple[str, ...]]:
    """Counts of every n-gram, :math:`1 \\le n \\le` ``max_order``, keyed by token tuples.

    >>> ngram_counts(["a", "b", "a"], 2)
    Counter({('a',): 2, ('b',): 1, ('a', 'b'): 1, ('b', 'a'): 1})
    """
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, max_order + 1):
        counts.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return counts


def clipped_precision(
    hypothesis: Sequence[str], references: Sequence[Sequence[str]], n: int
) -> tuple[int, int]:
    """The clipped n-gram matches and the number of hypothesis n-grams, ``(matches, total)``.

    Each hypothesis n-gram counts at most as often as it occurs in the reference where it
    occurs most often; :math:`p_n` = ``matches / total``.

    >>> clipped_precision("the the the the".split(), ["the cat is on the mat".split()], 1)
    (2, 4)
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
    best: Counter[tuple[str, ...]] = Counter()
    for ref in references:
        best |= Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))  # max count
    matches = sum(min(count, best[gram]) for gram, count in hyp.items())
    return matches, sum(hyp.values())


def brevity_penalty(c: int, r: int) -> float:
    """BLEU's brevity penalty :math:`e^{1 - r/c}` if :math:`c < r`, else 1 (0 when ``c = 0 < r``).

    ``c``: hypothesis length, ``r``: reference length (summed over the corpus).
    """
    if c >= r:
        return 1.0
    return math.exp(1 - r / c) if c > 0 else 0.0


def brevity_penalty_min(c: int, r: int) -> float:
    """The BLEU lecture notes' simplified penalty :math:`\\min(1, c/r)` (not the one BLEU uses)."""
    return 1.0 if r == 0 else min(1.0, c / r)


def closest_ref_length(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to ``hyp_len``; on a tie the shorter one."""
    if not ref_lens:
        raise ValueError("need at least one reference length")
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


@dataclass(frozen=True)
class BLEUScore:
    """A BLEU result with sacrebleu's fields and units.

    ``score`` and ``precisions`` (one per order, smoothed) are in 0–100; ``counts`` and
    ``totals`` are the clipped matches and hypothesis n-grams per order, summed over the
    corpus; ``bp`` is the brevity penalty; ``sys_len`` and ``ref_len`` are :math:`c` and
    :math:`r`. Unlike sacrebleu, ``counts`` and ``totals`` are always the raw integers
    (sacrebleu's ``add-k`` returns them with :math:`k` added for :math:`n \\ge 2`).
    """

    score: float
    counts: list[int]
    totals: list[int]
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int

    def __str__(self) -> str:
        prec = "/".join(f"{p:.1f}" for p in self.precisions)
        ratio = self.sys_len / self.ref_len if self.ref_len else 0.0
        return (
            f"BLEU = {self.score:.2f} {prec} (BP = {self.bp:.3f} ratio = {ratio:.3f} "
            f"hyp_len = {self.sys_len} ref_len = {self.ref_len})"
        )


def bleu_from_stats(
    counts: Sequence[int],
    totals: Sequence[int],
    sys_len: int,
    ref_len: int,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
) -> BLEUScore:
    """BLEU from its sufficient statistics (corpus sums): the formula of the module docstring."""
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(
            f"unknown smooth_method {smooth_method!r}; use one of {list(SMOOTH_DEFAULTS)}"
        )
    if len(counts) != len(totals) or not counts:
        raise ValueError("counts and totals must be non-empty and of the same length")
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    order = len(counts)
    bp = brevity_penalty(sys_len, ref_len)
    precisions = [0.0] * order
    result = dict(counts=list(counts), totals=list(totals), bp=bp, sys_len=sys_len, ref_len=ref_len)
    if not any(counts):  # no match at all: 0, whatever the smoothing
        return BLEUScore(score=0.0, precisions=precisions, **result)
    halvings, used = 1.0, order  # `used`: how many orders enter the mean
    for n in range(1, order + 1):
        matches, total = counts[n - 1], totals[n - 1]
        if smooth_method == "add-k" and n > 1:
            matches, total = matches + smooth_value, total + smooth_value
        if total == 0:  # no hypothesis n-grams of this order (nor of higher ones)
            break
        if effective_order:
            used = n
        if matches > 0:
            precisions[n - 1] = 100.0 * matches / total
        elif smooth_method == "exp":
            halvings *= 2
            precisions[n - 1] = 100.0 / (halvings * total)
        elif smooth_method == "floor":
            precisions[n - 1] = 100.0 * smooth_value / total
    if any(p == 0.0 for p in precisions[:used]):
        score = 0.0
    else:
        score = bp * math.exp(sum(math.log(p) for p in precisions[:used]) / used)
    return BLEUScore(score=score, precisions=precisions, **result)


# --------------------------------------------------------------------------- corpus / sentence


def _segment_stats(
    hyp: str, refs: Sequence[str], max_order: int = MAX_ORDER
) -> tuple[int, int, list[int], list[int]]:
    """``(hyp_len, closest ref_len, matches per order, totals per order)`` of one segment."""
    hyp_tokens = hyp.split()
    hyp_ngrams = ngram_counts(hyp_tokens, max_order)
    ref_max: dict[tuple[str, ...], int] = {}
    ref_lens = []
    for ref in refs:
        ref_tokens = ref.split()
        ref_lens.append(len(ref_tokens))
        for gram, count in ngram_counts(ref_tokens, max_order).items():
            if count > ref_max.get(gram, 0):
                ref_max[gram] = count
    matches, totals = [0] * max_order, [0] * max_order
    for gram, count in hyp_ngrams.items():
        totals[len(gram) - 1] += count
        matches[len(gram) - 1] += min(count, ref_max.get(gram, 0))
    return len(hyp_tokens), closest_ref_length(len(hyp_tokens), ref_lens), matches, totals


def _check_streams(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]]) -> None:
    if isinstance(hypotheses, str) or not isinstance(hypotheses, Sequence):
        raise TypeError("hypotheses must be a list of strings")
    if not hypotheses:
        raise ValueError("hypotheses is empty")
    if not all(isinstance(h, str) for h in hypotheses):
        raise TypeError("every hypothesis must be a string")
    if isinstance(references, str) or not isinstance(references, Sequence) or not references:
        raise ValueError(
            "references must be a non-empty list of reference streams (lists of strings)"
        )
    for i, stream in enumerate(references):
        if isinstance(stream, str) or not isinstance(stream, Sequence):
            raise TypeError(
                f"references[{i}] must be a list of strings (one per hypothesis), "
                f"got {type(stream).__name__}; for one reference set pass [refs]"
            )
        if len(stream) != len(hypotheses):
            raise ValueError(
                f"reference stream {i} has {len(stream)} lines but there are "
                f"{len(hypotheses)} hypotheses"
            )
        if not all(r is None or isinstance(r, str) for r in stream):
            raise TypeError(f"references[{i}] must hold strings (or None for a missing reference)")


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    tokenize: str = "13a",
    lowercase: bool = False,
    use_effective_order: bool = False,
) -> BLEUScore:
    """Corpus BLEU with sacrebleu's API and defaults.

    Args:
        hypotheses: one string per segment.
        references: reference *streams*: ``references[j][i]`` is the ``j``-th reference of
            segment ``i`` (``None`` when segment ``i`` has fewer references).
        smooth_method: ``"exp"`` (default), ``"floor"``, ``"add-k"`` or ``"none"``.
        smooth_value: the parameter of ``floor`` (0.1) and ``add-k`` (1).
        tokenize: ``"13a"`` (default) or ``"none"``.
        lowercase: lowercase everything first.
        use_effective_order: average over the n-gram orders present only.

    Raises:
        ValueError: empty ``hypotheses`` (sacrebleu raises ``IndexError``), a reference
            stream whose length differs from ``hypotheses`` (sacrebleu silently truncates),
            a segment without any reference, an unknown method or tokenizer.
    """
    _check_streams(hypotheses, references)
    if tokenize not in TOKENIZERS:
        raise ValueError(f"unknown tokenize {tokenize!r}; use one of {list(TOKENIZERS)}")
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(
            f"unknown smooth_method {smooth_method!r}; use one of {list(SMOOTH_DEFAULTS)}"
        )
    tok = TOKENIZERS[tokenize]

    def prepare(line: str) -> str:
        return tok((line.lower() if lowercase else line).rstrip())

    sys_len = ref_len = 0
    counts, totals = [0] * MAX_ORDER, [0] * MAX_ORDER
    for i, hyp in enumerate(hypotheses):
        refs = [prepare(stream[i]) for stream in references if stream[i] is not None]
        if not refs:
            raise ValueError(f"segment {i} has no reference (all streams hold None)")
        h_len, r_len, matches, n_grams = _segment_stats(prepare(hyp), refs)
        sys_len, ref_len = sys_len + h_len, ref_len + r_len
        for n in range(MAX_ORDER):
            counts[n] += matches[n]
            totals[n] += n_grams[n]
    return bleu_from_stats(
        counts, totals, sys_len, ref_len, smooth_method, smooth_value, use_effective_order
    )


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    tokenize: str = "13a",
    lowercase: bool = False,
    use_effective_order: bool = True,
) -> BLEUScore:
    """BLEU of one hypothesis against its references (a list of strings); effective order on."""
    if not isinstance(hypothesis, str):
        raise TypeError("hypothesis must be a string")
    if isinstance(references, str) or not isinstance(references, Sequence) or not references:
        raise ValueError("references must be a non-empty list of strings")
    return corpus_bleu(
        [hypothesis],
        [[ref] for ref in references],
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        tokenize=tokenize,
        lowercase=lowercase,
        use_effective_order=use_effective_order,
    )


# --------------------------------------------------------------------------- comparisons


def d2l_bleu(pred_tokens: Sequence[str], label_tokens: Sequence[str], k: int) -> float:
    r"""d2l's sentence BLEU: :math:`\exp(\min(0, 1 - \frac{\text{len}_\text{label}}
    {\text{len}_\text{pred}})) \prod_{n=1}^{\min(k, \text{len}_\text{pred})}
    p_n^{1/2^n}`, in 0–1.

    One reference, clipped precisions :math:`p_n`, weights :math:`1/2^n` (longer n-grams
    weigh more, since :math:`p_n^{1/2^n}` grows as the weight shrinks), no smoothing. As in
    d2l's code, the product stops at the prediction's length: a prediction shorter than
    ``k`` tokens is scored on the orders it has (its own kind of effective order). An empty
    prediction raises :class:`ValueError` (the brevity penalty divides by its length; d2l's
    space-split strings are never empty).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not pred_tokens:
        raise ValueError("the prediction is empty; d2l_bleu divides by its length")
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0.0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        matches, total = clipped_precision(pred_tokens, [label_tokens], n)
        score *= (matches / total) ** (0.5**n)
    return score


def precision_recall_f1(
    pred_tokens: Sequence[str], ref_tokens: Sequence[str]
) -> tuple[float, float, float]:
    r"""The BLEU lecture notes' word-level scores, position-free: correct words counted with clipping.

    precision = correct / len(prediction), recall = correct / len(reference),
    F1 = :math:`\frac{2PR}{P + R}` (the harmonic mean, :math:`\frac{P R}{(P + R)/2}`;
    the lecture notes write it as ":math:`(P \times R) / (P + R) / 2`", which is not the harmonic mean).
    Example (CS224n/boostcamp): reference *Half of my heart is in Havana ooh na na*,
    prediction *Half as my heart is in Obama ooh na*: P = 7/9, R = 7/10, F1 = 0.737.
    """
    correct, _ = clipped_precision(pred_tokens, [ref_tokens], 1)
    p = correct / len(pred_tokens) if pred_tokens else 0.0
    r = correct / len(ref_tokens) if ref_tokens else 0.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f1
