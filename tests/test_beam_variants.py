"""Tests for seq2seq_lib.beam.completed_beam_search, the completed-list variant of beam search
(finished hypotheses leave the beam), checked against exhaustive search, greedy search and
the slot-keeping beam_search."""

from __future__ import annotations

import itertools
import math
import random
from functools import partial

import pytest
import torch
from helpers import MultiTableStep, as_pairs

from seq2seq_lib.beam import beam_search, completed_beam_search
from seq2seq_lib.decoding import TableStep, cut_at_eos, greedy_search
from seq2seq_lib.encoder_decoder import ChoConfig, ChoModel
from seq2seq_lib.exhaustive import exhaustive_search
from seq2seq_lib.search_examples import rule_examples, seed_beam_example, seed_greedy_example


def random_table(vocab_size: int, max_len: int, seed: int) -> TableStep:
    """Every eos-free prefix shorter than max_len gets a random distribution (all > 0)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(vocab_size - 1)] + ["<eos>"]
    table = {}
    for t in range(max_len):
        for prefix in itertools.product(vocab[:-1], repeat=t):
            weights = [rng.random() + 1e-3 for _ in vocab]
            table[prefix] = [w / sum(weights) for w in weights]
    return TableStep(vocab, table)


def assert_same(hyps, others):
    """Same sentences in the same order, with the same log P (to rounding)."""
    assert [h.tokens for h in hyps] == [h.tokens for h in others]
    assert [h.log_prob for h in hyps] == pytest.approx([h.log_prob for h in others])


def words(step, hyp):
    return " ".join(step.decode(hyp.tokens))


SEEDS = range(12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("alpha", [0.0, 0.75])
def test_wide_beam_equals_exhaustive_search(seed, alpha):
    # with k at least the number of candidate sentences nothing is ever pruned
    vocab, max_len, batch = 3 + seed % 2, 3, 2
    tables = [random_table(vocab, max_len, 100 * seed + b) for b in range(batch)]
    step, eos, bos = MultiTableStep(tables), vocab - 1, vocab
    n_candidates = sum((vocab - 1) ** (L - 1) for L in range(1, max_len + 1))
    n_candidates += (vocab - 1) ** max_len
    k = n_candidates + 3
    ex = exhaustive_search(step, torch.arange(batch), batch, bos=bos, eos=eos, max_len=max_len,
                           alpha=alpha, n_best=None)
    cl = completed_beam_search(step, torch.arange(batch), batch, bos=bos, eos=eos, beam_size=k,
                               max_len=max_len, alpha=alpha, n_best=k)
    for e_hyps, c_hyps in zip(ex.hypotheses, cl.hypotheses, strict=True):
        assert len(c_hyps) == n_candidates
        assert dict(as_pairs(c_hyps)) == pytest.approx(dict(as_pairs(e_hyps)), abs=1e-12)
        assert c_hyps[0].score == pytest.approx(e_hyps[0].score)


@pytest.mark.parametrize("seed", SEEDS)
def test_beam_size_1_is_greedy_search(seed):
    vocab, max_len, batch = 2 + seed % 4, 1 + seed % 4, 3
    tables = [random_table(vocab, max_len, 7 * seed + b) for b in range(batch)]
    step, eos, bos = MultiTableStep(tables), vocab - 1, vocab
    g = greedy_search(step, torch.arange(batch), batch, bos=bos, eos=eos, max_len=max_len)
    c = completed_beam_search(step, torch.arange(batch), batch, bos=bos, eos=eos, beam_size=1,
                              max_len=max_len)
    assert [as_pairs([h]) for h in g.best] == [as_pairs([h]) for h in c.best]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_results_are_consistent_and_batch_independent(seed, k):
    vocab, max_len, batch, alpha = 3 + seed % 3, 4, 3, 0.6
    tables = [random_table(vocab, max_len, 31 * seed + b) for b in range(batch)]
    step, eos, bos = MultiTableStep(tables), vocab - 1, vocab
    res = completed_beam_search(step, torch.arange(batch), batch, bos=bos, eos=eos, beam_size=k,
                                max_len=max_len, alpha=alpha, n_best=k)
    for b, hyps in enumerate(res.hypotheses):
        # every probability is > 0: the list ends with exactly k hypotheses, complete ones
        # plus, at max_len, the prefixes still in the beam
        assert len(hyps) == k
        assert len({tuple(h.tokens) for h in hyps}) == k
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)
        for h in hyps:
            assert h.score == pytest.approx(h.log_prob / h.length**alpha)
            assert h.finished == (h.tokens[-1] == eos) and eos not in h.tokens[:-1]
            assert h.finished or h.length == max_len
            assert math.exp(h.log_prob) == pytest.approx(
                tables[b].sequence_prob(tables[b].decode(h.tokens)), rel=1e-9)
        alone = completed_beam_search(tables[b], None, 1, bos=bos, eos=eos, beam_size=k,
                                      max_len=max_len, alpha=alpha, n_best=k)
        assert_same(alone.hypotheses[0], hyps)


def test_stops_when_k_hypotheses_are_complete():
    # <eos> is likely everywhere: with k = 2 two hypotheses are complete after step 2
    step = TableStep(["a", "b", "<eos>"], {(): [0.5, 0.2, 0.3]}, default=[0.1, 0.1, 0.8])
    res = completed_beam_search(step, None, 1, bos=step.bos, eos=step.eos, beam_size=2, max_len=10, n_best=2)
    assert res.stats.step_calls == 2
    assert [words(step, h) for h in res.hypotheses[0]] == ["a <eos>", "<eos>"]
    assert all(h.finished for h in res.hypotheses[0])
    slots = beam_search(step, None, 1, bos=step.bos, eos=step.eos, beam_size=2, max_len=10, n_best=2)
    assert_same(slots.hypotheses[0], res.hypotheses[0])


@pytest.mark.parametrize(("example", "k"), [(seed_greedy_example, k) for k in (1, 2, 3, 4)]
                         + [(seed_beam_example, 2)])  # larger k: ties among the uniform rows
def test_same_as_slot_keeping_on_the_notes_examples(example, k):
    # no finished hypothesis is ever pushed out here, so the two rules agree
    ex = example()
    a = beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=k, max_len=ex.max_len, n_best=k)
    c = completed_beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=k,
                              max_len=ex.max_len, n_best=k)
    assert_same(a.hypotheses[0], c.hypotheses[0])


def test_each_rule_wins_on_its_constructed_table():
    examples = rule_examples()
    assert set(examples) == {"completed list wins", "slots win"}
    for name, ex in examples.items():
        s = ex.step
        slots = beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2, max_len=ex.max_len).best[0]
        listed = completed_beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2,
                                       max_len=ex.max_len).best[0]
        optimum = exhaustive_search(s, None, 1, bos=ex.bos, eos=ex.eos, max_len=ex.max_len).best[0]
        if name == "completed list wins":
            assert words(s, listed) == words(s, optimum) == "B <eos>"
            assert math.exp(listed.log_prob) == pytest.approx(0.2 * 0.9)
            assert words(s, slots) == "A B C <eos>"
            assert math.exp(slots.log_prob) == pytest.approx(0.8 * 0.6 * 0.5 * 0.6)
        else:
            assert words(s, slots) == words(s, optimum) == "A B D <eos>"
            assert math.exp(slots.log_prob) == pytest.approx(0.8 * 0.6 * 0.45 * 0.9)
            assert words(s, listed) == "B <eos>"
        # the slot-keeping beam held B <eos> after step 2 and dropped it at step 3
        hist = beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2, max_len=ex.max_len,
                           keep_history=True).history
        held = [{" ".join(s.decode(cut_at_eos(t, s.eos)[0])) for t in record.tokens[0].tolist()}
                for record in hist]
        assert "B <eos>" in held[1] and "B <eos>" not in held[2]


def test_zero_probability_candidates_are_never_returned():
    ex = seed_beam_example()  # <eos> has probability 0 everywhere
    res = completed_beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=200,
                                max_len=ex.max_len, n_best=200)
    hyps = res.hypotheses[0]
    assert len(hyps) == 5**3
    assert all(not h.finished and math.isfinite(h.log_prob) for h in hyps)
    assert sum(math.exp(h.log_prob) for h in hyps) == pytest.approx(1.0)


def test_bad_arguments():
    ex = seed_greedy_example()
    with pytest.raises(ValueError):
        completed_beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=0, max_len=4)
    with pytest.raises(ValueError):
        completed_beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2, max_len=4, n_best=3)
    with pytest.raises(TypeError):
        completed_beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2.0, max_len=4)


def test_model_generate_runs_either_rule():
    torch.manual_seed(0)
    model = ChoModel(ChoConfig(12, 9, embed_size=4, hidden_size=8)).eval()
    src = torch.tensor([[4, 5, 6, 2], [7, 8, 2, 0]])
    lengths = torch.tensor([4, 3])
    greedy = model.generate(src, lengths, max_len=6)
    for search in (beam_search, completed_beam_search):
        assert model.generate(src, lengths, search=partial(search, beam_size=1), max_len=6) == greedy
        out = model.generate(src, lengths, search=partial(search, beam_size=3, alpha=0.6), max_len=6)
        assert len(out) == 2 and all(2 not in ids and len(ids) <= 6 for ids in out)


def test_beam_bleu_scores_every_alpha_from_one_search_as_separate_searches_would(
        tiny_translation_data):
    """beam_bleu(beam_size=k, alphas=alphas)[a] == bleu(search=partial(beam_search,
    beam_size=k, alpha=a)) for every a in alphas: the same translations (α only ranks the final
    beam), on a model whose final entries differ in length, so that α changes some of them."""
    from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
    from seq2seq_lib.beam import beam_bleu
    from seq2seq_lib.evaluation import bleu
    from seq2seq_lib.training import TrainConfig, fit

    data = tiny_translation_data
    torch.manual_seed(0)
    model = TranslatorModel(TranslatorConfig(len(data.src_vocab), len(data.tgt_vocab),
                                             embed_size=8, hidden_size=16))
    fit(model, data, TrainConfig(lr=1e-2, batch_size=16, steps=30), progress=False)
    pairs = data.train + data.valid + data.test  # every source: more cases for α to change
    alphas = (0.0, 1.0, 3.0)
    together = beam_bleu(model, pairs, data.src_vocab, data.tgt_vocab, beam_size=3, alphas=alphas,
                         max_len=6, limit=60, seed=2)
    for a in alphas:
        alone = bleu(model, pairs, data.src_vocab, data.tgt_vocab, max_len=6, limit=60,
                     seed=2, search=partial(beam_search, beam_size=3, alpha=a))
        assert together[a].hypotheses == alone.hypotheses
        assert together[a].sources == alone.sources and together[a].score == alone.score
    assert together[0.0].hypotheses != together[3.0].hypotheses  # α mattered somewhere
