"""Tests for seq2seq_lib.bleu: equal to sacrebleu, plus the chapter's helpers."""

from __future__ import annotations

import collections
import math
import random
from collections import Counter

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from seq2seq_lib import bleu
from seq2seq_lib.exercises.ch10 import check_clipped_precision

PROPERTY = settings(max_examples=80, deadline=None, derandomize=True, database=None)
METHODS = ["exp", "floor", "add-k", "none"]

PIECES = [
    "the", "The", "cat", "sat", "on", "mat", "a", "dog", "I", "it's", "don't", "3.50", "1,000",
    "1990-2000", "-", "x-ray", "U.S.", "e.g.", "Hello", "hello", "&amp;", "&quot;", "&lt;",
    "<skipped>", "(", ")", "!", "?", ",", ".", "...", "$", "%", '"', "'", ":", ";", "/", "é",
    "naïve", "Ça", "\u202f", "\u00a0", "\n", "-\n", "\t", "42", "7.", ".5", "[", "]", "{", "~",
]

sentences = st.lists(
    st.tuples(st.sampled_from(PIECES), st.sampled_from(["", " ", " ", "  "])), max_size=14
).map(lambda parts: "".join(p + sep for p, sep in parts))


def assert_same(ours: bleu.BLEUScore, theirs, smooth_method: str = "exp", k: float = 1):
    """Our result equals sacrebleu's (counts: sacrebleu's add-k adds k for n >= 2)."""
    counts = list(theirs.counts)
    if smooth_method == "add-k" and any(ours.counts):
        counts = [counts[0]] + [c - k for c in counts[1:]]
        totals = [theirs.totals[0]] + [t - k for t in theirs.totals[1:]]
    else:
        totals = list(theirs.totals)
    assert ours.counts == counts
    assert ours.totals == totals
    assert ours.sys_len == theirs.sys_len
    assert ours.ref_len == theirs.ref_len
    assert ours.bp == pytest.approx(theirs.bp, abs=1e-12)
    assert ours.precisions == pytest.approx(theirs.precisions, abs=1e-9)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)


# --------------------------------------------------------------------------- tokenizer


@pytest.mark.parametrize("line", [
    "Hello, world! It costs $3.50.", "I don't know... (maybe) 1,000 or 1990-2000?",
    "&quot;Quoted&quot; &amp; &lt;tag&gt;", "hyphen-\nated line\nbreak <skipped> end",
    "U.S.A. e.g. 3.14, 2,5 .5 5. a.b,c", "", "   ", "Ça va\u202f! naïve — “curly”",
])
def test_tokenize_13a_fixed(line):
    assert bleu.tokenize_13a(line) == Tokenizer13a()(line)


@PROPERTY
@given(line=sentences)
def test_tokenize_13a_random_pieces(line):
    assert bleu.tokenize_13a(line) == Tokenizer13a()(line)


@PROPERTY
@given(line=st.text(alphabet=st.sampled_from(list("ab1.,-'&;qutgl <>{}[]@/\n\t\u00e9")),
                   max_size=40))
def test_tokenize_13a_random_characters(line):
    assert bleu.tokenize_13a(line) == Tokenizer13a()(line)


# --------------------------------------------------------------------------- fixed vectors

HYPS = ["The cat sat on the mat.", "Hello, world! It costs $3.50.", "", "a b c d e f",
        "it is a guide to action which ensures that the military always obeys the commands"]
REFS = [
    ["The cat is on the mat.", "Hello world, it costs 3.50 dollars!", "x", "a b c d e",
     "it is a guide to action that ensures that the military will forever heed commands"],
    ["There is a cat on the mat.", None, "y z", "f e d c b a",
     "it is the guiding principle which guarantees the military forces always being under "
     "the command of the party"],
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("eff", [False, True])
@pytest.mark.parametrize("n_refs", [1, 2])
def test_corpus_bleu_fixed(method, eff, n_refs):
    refs = REFS[:n_refs]
    ours = bleu.corpus_bleu(HYPS, refs, smooth_method=method, use_effective_order=eff)
    theirs = sacrebleu.corpus_bleu(HYPS, refs, smooth_method=method, use_effective_order=eff)
    assert_same(ours, theirs, method)


@pytest.mark.parametrize("method,value", [("floor", 0.3), ("add-k", 2), ("add-k", 0.5)])
def test_corpus_bleu_smooth_values(method, value):
    ours = bleu.corpus_bleu(HYPS, REFS, smooth_method=method, smooth_value=value)
    theirs = sacrebleu.corpus_bleu(HYPS, REFS, smooth_method=method, smooth_value=value)
    assert_same(ours, theirs, method, k=value)


@pytest.mark.parametrize("tokenize", ["13a", "none"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_corpus_bleu_tokenize_and_case(tokenize, lowercase):
    ours = bleu.corpus_bleu(HYPS, REFS, tokenize=tokenize, lowercase=lowercase)
    theirs = sacrebleu.corpus_bleu(HYPS, REFS, tokenize=tokenize, lowercase=lowercase)
    assert_same(ours, theirs)


@pytest.mark.parametrize("hyps,refs", [
    ([""], [[""]]), (["a b"], [[""]]), ([""], [["a b"]]), (["", ""], [["", "x"]]),
    (["a", "b"], [["a", "c"]]), (["the cat"], [["the cat"]]),
])
def test_corpus_bleu_empty_strings_and_tiny(hyps, refs):
    for method in METHODS:
        assert_same(bleu.corpus_bleu(hyps, refs, smooth_method=method),
                    sacrebleu.corpus_bleu(hyps, refs, smooth_method=method), method)


def test_perfect_match_is_100_and_str():
    score = bleu.corpus_bleu(["the cat sat on the mat"], [["the cat sat on the mat"]])
    assert score.score == pytest.approx(100.0)
    assert str(score).startswith("BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000")


# --------------------------------------------------------------------------- random corpora


@st.composite
def corpora(draw):
    n = draw(st.integers(1, 6))
    hyps = draw(st.lists(sentences, min_size=n, max_size=n))
    n_streams = draw(st.integers(1, 3))
    streams = []
    for j in range(n_streams):
        stream = draw(st.lists(sentences, min_size=n, max_size=n))
        if j > 0:  # later streams may miss references (None), the first never does
            holes = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            stream = [None if hole else r for r, hole in zip(stream, holes, strict=True)]
        streams.append(stream)
    return hyps, streams


@PROPERTY
@given(corpus=corpora(), method=st.sampled_from(METHODS), eff=st.booleans(),
       lowercase=st.booleans())
def test_corpus_bleu_random(corpus, method, eff, lowercase):
    hyps, refs = corpus
    ours = bleu.corpus_bleu(hyps, refs, smooth_method=method, use_effective_order=eff,
                            lowercase=lowercase)
    theirs = sacrebleu.corpus_bleu(hyps, refs, smooth_method=method, use_effective_order=eff,
                                   lowercase=lowercase)
    assert_same(ours, theirs, method)


@PROPERTY
@given(hyp=sentences, refs=st.lists(sentences, min_size=1, max_size=3),
       method=st.sampled_from(METHODS), eff=st.booleans())
def test_sentence_bleu_random(hyp, refs, method, eff):
    ours = bleu.sentence_bleu(hyp, refs, smooth_method=method, use_effective_order=eff)
    theirs = sacrebleu.sentence_bleu(hyp, refs, smooth_method=method, use_effective_order=eff)
    assert_same(ours, theirs, method)


def test_sentence_bleu_effective_order_default():
    ours = bleu.sentence_bleu("the cat", ["the cat sat"])
    theirs = sacrebleu.sentence_bleu("the cat", ["the cat sat"])
    assert_same(ours, theirs)
    # only orders 1 and 2 exist: BLEU = BP * sqrt(p1 p2) = e^(1 - 3/2) * 100
    assert ours.score == pytest.approx(100 * math.exp(1 - 3 / 2))
    assert bleu.sentence_bleu("the cat", ["the cat sat"], use_effective_order=False).score == 0


# --------------------------------------------------------------------------- bad input


def test_bad_input():
    with pytest.raises(ValueError, match="reference stream 0 has 1 lines but there are 2"):
        bleu.corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="reference stream 1"):
        bleu.corpus_bleu(["a"], [["a"], ["a", "b"]])
    with pytest.raises(ValueError, match="empty"):
        bleu.corpus_bleu([], [[]])
    with pytest.raises(ValueError, match="reference streams"):
        bleu.corpus_bleu(["a"], [])
    with pytest.raises(TypeError, match="list of strings"):
        bleu.corpus_bleu("a b", [["a b"]])
    with pytest.raises(TypeError, match=r"references\[0\]"):
        bleu.corpus_bleu(["a b"], ["a b"])
    with pytest.raises(ValueError, match="no reference"):
        bleu.corpus_bleu(["a"], [[None]])
    with pytest.raises(ValueError, match="smooth_method"):
        bleu.corpus_bleu(["a"], [["a"]], smooth_method="add-one")
    with pytest.raises(ValueError, match="tokenize"):
        bleu.corpus_bleu(["a"], [["a"]], tokenize="intl")
    with pytest.raises(ValueError, match="non-empty list"):
        bleu.sentence_bleu("a", [])
    with pytest.raises(ValueError, match="non-empty list"):
        bleu.sentence_bleu("a", "a")


# --------------------------------------------------------------------------- helpers


def test_ngram_counts_and_clipped_precision():
    counts = bleu.ngram_counts("a b a b".split(), 3)
    assert counts[("a",)] == 2 and counts[("a", "b")] == 2 and counts[("b", "a", "b")] == 1
    assert sum(counts.values()) == 4 + 3 + 2
    # Papineni et al.'s example: "the" clipped to its count in the reference
    assert bleu.clipped_precision("the the the the the the the".split(),
                                  ["the cat is on the mat".split(),
                                   "there is a cat on the mat".split()], 1) == (2, 7)
    assert bleu.clipped_precision("a b".split(), ["a b c".split()], 3) == (0, 0)
    with pytest.raises(ValueError):
        bleu.clipped_precision(["a"], [["a"]], 0)


def test_brevity_penalties():
    assert bleu.brevity_penalty(5, 4) == 1.0
    assert bleu.brevity_penalty(4, 4) == 1.0
    assert bleu.brevity_penalty(3, 4) == pytest.approx(math.exp(1 - 4 / 3))
    assert bleu.brevity_penalty(0, 4) == 0.0
    assert bleu.brevity_penalty_min(3, 4) == pytest.approx(0.75)
    assert bleu.brevity_penalty_min(5, 4) == 1.0
    # the real penalty is harsher than the simplified one for short outputs
    assert bleu.brevity_penalty(3, 4) < bleu.brevity_penalty_min(3, 4)


def test_closest_ref_length_ties_to_shorter():
    assert bleu.closest_ref_length(5, [3, 7]) == 3
    assert bleu.closest_ref_length(5, [7, 3]) == 3
    assert bleu.closest_ref_length(5, [9, 6, 4]) == 4
    hyp, refs = "a b c d e", ["a b c", "a b c d e f g"]
    assert bleu.sentence_bleu(hyp, refs).ref_len == 3 == sacrebleu.sentence_bleu(hyp, refs).ref_len


def test_d2l_bleu():
    pred, label = "il est riche .".split(), "il est calme .".split()
    # p1 = 3/4, p2 = 1/3 (only "il est" matches), no brevity penalty
    assert bleu.d2l_bleu(pred, label, 2) == pytest.approx((3 / 4) ** 0.5 * (1 / 3) ** 0.25)
    assert bleu.d2l_bleu("va !".split(), "va !".split(), 2) == 1.0
    assert bleu.d2l_bleu(["a"], ["a", "b"], 1) == pytest.approx(math.exp(1 - 2))
    # shorter than k: scored on the orders it has, as d2l's loop to min(k, len_pred) does
    assert bleu.d2l_bleu(["a"], ["a", "b"], 2) == bleu.d2l_bleu(["a"], ["a", "b"], 1)
    assert bleu.d2l_bleu(["a", "c"], ["a", "b"], 4) == pytest.approx(0.5**0.5 * 0.0)
    with pytest.raises(ValueError, match="empty"):
        bleu.d2l_bleu([], ["a", "b"], 2)


def _d2l_reference(pred_seq: str, label_seq: str, k: int) -> float:
    """d2l's ``bleu`` (section 10.7), statement by statement: an independent reference."""
    pred_tokens, label_tokens = pred_seq.split(" "), label_seq.split(" ")
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        num_matches, label_subs = 0, collections.defaultdict(int)
        for i in range(len_label - n + 1):
            label_subs[" ".join(label_tokens[i : i + n])] += 1
        for i in range(len_pred - n + 1):
            if label_subs[" ".join(pred_tokens[i : i + n])] > 0:
                num_matches += 1
                label_subs[" ".join(pred_tokens[i : i + n])] -= 1
        score *= math.pow(num_matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


def test_d2l_bleu_equals_d2ls_code_on_random_sentences():
    rng = random.Random(0)
    words = "a b c d .".split()
    short = 0
    for _ in range(500):
        pred = [rng.choice(words) for _ in range(rng.randint(1, 7))]
        label = [rng.choice(words) for _ in range(rng.randint(1, 7))]
        k = rng.randint(1, 4)
        short += len(pred) < k
        assert bleu.d2l_bleu(pred, label, k) == pytest.approx(
            _d2l_reference(" ".join(pred), " ".join(label), k), abs=1e-12)
    assert short > 20  # the short predictions, where the loop bound matters, were tried


def test_precision_recall_f1_seed_004_example():
    ref = "Half of my heart is in Havana ooh na na".split()
    pred = "Half as my heart is in Obama ooh na".split()
    p, r, f = bleu.precision_recall_f1(pred, ref)
    assert (p, r) == pytest.approx((7 / 9, 7 / 10))
    assert f == pytest.approx(2 * p * r / (p + r)) and f == pytest.approx(0.7368, abs=1e-4)
    # "I love you" vs "oh I love you": position-free counting gives credit
    scores = bleu.precision_recall_f1("oh I love you".split(), "I love you".split())
    assert scores[:2] == (0.75, 1.0)


# --------------------------------------------------------------------------- exercise checker


def test_check_clipped_precision_accepts_an_own_solution_and_refuses_the_reference(capsys):
    def mine(hyp, refs, n):
        grams = Counter(_grams(hyp, n))
        most = Counter()
        for ref in refs:
            most |= Counter(_grams(ref, n))
        return sum(min(count, most[g]) for g, count in grams.items()), len(_grams(hyp, n))

    check_clipped_precision(mine)
    assert capsys.readouterr().out == "Exercise 10.1: all checks passed.\n"
    with pytest.raises(AssertionError, match="itself"):
        check_clipped_precision(bleu.clipped_precision)


def _grams(tokens, n):
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _unclipped(hyp, refs, n):
    ref_grams = {g for r in refs for g in _grams(r, n)}
    return sum(g in ref_grams for g in _grams(hyp, n)), len(_grams(hyp, n))


def _clip_by_sum(hyp, refs, n):
    grams = _grams(hyp, n)
    return sum(min(grams.count(g), sum(_grams(r, n).count(g) for r in refs))
               for g in set(grams)), len(grams)


def _first_reference_only(hyp, refs, n):
    return _clip_by_sum(hyp, refs[:1], n)


@pytest.mark.parametrize("wrong", [_unclipped, _clip_by_sum, _first_reference_only])
def test_check_clipped_precision_rejects_wrong_solutions(wrong):
    with pytest.raises(AssertionError, match="expected"):
        check_clipped_precision(wrong)
