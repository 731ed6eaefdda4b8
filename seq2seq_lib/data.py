"""English–French sentence pairs: the corpus, tokens, vocabularies, splits and batches.

The corpus is the Tatoeba / manythings.org ``fra.txt`` that *Dive into Deep Learning* uses
(167,130 pairs, one ``English<TAB>French`` pair per line). From file to padded batch:

1. :func:`find_corpus` locates ``fra-eng/fra.txt`` — an explicit path, then the folder named by
   ``$SEQ2SEQ_DATA``, then the user cache ``~/.cache/seq2seq-course/data``, and finally a
   download of d2l's ``fra-eng.zip`` (checked by SHA-1, extracted safely, the text file checked
   by SHA-256; see :mod:`seq2seq_lib.download`).
2. :func:`read_pairs` reads the lines; a line that is not exactly two tab-separated fields is
   a :class:`ValueError` naming the line.
3. :func:`tokenize` normalises and splits a sentence the way d2l does (below).
4. :meth:`TranslationData.from_pairs` drops empty and over-long pairs, splits the pairs into
   train / validation / test **by source sentence** (no source sentence is in two splits),
   and builds a :class:`Vocab` per language from the training split only.
5. :class:`TranslationDataset` + :func:`collate` + :func:`make_loader` make padded batches.

:func:`load_translation_data` does all five. Tokenisation (identical to d2l's ``preprocess_nmt``
+ ``tokenize_nmt`` on this corpus):

* U+202F (narrow no-break space, French typography before ``! ? ; :``) and U+00A0 become a
  space;
* the text is lower-cased (optional);
* a space is put before every ``, . ! ?`` so that punctuation becomes a token of its own:
  ``"Run!"`` → ``["run", "!"]``;
* the sentence is split on whitespace. Nothing else is split: ``"don't"`` and ``"l'aide"``
  stay one token, and ``; :`` only separate where the text already has a space.

On this corpus the English tokens are exactly d2l's; the French ones differ only in the 79
sentences holding a U+2009 thin space, which d2l (splitting on ``" "`` alone) keeps glued to
a word and we treat as a separator like any other whitespace.

:func:`detokenize` undoes the punctuation spacing for English (``["run", "!"]`` → ``"run!"``);
the detokenised text is what BLEU (``sacrebleu``) scores.

The data is from the Tatoeba Project, licensed CC-BY 2.0 France; the pairs were selected by
manythings.org. Anything that shows it must keep :data:`ATTRIBUTION`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import random
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import torch
from torch.utils.data import DataLoader, Dataset

from seq2seq_lib.download import (
    ChecksumError,
    Opener,
    download_file,
    extract_zip,
    file_digest,
    verify_file,
)

# --------------------------------------------------------------------------- the corpus

CORPUS_URL = "http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip"
CORPUS_ZIP_SHA1 = "94646ad1522d915e7b0f9296181140edcf86a4f5"
CORPUS_FILE = "fra-eng/fra.txt"
CORPUS_SHA256 = "0bb85dbaa1c896844649094d7eaf2e34bee34e84fe362b26ce7e8f2e12aae104"
ATTRIBUTION = "Attribution: www.manythings.org/anki and tatoeba.org"
LICENSE = "CC-BY 2.0 FR (https://creativecommons.org/licenses/by/2.0/fr/)"
ENV_DATA = "SEQ2SEQ_DATA"

TokenPair = tuple[list[str], list[str]]


def data_cache_dir() -> Path:
    """The user cache for downloaded data: ``~/.cache/seq2seq-course/data``."""
    return Path.home() / ".cache" / "seq2seq-course" / "data"


def _how_to_supply() -> str:
    return (
        f"To work offline, put the corpus at <folder>/{CORPUS_FILE} (sha256 {CORPUS_SHA256}) "
        f"and set the environment variable {ENV_DATA}=<folder>, or pass the file's path "
        f"(load_translation_data(path=...)). It is the file {CORPUS_FILE} inside {CORPUS_URL} "
        f"(sha1 {CORPUS_ZIP_SHA1}), from www.manythings.org/anki."
    )


def _corpus_in(location: Path) -> Path | None:
    """``location`` itself if it is a file, else ``location/fra-eng/fra.txt`` or ``/fra.txt``."""
    if location.is_file():
        return location
    for candidate in (location / CORPUS_FILE, location / Path(CORPUS_FILE).name):
        if candidate.is_file():
            return candidate
    return None


def _env_folders(env: str | None) -> list[Path]:
    """Where ``$SEQ2SEQ_DATA`` may point: as given, and (if relative) from the repo root."""
    if not env:
        return []
    folder = Path(env).expanduser()
    if folder.is_absolute():
        return [folder]
    return [folder, Path(__file__).resolve().parents[1] / folder]


def _fetch_into(cache: Path, url: str, opener: Opener | None) -> Path:
    """Download the zip into ``cache``, extract it, check ``fra.txt`` and move it into place."""
    archive = cache / (Path(urlsplit(url).path).name or "fra-eng.zip")
    if not (archive.is_file() and file_digest(archive, "sha1") == CORPUS_ZIP_SHA1):
        download_file(
            url, archive, expected=CORPUS_ZIP_SHA1, algorithm="sha1",
            opener=opener, hint=_how_to_supply(),
        )
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache))
    try:
        extract_zip(archive, staging)
        text = staging / CORPUS_FILE
        if not text.is_file():
            raise FileNotFoundError(f"{archive} holds no {CORPUS_FILE}")
        verify_file(text, CORPUS_SHA256, "sha256")
        final = cache / CORPUS_FILE
        final.parent.mkdir(parents=True, exist_ok=True)
        for member in text.parent.iterdir():  # fra.txt and _about.txt
            if member.is_file():
                os.replace(member, final.parent / member.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def find_corpus(
    path: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    url: str | None = None,
    opener: Opener | None = None,
    download: bool = True,
    verify: bool = True,
) -> Path:
    """Return the path of ``fra-eng/fra.txt``, downloading it only when it is nowhere else.

    Lookup order:

    1. ``path`` — the file itself, or a folder holding ``fra-eng/fra.txt`` (or ``fra.txt``);
       it must exist.
    2. ``$SEQ2SEQ_DATA`` — a folder holding ``fra-eng/fra.txt`` (skipped when it has none).
       A relative path is tried from the working directory, then from the repository root
       (so ``SEQ2SEQ_DATA=../shared/data`` works both for pytest at the root and for a
       notebook kernel running in ``chapters/``).
    3. ``cache_dir`` (default :func:`data_cache_dir`) — a copy downloaded earlier.
    4. download ``url`` (default :data:`CORPUS_URL`) into ``cache_dir``, check the zip's SHA-1,
       extract it safely and check ``fra.txt``'s SHA-256 before it gets its final name.

    Args:
        verify: check the file's SHA-256 against :data:`CORPUS_SHA256` (turn off only for
            your own corpus in the same format).
        opener: replaces :func:`urllib.request.urlopen` (tests serve a local zip with it).
        download: when False, a missing corpus raises :class:`FileNotFoundError` instead.

    Raises:
        FileNotFoundError: ``path`` does not exist, or no copy anywhere and ``download=False``.
        ChecksumError: a file found or downloaded has the wrong digest.
        DownloadError: offline; the message says how to supply the file by hand.
        CorruptArchiveError: the downloaded zip is truncated, corrupt or unsafe.
    """
    if path is not None:
        found = _corpus_in(Path(path).expanduser())
        if found is None:
            raise FileNotFoundError(f"no corpus file at {path} (nor {CORPUS_FILE} inside it)")
    else:
        env = os.environ.get(ENV_DATA)
        found = None
        for folder in _env_folders(env):
            found = found or _corpus_in(folder)
        cache = Path(cache_dir).expanduser() if cache_dir is not None else data_cache_dir()
        if found is None and (cache / CORPUS_FILE).is_file():
            found = cache / CORPUS_FILE
        if found is None:
            if not download:
                where = f"${ENV_DATA}={env!r}, " if env else ""
                raise FileNotFoundError(
                    f"the corpus is not in {where}{cache} and download=False. {_how_to_supply()}"
                )
            cache.mkdir(parents=True, exist_ok=True)
            return _fetch_into(cache, url or CORPUS_URL, opener)
    if verify:
        try:
            verify_file(found, CORPUS_SHA256, "sha256")
        except ChecksumError as err:
            raise ChecksumError(
                f"{err}. Pass verify=False to use a different version of the corpus on purpose."
            ) from None
    return found


def read_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """Read ``English<TAB>French`` lines into ``(english, french)`` string pairs.

    A final newline is allowed and a trailing ``\\r`` is dropped; a UTF-8 BOM is ignored.

    Raises:
        ValueError: a line that does not hold exactly two tab-separated fields (an attribution
            column, a blank line); the message names the file, the 1-based line number and
            shows the line.
    """
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        fields = line.removesuffix("\r").split("\t")
        if len(fields) != 2:
            shown = line if len(line) <= 200 else line[:200] + "..."
            raise ValueError(
                f"{path}, line {number}: expected 2 tab-separated fields (English<TAB>French), "
                f"got {len(fields)}: {shown!r}"
            )
        pairs.append((fields[0], fields[1]))
    return pairs


# --------------------------------------------------------------------------- tokens

_PUNCT = ",.!?"


def tokenize(text: str, *, lowercase: bool = True) -> list[str]:
    """Split a sentence into word and punctuation tokens (d2l's preprocessing).

    U+202F and U+00A0 become spaces, the text is lower-cased when ``lowercase``, ``, . ! ?``
    each become a token of their own, and the result is split on whitespace::

        >>> tokenize("Ça alors\\u202f!")
        ['ça', 'alors', '!']
        >>> tokenize("I'm OK, thanks.")
        ["i'm", 'ok', ',', 'thanks', '.']

    An empty or all-space string gives ``[]``.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__}")
    if lowercase:
        text = text.lower()
    text = text.replace("\u202f", " ").replace("\xa0", " ")
    for mark in _PUNCT:
        text = text.replace(mark, " " + mark)
    return text.split()


def detokenize(tokens: Iterable[str], *, lang: str = "en") -> str:
    """Join tokens into text, the inverse of :func:`tokenize` up to case and spacing.

    English (``lang="en"``): no space before ``, . ! ?`` — ``["run", "!"]`` → ``"run!"``.
    French (``lang="fr"``): no space before ``, .`` but one before ``! ?`` — ``"cours !"``.
    For English text with single spaces and no space before ``, . ! ?``,
    ``detokenize(tokenize(s, lowercase=False)) == s``.
    """
    if lang not in ("en", "fr"):
        raise ValueError(f"lang must be 'en' or 'fr', got {lang!r}")
    glued = _PUNCT if lang == "en" else ",."
    out: list[str] = []
    for token in tokens:
        if out and token and token[0] in glued and len(token) == 1:
            out[-1] += token
        else:
            out.append(token)
    return " ".join(out)


# --------------------------------------------------------------------------- vocabulary

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)


class Vocab:
    """A token ↔ index table with the reserved tokens ``<pad>`` = 0, ``<bos>`` = 1,
    ``<eos>`` = 2 and ``<unk>`` = 3.

    :meth:`build` counts tokens (build it from the **training split only**, so validation
    and test words the model never saw map to ``<unk>``), keeps those seen at least
    ``min_freq`` times, and orders them by frequency (descending), ties by the token string —
    the same input always gives the same indices. The padding index 0 is distinct from
    ``<bos>``, so a loss with ``ignore_index=PAD_ID`` never ignores a real start token.

    Args:
        tokens: the whole index-to-token list; it must start with :data:`SPECIALS` and hold
            no duplicates.
    """

    pad_id, bos_id, eos_id, unk_id = PAD_ID, BOS_ID, EOS_ID, UNK_ID

    def __init__(self, tokens: Sequence[str]) -> None:
        itos = list(tokens)
        if tuple(itos[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a Vocab must start with {SPECIALS}, got {itos[:len(SPECIALS)]}")
        if not all(isinstance(t, str) for t in itos):
            raise TypeError("every token of a Vocab must be a str")
        self.itos: list[str] = itos
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(itos)}
        if len(self.stoi) != len(itos):
            dup = next(t for t, n in Counter(itos).items() if n > 1)
            raise ValueError(f"token {dup!r} appears twice in the Vocab")

    @classmethod
    def build(
        cls, sentences: Iterable[Sequence[str]], *, min_freq: int = 1, max_size: int | None = None
    ) -> Vocab:
        """Count the tokens of ``sentences`` and keep those with count ``>= min_freq``.

        ``max_size`` caps the vocabulary (specials included) by keeping the most frequent.
        A token spelled like a special (``"<unk>"`` in the text) is not added twice.
        """
        if min_freq < 1:
            raise ValueError(f"min_freq must be >= 1, got {min_freq}")
        counts = Counter(token for sentence in sentences for token in sentence)
        kept = sorted(
            (t for t, n in counts.items() if n >= min_freq and t not in SPECIALS),
            key=lambda t: (-counts[t], t),
        )
        if max_size is not None:
            if max_size < len(SPECIALS):
                raise ValueError(f"max_size must be >= {len(SPECIALS)}, got {max_size}")
            kept = kept[: max_size - len(SPECIALS)]
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        """The index of ``token``; :data:`UNK_ID` for a token not in the vocabulary."""
        return self.stoi.get(token, UNK_ID)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside: not hashable

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, first={self.itos[len(SPECIALS):len(SPECIALS) + 5]})"

    def encode(self, tokens: Iterable[str], *, bos: bool = False, eos: bool = False) -> list[int]:
        """Indices of ``tokens`` (unknown → ``<unk>``), with ``<bos>``/``<eos>`` if asked."""
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return ([BOS_ID] if bos else []) + ids + ([EOS_ID] if eos else [])

    def decode(self, ids: Iterable[int] | torch.Tensor, *, strip: bool = True) -> list[str]:
        """Tokens of ``ids``. With ``strip`` (default) stop at the first ``<eos>`` and drop
        ``<pad>`` and ``<bos>`` — what a model's output should print as.

        Raises:
            IndexError: an index outside ``[0, len(self))``.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"decode expects a 1-D sequence, got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        out: list[str] = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.itos):
                raise IndexError(f"index {i} is outside the vocabulary (size {len(self)})")
            if strip and i == EOS_ID:
                break
            if strip and i in (PAD_ID, BOS_ID):
                continue
            out.append(self.itos[i])
        return out

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the vocabulary as JSON, atomically (temporary file then ``os.replace``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"format": "seq2seq_lib.Vocab", "version": 1, "tokens": self.itos}
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Vocab:
        """Read a vocabulary written by :meth:`save`.

        Raises:
            ValueError: not a saved Vocab (wrong JSON, format tag, or specials).
        """
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not a saved Vocab (invalid JSON: {err})") from None
        if not isinstance(payload, dict) or payload.get("format") != "seq2seq_lib.Vocab":
            raise ValueError(f"{path} is not a saved Vocab (no 'seq2seq_lib.Vocab' format tag)")
        return cls(payload["tokens"])


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
            chosen = sorted(random.Random(seed).sample(range(len(kept)), num_pairs))
            kept = [kept[i] for i in chosen]
            stats["subsampled"] = len(kept)
        train, valid, test = split_by_source(kept, fractions, seed=seed)
        stats.update(train=len(train), valid=len(valid), test=len(test))
        src_vocab = Vocab.build((s for s, _ in train), min_freq=min_freq)
        tgt_vocab = Vocab.build((t for _, t in train), min_freq=min_freq)
        return cls(train, valid, test, src_vocab, tgt_vocab, name, stats)

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

    def summary(self) -> str:
        """One line with split sizes and vocabulary sizes."""
        return (
            f"{self.name}: train {len(self.train):,} | valid {len(self.valid):,} | "
            f"test {len(self.test):,} pairs; vocab src {len(self.src_vocab):,} | "
            f"tgt {len(self.tgt_vocab):,}"
        )


DIRECTIONS = ("fr-en", "en-fr")


@contextlib.contextmanager
def _gc_paused() -> Any:
    """Pause the cyclic garbage collector: building ~10^6 small token lists (which hold no
    reference cycles) otherwise triggers many full collections — about half the loading time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_translation_data(
    path: str | os.PathLike[str] | None = None,
    *,
    direction: str = "fr-en",
    max_len: int | None = 10,
    min_freq: int = 2,
    lowercase: bool = True,
    num_pairs: int | None = None,
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
    **find: Any,
) -> TranslationData:
    """Find, read, tokenise, filter, split the corpus and build its vocabularies.

    Args:
        path: the corpus file or a folder holding it (see :func:`find_corpus`).
        direction: ``"fr-en"`` (French source, English target; the course's main task) or
            ``"en-fr"``.
        max_len: pairs with more than ``max_len`` tokens on either side are dropped
            (``None``: keep all); empty sides are always dropped.
        min_freq: tokens seen fewer times in the training split map to ``<unk>``.
        lowercase: lower-case both sides (as d2l).
        num_pairs: keep a seeded random ``num_pairs`` of the filtered pairs (quick profile).
        fractions, seed: see :func:`split_by_source`.
        **find: passed to :func:`find_corpus` (``cache_dir``, ``url``, ``opener``,
            ``download``, ``verify``).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    raw = read_pairs(find_corpus(path, **find))
    tok = partial(tokenize, lowercase=lowercase)
    with _gc_paused():
        if direction == "fr-en":
            pairs = [(tok(fr), tok(en)) for en, fr in raw]
        else:
            pairs = [(tok(en), tok(fr)) for en, fr in raw]
        return TranslationData.from_pairs(
            pairs, name=direction, max_len=max_len, min_freq=min_freq, num_pairs=num_pairs,
            fractions=fractions, seed=seed,
        )
