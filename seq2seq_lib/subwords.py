"""Subword units by byte-pair encoding (BPE): a vocabulary with no word outside it.

A word-level vocabulary keeps the words seen often enough in training and maps every other
word to ``<unk>``; a translator then cannot read a rare source word, nor write a rare target
word. Sennrich, Haddow and Birch (2016) borrowed byte-pair encoding, a compression scheme
(Gage 1994), to build the vocabulary from pieces of words instead:

1. start from the characters: every word is a sequence of one-character symbols;
2. count every pair of adjacent symbols over the training words (weighted by how often the
   word occurs), merge the most frequent pair into one new symbol everywhere, and repeat
   until the vocabulary has the size asked for.

Frequent words end up as one symbol, rare words as a few pieces, and any word made of known
characters can be written, so no ``<unk>`` is needed. Segmenting a new word replays the
merges in the order they were learned (:meth:`BPE.segment`).

Words and spaces. :func:`pre_tokenize` splits text into *pieces* — runs of letters and
digits, and single punctuation marks — and marks a piece that follows a space with
:data:`SPACE` (``▁``, as SentencePiece does), so ``"Je suis là."`` becomes
``["▁Je", "▁suis", "▁là", "."]``. Merges never cross a piece boundary, and
:func:`detokenize` (``"".join``, then ``▁`` → space) gives back the text exactly, casing and
punctuation included: what a translator writes needs no rules to be turned back into text.

Ties. When several pairs are equally frequent, :func:`learn_bpe` merges the pair whose
symbols were created first: symbols are numbered, the characters in code-point order, then
each merged symbol in the order it was made, and the pair with the smallest
``(left number, right number)`` wins. That is the rule of Hugging Face ``tokenizers``'
``BpeTrainer``, so the two learn the same merges from the same word counts
(``tests/test_subwords.py`` checks it on the course's corpus).
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from seq2seq_lib.batches import TranslationData, split_by_source
from seq2seq_lib.vocab import SPECIALS, Vocab, tokenize

SPACE = "\u2581"
"""``▁`` (U+2581): marks a piece that follows a space."""

_PIECE = re.compile(r"(\s*)(\w+|[^\w\s])")
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFC form, every run of whitespace (U+202F and U+00A0 included) one space, stripped."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text).replace(SPACE, " ")).strip()


def pre_tokenize(text: str) -> list[str]:
    """Split text into pieces: runs of letters and digits (``\\w+``) and single other
    characters, a piece that follows a space (or starts the text) marked with :data:`SPACE`.

    >>> pre_tokenize("Je suis là.")
    ['▁Je', '▁suis', '▁là', '.']
    >>> pre_tokenize("Qu'est-ce ?")
    ['▁Qu', "'", 'est', '-', 'ce', '▁?']

    ``detokenize(pre_tokenize(text)) == normalize(text)`` for every text.
    """
    return [SPACE * bool(space) + piece for space, piece in _PIECE.findall(" " + normalize(text))]


def detokenize(pieces: Iterable[str]) -> str:
    """The text of a sequence of pieces or subwords: joined, ``▁`` back to a space.

    >>> detokenize(["▁Je", "▁su", "is", "▁là", "."])
    'Je suis là.'
    """
    return "".join(pieces).replace(SPACE, " ").strip()


def piece_counts(texts: Iterable[str]) -> Counter[str]:
    """How often each piece (:func:`pre_tokenize`) occurs in ``texts``: what BPE learns from."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(pre_tokenize(text))
    return counts


@dataclass(frozen=True)
class BPE:
    """Learned byte-pair merges: the alphabet (the characters seen in training, in code-point
    order) and the merges ``(left, right)`` in the order they were learned.

    :meth:`segment` splits a piece into subwords, :meth:`encode` a text; every subword it
    writes is in :attr:`symbols`, except characters never seen in training, which it keeps
    as they are (a vocabulary maps them to ``<unk>``).
    """

    alphabet: tuple[str, ...]
    merges: tuple[tuple[str, str], ...]
    _ranks: dict[tuple[str, str], int] = field(init=False, repr=False, compare=False)
    _cache: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ranks", {pair: i for i, pair in enumerate(self.merges)})
        object.__setattr__(self, "_cache", {})

    @property
    def symbols(self) -> list[str]:
        """Every symbol this BPE can write — the alphabet, then each merge's result (without
        repeats) — in the order they were made."""
        return list(dict.fromkeys([*self.alphabet, *(left + right for left, right in self.merges)]))

    def segment(self, piece: str) -> list[str]:
        """Split one piece into subwords: start from its characters and apply the learned
        merges, lowest rank (earliest learned) first, each at its leftmost place first.

        >>> BPE(("a", "b", "c"), (("a", "b"), ("ab", "c"))).segment("abcab")
        ['abc', 'ab']
        """
        return list(self._segmented(piece))

    def encode(self, text: str) -> list[str]:
        """The subwords of a text: :func:`pre_tokenize`, then :meth:`segment` each piece."""
        return [sub for piece in pre_tokenize(text) for sub in self._segmented(piece)]

    def to_dict(self) -> dict[str, list]:
        """Plain data for a checkpoint (:meth:`from_dict` reads it back)."""
        return {"alphabet": list(self.alphabet), "merges": [list(m) for m in self.merges]}

    def _segmented(self, piece: str) -> tuple[str, ...]:
        found = self._cache.get(piece)
        if found is None:
            found = self._cache[piece] = _segment(piece, self._ranks)
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Sequence]) -> BPE:
        """The inverse of :meth:`to_dict`."""
        return cls(tuple(data["alphabet"]), tuple((left, right) for left, right in data["merges"]))


def _segment(piece: str, ranks: Mapping[tuple[str, str], int]) -> tuple[str, ...]:
    symbols = list(piece)
    while len(symbols) > 1:
        pairs = [(ranks.get(pair, len(ranks)), i) for i, pair in
                 enumerate(pairwise(symbols))]
        rank, i = min(pairs)
        if rank == len(ranks):  # no learned merge applies any more
            break
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
    return tuple(symbols)


def learn_bpe(counts: Mapping[str, int], vocab_size: int, *, min_frequency: int = 2) -> BPE:
    """Learn byte-pair merges from piece counts (:func:`piece_counts`).

    Merges the most frequent pair of adjacent symbols, counted over all pieces weighted by
    their counts, until there are ``vocab_size`` symbols (the alphabet included) or the most
    frequent pair occurs fewer than ``min_frequency`` times. Ties go to the pair of
    earliest-made symbols (module docstring). Pair counts are kept up to date after each
    merge by recounting only the pieces that held the merged pair, and the most frequent pair
    is found with a heap whose stale entries are corrected when they surface.

    Raises:
        ValueError: ``vocab_size`` smaller than the alphabet.
    """
    alphabet = sorted({ch for piece in counts for ch in piece})
    if vocab_size < len(alphabet):
        raise ValueError(f"vocab_size {vocab_size} is smaller than the alphabet ({len(alphabet)})")
    ids = {symbol: i for i, symbol in enumerate(alphabet)}  # the tie-break order
    words = [list(piece) for piece in counts]
    weight = list(counts.values())
    pair_count: defaultdict[tuple[str, str], int] = defaultdict(int)
    where: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
    for w, symbols in enumerate(words):
        for pair in pairwise(symbols):
            pair_count[pair] += weight[w]
            where[pair].add(w)

    def entry(pair: tuple[str, str]) -> tuple[int, int, int, tuple[str, str]]:
        return (-pair_count[pair], ids[pair[0]], ids[pair[1]], pair)

    heap = [entry(pair) for pair in pair_count]
    heapq.heapify(heap)
    merges: list[tuple[str, str]] = []
    while len(ids) < vocab_size and heap:
        negative, _, _, pair = heapq.heappop(heap)
        if -negative != pair_count[pair]:  # stale: its count fell since it was pushed
            if pair_count[pair] > 0:
                heapq.heappush(heap, entry(pair))
            continue
        if -negative < max(min_frequency, 1):
            break
        merges.append(pair)
        left, right = pair
        merged = left + right
        ids.setdefault(merged, len(ids))
        changed: set[tuple[str, str]] = set()
        for w in where.pop(pair):
            symbols = words[w]
            for old in pairwise(symbols):
                pair_count[old] -= weight[w]
            i, out = 0, []
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            words[w] = out
            for new in pairwise(out):
                pair_count[new] += weight[w]
                where[new].add(w)
                changed.add(new)
        for new in changed:
            if pair_count[new] > 0 and merged in new:
                heapq.heappush(heap, entry(new))
    return BPE(tuple(alphabet), tuple(merges))


class SubwordVocab(Vocab):
    """The vocabulary of a :class:`BPE`: the four reserved tokens, then every symbol the BPE
    can write (:attr:`BPE.symbols`), so a text made of characters seen in training never
    needs ``<unk>``. It splits text into subwords (:meth:`tokenize`) and joins them back
    (:meth:`detokenize`) exactly, casing and punctuation included; the ``lowercase`` and
    ``lang`` options of a word vocabulary do not apply and are ignored.
    """

    def __init__(self, bpe: BPE) -> None:
        super().__init__([*SPECIALS, *bpe.symbols])
        self.bpe = bpe

    def __repr__(self) -> str:
        return f"SubwordVocab(size={len(self)}, merges={len(self.bpe.merges)})"

    def tokenize(self, text: str, *, lowercase: bool = False) -> list[str]:
        """The subwords of a raw sentence (:meth:`BPE.encode`)."""
        return self.bpe.encode(text)

    def detokenize(self, tokens: Iterable[str], *, lang: str = "en") -> str:
        """The text of subwords (:func:`detokenize`)."""
        return detokenize(tokens)


def subword_data(
    pairs: Sequence[tuple[str, str]],
    *,
    src_size: int,
    tgt_size: int,
    max_len: int | None = None,
    name: str = "",
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
) -> TranslationData:
    """Translation data in subwords of the cased text, from raw ``(source, target)`` strings.

    The pairs kept and their splits are those of the word-level data
    (:meth:`TranslationData.from_pairs <seq2seq_lib.batches.TranslationData.from_pairs>` on
    lower-cased word tokens, :func:`~seq2seq_lib.vocab.tokenize`: at most ``max_len`` words
    on each side, split by source sentence), so the two describe the same sentences. A BPE
    of ``src_size`` (``tgt_size``) symbols is learned from the training split's source
    (target) text alone, and every split is encoded with it; the vocabularies are
    :class:`SubwordVocab` s. Detokenised, a target is its corpus sentence with whitespace
    normalised (:func:`normalize`): BLEU compares translations with the references as
    written, in their casing.
    """
    kept = []
    for i, (src, tgt) in enumerate(pairs):
        src_words, tgt_words = tokenize(src), tokenize(tgt)
        if src_words and tgt_words and (max_len is None or max(len(src_words),
                                                               len(tgt_words)) <= max_len):
            kept.append((src_words, i))
    splits = split_by_source(kept, fractions, seed=seed)
    raw = [[pairs[i] for _, i in split] for split in splits]
    src_bpe = learn_bpe(piece_counts(src for src, _ in raw[0]), src_size)
    tgt_bpe = learn_bpe(piece_counts(tgt for _, tgt in raw[0]), tgt_size)
    encoded = [[(src_bpe.encode(src), tgt_bpe.encode(tgt)) for src, tgt in split]
               for split in raw]
    stats = {"pairs": len(pairs), "kept": len(kept), "train": len(encoded[0]),
             "valid": len(encoded[1]), "test": len(encoded[2])}
    return TranslationData(*encoded, SubwordVocab(src_bpe), SubwordVocab(tgt_bpe), name, stats)
