"""Tests for seq2seq_lib.decoding (step interface, greedy search) and seq2seq_lib.beam (beam and
exhaustive search, the worked examples): the searches are checked against each other."""

from __future__ import annotations

import itertools
import math
import random

import pytest
import torch
from helpers import MultiTableStep, as_pairs
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_lib import beam
from seq2seq_lib.beam import beam_candidates, beam_search
from seq2seq_lib.decoding import TableStep, greedy_search, index_state
from seq2seq_lib.exercises.ch09 import check_beam_step
from seq2seq_lib.exhaustive import exhaustive_search
from seq2seq_lib.search_examples import seed_beam_example, seed_greedy_example

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None)


# --------------------------------------------------------------------------- test models


def random_table(vocab_size: int, max_len: int, seed: int, zero_eos_first: bool = False):
    """A random full table: every eos-free prefix of length < max_len gets a distribution."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(vocab_size - 1)] + ["<eos>"]
    words = vocab[:-1]
    table = {}
    for t in range(max_len):
        for prefix in itertools.product(words, repeat=t):
            weights = [rng.random() + 1e-3 for _ in vocab]
            if zero_eos_first and t == 0:
                weights[-1] = 0.0
            total = sum(weights)
            table[prefix] = [w / total for w in weights]
    return TableStep(vocab, table)




class TinyGRUStep(torch.nn.Module):
    """A random GRU decoder whose hidden state uses PyTorch's (num_layers, N, h) layout."""

    def __init__(self, vocab_size=11, hidden=8, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.emb = torch.nn.Embedding(vocab_size + 1, 5)  # + <bos>
        self.gru = torch.nn.GRU(5, hidden, num_layers=2, batch_first=True)
        self.out = torch.nn.Linear(hidden, vocab_size)
        self.double()

    def forward(self, prefix, state):
        h, memory = state
        y, h = self.gru(self.emb(prefix[:, -1:]), h)
        logits = self.out(y[:, 0] + memory)
        return torch.log_softmax(logits, dim=-1), (h, memory)


def gru_reorder(state, index):
    h, memory = state
    return h.index_select(1, index), memory.index_select(0, index)


def gru_state(batch, seed=1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(2, batch, 8, generator=g, dtype=torch.float64),
            torch.randn(batch, 8, generator=g, dtype=torch.float64))


# --------------------------------------------------------------------------- seed examples


def test_seed_greedy_example_numbers():
    ex = seed_greedy_example()
    s = ex.step
    result = greedy_search(s, None, 1, bos=ex.bos, eos=ex.eos, max_len=ex.max_len)
    best = result.best[0]
    assert s.decode(best.tokens) == ["A", "B", "C", "<eos>"]
    assert math.exp(best.log_prob) == pytest.approx(0.5 * 0.4 * 0.4 * 0.6)
    assert math.exp(best.log_prob) == pytest.approx(0.048)
    assert s.sequence_prob(["A", "C", "B", "<eos>"]) == pytest.approx(0.054)
    # beam size 2 finds the better path that greedy missed
    found = beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2, max_len=ex.max_len, n_best=2)
    assert [s.decode(h.tokens) for h in found.hypotheses[0]] == [
        ["A", "C", "B", "<eos>"], ["A", "B", "C", "<eos>"]]
    assert math.exp(found.best[0].log_prob) == pytest.approx(0.054)


def test_seed_greedy_example_beam3_finds_short_sentence_and_alpha_fixes_it():
    ex = seed_greedy_example()
    s = ex.step
    plain = beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=3, max_len=ex.max_len,
                        alpha=0.0, n_best=3)
    assert s.decode(plain.best[0].tokens) == ["A", "<eos>"]  # finished at step 2, kept
    assert plain.best[0].finished and math.exp(plain.best[0].log_prob) == pytest.approx(0.1)
    normed = beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=3, max_len=ex.max_len,
                         alpha=0.75, n_best=3)
    assert s.decode(normed.best[0].tokens) == ["A", "C", "B", "<eos>"]
    assert normed.best[0].score == pytest.approx(math.log(0.054) / 4**0.75)


def test_seed_beam_example_six_candidates():
    ex = seed_beam_example()
    s = ex.step
    result = beam_search(s, None, 1, bos=ex.bos, eos=ex.eos, beam_size=2, max_len=ex.max_len,
                         n_best=2, keep_history=True)
    cands = [(" ".join(s.decode(t)), math.exp(lp)) for t, lp in beam_candidates(result.history)]
    assert [c for c, _ in cands] == ["A", "C", "A B", "C E", "A B D", "C E D"]
    for text, p in cands:
        assert p == pytest.approx(s.sequence_prob(text.split()))
    assert [s.decode(h.tokens) for h in result.hypotheses[0]] == [["A", "B", "D"], ["C", "E", "D"]]
    assert not any(h.finished for h in result.hypotheses[0])


# --------------------------------------------------------------------------- properties


@PROPERTY
@given(vocab=st.integers(2, 5), max_len=st.integers(1, 4), seed=st.integers(0, 10**6),
       batch=st.integers(1, 3))
def test_beam_k1_equals_greedy(vocab, max_len, seed, batch):
    tables = [random_table(vocab, max_len, seed + b) for b in range(batch)]
    step = MultiTableStep(tables)
    eos, bos = vocab - 1, vocab
    state = torch.arange(batch)
    g = greedy_search(step, state, batch, bos=bos, eos=eos, max_len=max_len)
    b = beam_search(step, state, batch, bos=bos, eos=eos, beam_size=1, max_len=max_len)
    assert [as_pairs([h]) for h in g.best] == [as_pairs([h]) for h in b.best]
    assert g.stats == b.stats


@PROPERTY
@given(vocab=st.integers(2, 4), max_len=st.integers(1, 3), seed=st.integers(0, 10**6),
       alpha=st.sampled_from([0.0, 0.75, 1.0]), batch=st.integers(1, 2))
def test_beam_with_huge_beam_equals_exhaustive(vocab, max_len, seed, alpha, batch):
    tables = [random_table(vocab, max_len, seed + b) for b in range(batch)]
    step = MultiTableStep(tables)
    eos, bos = vocab - 1, vocab
    state = torch.arange(batch)
    k = vocab**max_len
    ex = exhaustive_search(step, state, batch, bos=bos, eos=eos, max_len=max_len, alpha=alpha,
                           n_best=None)
    bs = beam_search(step, state, batch, bos=bos, eos=eos, beam_size=k, max_len=max_len, alpha=alpha,
                     n_best=k)
    for e_hyps, b_hyps in zip(ex.hypotheses, bs.hypotheses, strict=True):
        assert dict(as_pairs(b_hyps)) == pytest.approx(dict(as_pairs(e_hyps)), abs=1e-12)
        assert b_hyps[0].tokens == e_hyps[0].tokens
        # every sequence is a candidate exactly once, and the probabilities sum to 1
        assert sum(math.exp(h.log_prob) for h in e_hyps) == pytest.approx(1.0)


@PROPERTY
@given(vocab=st.integers(2, 6), max_len=st.integers(1, 5), seed=st.integers(0, 10**6),
       k=st.integers(1, 8), alpha=st.sampled_from([0.0, 0.6, 1.0]), batch=st.integers(1, 3))
def test_beam_results_are_consistent(vocab, max_len, seed, k, alpha, batch):
    tables = [random_table(vocab, max_len, seed + b) for b in range(batch)]
    step = MultiTableStep(tables)
    eos, bos = vocab - 1, vocab
    res = beam_search(step, torch.arange(batch), batch, bos=bos, eos=eos, beam_size=k,
                      max_len=max_len, alpha=alpha, n_best=k, keep_history=True)
    for b, hyps in enumerate(res.hypotheses):
        assert 1 <= len(hyps) <= k
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)  # n-best sorted
        assert len({tuple(h.tokens) for h in hyps}) == len(hyps)  # no duplicates
        for h in hyps:
            assert h.score == pytest.approx(h.log_prob / h.length**alpha)
            assert h.finished == (h.tokens[-1] == eos)
            assert eos not in h.tokens[:-1]
            assert h.finished or h.length == max_len
            # log P really is the sum over the table
            assert math.exp(h.log_prob) == pytest.approx(
                tables[b].sequence_prob(tables[b].decode(h.tokens)), rel=1e-9)
        # each sentence of the batch is searched as if it were alone
        alone = beam_search(tables[b], None, 1, bos=bos, eos=eos, beam_size=k, max_len=max_len,
                            alpha=alpha, n_best=k)
        assert [h.tokens for h in alone.hypotheses[0]] == [h.tokens for h in hyps]
        assert [h.log_prob for h in alone.hypotheses[0]] == pytest.approx(
            [h.log_prob for h in hyps])
    # finished entries are kept and not extended: score frozen, only <eos> padding
    for before, after in itertools.pairwise(res.history):
        for b in range(batch):
            kept = {tuple(t): lp for t, lp, f in zip(before.tokens[b].tolist(),
                    before.log_probs[b].tolist(), before.finished[b].tolist(), strict=True)
                    if f and math.isfinite(lp)}
            now = {tuple(t[:-1]): (lp, t[-1]) for t, lp in zip(after.tokens[b].tolist(),
                   after.log_probs[b].tolist(), strict=True) if math.isfinite(lp)}
            for tokens, lp in kept.items():
                if tokens in now:
                    assert now[tokens] == (lp, eos)


def test_finished_hypothesis_survives_when_it_stays_in_top_k():
    # <eos> first with probability 0.6: the finished one-token hypothesis must be kept
    step = TableStep(["a", "<eos>"], {(): [0.4, 0.6]}, default=[0.3, 0.7])
    res = beam_search(step, None, 1, bos=step.bos, eos=step.eos, beam_size=2, max_len=5, n_best=2)
    best = res.best[0]
    assert best.tokens == [step.eos] and best.finished
    assert math.exp(best.log_prob) == pytest.approx(0.6)
    assert res.hypotheses[0][1].tokens == [0, step.eos]


def test_beam_larger_than_vocabulary():
    ex = seed_greedy_example()  # |Y| = 4, max_len 4, every probability > 0
    # candidates: ending with <eos> at L = 1..4 (3**(L-1) each) + 3**4 cut at max_len
    n_candidates = sum(3 ** (L - 1) for L in range(1, 5)) + 3**4
    for k in (5, 200):
        res = beam_search(ex.step, None, 2, bos=ex.bos, eos=ex.eos, beam_size=k, max_len=ex.max_len, n_best=k)
        assert len(res.hypotheses[0]) == min(k, n_candidates)
    full = exhaustive_search(ex.step, None, 2, bos=ex.bos, eos=ex.eos, max_len=ex.max_len, n_best=None)
    assert len(full.hypotheses[0]) == n_candidates
    assert dict(as_pairs(res.hypotheses[1])) == pytest.approx(dict(as_pairs(full.hypotheses[1])))


def test_zero_probability_sequences_are_never_returned():
    ex = seed_beam_example()  # <eos> has probability 0: only the 5**3 eos-free sequences count
    res = beam_search(ex.step, None, 1, bos=ex.bos, eos=ex.eos, beam_size=200, max_len=ex.max_len, n_best=200)
    hyps = res.hypotheses[0]
    assert len(hyps) == 5**3
    assert all(ex.eos not in h.tokens and math.isfinite(h.log_prob) for h in hyps)
    assert sum(math.exp(h.log_prob) for h in hyps) == pytest.approx(1.0)


def test_operation_counts():
    ex = seed_beam_example()
    V = len(ex.step.vocab)
    for k in (1, 2, 4):
        res = beam_search(ex.step, None, 3, bos=ex.bos, eos=ex.eos, beam_size=k, max_len=ex.max_len)
        assert res.stats.step_calls == ex.max_len
        assert res.stats.scored == 3 * k * V * ex.max_len  # O(k |Y| T')
    greedy = greedy_search(ex.step, None, 3, bos=ex.bos, eos=ex.eos, max_len=ex.max_len)
    assert greedy.stats == beam_search(ex.step, None, 3, bos=ex.bos, eos=ex.eos, beam_size=1,
                                       max_len=ex.max_len).stats


def test_greedy_stops_each_sentence_at_eos():
    tables = [TableStep(["a", "<eos>"], {(): [0.1, 0.9]}, default=[0.9, 0.1]),
              TableStep(["a", "<eos>"], {(): [0.9, 0.1], ("a",): [0.2, 0.8]}, default=[0.5, 0.5])]
    res = greedy_search(MultiTableStep(tables), torch.arange(2), 2, bos=2, eos=1, max_len=10)
    assert [h.tokens for h in res.best] == [[1], [0, 1]]
    assert res.stats.step_calls == 2  # stops when every sentence has finished
    assert math.exp(res.best[1].log_prob) == pytest.approx(0.9 * 0.8)


def test_greedy_calls_on_step_with_every_new_state():
    tables = [TableStep(["a", "<eos>"], {(): [0.1, 0.9]}, default=[0.9, 0.1]),
              TableStep(["a", "<eos>"], {(): [0.9, 0.1], ("a",): [0.2, 0.8]}, default=[0.5, 0.5])]

    def step(prefix, state):
        log_probs, _ = MultiTableStep(tables)(prefix, state[0])
        return log_probs, (state[0], state[1] + 1)

    seen = []
    res = greedy_search(step, (torch.arange(2), torch.zeros(2)), 2, bos=2, eos=1, max_len=10,
                        on_step=lambda state: seen.append(state[1].tolist()))
    assert seen == [[1.0, 1.0], [2.0, 2.0]] and res.stats.step_calls == 2
    assert [h.score for h in res.best] == [h.log_prob for h in res.best]  # greedy: score = log P


# --------------------------------------------------------------------------- real model state


def test_gru_state_reordering_batched_equals_one_at_a_time():
    model = TinyGRUStep()
    bos, eos, B = 11, 3, 4
    state = gru_state(B)
    batched = beam_search(model, state, B, bos=bos, eos=eos, beam_size=3, max_len=6, alpha=0.7, n_best=3,
                          reorder_state=gru_reorder)
    for b in range(B):
        one = (state[0][:, b : b + 1], state[1][b : b + 1])
        alone = beam_search(model, one, 1, bos=bos, eos=eos, beam_size=3, max_len=6, alpha=0.7, n_best=3,
                            reorder_state=gru_reorder)
        got, want = as_pairs(batched.hypotheses[b]), as_pairs(alone.hypotheses[0])
        assert [t for t, _ in got] == [t for t, _ in want]
        assert [lp for _, lp in got] == pytest.approx([lp for _, lp in want], abs=1e-10)
    greedy = greedy_search(model, state, B, bos=bos, eos=eos, max_len=6)
    k1 = beam_search(model, state, B, bos=bos, eos=eos, beam_size=1, max_len=6, reorder_state=gru_reorder)
    assert [h.tokens for h in greedy.best] == [h.tokens for h in k1.best]


def test_index_state_nested():
    state = {"h": torch.arange(6).view(3, 2), "pair": (torch.arange(3), None), "l": [torch.ones(3)]}
    out = index_state(state, torch.tensor([2, 2, 0]))
    assert out["h"].tolist() == [[4, 5], [4, 5], [0, 1]]
    assert out["pair"][0].tolist() == [2, 2, 0] and out["pair"][1] is None
    assert out["l"][0].shape == (3,)
    with pytest.raises(TypeError, match="cannot reorder"):
        index_state("text", torch.tensor([0]))


# --------------------------------------------------------------------------- bad input


def test_bad_arguments():
    ex = seed_greedy_example()
    s, bos, eos = ex.step, ex.bos, ex.eos
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(s, None, 1, bos=bos, eos=eos, beam_size=0, max_len=4)
    with pytest.raises(ValueError, match="max_len"):
        beam_search(s, None, 1, bos=bos, eos=eos, beam_size=2, max_len=0)
    with pytest.raises(ValueError, match="max_len"):
        greedy_search(s, None, 1, bos=bos, eos=eos, max_len=0)
    with pytest.raises(ValueError, match="n_best"):
        beam_search(s, None, 1, bos=bos, eos=eos, beam_size=2, max_len=4, n_best=3)
    with pytest.raises(ValueError, match="batch_size"):
        beam_search(s, None, 0, bos=bos, eos=eos, beam_size=2, max_len=4)
    with pytest.raises(TypeError, match="beam_size"):
        beam_search(s, None, 1, bos=bos, eos=eos, beam_size=2.0, max_len=4)
    with pytest.raises(ValueError, match="eos"):
        greedy_search(s, None, 1, bos=bos, eos=7, max_len=4)
    with pytest.raises(ValueError, match="max_rows"):
        exhaustive_search(s, None, 1, bos=bos, eos=eos, max_len=30)


def test_bad_step_functions():
    def wrong_shape(prefix, state):
        return torch.zeros(prefix.shape[0] + 1, 3), state

    def no_pair(prefix, state):
        return torch.zeros(prefix.shape[0], 3)

    with pytest.raises(ValueError, match="log_probs of shape"):
        beam_search(wrong_shape, None, 2, bos=3, eos=0, beam_size=2, max_len=3)
    with pytest.raises(TypeError, match="pair"):
        greedy_search(no_pair, None, 2, bos=3, eos=0, max_len=3)


def test_table_step_validation():
    with pytest.raises(ValueError, match="not a probability distribution"):
        TableStep(["a", "<eos>"], {(): [0.5, 0.6]})
    with pytest.raises(ValueError, match="not in the vocabulary"):
        TableStep(["a", "<eos>"], {("b",): [0.5, 0.5]})
    with pytest.raises(ValueError, match="end token"):
        TableStep(["a", "b"], {})
    step = TableStep(["a", "<eos>"], {(): [0.5, 0.5]})
    with pytest.raises(KeyError, match="no probabilities"):
        greedy_search(step, None, 1, bos=step.bos, eos=step.eos, max_len=3)


def test_length_normalized_score():
    assert beam.length_normalized_score(-4.0, 4, 0.5) == pytest.approx(-2.0)
    assert beam.length_normalized_score(-4.0, 4, 0.0) == -4.0
    with pytest.raises(ValueError):
        beam.length_normalized_score(-1.0, 0, 1.0)


# --------------------------------------------------------------------------- exercise checker


def test_check_beam_step_refuses_the_reference():
    with pytest.raises(AssertionError, match="itself"):
        check_beam_step(beam.beam_step)


def test_check_beam_step_accepts_another_correct_solution():
    def mine(scores, log_probs):
        B, k, V = log_probs.shape
        total = scores[:, :, None] + log_probs
        order = torch.argsort(total.reshape(B, -1), dim=1, descending=True)[:, :k]
        return total.reshape(B, -1).gather(1, order), order // V, order % V

    check_beam_step(mine)


def _per_beam_topk(scores, log_probs):  # extends every beam entry by its own best token
    best, tok = (scores[:, :, None] + log_probs).max(-1)
    order = best.argsort(dim=1, descending=True)
    return best.gather(1, order), order, tok.gather(1, order)


def _forgets_scores(scores, log_probs):
    B, k, V = log_probs.shape
    _, flat = log_probs.reshape(B, -1).topk(k, dim=1)
    total = (scores[:, :, None] + log_probs).reshape(B, -1)
    return total.gather(1, flat), flat // V, flat % V


def _wrong_unravel(scores, log_probs):
    B, k, V = log_probs.shape
    s, flat = (scores[:, :, None] + log_probs).reshape(B, -1).topk(k, dim=1)
    return s, flat % k, flat // k


def _unsorted(scores, log_probs):
    s, b, t = beam.beam_step(scores, log_probs)
    return s.flip(1), b.flip(1), t.flip(1)


@pytest.mark.parametrize("wrong", [_per_beam_topk, _forgets_scores, _wrong_unravel, _unsorted])
def test_check_beam_step_rejects_wrong_solutions(wrong):
    with pytest.raises(AssertionError) as info:
        check_beam_step(wrong)
    assert "expected" in str(info.value) or "sorted" in str(info.value)


def test_check_beam_step_rejects_wrong_return_type():
    with pytest.raises(AssertionError, match="tuple"):
        check_beam_step(lambda s, lp: s)
