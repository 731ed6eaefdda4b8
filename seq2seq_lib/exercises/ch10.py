"""Checkers for the BLEU chapter.

A solution that calls :func:`seq2seq_lib.bleu.clipped_precision`, the reference, or a BLEU
function whose statistics are the clipped counts (the library's and sacrebleu's) is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`). :func:`seq2seq_lib.bleu.ngram_counts` and ``Counter`` are
building blocks and stay allowed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from seq2seq_lib import bleu
from seq2seq_lib.exercises import checker, passed, refuse_reference

_BLEU = "a BLEU function whose statistics are the clipped counts"
#: What the clipped precision may not call.
PRECISION_REFERENCES = (
    "seq2seq_lib.bleu.clipped_precision",
    *((path, _BLEU) for path in (
        "seq2seq_lib.bleu._segment_stats", "seq2seq_lib.bleu.corpus_bleu",
        "seq2seq_lib.bleu.sentence_bleu", "sacrebleu.corpus_bleu", "sacrebleu.sentence_bleu",
        "sacrebleu.metrics.BLEU")),
)

ClippedPrecisionFn = Callable[[Sequence[str], Sequence[Sequence[str]], int], tuple[int, int]]


def _cases() -> list[tuple[list[str], list[list[str]], int]]:
    cases = [
        ("the the the the".split(), ["the cat is on the mat".split()], 1),
        ("the the the the".split(), ["the cat".split(), "the the mat".split()], 1),
        ("the cat the cat on the mat".split(),
         ["the cat is on the mat".split(), "there is a cat on the mat".split()], 2),
        ("a b".split(), ["a b c".split()], 3),  # shorter than n: no n-grams at all
    ]
    rng = random.Random(9)
    words = "a b c d e".split()
    for n in (1, 2, 3, 4):
        hyp = [rng.choice(words) for _ in range(rng.randint(n, 12))]
        refs = [[rng.choice(words) for _ in range(rng.randint(1, 12))]
                for _ in range(rng.randint(1, 3))]
        cases.append((hyp, refs, n))
    return cases


@checker
def check_clipped_precision(fn: ClippedPrecisionFn, exercise: str = "Exercise 10.1") -> None:
    """Check ``fn(hypothesis, references, n) -> (matches, total)`` on token lists.

    ``matches``: hypothesis n-grams found in the references, each counted at most as often
    as it occurs in the reference where it occurs most often; ``total``: the number of
    hypothesis n-grams. The reference is :func:`seq2seq_lib.bleu.clipped_precision`; a
    solution that calls it (or a BLEU function, :data:`PRECISION_REFERENCES`) is refused.
    """
    refuse_reference(fn, PRECISION_REFERENCES, exercise, "by counting the n-grams (Counter)")
    for hyp, refs, n in _cases():
        result = fn(list(hyp), [list(r) for r in refs], n)
        shown_refs = [" ".join(r) for r in refs]
        where = f" for n={n}, hypothesis {' '.join(hyp)!r}, references {shown_refs}"
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise AssertionError("return a pair (matches, total)" + where)
        expected = bleu.clipped_precision(hyp, refs, n)
        if tuple(result) != expected:
            hint = ""
            if result[1] == expected[1] and result[0] > expected[0]:
                hint = " (too many matches: are the counts clipped by the reference counts?)"
            raise AssertionError(f"got (matches, total) = {tuple(result)}, expected {expected}"
                                 + where + hint)
    passed(exercise)
