"""Length-bucketed batches: less padding, so fewer wasted decoder steps.

A batch is padded to its longest sentence. Random batches of short sentences (this corpus:
1 to 11 target tokens) are padded to nearly the maximum length, and the decoder — which runs
over every padded position — does up to half its work on padding. :class:`BucketBatchSampler`
keeps the randomness of shuffling but groups sentences of similar length:

1. shuffle all indices (seeded ``torch.Generator``);
2. cut them into pools of ``pool`` batches, sort each pool by (target length, source length);
3. cut each sorted pool into batches and shuffle the order of all batches.

Every sentence is still seen once per epoch, and batches still mix sentences from the whole
corpus. :func:`bucket_loader` wraps it in a :class:`~torch.utils.data.DataLoader` producing
:class:`~seq2seq_lib.batches.Batch` es, like :func:`seq2seq_lib.batches.make_loader`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial

import torch
from torch.utils.data import DataLoader, Sampler

from seq2seq_lib.batches import TranslationDataset, collate


class BucketBatchSampler(Sampler[list[int]]):
    """Yields lists of indices whose ``lengths`` are similar (see the module docstring).

    Args:
        lengths: one sort key per example (e.g. ``(target length, source length)``).
        batch_size: examples per batch (the last batch of a pool may be smaller).
        pool: batches per sorting pool; larger pools mean less padding, less randomness.
        shuffle: when False, examples are sorted in pools in their given order.
        seed: seeds ``generator`` (reseed it to change the order, e.g. per epoch).
    """

    def __init__(
        self,
        lengths: Sequence[tuple[int, ...] | int],
        batch_size: int,
        *,
        pool: int = 50,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        if batch_size < 1 or pool < 1:
            raise ValueError(f"batch_size and pool must be >= 1, got {batch_size}, {pool}")
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.pool = pool
        self.shuffle = shuffle
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self) -> Iterator[list[int]]:
        n = len(self.lengths)
        if self.shuffle:
            order = torch.randperm(n, generator=self.generator).tolist()
        else:
            order = list(range(n))
        size = self.batch_size * self.pool
        batches: list[list[int]] = []
        for start in range(0, n, size):
            chunk = sorted(order[start : start + size], key=self.lengths.__getitem__)
            batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
        if self.shuffle:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=self.generator)]
        return iter(batches)

    def __len__(self) -> int:
        return bucket_batches(len(self.lengths), self.batch_size, self.pool)


def bucket_batches(n: int, batch_size: int, pool: int = 50) -> int:
    """The number of batches :class:`BucketBatchSampler` makes of ``n`` examples per epoch:
    each pool of ``batch_size * pool`` examples gives ``pool`` batches, the last pool
    ``ceil(rest / batch_size)``."""
    full, rest = divmod(n, batch_size * pool)
    return full * pool + -(-rest // batch_size)


def bucket_loader(
    dataset: TranslationDataset,
    batch_size: int,
    *,
    shuffle: bool = True,
    seed: int = 0,
    reverse_source: bool = False,
    pool: int = 50,
) -> DataLoader:
    """A :class:`~torch.utils.data.DataLoader` of padded :class:`~seq2seq_lib.batches.Batch` es
    built from length buckets (:class:`BucketBatchSampler`) of ``dataset``."""
    lengths = [(len(tgt), len(src)) for src, tgt in dataset.examples]
    sampler = BucketBatchSampler(lengths, batch_size, pool=pool, shuffle=shuffle, seed=seed)
    return DataLoader(
        dataset, batch_sampler=sampler, collate_fn=partial(collate, reverse_source=reverse_source)
    )
