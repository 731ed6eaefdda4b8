"""Tokens and vocabularies: from a sentence to the indices a model reads, and back.

Tokenisation (identical to d2l's ``preprocess_nmt`` + ``tokenize_nmt`` on this corpus):

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

A :class:`Vocab` maps tokens to indices. Four indices are reserved in every vocabulary, and
the models use them directly: :data:`PAD_ID` = 0 (padding, ignored by the loss),
:data:`BOS_ID` = 1 (the first decoder input), :data:`EOS_ID` = 2 (the end of a sentence) and
:data:`UNK_ID` = 3 (a word outside the vocabulary).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch

from seq2seq_lib.atomic import atomic_file

TokenPair = tuple[list[str], list[str]]
"""A tokenised ``(source tokens, target tokens)`` pair."""

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

    def tokenize(self, text: str, *, lowercase: bool = True) -> list[str]:
        """The tokens of a raw sentence in this vocabulary's units: words
        (:func:`tokenize`). A vocabulary of other units (subwords,
        :class:`seq2seq_lib.subwords.SubwordVocab`) splits text its own way."""
        return tokenize(text, lowercase=lowercase)

    def detokenize(self, tokens: Iterable[str], *, lang: str = "en") -> str:
        """The text of tokens in this vocabulary's units (:func:`detokenize` for words)."""
        return detokenize(tokens, lang=lang)

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
        """Write the vocabulary as JSON, atomically (:func:`~seq2seq_lib.atomic.atomic_file`)."""
        path = Path(path)
        payload = {"format": "seq2seq_lib.Vocab", "version": 1, "tokens": self.itos}
        with atomic_file(path, "w") as handle:
            json.dump(payload, handle, ensure_ascii=False)
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
