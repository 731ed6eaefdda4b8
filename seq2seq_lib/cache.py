"""Train once, load afterwards: a model cache keyed by configuration *and* code version.

Chapters train their expensive models through :func:`train_or_load`. The first call trains
and writes ``<cache>/<name>-<key>.pt`` holding the weights **and the training history**;
every later call — in the same chapter or a later one — loads it. A cell that prints or
plots the history therefore shows exactly the same thing whether the model was trained now
or loaded, which is what lets nbval compare stored outputs.

The key is a SHA-256 over

* the ``name`` and the JSON ``config`` (every hyper-parameter that changes the model),
* the source code of ``seq2seq_lib`` (any change to the library retrains),
* the source of the ``train`` function (a changed recipe retrains),
* the PyTorch major.minor version and the numerics mode (:mod:`seq2seq_lib.numerics`:
  weights trained with native kernels differ in the last bits from portable ones).

Files are written atomically (temporary file, then ``os.replace``) and read with
``torch.load(weights_only=True)``: a cache file cannot run code.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seq2seq_lib import numerics

ENV_CACHE = "SEQ2SEQ_CACHE"
History = dict[str, Any]


def cache_dir() -> Path:
    """The cache folder: ``$SEQ2SEQ_CACHE`` if set, else ``~/.cache/seq2seq-course/models``."""
    env = os.environ.get(ENV_CACHE)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "seq2seq-course" / "models"


@lru_cache(maxsize=1)
def library_fingerprint() -> str:
    """SHA-256 of every ``.py`` file of ``seq2seq_lib`` (paths and contents, sorted)."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _function_fingerprint(fn: Callable[..., Any]) -> str:
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):  # defined somewhere without source: fall back to bytecode
        source = getattr(getattr(fn, "__code__", None), "co_code", b"").hex()
    return hashlib.sha256(source.encode()).hexdigest()


def cache_key(name: str, config: Mapping[str, Any], train: Callable[..., Any]) -> str:
    """The hex key of a model: name, config, library code, training code and torch version."""
    payload = {
        "name": name,
        "config": config,
        "library": library_fingerprint(),
        "train": _function_fingerprint(train),
        "torch": ".".join(torch.__version__.split(".")[:2]),
        "numerics": numerics.mode(),
    }
    try:
        text = json.dumps(payload, sort_keys=True)
    except TypeError as err:
        raise TypeError(f"config of {name!r} must be JSON-serialisable: {err}") from None
    return hashlib.sha256(text.encode()).hexdigest()


def save_atomic(obj: Any, path: str | os.PathLike[str]) -> Path:
    """``torch.save`` to a temporary file beside ``path``, then rename it into place.

    A crash or a full disk leaves either the old file or none — never a truncated one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(obj, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a checkpoint written by :func:`save_atomic` with ``weights_only=True`` on the CPU."""
    return torch.load(Path(path), map_location="cpu", weights_only=True)


def cache_path(
    name: str,
    config: Mapping[str, Any],
    train: Callable[..., Any],
    *,
    directory: str | os.PathLike[str] | None = None,
) -> Path:
    """The file :func:`train_or_load` reads or writes for these arguments.

    ``path.exists()`` tells whether the model is cached, without building or loading it.
    """
    key = cache_key(name, config, train)
    folder = Path(directory) if directory is not None else cache_dir()
    return folder / f"{name}-{key[:16]}.pt"


@dataclass
class Trained:
    """What :func:`train_or_load` returns.

    ``loaded`` says whether the weights came from the cache; never print it in a
    notebook (the stored output would then depend on the cache).
    """

    model: nn.Module
    history: History
    path: Path
    loaded: bool


def train_or_load(
    name: str,
    config: Mapping[str, Any],
    build: Callable[[], nn.Module],
    train: Callable[[nn.Module], History],
    *,
    device: torch.device | str = "cpu",
    directory: str | os.PathLike[str] | None = None,
) -> Trained:
    """Return a trained model and its history, training only when no cached copy exists.

    Args:
        name: a short name for the file, e.g. ``"ch07-seq2seq"``.
        config: JSON-serialisable hyper-parameters; part of the key.
        build: makes a fresh, untrained model (it is also used before loading weights).
        train: trains the model in place on ``device`` and returns its history — a dict of
            plain Python numbers, strings and lists (it is saved beside the weights).
        device: where the returned model lives.
        directory: the cache folder (default :func:`cache_dir`).
    """
    path = cache_path(name, config, train, directory=directory)
    model = build().to(device)
    if path.exists():
        try:
            ckpt = load_checkpoint(path)
            model.load_state_dict(ckpt["state_dict"])
            return Trained(model, ckpt["history"], path, loaded=True)
        except Exception as err:  # noqa: BLE001 - any unreadable file: keep it aside, retrain
            aside = path.with_suffix(".corrupt")
            os.replace(path, aside)
            warnings.warn(
                f"cached model {path.name} could not be loaded ({err}); "
                f"moved it to {aside.name} and training again",
                stacklevel=2,
            )
            model = build().to(device)
    history = train(model)
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    save_atomic(
        {"state_dict": state, "history": history, "config": dict(config), "name": name}, path
    )
    return Trained(model, history, path, loaded=False)
