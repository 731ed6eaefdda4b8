"""Checkers for the translator chapter (chapter 11).

A solution that calls what it is compared with is refused
(:func:`~seq2seq_lib.exercises.refuse_reference`): for
exercise 11.4 the library's BPE (:meth:`seq2seq_lib.subwords.BPE.segment` and the function
behind it). Exercise 11.1 has no library version; its checker's own cases, which hold the
expected answers, are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from seq2seq_lib.exercises import checker, passed, refuse_reference
from seq2seq_lib.subwords import BPE, learn_bpe, piece_counts, pre_tokenize

#: What the replacement of unknown words may not call — the checker's expected answers.
REPLACE_REFERENCES = (
    ("seq2seq_lib.exercises.ch11._cases", "the checker's own cases, with the expected answers"),
)
#: What the segmentation may not call — the library's BPE.
SEGMENT_REFERENCES = (
    ("seq2seq_lib.subwords.BPE", "the library's BPE, whose segment is the reference"),
    ("seq2seq_lib.subwords._segment", "the library's segmentation, the reference"),
    ("seq2seq_lib.subwords.SubwordVocab", "the library's subword vocabulary, which segments"),
)

ReplaceFn = Callable[[Sequence[str], Sequence[str], torch.Tensor], list[str]]


def _cases() -> list[tuple[str, list[str], list[str], torch.Tensor, list[str]]]:
    """``(name, output, source, weights, expected)``; ``weights`` is ``(T', S)``, T' ≥ T."""
    w = torch.tensor  # rows: output positions, columns: source positions
    return [
        ("no <unk>: the output is unchanged",
         ["i", "am", "here", "."], ["je", "suis", "ici", "."],
         w([[.9, .1, 0, 0], [.1, .8, .1, 0], [0, .1, .9, 0], [0, 0, .1, .9],
            [0, 0, 0, 1.]]),
         ["i", "am", "here", "."]),
        ("one <unk>, aligned with source word 3",
         ["i", "live", "in", "<unk>", "."], ["j'", "habite", "à", "Tromsø", "."],
         w([[.8, .1, .1, 0, 0], [.1, .7, .2, 0, 0], [0, .2, .6, .2, 0], [0, 0, .1, .85, .05],
            [0, 0, 0, .1, .9], [0, 0, 0, 0, 1.]]),
         ["i", "live", "in", "Tromsø", "."]),
        ("two <unk>s aligned with different source words",
         ["<unk>", "loves", "<unk>", "."], ["Ada", "aime", "Grace", "."],
         w([[.6, .3, .1, 0], [.2, .7, .1, 0], [.1, .2, .7, 0], [0, 0, .2, .8]]),
         ["Ada", "loves", "Grace", "."]),
        ("a tie: the first of the equally weighted source words",
         ["<unk>"], ["x", "y", "z"],
         w([[.4, .4, .2], [0, 0, 1.]]),
         ["x"]),
        ("the weights row t belongs to output word t (not t + 1)",
         ["the", "<unk>"], ["le", "chat"],
         w([[.9, .1], [.2, .8], [.9, .1]]),
         ["the", "chat"]),
        ("an empty output",
         [], ["rien"], w([[1.]]), []),
    ]


@checker
def check_replace_unknowns(fn: ReplaceFn, exercise: str = "Exercise 11.1") -> None:
    """Check ``fn(output, source, weights) -> list[str]``, the attention-based replacement of
    unknown words (Luong et al., 2015b; Jean et al., 2015).

    ``output`` holds the ``T`` translated tokens (``<eos>`` removed), ``source`` the ``S``
    source words, ``weights`` the ``(T', S)`` attention weights with ``T' >= T`` (row ``t``
    produced output word ``t``). Every ``"<unk>"`` at position ``t`` must become
    ``source[argmax_s weights[t, s]]`` (the first maximum on a tie); the other words stay;
    the arguments must not be modified. A solution that reads the checker's own cases
    (:data:`REPLACE_REFERENCES`) is refused.
    """
    refuse_reference(fn, REPLACE_REFERENCES, exercise, "from the attention weights")
    for name, output, source, weights, expected in _cases():
        out_copy, src_copy, w_copy = list(output), list(source), weights.clone()
        got = fn(out_copy, src_copy, w_copy)
        if not isinstance(got, list):
            raise AssertionError(f"{exercise}: return a list of str, got {type(got).__name__}")
        if out_copy != output or src_copy != source or not torch.equal(w_copy, weights):
            raise AssertionError(f"{exercise} ({name}): the arguments were modified")
        if got != expected:
            wrong = next((i for i, (g, e) in enumerate(zip(got, expected, strict=False))
                          if g != e), min(len(got), len(expected)))
            raise AssertionError(
                f"{exercise} ({name}): got {got}, expected {expected} "
                f"(first difference at position {wrong})"
            )
    passed(exercise)


SegmentFn = Callable[[str, dict[tuple[str, str], int]], list[str]]

_TEXT = ("low lower lowest newer newest wider widest slow slowly below allow newly renew "
         "fellow follow hollow yellow narrower " * 3 + "lowly lowland newt ewe")


@checker
def check_segment(fn: SegmentFn, exercise: str = "Exercise 11.4") -> None:
    """Check ``fn(piece, ranks) -> list[str]``, byte-pair segmentation by merge rank.

    ``ranks`` maps each learned merge ``(left, right)`` to its rank (0 for the first merge
    learned). Starting from the characters of ``piece``, ``fn`` must repeatedly merge the
    adjacent pair of lowest rank (its leftmost occurrence first) until no learned merge
    applies, and return the symbols: what
    :meth:`seq2seq_lib.subwords.BPE.segment` returns for the same merges. The checker learns
    merges from a small text and compares on every piece of it and on unseen words, and on
    small cases where the order matters, one of them where replaying the merges in the order
    they were learned gives another segmentation than merging by rank. A solution that calls
    the library's BPE (:data:`SEGMENT_REFERENCES`) is refused.
    """
    refuse_reference(fn, SEGMENT_REFERENCES, exercise, "by merging the pair of lowest rank")
    by_hand = [  # (merges in rank order, pieces): where the order of the merges matters
        (BPE(("a", "b", "c"), (("b", "c"), ("a", "b"))), ["abc", "cabc", "ab"]),
        (BPE(("a",), (("a", "a"),)), ["aaa", "aaaa"]),  # the leftmost place first
        (BPE(("a", "b", "c"), (("a", "b"), ("ab", "c"), ("c", "ab"))), ["abcab", "cab"]),
        # abc is made by two merges, and abc+d ranks below a+bc: replaying the merges in
        # order gives abc d, merging by rank abcd (the chapter's solution shows both)
        (BPE(("a", "b", "c", "d"),
             (("b", "c"), ("a", "b"), ("ab", "c"), ("abc", "d"), ("a", "bc"))), ["abcd"]),
    ]
    counts = piece_counts([_TEXT])
    learned = learn_bpe(counts, vocab_size=40)
    cases = [*by_hand, (learned, [*counts, *pre_tokenize("lowlow slowest renewer aaaa Ewe")])]
    for bpe, pieces in cases:
        _check_pieces(fn, bpe, pieces, exercise)
    passed(exercise)


def _check_pieces(fn: SegmentFn, bpe: BPE, pieces: Sequence[str], exercise: str) -> None:
    ranks = {pair: rank for rank, pair in enumerate(bpe.merges)}
    for piece in pieces:
        ranks_copy = dict(ranks)
        got = fn(piece, ranks_copy)
        if ranks_copy != ranks:
            raise AssertionError(f"{exercise}: the ranks were modified")
        if not isinstance(got, list) or not all(isinstance(s, str) for s in got):
            raise AssertionError(f"{exercise}: return a list of str, got {got!r}")
        expected = bpe.segment(piece)
        if "".join(got) != piece:
            raise AssertionError(f"{exercise} ({piece!r}): the symbols {got} do not spell the "
                                 "piece; a segmentation only groups its characters")
        if got != expected:
            raise AssertionError(f"{exercise} ({piece!r}): got {got}, expected {expected} "
                                 f"(merges in rank order: {bpe.merges[:6]} ...)")
