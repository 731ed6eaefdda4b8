"""One file format for every saved model: cache entries, exported translators, paused runs.

A model is saved with :func:`save_checkpoint` and read with :func:`read_checkpoint`. The file
is a ``dict`` written with :func:`torch.save` through :func:`seq2seq_lib.atomic.atomic_file`
(a crash leaves the old file or none) that holds only strings, numbers, lists, dicts and
tensors, so it is read with ``torch.load(weights_only=True)``: reading a checkpoint cannot run
code. It describes itself:

==================  ===========================================================================
``format``          :data:`FORMAT`, ``"seq2seq-course-checkpoint/3"``
``model``           the model's class, ``"seq2seq_lib.attention_seq2seq.TranslatorModel"``
                    (``None`` for a class defined outside the library, e.g. in a notebook)
``config``          its configuration dataclass as a dict (``model.config``); with ``model``
                    it rebuilds the architecture: ``cls(cls.config_class(**config))``
``state_dict``      the weights, on the CPU
``history``         the training history (losses, steps, ...), or ``None``
``vocabs``          ``{"src": [...], "tgt": [...]}``: the vocabularies' tokens, or ``None``
``text``            how text is turned into tokens and back (``src_lang``, ``tgt_lang``,
                    ``lowercase``), or ``None``
``metadata``        anything JSON-like (what produced it, BLEU, the chosen search, ...)
``training``        the state a paused run resumes from (optimiser, random generators,
                    position in the epoch), or ``None``
``versions``        the PyTorch and seq2seq_lib that wrote it (information only)
==================  ===========================================================================

The model cache (:func:`seq2seq_lib.cache.train_or_load`) writes weights, history and its key;
a paused training run (:func:`seq2seq_lib.training.train`) adds ``training``; an exported
translator (:func:`seq2seq_lib.translator.export_translator`) adds the vocabularies and
``text``. So any cached model of the library can be rebuilt without the recipe that trained
it: ``read_checkpoint(path).model``.

Everything that can go wrong when reading is a :class:`CheckpointError` whose message says
what is wrong and what to do: :class:`CheckpointNotFoundError`, :class:`NotACheckpointError`
(a corrupt file, a file of another program) and :class:`IncompatibleCheckpointError`
(another format version, a model class this library does not have, a configuration it
rejects, weights that do not fit).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seq2seq_lib import __version__
from seq2seq_lib.atomic import atomic_file

FORMAT_NAME = "seq2seq-course-checkpoint"
FORMAT_VERSION = 3
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
PACKAGE = "seq2seq_lib"


class CheckpointError(Exception):
    """A checkpoint cannot be used; the message says why and what to do."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """There is no file at the given path."""


class NotACheckpointError(CheckpointError):
    """The file is not a checkpoint of this course: unreadable, corrupt, or another kind of
    file."""


class IncompatibleCheckpointError(CheckpointError):
    """A checkpoint this library cannot use: another format version, an unknown model class,
    a configuration this library rejects, or weights that do not fit the model."""


@dataclass
class Checkpoint:
    """What :func:`read_checkpoint` returns. ``model`` is the rebuilt model with its weights
    (on the CPU, in training mode) when the file names a library class and ``rebuild`` was
    asked for, else ``None``; ``state_dict`` holds the weights either way."""

    model: nn.Module | None
    model_class: str | None
    config: dict[str, Any] | None
    state_dict: dict[str, torch.Tensor]
    history: dict[str, Any] | None
    vocabs: dict[str, list[str]] | None
    text: dict[str, Any] | None
    metadata: dict[str, Any]
    training: dict[str, Any] | None


def model_class_name(model: nn.Module) -> str | None:
    """``"module.Class"`` of a library model that its ``config`` rebuilds, else ``None``."""
    cls = type(model)
    config_class = getattr(cls, "config_class", None)
    if not cls.__module__.startswith(PACKAGE + ".") or config_class is None:
        return None
    if type(getattr(model, "config", None)) is not config_class:
        return None
    return f"{cls.__module__}.{cls.__qualname__}"


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def save_checkpoint(
    path: str | os.PathLike[str],
    model: nn.Module,
    *,
    history: Mapping[str, Any] | None = None,
    vocabs: Mapping[str, list[str]] | None = None,
    text: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    training: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``model`` (and what else is given) to ``path`` in the format of this module,
    atomically; returns the path. The weights are copied to the CPU."""
    name = model_class_name(model)
    content = {
        "format": FORMAT,
        "model": name,
        "config": dataclasses.asdict(model.config) if name else None,  # type: ignore[arg-type]
        "state_dict": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
        "history": dict(history) if history is not None else None,
        "vocabs": {side: list(tokens) for side, tokens in vocabs.items()} if vocabs else None,
        "text": dict(text) if text is not None else None,
        "metadata": dict(metadata or {}),
        "training": dict(training) if training is not None else None,
        "versions": {"torch": str(torch.__version__), "seq2seq_lib": __version__},
    }
    path = Path(path)
    with atomic_file(path) as handle:
        torch.save(content, handle)
    return path


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
    """The checkpoint dict at ``path`` (``weights_only=True``), or the right error."""
    if not path.exists():
        raise CheckpointNotFoundError(f"no checkpoint at {path}: the file does not exist")
    if not path.is_file():
        raise NotACheckpointError(f"{path} is not a file (a directory?)")
    try:
        content = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - corrupt, truncated, not torch, unsafe pickle
        raise NotACheckpointError(
            f"{path} is not a checkpoint: torch.load(weights_only=True) cannot read it "
            f"({type(err).__name__}: {_load_error(err)}). The file may be corrupt or truncated, "
            "or not a PyTorch file."
        ) from err
    if not isinstance(content, dict) or "format" not in content:
        what = (f"a dict without the 'format' tag (its keys: {sorted(map(str, content))[:8]})"
                if isinstance(content, dict) else f"a {type(content).__name__}")
        raise NotACheckpointError(f"{path} is not a checkpoint of this course: it holds {what}")
    tag = content["format"]
    name, _, version = tag.partition("/") if isinstance(tag, str) else ("", "", "")
    if name == "seq2seq-course-translator":
        raise IncompatibleCheckpointError(
            f"{path} is a translator checkpoint of an older seq2seq_lib (format {tag!r}); this "
            f"one reads {FORMAT!r}. Export the model again with this seq2seq_lib "
            "(seq2seq_lib.translator.export_translator), or use the seq2seq_lib that wrote it."
        )
    if name != FORMAT_NAME:
        raise NotACheckpointError(f"{path} is not a checkpoint of this course: its format is "
                                  f"{tag!r}, not {FORMAT!r}")
    if version != str(FORMAT_VERSION):
        raise IncompatibleCheckpointError(
            f"{path} has format version {version!r} ({tag!r}), but this seq2seq_lib "
            f"{__version__} reads only version {FORMAT_VERSION}. Use the seq2seq_lib that "
            "wrote it, or save the model again with this one."
        )
    return content


def _field(content: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    value = content.get(key)
    if key not in content or not isinstance(value, kind):
        raise IncompatibleCheckpointError(
            f"field {key!r} of {path} is missing or a {type(value).__name__}, which format "
            f"{FORMAT!r} does not allow; save the model again."
        )
    return value


def _model_class(name: str, path: Path) -> type[nn.Module]:
    """The library class ``"module.Class"``, imported by name (only from this package)."""
    module, _, qualname = name.rpartition(".")
    cls = None
    if module == PACKAGE or module.startswith(PACKAGE + "."):
        try:
            cls = getattr(importlib.import_module(module), qualname, None)
        except ImportError:
            cls = None
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)
            and getattr(cls, "config_class", None) is not None):
        raise IncompatibleCheckpointError(
            f"{path} holds a {name!r}, which this seq2seq_lib does not have. Use the "
            "seq2seq_lib that wrote it."
        )
    return cls


def rebuild(name: str, config: Mapping[str, Any], state_dict: Mapping[str, torch.Tensor],
            path: str | os.PathLike[str] = "<memory>") -> nn.Module:
    """The model ``name`` built from ``config`` with ``state_dict`` loaded (on the CPU);
    the global random state is left as it was."""
    path = Path(path)
    cls = _model_class(name, path)
    try:
        config_obj = cls.config_class(**config)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as err:
        raise IncompatibleCheckpointError(
            f"{path}: this seq2seq_lib cannot make a {name} of this configuration: {err}. Use "
            "the seq2seq_lib that wrote it."
        ) from None
    with torch.random.fork_rng(devices=[]):  # its initial weights are overwritten anyway
        model = cls(config_obj)
    try:
        model.load_state_dict(state_dict)
    except (RuntimeError, TypeError, AttributeError) as err:
        raise IncompatibleCheckpointError(
            f"the weights in {path} do not fit {name}({config_obj}): {_one_line(str(err))}. "
            "The file was edited or written by another version of the model code."
        ) from None
    return model


def read_checkpoint(path: str | os.PathLike[str], *, rebuild_model: bool = True) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`.

    With ``rebuild_model`` (the default) a file that names a library class gets its model
    rebuilt from class and configuration, with its weights loaded, on the CPU.

    Raises:
        CheckpointNotFoundError: there is no file at ``path``.
        NotACheckpointError: the file is unreadable, corrupt, or not a checkpoint of this course.
        IncompatibleCheckpointError: another format version, a model class this library does
            not have, a configuration it rejects, or weights that do not fit.
    """
    path = Path(path).expanduser()
    content = _read(path)
    name = content.get("model")
    config = content.get("config")
    state = _field(content, "state_dict", dict, path)
    model = None
    if rebuild_model and name is not None:
        model = rebuild(_field(content, "model", str, path), _field(content, "config", dict, path),
                        state, path)
    return Checkpoint(
        model=model, model_class=name, config=config, state_dict=state,
        history=content.get("history"), vocabs=content.get("vocabs"), text=content.get("text"),
        metadata=_field(content, "metadata", dict, path), training=content.get("training"),
    )
