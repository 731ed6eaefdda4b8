"""Length-bucketed batches."""

from __future__ import annotations

import random

import pytest

from seq2seq_lib.batches import TranslationDataset, make_loader
from seq2seq_lib.buckets import BucketBatchSampler, bucket_loader
from seq2seq_lib.vocab import Vocab


def _lengths(n=1000, seed=0):
    rng = random.Random(seed)
    return [(rng.randint(1, 11), rng.randint(1, 11)) for _ in range(n)]


def test_every_index_once_and_len_matches():
    lengths = _lengths(1003)
    sampler = BucketBatchSampler(lengths, 32, pool=4)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    assert sorted(i for b in batches for i in b) == list(range(1003))
    assert all(1 <= len(b) <= 32 for b in batches)


def test_seeded_and_reseedable():
    lengths = _lengths()
    a = list(BucketBatchSampler(lengths, 16, seed=3))
    b = list(BucketBatchSampler(lengths, 16, seed=3))
    s = BucketBatchSampler(lengths, 16, seed=3)
    first, second = list(s), list(s)
    assert a == b == first and first != second
    s.generator.manual_seed(3)
    assert list(s) == a


def test_less_padding_than_random_batches():
    pairs = [(["w"] * s, ["w"] * t) for t, s in _lengths(2000)]
    vocab = Vocab.build([["w"]])
    ds = TranslationDataset(pairs, vocab, vocab)
    padded = {
        "random": sum(b.tgt_out.numel() for b in make_loader(ds, 64, shuffle=True)),
        "bucket": sum(b.tgt_out.numel() for b in bucket_loader(ds, 64, pool=20)),
    }
    real = sum(len(t) + 1 for _, t in pairs)
    assert padded["bucket"] < 0.8 * padded["random"]
    assert padded["bucket"] >= real


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        BucketBatchSampler([1, 2], 0)
