"""From token pairs to padded batches: splits, filtering, datasets, batches and loaders.

The pipeline from the corpus (:mod:`seq2seq_lib.corpus`) to what a model reads:

1. :func:`filter_pairs` drops empty and over-long pairs;
2. :func:`split_by_source` splits the pairs into train / validation / test **by source
   sentence** (no source sentence is in two splits); :func:`sample_pairs` draws a seeded
   random subset of a split (the corpus is sorted by length, so its first rows are its
   shortest sentences);
3. :meth:`TranslationData.from_pairs` does both and builds a :class:`~seq2seq_lib.vocab.Vocab`
   per language from the training split only;
4. :class:`TranslationDataset` + :func:`collate` + :func:`make_loader` make padded
   :class:`Batch` es; :func:`collate_sources` batches sources alone, to translate them.

:func:`seq2seq_lib.corpus.load_translation_data` does it all, from finding the file to the
vocabularies.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

from seq2seq_lib.vocab import BOS_ID, EOS_ID, PAD_ID, TokenPair, Vocab

# --------------------------------------------------------------------------- splits

SPLITS = ("train", "valid", "test")


def _unit_hash(key: str, seed: int) -> float:
    digest = hashlib.blake2b(f"{seed}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def split_by_source(
    pairs: Sequence[tuple[Any, Any]],
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    *,
    seed: int = 0,
) -> tuple[list[Any], list[Any], list[Any]]:
    """Split pairs into train / validation / test so that no source sentence is in two splits.

    Each pair goes to the split chosen by a seeded hash of its source sentence (the tokens
    joined by spaces, or the string): every translation of one source lands in the same split,
    and a sentence's split does not depend on which other pairs are present (filtering or
    subsampling never moves a sentence to another split). The fractions hold in expectation
    (within a fraction of a percent on this corpus), not exactly. Order within a split follows
    ``pairs``.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise ValueError(f"fractions must be 3 non-negative numbers summing to 1, got {fractions}")
    cut_train, cut_valid = fractions[0], fractions[0] + fractions[1]
    splits: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
    memo: dict[str, int] = {}
    for pair in pairs:
        src = pair[0]
        key = src if isinstance(src, str) else " ".join(src)
        which = memo.get(key)
        if which is None:
            u = _unit_hash(key, seed)
            which = memo[key] = 0 if u < cut_train else 1 if u < cut_valid else 2
        splits[which].append(pair)
    return splits


def sentence_key(sentence: str | Sequence[str]) -> str:
    """A sentence reduced to what makes two sentences "the same" for :func:`strict_split`:
    lower-cased words, without punctuation and spacing (``"Go!"`` and ``"go ."`` agree).
    Takes a string or a list of tokens."""
    text = sentence if isinstance(sentence, str) else " ".join(sentence)
    return " ".join(re.findall(r"\w+", text.lower()))


def strict_split(held_out: Iterable[tuple[Any, Any]], train: Iterable[tuple[Any, Any]], *,
                 src_text: Callable[[Any], str] | None = None,
                 tgt_text: Callable[[Any], str] | None = None) -> list[tuple[Any, Any]]:
    """The pairs of ``held_out`` whose source *and* target both differ from every training
    source and target (compared by :func:`sentence_key`; ``src_text``/``tgt_text`` turn a
    side into text first, e.g. subwords, which a space would split inside words).

    :func:`split_by_source` keeps every source sentence in one split, but one English
    sentence often has several French translations in different splits, so a "new" test
    source can still ask for a target the model has seen in training. This keeps only pairs
    new on both sides: a stricter, smaller test of translating new sentences.
    """
    src_key = (lambda s: sentence_key(src_text(s))) if src_text else sentence_key
    tgt_key = (lambda t: sentence_key(tgt_text(t))) if tgt_text else sentence_key
    sources, targets = set(), set()
    for src, tgt in train:
        sources.add(src_key(src))
        targets.add(tgt_key(tgt))
    return [(src, tgt) for src, tgt in held_out
            if src_key(src) not in sources and tgt_key(tgt) not in targets]


def sample_pairs(pairs: Sequence[Any], n: int | None, *, seed: int = 0) -> list[Any]:
    """A seeded random sample of ``n`` items of ``pairs``, kept in their order.

    Use it wherever a subset of a split stands for the whole split (a validation sample,
    a quick BLEU estimate): the corpus is sorted by sentence length and the splits keep
    its order, so ``pairs[:n]`` would be the ``n`` shortest sentences. The same ``seed``
    gives the same sample in every run (``random.Random(seed)``). ``n = None`` or
    ``n >= len(pairs)`` returns all of them (a new list). Works on any sequence: pairs,
    or the distinct sources of a split.
    """
    if n is None or n >= len(pairs):
        return list(pairs)
    if n < 0:
        raise ValueError(f"n must be >= 0 or None, got {n}")
    keep = sorted(random.Random(seed).sample(range(len(pairs)), n))
    return [pairs[i] for i in keep]


def filter_pairs(
    pairs: Iterable[TokenPair], max_len: int | None
) -> tuple[list[TokenPair], dict[str, int]]:
    """Keep pairs whose two sides both have 1 to ``max_len`` tokens; count what was dropped.

    An empty side (nothing to translate, or no translation) is dropped whatever ``max_len``.
    Returns the kept pairs and ``{"empty": ..., "too_long": ...}``.
    """
    if max_len is not None and max_len < 1:
        raise ValueError(f"max_len must be >= 1 or None, got {max_len}")
    kept: list[TokenPair] = []
    dropped = {"empty": 0, "too_long": 0}
    for src, tgt in pairs:
        if not src or not tgt:
            dropped["empty"] += 1
        elif max_len is not None and (len(src) > max_len or len(tgt) > max_len):
            dropped["too_long"] += 1
        else:
            kept.append((src, tgt))
    return kept, dropped


# --------------------------------------------------------------------------- batches


def encode_source(
    tokens: Sequence[str], vocab: Vocab, *, max_len: int | None = None
) -> list[int]:
    """Source indices ``x_1 .. x_S <eos>``: at most ``max_len`` words (longer input is
    **truncated**), then ``<eos>``. An empty sentence gives ``[<eos>]`` (length 1, never 0);
    unknown words give ``<unk>``."""
    if max_len is not None:
        tokens = tokens[:max_len]
    return vocab.encode(tokens, eos=True)


class TranslationDataset(Dataset):
    """Token pairs turned into index pairs ``(source ids, target ids)``.

    Source ids are ``x_1 .. x_S <eos>`` (:func:`encode_source`); target ids are the words
    ``y_1 .. y_T`` alone — :func:`collate` adds ``<bos>``/``<eos>``. With ``max_len`` both
    sides are truncated to ``max_len`` words (the corpus pipeline *filters* long pairs
    instead, so there nothing is truncated).
    """

    def __init__(
        self,
        pairs: Sequence[TokenPair],
        src_vocab: Vocab,
        tgt_vocab: Vocab,
        *,
        max_len: int | None = None,
    ) -> None:
        self.examples = [
            (encode_source(src, src_vocab, max_len=max_len), tgt_vocab.encode(tgt[:max_len]))
            for src, tgt in pairs
        ]

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> tuple[list[int], list[int]]:
        return self.examples[index]


@dataclass
class Batch:
    """A padded batch (``B`` pairs, ``S`` = longest source, ``T`` = longest target + 1).

    Attributes:
        src: ``(B, S)`` source ids ``x_1 .. x_n <eos>`` then ``<pad>`` (reversed words if
            ``reverse_source``).
        src_lengths: ``(B,)`` real source lengths (``<eos>`` included), for
            ``pack_padded_sequence``.
        src_mask: ``(B, S)`` bool, True at real source positions.
        tgt_in: ``(B, T)`` decoder input ``<bos> y_1 .. y_m`` then ``<pad>`` (teacher forcing).
        tgt_out: ``(B, T)`` decoder target ``y_1 .. y_m <eos>`` then ``<pad>``.
        tgt_lengths: ``(B,)`` ``m + 1``.
        tgt_mask: ``(B, T)`` bool, True where ``tgt_out`` is a real token (the loss mask).
    """

    src: torch.Tensor
    src_lengths: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_lengths: torch.Tensor
    tgt_mask: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        """A copy with every tensor on ``device``."""
        return Batch(**{k: v.to(device) for k, v in vars(self).items()})

    @property
    def num_tokens(self) -> int:
        """Number of real target tokens (what a per-token loss averages over)."""
        return int(self.tgt_mask.sum())


def _pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), PAD_ID, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def collate(
    examples: Sequence[tuple[Sequence[int], Sequence[int]]], *, reverse_source: bool = False
) -> Batch:
    """Pad a list of ``(source ids, target ids)`` into a :class:`Batch`.

    With ``reverse_source`` (Sutskever et al., 2014) the source *words* are reversed and the
    final ``<eos>`` and the padding stay where they are: ``a b c <eos> <pad>`` →
    ``c b a <eos> <pad>``.
    """
    if not examples:
        raise ValueError("collate needs at least one example")
    srcs: list[list[int]] = []
    for src, _ in examples:
        src = list(src)
        if not src or src[-1] != EOS_ID:
            raise ValueError(f"a source must end with <eos> (id {EOS_ID}), got {src}")
        srcs.append(src[-2::-1] + [EOS_ID] if reverse_source else src)
    tgt_in = [[BOS_ID, *tgt] for _, tgt in examples]
    tgt_out = [[*tgt, EOS_ID] for _, tgt in examples]
    src = _pad(srcs)
    tgt_out_t = _pad(tgt_out)
    return Batch(
        src=src,
        src_lengths=torch.tensor([len(s) for s in srcs], dtype=torch.long),
        src_mask=src != PAD_ID,
        tgt_in=_pad(tgt_in),
        tgt_out=tgt_out_t,
        tgt_lengths=torch.tensor([len(t) for t in tgt_out], dtype=torch.long),
        tgt_mask=tgt_out_t != PAD_ID,
    )


def collate_sources(
    sources: Sequence[Sequence[str]] | Sequence[Sequence[int]],
    vocab: Vocab | None = None,
    *,
    reverse_source: bool = False,
    max_len: int | None = None,
) -> Batch:
    """Pad source sentences alone (nothing to compare with: to translate them) into a
    :class:`Batch`.

    Each source is either tokens, encoded with :func:`encode_source` (``vocab`` needed;
    ``max_len`` truncates), or ids already ending with ``<eos>`` (as :func:`encode_source`
    returns them). The batch's target fields hold an empty target (``tgt_in`` = ``<bos>``);
    ``src``, ``src_lengths`` and ``src_mask`` are what a decoder needs.
    ``reverse_source``: see :func:`collate`.
    """
    examples = []
    for source in sources:
        if all(isinstance(t, int) for t in source) and source:
            examples.append((list(source), []))
        elif vocab is None:
            raise ValueError("collate_sources needs the vocabulary to encode token sentences")
        else:
            examples.append((encode_source(source, vocab, max_len=max_len), []))  # type: ignore[arg-type]
    return collate(examples, reverse_source=reverse_source)


def make_loader(
    dataset: Dataset,
    batch_size: int,
    *,
    shuffle: bool = False,
    seed: int = 0,
    reverse_source: bool = False,
    drop_last: bool = False,
) -> DataLoader:
    """A deterministic :class:`~torch.utils.data.DataLoader` of :class:`Batch` es.

    The shuffle order comes from a ``torch.Generator`` seeded with ``seed``: the same seed
    gives the same batches in every run, independent of the global RNG.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    generator = torch.Generator()
    generator.manual_seed(seed)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        generator=generator,
        drop_last=drop_last,
        collate_fn=partial(collate, reverse_source=reverse_source),
    )


# --------------------------------------------------------------------------- all together


@dataclass
class TranslationData:
    """Tokenised train / validation / test pairs and the two vocabularies (from train only).

    Each split is a list of ``(source tokens, target tokens)``. ``stats`` records the counts
    at each step (pairs read, dropped as empty or too long, kept, per split).
    """

    train: list[TokenPair]
    valid: list[TokenPair]
    test: list[TokenPair]
    src_vocab: Vocab
    tgt_vocab: Vocab
    name: str = ""
    stats: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_pairs(
        cls,
        pairs: Sequence[TokenPair],
        *,
        name: str = "",
        max_len: int | None = None,
        min_freq: int = 1,
        num_pairs: int | None = None,
        fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
        seed: int = 0,
    ) -> TranslationData:
        """Filter (:func:`filter_pairs`), optionally subsample ``num_pairs`` pairs (seeded,
        corpus order kept), split by source (:func:`split_by_source`) and build the
        vocabularies from the training split with ``min_freq``."""
        if num_pairs is not None and num_pairs < 1:
            raise ValueError(f"num_pairs must be >= 1 or None, got {num_pairs}")
        kept, dropped = filter_pairs(pairs, max_len)
        stats = {"pairs": len(pairs), **dropped, "kept": len(kept)}
        if num_pairs is not None and num_pairs < len(kept):
            kept = sample_pairs(kept, num_pairs, seed=seed)
            stats["subsampled"] = len(kept)
        train, valid, test = split_by_source(kept, fractions, seed=seed)
        stats.update(train=len(train), valid=len(valid), test=len(test))
        src_vocab = Vocab.build((s for s, _ in train), min_freq=min_freq)
        tgt_vocab = Vocab.build((t for _, t in train), min_freq=min_freq)
        return cls(train, valid, test, src_vocab, tgt_vocab, name, stats)

    @cached_property
    def strict_test(self) -> list[TokenPair]:
        """The test pairs whose source and target both differ from every training pair's
        (:func:`strict_split`): new sentences on both sides."""
        return strict_split(self.test, self.train, src_text=self.src_vocab.detokenize,
                            tgt_text=self.tgt_vocab.detokenize)

    def split(self, which: str) -> list[TokenPair]:
        """The pairs of split ``"train"``, ``"valid"`` or ``"test"``."""
        if which not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {which!r}")
        return getattr(self, which)

    def dataset(self, which: str) -> TranslationDataset:
        """A :class:`TranslationDataset` of split ``which``."""
        return TranslationDataset(self.split(which), self.src_vocab, self.tgt_vocab)

    def loader(
        self,
        which: str,
        batch_size: int,
        *,
        shuffle: bool | None = None,
        seed: int = 0,
        reverse_source: bool = False,
    ) -> DataLoader:
        """:func:`make_loader` over split ``which``; shuffled by default for ``"train"`` only."""
        shuffle = (which == "train") if shuffle is None else shuffle
        return make_loader(
            self.dataset(which), batch_size, shuffle=shuffle, seed=seed,
            reverse_source=reverse_source,
        )

    def with_eval_samples(self, n: int, seed: int = 0) -> TranslationData:
        """The same data with seeded random samples of ``n`` pairs (corpus order kept) as
        its validation and test splits, and ``stats`` to match (a smoke run's data)."""
        valid, test = (sample_pairs(split, n, seed=seed) for split in (self.valid, self.test))
        return dataclasses.replace(self, valid=valid, test=test,
                                   stats={**self.stats, "valid": len(valid), "test": len(test)})

    def summary(self) -> str:
        """One line with split sizes and vocabulary sizes."""
        return (
            f"{self.name}: train {len(self.train):,} | valid {len(self.valid):,} | "
            f"test {len(self.test):,} pairs; vocab src {len(self.src_vocab):,} | "
            f"tgt {len(self.tgt_vocab):,}"
        )
