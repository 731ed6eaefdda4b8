"""A translator: a trained model with its vocabularies, saved in one file, and the
``seq2seq-translate`` command.

A model trained in a notebook is only half of a translator: the vocabularies, the
tokenisation and the architecture are needed too. :func:`export_translator` writes all of it
into one checkpoint (:mod:`seq2seq_lib.checkpoint`: the model's class and configuration, its
weights, both vocabularies and how text is processed; read with ``weights_only=True``);
:func:`load_translator` reads it back into a :class:`Translator` — sentences in, sentences
out — on a device; :func:`main` is the command line::

    seq2seq-translate translator.pt "Je suis content."   # the search validation chose
    seq2seq-translate translator.pt "Je suis content." -k 5 --alpha 1.0
    seq2seq-translate translator.pt < sentences.txt      # one sentence per line
    python -m seq2seq_lib.translator translator.pt "Bonjour !"

Translation reuses :func:`seq2seq_lib.evaluation.translate`: raw text is split into the
source vocabulary's units (words, :func:`~seq2seq_lib.vocab.tokenize`, or subwords,
:class:`~seq2seq_lib.subwords.SubwordVocab`), decoded with the search stored at export (the
one validation chose) unless told otherwise — greedy search (``beam_size=1``) or
:func:`~seq2seq_lib.beam.beam_search` — and joined back into text by the target vocabulary.
The command warns about a sentence with more tokens (words, and each ``, . ! ?``) than the
training sentences had. A missing, corrupt or incompatible file is a
:class:`~seq2seq_lib.checkpoint.CheckpointError` whose message says what to do.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import torch

from seq2seq_lib.beam import beam_search
from seq2seq_lib.checkpoint import (
    Checkpoint,
    CheckpointError,
    IncompatibleCheckpointError,
    model_class_name,
    read_checkpoint,
    save_checkpoint,
)
from seq2seq_lib.decoding import greedy_search
from seq2seq_lib.device import resolve_device
from seq2seq_lib.encoder_decoder import EncoderDecoder
from seq2seq_lib.evaluation import translate as translate_tokens
from seq2seq_lib.subwords import BPE, SubwordVocab
from seq2seq_lib.vocab import Vocab, tokenize

PROG = "seq2seq-translate"
LANGS = ("en", "fr")
_HOW_TO_EXPORT = (
    "A translator checkpoint is made by seq2seq_lib.translator.export_translator(path, model, "
    "src_vocab, tgt_vocab); chapter 11 exports one (translator-fr-en.pt)."
)


def _resolve(device: str | torch.device) -> torch.device:
    """``"auto"`` (CUDA when present, see :func:`~seq2seq_lib.device.resolve_device`), ``"cpu"``,
    ``"cuda"`` or any other name ``torch.device`` accepts (``"cuda:1"``); an unknown name or a
    CUDA device on a machine without one is a :class:`ValueError`."""
    if isinstance(device, str) and device.strip().lower() == "auto":
        return resolve_device("auto")
    try:
        dev = torch.device(device.strip().lower() if isinstance(device, str) else device)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'auto'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} was asked for, but PyTorch {torch.__version__} sees no CUDA GPU "
            "on this machine; use 'cpu' or 'auto'"
        )
    return dev


def _check_options(beam_size: int, alpha: float, max_len: int) -> None:
    """Raise :class:`ValueError` unless ``beam_size >= 1``, ``alpha >= 0`` and ``max_len >= 1``."""
    if isinstance(beam_size, bool) or not isinstance(beam_size, Integral) or beam_size < 1:
        raise ValueError(f"beam size must be an integer >= 1, got {beam_size!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not alpha >= 0:  # rejects NaN
        raise ValueError(f"alpha (length normalisation) must be >= 0, got {alpha!r}")
    if isinstance(max_len, bool) or not isinstance(max_len, Integral) or max_len < 1:
        raise ValueError(f"max_len must be an integer >= 1, got {max_len!r}")


def export_translator(
    path: str | os.PathLike[str],
    model: EncoderDecoder,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    src_lang: str = "fr",
    tgt_lang: str = "en",
    lowercase: bool = True,
    train_max_len: int | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``model`` and everything needed to use it into one checkpoint
    (:func:`~seq2seq_lib.checkpoint.save_checkpoint`: written atomically, read with
    ``weights_only=True``).

    Args:
        path: the file to write.
        model: the trained model, a library model that its ``config`` rebuilds
            (:class:`~seq2seq_lib.attention_seq2seq.TranslatorModel`, ...); its weights are
            copied to the CPU.
        src_vocab, tgt_vocab: the vocabularies it was trained with: words
            (:class:`~seq2seq_lib.vocab.Vocab`) or subwords
            (:class:`~seq2seq_lib.subwords.SubwordVocab`, whose merges are saved too).
        src_lang, tgt_lang: ``"fr"`` or ``"en"``; the target language chooses the
            detokeniser (:func:`~seq2seq_lib.vocab.detokenize`).
        lowercase: whether the training sentences were lower-cased (input text will be).
        train_max_len: the most tokens of a training sentence, as
            :func:`~seq2seq_lib.vocab.tokenize` counts them (words, and each ``, . ! ?``),
            if the training data was limited (the command warns about longer inputs).
        metadata: JSON-like information to keep with the model (BLEU, ...). The search that
            validation chose, as ``{"beam_size": k, "alpha": alpha}``, becomes the default
            search of :meth:`Translator.translate` and of the command.

    Raises:
        ValueError: a model its configuration does not rebuild, vocabularies of other sizes
            than the configuration's, an unknown language, or ``metadata`` that is not
            JSON-like.
    """
    if model_class_name(model) is None:
        raise ValueError(f"cannot export a {type(model).__name__}: a translator must be a "
                         "library model built from its config (e.g. TranslatorModel)")
    for name, lang in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
        if lang not in LANGS:
            raise ValueError(f"{name} must be one of {LANGS}, got {lang!r}")
    for side, vocab in (("src", src_vocab), ("tgt", tgt_vocab)):
        if not isinstance(vocab, Vocab):
            raise ValueError(f"{side}_vocab must be a seq2seq_lib.vocab.Vocab")
        size = getattr(model.config, f"{side}_vocab_size")
        if len(vocab) != size:
            raise ValueError(f"{side}_vocab has {len(vocab)} tokens but the model's config "
                             f"says {side}_vocab_size={size}")
    try:
        metadata = json.loads(json.dumps(dict(metadata or {})))
    except (TypeError, ValueError) as err:
        raise ValueError(f"metadata must be JSON-like (dicts, lists, strings, numbers): {err}") from None
    if "beam_size" in metadata or "alpha" in metadata:
        _check_options(metadata.get("beam_size", 1), metadata.get("alpha", 0.0), 1)
    text: dict[str, Any] = {"src_lang": src_lang, "tgt_lang": tgt_lang,
                            "lowercase": bool(lowercase)}
    bpe = {side: vocab.bpe.to_dict() for side, vocab in (("src", src_vocab), ("tgt", tgt_vocab))
           if isinstance(vocab, SubwordVocab)}
    if bpe:
        text["bpe"] = bpe
    if train_max_len is not None:
        _check_options(1, 0.0, train_max_len)
        text["train_max_len"] = int(train_max_len)
    return save_checkpoint(
        path, model, vocabs={"src": src_vocab.itos, "tgt": tgt_vocab.itos}, text=text,
        metadata=metadata,
    )


@dataclass
class Translator:
    """A trained model with its vocabularies and text processing: sentences in, sentences out.

    It has the :class:`~seq2seq_lib.checkpoint.Checkpoint` it was read from (the model, in
    eval mode on its device; ``text`` and ``metadata``) and the two vocabularies. Make one with
    :func:`load_translator`.
    """

    checkpoint: Checkpoint
    src_vocab: Vocab
    tgt_vocab: Vocab

    @property
    def model(self) -> EncoderDecoder:
        """The translation model (in eval mode)."""
        return self.checkpoint.model

    @property
    def device(self) -> torch.device:
        """The device of the model's weights."""
        return next(self.model.parameters()).device

    @property
    def default_search(self) -> tuple[int, float]:
        """``(beam_size, alpha)`` stored at export (the search validation chose), else greedy
        search ``(1, 0.0)``."""
        meta = self.checkpoint.metadata or {}
        return int(meta.get("beam_size", 1)), float(meta.get("alpha", 0.0))

    def tokenize(self, sentence: str) -> list[str]:
        """The source tokens of a raw sentence, as the training text was tokenised (words,
        lower-cased if the training text was, or subwords)."""
        return self.src_vocab.tokenize(sentence, lowercase=(self.checkpoint.text or {})["lowercase"])

    def length_warning(self, sentence: str) -> str | None:
        """Why a translation of ``sentence`` may be poor: it has more tokens than any training
        sentence had, when the export recorded that length; ``None`` otherwise.

        The tokens are counted as the training data was limited: the word tokens of
        :func:`~seq2seq_lib.vocab.tokenize` — words, with each of ``, . ! ?`` counted as a
        token of its own — whatever units the model reads (a subword translator reads more
        pieces than that). The text is two lines, each short enough for a terminal, the
        second indented: ``19 tokens (words, and each , . ! ?);`` and ``the training
        sentences had at most 10, so expect a poorer translation``.
        """
        limit = (self.checkpoint.text or {}).get("train_max_len")
        tokens = len(tokenize(sentence))
        if limit is None or tokens <= limit:
            return None
        return (f"{tokens} tokens (words, and each , . ! ?);\n"
                f"  the training sentences had at most {limit}, so expect a poorer translation")

    def translate(
        self, sentences: Sequence[str], *, beam_size: int | None = None,
        alpha: float | None = None, max_len: int = 20,
    ) -> list[str]:
        """Translate raw sentences; returns one detokenised translation per sentence.

        Each sentence is split as the training text was (:meth:`tokenize`: words, lower-cased
        when the training text was, or subwords), translated by :func:`seq2seq_lib.evaluation.translate` and
        detokenised for the target language. Words not in the source vocabulary become
        ``<unk>``. An empty (or all-space) sentence gives ``""`` without calling the model.

        Args:
            sentences: the source sentences (a list of strings, not one string).
            beam_size: 1 is greedy search (:func:`~seq2seq_lib.decoding.greedy_search`); more is
                beam search (:func:`~seq2seq_lib.beam.beam_search`). ``None``: the search
                stored at export (:attr:`default_search`).
            alpha: length normalisation of beam search, :math:`\\log P / L^{\\alpha}`
                (ignored by greedy decoding); ``None``: the stored one.
            max_len: at most this many target tokens per sentence.

        Raises:
            ValueError: ``beam_size < 1``, ``alpha < 0`` or ``max_len < 1``.
        """
        if isinstance(sentences, str):
            raise TypeError("translate expects a list of sentences, got one str; wrap it: [text]")
        stored_k, stored_alpha = self.default_search
        beam_size = stored_k if beam_size is None else beam_size
        alpha = stored_alpha if alpha is None else alpha
        _check_options(beam_size, alpha, max_len)
        beam_size, alpha, max_len = int(beam_size), float(alpha), int(max_len)
        text = self.checkpoint.text or {}
        tokens = [self.tokenize(s) for s in sentences]
        todo = [i for i, t in enumerate(tokens) if t]
        out = [""] * len(tokens)
        if todo:
            search = (greedy_search if beam_size == 1
                      else partial(beam_search, beam_size=beam_size, alpha=alpha))
            results = translate_tokens(
                self.model, [tokens[i] for i in todo], self.src_vocab, self.tgt_vocab,
                search=search, max_len=max_len, device=self.device,
            )
            for i, words in zip(todo, results, strict=True):
                out[i] = self.tgt_vocab.detokenize(words, lang=text["tgt_lang"])
        return out


def _vocab(itos: list[str], bpe: Mapping[str, Any], side: str) -> Vocab:
    """A side's vocabulary from a checkpoint: words, or the subwords of its saved merges
    (which must give the saved token list)."""
    if side not in bpe:
        return Vocab(itos)
    vocab = SubwordVocab(BPE.from_dict(bpe[side]))
    if vocab.itos != itos:
        raise ValueError(f"the {side} merges do not give the saved {side} vocabulary")
    return vocab


def load_translator(path: str | os.PathLike[str], device: str | torch.device = "cpu") -> Translator:
    """Read a checkpoint written by :func:`export_translator` and return its
    :class:`Translator`, the model in eval mode on ``device``: ``"cpu"`` (default),
    ``"cuda"``, ``"auto"`` (CUDA when present) or any ``torch.device`` name. Reading does
    not change the global random state.

    Raises:
        CheckpointError: the file is missing, not a checkpoint, or one this library cannot
            rebuild (:mod:`seq2seq_lib.checkpoint`), or a model checkpoint without what a
            translator needs (vocabularies, text settings).
        ValueError: ``device`` is not available.
    """
    dev = _resolve(device)
    ckpt = read_checkpoint(path)
    where = Path(path).expanduser()
    if ckpt.model is None or not ckpt.vocabs or not ckpt.text:
        missing = [what for what, ok in (("a library model class", ckpt.model is not None),
                                          ("vocabularies", bool(ckpt.vocabs)),
                                          ("text settings", bool(ckpt.text))) if not ok]
        raise IncompatibleCheckpointError(
            f"{where} is a checkpoint but not a translator: it has no {', no '.join(missing)} "
            f"(a model-cache file has weights only). {_HOW_TO_EXPORT}")
    try:
        src_vocab, tgt_vocab = (_vocab(ckpt.vocabs[side], (ckpt.text or {}).get("bpe", {}), side)
                                for side in ("src", "tgt"))
    except (KeyError, TypeError, ValueError) as err:
        raise IncompatibleCheckpointError(f"the vocabularies in {where} are invalid: {err}") from None
    config = ckpt.model.config
    if (len(src_vocab), len(tgt_vocab)) != (config.src_vocab_size, config.tgt_vocab_size):
        raise IncompatibleCheckpointError(
            f"the vocabularies in {where} have {len(src_vocab)} and {len(tgt_vocab)} tokens, "
            f"but its configuration says {config.src_vocab_size} and {config.tgt_vocab_size}"
        )
    if ckpt.text.get("tgt_lang") not in LANGS or not isinstance(ckpt.text.get("lowercase"), bool):
        raise IncompatibleCheckpointError(
            f"{where} has text settings {ckpt.text}; a translator needs tgt_lang in {LANGS} "
            "and lowercase True or False")
    ckpt.model.to(dev).eval()
    return Translator(ckpt, src_vocab, tgt_vocab)


# --------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Translate sentences with a translator checkpoint of the course "
        "'Modern RNNs & Seq2Seq' (made by seq2seq_lib.translator.export_translator; chapter 11 "
        "exports one). Prints one translation per line.",
        epilog=f'example (after chapter 11 has exported its translator): {PROG} '
               f'~/.cache/seq2seq-course/models/translator-fr-en.pt "Je suis content."',
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="the translator checkpoint (.pt)")
    parser.add_argument(
        "sentences", metavar="SENTENCE", nargs="*",
        help="sentences to translate; without any, one sentence per line is read from stdin",
    )
    parser.add_argument("-k", "--beam-size", type=int, default=None,
                        help="beam size; 1 is greedy decoding (default: the beam size stored in "
                             "the checkpoint, which validation chose; else 1)")
    parser.add_argument("--alpha", type=float, default=None,
                        help="beam search length normalisation: rank by log P / L^alpha "
                             "(default: the one stored in the checkpoint; else 0)")
    parser.add_argument("--max-len", type=int, default=20,
                        help="at most this many output tokens per sentence (default 20)")
    parser.add_argument("--device", default="cpu",
                        help="'cpu' (default), 'cuda', or 'auto' (CUDA when present)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``seq2seq-translate`` command: ``seq2seq-translate CHECKPOINT [SENTENCE ...]``.

    Translates the SENTENCE arguments, or else every line of stdin (an empty line gives an
    empty line; from a terminal each line is translated as soon as it is typed), and prints
    one translation per line. Returns the exit status: 0, or 2 after printing
    ``seq2seq-translate: error: <message>`` to stderr for a :class:`CheckpointError` or a
    :class:`ValueError` (a bad option value). Malformed command lines exit with status 2
    through :mod:`argparse`.
    """
    args = _parser().parse_intermixed_args(argv)
    try:
        _check_options(1 if args.beam_size is None else args.beam_size,
                       0.0 if args.alpha is None else args.alpha, args.max_len)
        translator = load_translator(args.checkpoint, device=args.device)
        options = {"beam_size": args.beam_size, "alpha": args.alpha, "max_len": args.max_len}

        def warn_if_long(number: int, sentence: str) -> None:
            warning = translator.length_warning(sentence)
            if warning:
                print(f"{PROG}: warning: sentence {number} has {warning}", file=sys.stderr)

        if args.sentences:
            for number, sentence in enumerate(args.sentences, 1):
                warn_if_long(number, sentence)
            for line in translator.translate(args.sentences, **options):
                print(line)
        elif sys.stdin.isatty():
            for number, line in enumerate(sys.stdin, 1):
                warn_if_long(number, line.rstrip("\r\n"))
                print(translator.translate([line.rstrip("\r\n")], **options)[0], flush=True)
        else:
            sources = [line.rstrip("\r\n") for line in sys.stdin]
            for number, sentence in enumerate(sources, 1):
                warn_if_long(number, sentence)
            for line in translator.translate(sources, **options):
                print(line)
    except (CheckpointError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
