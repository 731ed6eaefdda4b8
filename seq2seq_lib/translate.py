"""A translator in one file, and the ``seq2seq-translate`` command that uses it (chapter 11).

A model trained in a notebook is only half of a translator: the vocabularies, the
tokenisation and the architecture's hyper-parameters are needed too. :func:`export_translator`
writes all of it into one checkpoint; :func:`load_translator` rebuilds a ready-to-use
:class:`Translator` from it; :func:`main` is the command line::

    seq2seq-translate translator.pt "Je suis content ." -k 5 --alpha 1.0
    seq2seq-translate translator.pt < sentences.txt      # one sentence per line

**The checkpoint** is a ``dict`` saved with :func:`torch.save`
(:func:`seq2seq_lib.cache.save_atomic`) holding only strings, numbers, lists, dicts and
tensors, so it is read with ``torch.load(weights_only=True)`` — loading a checkpoint cannot
run code. Its keys:

============================  ===============================================================
``format``                    :data:`FORMAT`, ``"seq2seq-course-translator/1"``
``builder``                   name of the function that rebuilds the model (:data:`BUILDERS`)
``kwargs``                    its keyword arguments, except the two vocabulary sizes
``src_vocab``, ``tgt_vocab``  the vocabularies' token lists (``Vocab.itos``)
``src_lang``, ``tgt_lang``    ``"fr"`` / ``"en"``: the target language picks the detokeniser
``lowercase``                 whether the training text was lower-cased (the input will be)
``state_dict``                the weights, on the CPU
``metadata``                  anything JSON-like: configuration, BLEU, training history, ...
``torch_version``             the PyTorch that wrote it (information only)
``seq2seq_lib_version``       the library version that wrote it (information only)
============================  ===============================================================

Everything that can go wrong when loading is a :class:`CheckpointError` whose message says
what is wrong and what to do: :class:`CheckpointNotFoundError` (no such file),
:class:`NotATranslatorError` (a corrupt file, a model-cache file of
:func:`~seq2seq_lib.cache.train_or_load`, a dict without the format tag) and
:class:`IncompatibleCheckpointError` (another format version, an unknown builder,
hyper-parameters the builder rejects, weights whose names or shapes do not fit the rebuilt
model).

Translation reuses :func:`seq2seq_lib.evaluation.translate`: raw text is tokenised with
:func:`~seq2seq_lib.data.tokenize`, decoded greedily (``beam_size=1``) or with
:func:`~seq2seq_lib.decoding.beam_decoder`, and detokenised with
:func:`~seq2seq_lib.data.detokenize`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seq2seq_lib import __version__
from seq2seq_lib.attention_seq2seq import attention_model
from seq2seq_lib.cache import load_checkpoint, save_atomic
from seq2seq_lib.data import Vocab, detokenize, tokenize
from seq2seq_lib.decoding import beam_decoder
from seq2seq_lib.device import resolve_device
from seq2seq_lib.encoder_decoder import EncoderDecoder, greedy_decode
from seq2seq_lib.evaluation import translate as translate_tokens
from seq2seq_lib.seq2seq import sutskever_model

FORMAT_NAME = "seq2seq-course-translator"
FORMAT_VERSION = 1
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
PROG = "seq2seq-translate"
LANGS = ("en", "fr")

BUILDERS: dict[str, Callable[..., EncoderDecoder]] = {
    "attention_model": attention_model,
    "sutskever_model": sutskever_model,
}
"""The functions a checkpoint may name as ``builder``: ``builder(len(src_vocab),
len(tgt_vocab), **kwargs)`` rebuilds the architecture."""

_HOW_TO_EXPORT = (
    "A translator checkpoint is made by seq2seq_lib.translate.export_translator(path, model, "
    "src_vocab, tgt_vocab, builder=..., kwargs=...); chapter 11 exports one (translator-fr-en.pt)."
)


# --------------------------------------------------------------------------- errors


class CheckpointError(Exception):
    """A translator checkpoint cannot be used; the message says why and what to do."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """There is no file at the given path."""


class NotATranslatorError(CheckpointError):
    """The file is not a translator checkpoint: unreadable, corrupt, a model-cache file of
    :func:`~seq2seq_lib.cache.train_or_load`, or a dict without the ``format`` tag."""


class IncompatibleCheckpointError(CheckpointError):
    """A translator checkpoint this library cannot rebuild: another format version, an unknown
    builder, hyper-parameters the builder rejects, or weights that do not fit the model."""


# --------------------------------------------------------------------------- helpers


def _shape(t: torch.Tensor | torch.Size) -> str:
    return str(tuple(t.shape if isinstance(t, torch.Tensor) else t))


def _call(builder: str, kwargs: Mapping[str, Any], src_size: int, tgt_size: int) -> str:
    """The builder call as text for messages: ``attention_model(5000, 4000, style='luong')``."""
    args = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"{builder}({src_size}, {tgt_size}{args})"


def _build(builder: str, kwargs: Mapping[str, Any], src_size: int, tgt_size: int) -> EncoderDecoder:
    """``BUILDERS[builder](src_size, tgt_size, **kwargs)`` on the CPU, without touching the
    global random state (initial weights are overwritten anyway, and a notebook that exports
    or loads a model must print the same random numbers afterwards)."""
    with torch.random.fork_rng(devices=[]):
        return BUILDERS[builder](src_size, tgt_size, **kwargs)


def _first_mismatch(
    expected: Mapping[str, torch.Tensor], got: Mapping[str, Any], got_name: str, expected_name: str
) -> str | None:
    """The first key whose presence or shape differs between two state dicts, as a sentence;
    ``None`` when they have the same keys with the same shapes."""
    for key, want in expected.items():
        if key not in got:
            return f"key {key!r} (shape {_shape(want)} in {expected_name}) is missing from {got_name}"
        have = got[key]
        if not isinstance(have, torch.Tensor):
            return f"key {key!r} of {got_name} is a {type(have).__name__}, not a tensor"
        if have.shape != want.shape:
            return (
                f"key {key!r} has shape {_shape(have)} in {got_name} but {_shape(want)} in "
                f"{expected_name}"
            )
    for key, have in got.items():
        if key not in expected:
            shape = _shape(have) if isinstance(have, torch.Tensor) else type(have).__name__
            return f"key {key!r} (shape {shape}) of {got_name} is not in {expected_name}"
    return None


def _json_like(value: Any, what: str) -> Any:
    """``value`` as plain JSON types (dicts, lists, str, int, float, bool, None), so that the
    checkpoint loads with ``weights_only=True``; :class:`ValueError` when it is not JSON-like."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be JSON-like (dicts, lists, strings, numbers): {err}") from None


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


# --------------------------------------------------------------------------- export


def export_translator(
    path: str | os.PathLike[str],
    model: nn.Module,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    builder: str,
    kwargs: Mapping[str, Any],
    src_lang: str = "fr",
    tgt_lang: str = "en",
    lowercase: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``model`` and everything needed to use it into one translator checkpoint.

    Args:
        path: the file to write (atomically: a crash leaves the old file or none).
        model: the trained model; its weights are copied to the CPU.
        src_vocab, tgt_vocab: the vocabularies it was trained with.
        builder: the library function that rebuilds the architecture, ``"attention_model"``
            or ``"sutskever_model"`` (:data:`BUILDERS`).
        kwargs: the builder's keyword arguments **except** the two vocabulary sizes (they
            come from the vocabularies), e.g. ``{"style": "luong", "hidden_size": 128}``.
        src_lang, tgt_lang: ``"fr"`` or ``"en"``; the target language chooses the
            detokeniser (:func:`~seq2seq_lib.data.detokenize`).
        lowercase: whether the training sentences were lower-cased (input text will be).
        metadata: JSON-like information to keep with the model (configuration, BLEU, ...).

    Returns:
        The path written.

    Raises:
        ValueError: an unknown builder or language; ``kwargs`` that the builder rejects or
            that build a model different from ``model`` (other weight names or shapes, other
            module types, another ``reverse_source``); ``kwargs`` or ``metadata`` that are not
            JSON-like. The message names the first difference.
    """
    if builder not in BUILDERS:
        raise ValueError(f"unknown builder {builder!r}; choose one of {sorted(BUILDERS)}")
    for name, lang in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
        if lang not in LANGS:
            raise ValueError(f"{name} must be one of {LANGS}, got {lang!r}")
    if not isinstance(src_vocab, Vocab) or not isinstance(tgt_vocab, Vocab):
        raise ValueError("src_vocab and tgt_vocab must be seq2seq_lib.data.Vocab objects")
    if not isinstance(kwargs, Mapping):
        raise ValueError(f"kwargs must be a dict of keyword arguments, got {type(kwargs).__name__}")
    sizes = {"src_vocab", "tgt_vocab"} & set(kwargs)
    if sizes:
        raise ValueError(f"leave {sorted(sizes)} out of kwargs: the sizes come from the vocabularies")
    kwargs = _json_like(dict(kwargs), "kwargs")
    meta = _json_like(dict(metadata or {}), "metadata")
    what = _call(builder, kwargs, len(src_vocab), len(tgt_vocab))
    try:
        rebuilt = _build(builder, kwargs, len(src_vocab), len(tgt_vocab))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} fails: {err}") from None
    state = model.state_dict()
    problem = _first_mismatch(rebuilt.state_dict(), state, "the model", what)
    if problem is None:
        types = {name: type(m) for name, m in model.named_modules()}
        for name, module in rebuilt.named_modules():
            if types.get(name) is not type(module):
                have = types[name].__name__ if name in types else "nothing"
                problem = (
                    f"module {name or '<root>'!r} is a {have} in the model but a "
                    f"{type(module).__name__} in {what}"
                )
                break
    if problem is None:
        ours, theirs = getattr(model, "reverse_source", False), rebuilt.reverse_source
        if ours != theirs:
            problem = f"the model has reverse_source={ours} but {what} has reverse_source={theirs}"
    if problem is not None:
        raise ValueError(
            f"builder and kwargs do not rebuild this model: {problem}. Pass the builder and "
            "the keyword arguments the model was built with."
        )
    checkpoint = {
        "format": FORMAT,
        "builder": builder,
        "kwargs": kwargs,
        "src_vocab": list(src_vocab.itos),
        "tgt_vocab": list(tgt_vocab.itos),
        "src_lang": src_lang,
        "tgt_lang": tgt_lang,
        "lowercase": bool(lowercase),
        "state_dict": {k: v.detach().cpu().clone() for k, v in state.items()},
        "metadata": meta,
        "torch_version": str(torch.__version__),
        "seq2seq_lib_version": __version__,
    }
    return save_atomic(checkpoint, path)


# --------------------------------------------------------------------------- load


@dataclass
class Translator:
    """A trained model with its vocabularies and text processing: sentences in, sentences out.

    ``model`` is in eval mode on its device; ``metadata`` is what :func:`export_translator`
    was given. Make one with :func:`load_translator`.
    """

    model: EncoderDecoder
    src_vocab: Vocab
    tgt_vocab: Vocab
    src_lang: str = "fr"
    tgt_lang: str = "en"
    lowercase: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def device(self) -> torch.device:
        """The device of the model's weights."""
        return next(self.model.parameters()).device

    def translate(
        self, sentences: Sequence[str], *, beam_size: int = 1, alpha: float = 0.0, max_len: int = 20
    ) -> list[str]:
        """Translate raw sentences; returns one detokenised translation per sentence.

        Each sentence is tokenised (:func:`~seq2seq_lib.data.tokenize`, lower-cased when the
        training text was), translated by :func:`seq2seq_lib.evaluation.translate` and
        detokenised for the target language. Words not in the source vocabulary become
        ``<unk>``. An empty (or all-space) sentence gives ``""`` without calling the model.

        Args:
            sentences: the source sentences (a list of strings, not one string).
            beam_size: 1 is greedy decoding (:func:`~seq2seq_lib.encoder_decoder.greedy_decode`);
                more is beam search (:func:`~seq2seq_lib.decoding.beam_decoder`).
            alpha: length normalisation of beam search, :math:`\\log P / L^{\\alpha}`
                (ignored by greedy decoding).
            max_len: at most this many target tokens per sentence.

        Raises:
            ValueError: ``beam_size < 1``, ``alpha < 0`` or ``max_len < 1``.
        """
        if isinstance(sentences, str):
            raise TypeError("translate expects a list of sentences, got one str; wrap it: [text]")
        _check_options(beam_size, alpha, max_len)
        beam_size, alpha, max_len = int(beam_size), float(alpha), int(max_len)
        tokens = [tokenize(s, lowercase=self.lowercase) for s in sentences]
        todo = [i for i, t in enumerate(tokens) if t]
        out = [""] * len(tokens)
        if todo:
            decode = greedy_decode if beam_size == 1 else beam_decoder(beam_size, alpha)
            results = translate_tokens(
                self.model, [tokens[i] for i in todo], self.src_vocab, self.tgt_vocab,
                max_len=max_len, device=self.device, decode=decode,
            )
            for i, words in zip(todo, results, strict=True):
                out[i] = detokenize(words, lang=self.tgt_lang)
        return out


def _load_error(err: Exception) -> str:
    """The informative part of a ``torch.load`` error, in one line (without torch's advice to
    load with ``weights_only=False``, which would let a file run code)."""
    text = str(err)
    marker = "WeightsUnpickler error:"
    if marker in text:
        text = text.split(marker, 1)[1].split("Please use", 1)[0]
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    reason = lines[0] if lines else "no message"
    return reason if len(reason) <= 200 else reason[:197] + "..."


def _read(path: Path) -> dict[str, Any]:
    """The checkpoint dict at ``path`` (``weights_only=True``), or the right
    :class:`CheckpointError`."""
    if not path.exists():
        raise CheckpointNotFoundError(
            f"no translator checkpoint at {path}: the file does not exist. Check the path. "
            + _HOW_TO_EXPORT
        )
    if not path.is_file():
        raise NotATranslatorError(f"{path} is not a file (a directory?). " + _HOW_TO_EXPORT)
    try:
        ckpt = load_checkpoint(path)
    except Exception as err:  # noqa: BLE001 - corrupt, truncated, not torch, unsafe pickle
        raise NotATranslatorError(
            f"{path} is not a translator checkpoint: torch.load(weights_only=True) cannot read "
            f"it ({type(err).__name__}: {_load_error(err)}). The file may be corrupt or truncated, or "
            f"not a PyTorch file. {_HOW_TO_EXPORT}"
        ) from err
    if not isinstance(ckpt, dict):
        raise NotATranslatorError(
            f"{path} is not a translator checkpoint: it holds a {type(ckpt).__name__}, not a "
            f"dict. {_HOW_TO_EXPORT}"
        )
    if "format" not in ckpt:
        if {"state_dict", "history"} <= set(ckpt):
            raise NotATranslatorError(
                f"{path} is a model-cache file written by seq2seq_lib.cache.train_or_load: it "
                f"has weights but neither the vocabularies nor the architecture. {_HOW_TO_EXPORT}"
            )
        keys = sorted(map(str, ckpt))[:8]
        raise NotATranslatorError(
            f"{path} is not a translator checkpoint: a dict without the 'format' tag "
            f"(its keys: {keys}). {_HOW_TO_EXPORT}"
        )
    tag = ckpt["format"]
    name, _, version = tag.partition("/") if isinstance(tag, str) else ("", "", "")
    if name != FORMAT_NAME:
        raise NotATranslatorError(
            f"{path} is not a translator checkpoint: its format is {tag!r}, not "
            f"{FORMAT!r}. {_HOW_TO_EXPORT}"
        )
    if version != str(FORMAT_VERSION):
        raise IncompatibleCheckpointError(
            f"{path} has format version {version!r} ({tag!r}), but this seq2seq_lib "
            f"{__version__} reads only version {FORMAT_VERSION} ({FORMAT!r}). Use the "
            "seq2seq_lib that wrote it, or export the model again with this one."
        )
    return ckpt


def _field(ckpt: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in ckpt:
        raise IncompatibleCheckpointError(
            f"{path} lacks the field {key!r} of format {FORMAT!r}; export the model again."
        )
    value = ckpt[key]
    if not isinstance(value, kind):
        raise IncompatibleCheckpointError(
            f"field {key!r} of {path} is a {type(value).__name__}, which format {FORMAT!r} "
            "does not allow; export the model again."
        )
    return value


def load_translator(path: str | os.PathLike[str], device: str | torch.device = "cpu") -> Translator:
    """Load a checkpoint written by :func:`export_translator` as a ready :class:`Translator`.

    The file is read with ``torch.load(weights_only=True)`` (it cannot run code), the model
    is rebuilt with ``BUILDERS[builder](len(src_vocab), len(tgt_vocab), **kwargs)``, its
    weights are loaded, and it is moved to ``device`` in eval mode. Loading does not change
    the global random state.

    Args:
        path: the checkpoint file.
        device: ``"cpu"`` (default), ``"cuda"``, ``"auto"`` (CUDA when present) or any
            ``torch.device`` name.

    Raises:
        CheckpointNotFoundError: no file at ``path``.
        NotATranslatorError: unreadable or corrupt file, a model-cache file of
            :func:`~seq2seq_lib.cache.train_or_load`, or a dict without the format tag.
        IncompatibleCheckpointError: another format version, an unknown builder, kwargs the
            builder rejects, or weights whose keys or shapes do not fit the rebuilt model
            (the message names the first such key and both shapes).
        ValueError: ``device`` is not available.
    """
    path = Path(path).expanduser()
    dev = _resolve(device)
    ckpt = _read(path)
    builder = _field(ckpt, "builder", str, path)
    if builder not in BUILDERS:
        raise IncompatibleCheckpointError(
            f"{path} names the builder {builder!r}, which this seq2seq_lib does not have "
            f"(it knows {sorted(BUILDERS)}). Use the seq2seq_lib that wrote it, or export the "
            "model again with one of these builders."
        )
    kwargs = _field(ckpt, "kwargs", dict, path)
    try:
        vocabs = [Vocab(_field(ckpt, key, list, path)) for key in ("src_vocab", "tgt_vocab")]
    except (TypeError, ValueError) as err:
        raise IncompatibleCheckpointError(f"the vocabularies in {path} are invalid: {err}") from None
    src_vocab, tgt_vocab = vocabs
    tgt_lang = _field(ckpt, "tgt_lang", str, path)
    if tgt_lang not in LANGS:
        raise IncompatibleCheckpointError(
            f"{path} has target language {tgt_lang!r}; only {LANGS} can be detokenised."
        )
    state = _field(ckpt, "state_dict", dict, path)
    what = _call(builder, kwargs, len(src_vocab), len(tgt_vocab))
    try:
        model = _build(builder, kwargs, len(src_vocab), len(tgt_vocab))
    except (TypeError, ValueError) as err:
        raise IncompatibleCheckpointError(
            f"{path}: {what} fails with this seq2seq_lib: {err}. Use the "
            "seq2seq_lib that wrote it, or export the model again."
        ) from None
    problem = _first_mismatch(
        model.state_dict(), state, "the checkpoint",
        f"the model rebuilt by {what}",
    )
    if problem is not None:
        raise IncompatibleCheckpointError(
            f"the weights in {path} do not fit the model: {problem}. The checkpoint was "
            "edited or written by another version of the model code; export it again."
        )
    try:
        model.load_state_dict(state)
    except RuntimeError as err:  # e.g. a tensor whose dtype cannot be copied into the model
        raise IncompatibleCheckpointError(f"the weights in {path} cannot be loaded: {err}") from None
    model.to(dev).eval()
    return Translator(
        model=model,
        src_vocab=src_vocab,
        tgt_vocab=tgt_vocab,
        src_lang=_field(ckpt, "src_lang", str, path),
        tgt_lang=tgt_lang,
        lowercase=_field(ckpt, "lowercase", bool, path),
        metadata=_field(ckpt, "metadata", dict, path),
    )


# --------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Translate sentences with a translator checkpoint of the course "
        "'Modern RNNs & Seq2Seq' (made by seq2seq_lib.translate.export_translator; chapter 11 "
        "exports one). Prints one translation per line.",
        epilog=f'example: {PROG} translator.pt "Je suis content ." -k 5 --alpha 1.0',
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="the translator checkpoint (.pt)")
    parser.add_argument(
        "sentences", metavar="SENTENCE", nargs="*",
        help="sentences to translate; without any, one sentence per line is read from stdin",
    )
    parser.add_argument("-k", "--beam-size", type=int, default=1,
                        help="beam size; 1 (default) is greedy decoding")
    parser.add_argument("--alpha", type=float, default=0.0,
                        help="beam search length normalisation: rank by log P / L^alpha (default 0)")
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
        _check_options(args.beam_size, args.alpha, args.max_len)
        translator = load_translator(args.checkpoint, device=args.device)
        options = {"beam_size": args.beam_size, "alpha": args.alpha, "max_len": args.max_len}
        if args.sentences:
            for line in translator.translate(args.sentences, **options):
                print(line)
        elif sys.stdin.isatty():
            for line in sys.stdin:
                print(translator.translate([line.rstrip("\r\n")], **options)[0], flush=True)
        else:
            sources = [line.rstrip("\r\n") for line in sys.stdin]
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
