"""A translator checkpoint: a trained model, its configuration and its vocabularies in one file.

A model trained in a notebook is only half of a translator: the vocabularies, the
tokenisation and the architecture are needed too. :func:`export_translator` writes all of it
into one file; :func:`read_translator` rebuilds the model from it;
:func:`seq2seq_lib.translate.load_translator` makes a ready-to-use translator of it.

**The format** (version 2) is a ``dict`` saved with :func:`torch.save`
(:func:`seq2seq_lib.cache.save_atomic`: a crash leaves the old file or none) holding only
strings, numbers, lists, dicts and tensors, so it is read with
``torch.load(weights_only=True)`` — reading a checkpoint cannot run code. Its keys:

============================  ===============================================================
``format``                    :data:`FORMAT`, ``"seq2seq-course-translator/2"``
``model``                     the model's class (:data:`MODELS`), e.g. ``"TranslatorModel"``
``config``                    its configuration dataclass as a dict (``dataclasses.asdict``)
``src_vocab``, ``tgt_vocab``  the vocabularies' token lists (``Vocab.itos``)
``src_lang``, ``tgt_lang``    ``"fr"`` / ``"en"``: the target language picks the detokeniser
``lowercase``                 whether the training text was lower-cased (the input will be)
``state_dict``                the weights, on the CPU
``metadata``                  anything JSON-like: BLEU, training history, ...
``torch_version``             the PyTorch that wrote it (information only)
``seq2seq_lib_version``       the library version that wrote it (information only)
============================  ===============================================================

The model is rebuilt as ``MODELS[model](MODELS[model].config_class(**config))`` and its
weights are loaded. Everything that can go wrong when reading is a :class:`CheckpointError`
whose message says what is wrong and what to do: :class:`CheckpointNotFoundError` (no such
file), :class:`NotATranslatorError` (a corrupt file, a model-cache file of
:func:`~seq2seq_lib.cache.train_or_load`, a dict without the format tag) and
:class:`IncompatibleCheckpointError` (another format version — version 1 named a builder
function and its arguments —, an unknown model, a configuration this library rejects,
weights that do not fit the rebuilt model).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from seq2seq_lib import __version__
from seq2seq_lib.attention_seq2seq import TranslatorModel
from seq2seq_lib.cache import load_checkpoint, save_atomic
from seq2seq_lib.encoder_decoder import ChoModel, EncoderDecoder
from seq2seq_lib.seq2seq import Seq2SeqModel
from seq2seq_lib.vocab import Vocab

FORMAT_NAME = "seq2seq-course-translator"
FORMAT_VERSION = 2
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
LANGS = ("en", "fr")

MODELS: dict[str, type[EncoderDecoder]] = {
    cls.__name__: cls for cls in (ChoModel, Seq2SeqModel, TranslatorModel)
}
"""The model classes a checkpoint may name; each rebuilds from its ``config_class``."""

_HOW_TO_EXPORT = (
    "A translator checkpoint is made by seq2seq_lib.checkpoint.export_translator(path, model, "
    "src_vocab, tgt_vocab); chapter 11 exports one (translator-fr-en.pt)."
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
    model class, a configuration this library rejects, or weights that do not fit the model."""


# --------------------------------------------------------------------------- export


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _json_like(value: Any, what: str) -> Any:
    """``value`` as plain JSON types (dicts, lists, str, int, float, bool, None), so that the
    checkpoint loads with ``weights_only=True``; :class:`ValueError` when it is not JSON-like."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be JSON-like (dicts, lists, strings, numbers): {err}") from None


def export_translator(
    path: str | os.PathLike[str],
    model: EncoderDecoder,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    src_lang: str = "fr",
    tgt_lang: str = "en",
    lowercase: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``model`` and everything needed to use it into one translator checkpoint.

    Args:
        path: the file to write (atomically: a crash leaves the old file or none).
        model: the trained model, an instance of one of :data:`MODELS` (its ``config``
            rebuilds it); its weights are copied to the CPU.
        src_vocab, tgt_vocab: the vocabularies it was trained with.
        src_lang, tgt_lang: ``"fr"`` or ``"en"``; the target language chooses the
            detokeniser (:func:`~seq2seq_lib.vocab.detokenize`).
        lowercase: whether the training sentences were lower-cased (input text will be).
        metadata: JSON-like information to keep with the model (BLEU, history, ...).

    Returns:
        The path written.

    Raises:
        ValueError: a model that is not one of :data:`MODELS` or whose ``config`` is not its
            configuration class, vocabularies of other sizes than the configuration's, an
            unknown language, or ``metadata`` that is not JSON-like.
    """
    kind = type(model).__name__
    if MODELS.get(kind) is not type(model):
        raise ValueError(f"cannot export a {kind}: a checkpoint holds one of {sorted(MODELS)}")
    config = getattr(model, "config", None)
    if type(config) is not model.config_class:
        raise ValueError(f"the {kind}'s config must be a {model.config_class.__name__}, "
                         f"got {type(config).__name__}")
    for name, lang in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
        if lang not in LANGS:
            raise ValueError(f"{name} must be one of {LANGS}, got {lang!r}")
    for side, vocab in (("src", src_vocab), ("tgt", tgt_vocab)):
        if not isinstance(vocab, Vocab):
            raise ValueError(f"{side}_vocab must be a seq2seq_lib.vocab.Vocab")
        if len(vocab) != getattr(config, f"{side}_vocab_size"):
            raise ValueError(f"{side}_vocab has {len(vocab)} tokens but the model's config "
                             f"says {side}_vocab_size={getattr(config, f'{side}_vocab_size')}")
    checkpoint = {
        "format": FORMAT,
        "model": kind,
        "config": _json_like(dataclasses.asdict(config), "config"),
        "src_vocab": list(src_vocab.itos),
        "tgt_vocab": list(tgt_vocab.itos),
        "src_lang": src_lang,
        "tgt_lang": tgt_lang,
        "lowercase": bool(lowercase),
        "state_dict": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
        "metadata": _json_like(dict(metadata or {}), "metadata"),
        "torch_version": str(torch.__version__),
        "seq2seq_lib_version": __version__,
    }
    return save_atomic(checkpoint, path)


# --------------------------------------------------------------------------- read


@dataclass
class Checkpoint:
    """What a translator checkpoint holds: the rebuilt ``model`` (weights loaded, on the CPU),
    its vocabularies, languages, whether the input is lower-cased, and the ``metadata`` that
    :func:`export_translator` was given."""

    model: EncoderDecoder
    src_vocab: Vocab
    tgt_vocab: Vocab
    src_lang: str
    tgt_lang: str
    lowercase: bool
    metadata: dict[str, Any]


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
        older = (" (version 1 named a builder function and its keyword arguments; version 2 "
                 "stores the model's class and configuration)") if version == "1" else ""
        raise IncompatibleCheckpointError(
            f"{path} has format version {version!r} ({tag!r}), but this seq2seq_lib "
            f"{__version__} reads only version {FORMAT_VERSION} ({FORMAT!r}){older}. Export "
            "the model again with this seq2seq_lib: load its weights into the model (e.g. "
            "from the model cache) and call export_translator(path, model, src_vocab, "
            "tgt_vocab); or use the seq2seq_lib that wrote it."
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


def read_translator(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a checkpoint written by :func:`export_translator` and rebuild its model.

    The file is read with ``torch.load(weights_only=True)`` (it cannot run code), the model
    is rebuilt from its class and configuration and its weights are loaded; it stays on the
    CPU in training mode. Reading does not change the global random state.

    Raises:
        CheckpointNotFoundError: no file at ``path``.
        NotATranslatorError: unreadable or corrupt file, a model-cache file of
            :func:`~seq2seq_lib.cache.train_or_load`, or a dict without the format tag.
        IncompatibleCheckpointError: another format version, an unknown model class, a
            configuration this library rejects, or weights that do not fit the model (the
            message names the keys and shapes).
    """
    path = Path(path).expanduser()
    ckpt = _read(path)
    kind = _field(ckpt, "model", str, path)
    if kind not in MODELS:
        raise IncompatibleCheckpointError(
            f"{path} holds a {kind!r}, which this seq2seq_lib does not have (it knows "
            f"{sorted(MODELS)}). Use the seq2seq_lib that wrote it, or export the model again."
        )
    cls = MODELS[kind]
    try:
        config = cls.config_class(**_field(ckpt, "config", dict, path))  # type: ignore[misc]
    except (TypeError, ValueError) as err:
        raise IncompatibleCheckpointError(
            f"{path}: this seq2seq_lib cannot make a {kind} of this configuration: {err}. Use "
            "the seq2seq_lib that wrote it, or export the model again."
        ) from None
    try:
        vocabs = [Vocab(_field(ckpt, key, list, path)) for key in ("src_vocab", "tgt_vocab")]
    except (TypeError, ValueError) as err:
        raise IncompatibleCheckpointError(f"the vocabularies in {path} are invalid: {err}") from None
    src_vocab, tgt_vocab = vocabs
    if (len(src_vocab), len(tgt_vocab)) != (config.src_vocab_size, config.tgt_vocab_size):
        raise IncompatibleCheckpointError(
            f"the vocabularies in {path} have {len(src_vocab)} and {len(tgt_vocab)} tokens, "
            f"but its configuration says {config.src_vocab_size} and {config.tgt_vocab_size}"
        )
    tgt_lang = _field(ckpt, "tgt_lang", str, path)
    if tgt_lang not in LANGS:
        raise IncompatibleCheckpointError(
            f"{path} has target language {tgt_lang!r}; only {LANGS} can be detokenised."
        )
    state = _field(ckpt, "state_dict", dict, path)
    with torch.random.fork_rng(devices=[]):  # its initial weights are overwritten anyway
        model = cls(config)
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as err:
        raise IncompatibleCheckpointError(
            f"the weights in {path} do not fit {kind}({config}): {_one_line(str(err))}. The "
            "checkpoint was edited or written by another version of the model code; export "
            "it again."
        ) from None
    return Checkpoint(
        model=model,
        src_vocab=src_vocab,
        tgt_vocab=tgt_vocab,
        src_lang=_field(ckpt, "src_lang", str, path),
        tgt_lang=tgt_lang,
        lowercase=_field(ckpt, "lowercase", bool, path),
        metadata=_field(ckpt, "metadata", dict, path),
    )
