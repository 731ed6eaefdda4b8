"""Length-bucketed batches."""

from __future__ import annotations

import dataclasses
import random

import pytest
import torch

from seq2seq_lib.batches import TranslationDataset, make_loader
from seq2seq_lib.buckets import BucketBatchSampler, bucket_batches, bucket_loader
from seq2seq_lib.device import Run
from seq2seq_lib.recipes import ch08
from seq2seq_lib.training import TrainConfig
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


@pytest.mark.parametrize(("batch_size", "pool"), [(4, 50), (3, 5), (1, 2)])
def test_bucket_batches_counts_the_batches_of_an_epoch(batch_size, pool):
    vocab = Vocab.build([["w"]])
    size = batch_size * pool  # the examples of one pool
    for n in sorted({1, batch_size - 1, batch_size, batch_size + 1, size - 1, size, size + 1,
                     2 * size - 1, 2 * size, 2 * size + 1} - {0}):
        pairs = [(["w"] * s, ["w"] * t) for t, s in _lengths(n, seed=n)]
        loader = bucket_loader(TranslationDataset(pairs, vocab, vocab), batch_size, pool=pool)
        assert bucket_batches(n, batch_size, pool) == len(loader) == len(list(loader)), n
    pairs = [(["w"], ["w"])] * 301
    dataset = TranslationDataset(pairs, vocab, vocab)
    assert bucket_batches(301, 6) == len(bucket_loader(dataset, 6)) == 51  # default pool 50


def test_the_scheduled_translator_plans_the_updates_the_run_makes(tiny_translation_data):
    """The scheduled-sampling translator's schedule spans the updates its run will make:
    ``steps``, or its epochs of length-bucketed batches where those end first."""
    data = dataclasses.replace(tiny_translation_data, train=tiny_translation_data.train * 70)
    full = Run(torch.device("cpu"), "full", 0)
    train = ch08.translator_plan(full, data, teacher_forcing="scheduled").train
    epochs_batches = train.epochs * len(bucket_loader(data.dataset("train"), train.batch_size))
    assert len(data.train) > 50 * train.batch_size  # past one pool
    assert epochs_batches < train.steps  # this small corpus runs out of epochs first
    assert ch08.planned_updates(train, len(data.train)) == epochs_batches
    assert train.teacher_forcing == ch08.scheduled_translator(epochs_batches)
    assert train.teacher_forcing.k == epochs_batches / 6 > 1  # (not the floor of k)


def test_planned_updates_are_steps_or_the_epochs_batches_whichever_come_first():
    per_epoch = bucket_batches(100_000, 128)  # batches of one epoch of 100,000 pairs
    assert per_epoch >= 100_000 // 128
    for steps, epochs, planned in [(None, 3, 3 * per_epoch), (1000, 2, 1000),
                                   (5000, 2, 2 * per_epoch)]:
        config = TrainConfig(batch_size=128, epochs=epochs, steps=steps)
        assert ch08.planned_updates(config, 100_000) == planned


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
