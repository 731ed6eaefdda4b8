"""Train once, load afterwards: a model cache keyed by configuration *and* code version.

Chapters train their expensive models through :func:`train_or_load`. The first call trains
and writes ``<cache>/<name>-<key>.pt`` holding the weights **and the training history**;
every later call — in the same chapter or a later one — loads it. A cell that prints or
plots the history therefore shows exactly the same thing whether the model was trained now
or loaded, which is what lets nbval compare stored outputs.

The key is a SHA-256 over

* the ``name`` and the ``config``, written as canonical JSON (sorted keys; a dataclass such
  as a model's configuration or a :class:`~seq2seq_lib.training.TrainConfig` becomes its
  fields and its class name): every hyper-parameter that changes the model;
* the source of the library modules that build and train the model (:func:`model_modules`):
  the modules that the ``build`` and ``train`` functions use, and every library module those
  import (:func:`seq2seq_lib.chapters.import_closure`) — a change there retrains, a change
  elsewhere in the library (a docstring of :mod:`seq2seq_lib.bleu`) does not;
* the source of the ``build`` and ``train`` functions themselves (a changed recipe retrains);
* the PyTorch major.minor version and the numerics mode (:mod:`seq2seq_lib.numerics`:
  weights trained with native kernels differ in the last bits from portable ones);
* whether it is a smoke run (``run.smoke`` of :class:`seq2seq_lib.device.Run`: a few
  updates only).

Files are checkpoints (:mod:`seq2seq_lib.checkpoint`: written atomically, read with
``torch.load(weights_only=True)``, so a cache file cannot run code) holding the weights, the
history and the key's configuration; a library model is rebuilt from one without its recipe
(``read_checkpoint(path).model``). Several processes may share
one cache (notebooks executed side by side): while one trains a model, the others that ask
for it wait for it (a lock file beside the cache file) and then load it, instead of training
it a second time.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import os
import sys
import textwrap
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seq2seq_lib import chapters, numerics
from seq2seq_lib.checkpoint import read_checkpoint, save_checkpoint
from seq2seq_lib.device import CPU, Run

ENV_CACHE = "SEQ2SEQ_CACHE"
History = dict[str, Any]


def cache_dir() -> Path:
    """The cache folder: ``$SEQ2SEQ_CACHE`` if set, else ``~/.cache/seq2seq-course/models``."""
    env = os.environ.get(ENV_CACHE)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "seq2seq-course" / "models"


LIBRARY_ROOT = chapters.ROOT
"""The package folder whose sources the keys hash (tests point it at a copy)."""


@lru_cache(maxsize=64)
def _fingerprint(files: tuple[tuple[str, Path, int, int], ...]) -> str:
    """SHA-256 of ``(module, path, mtime, size)`` files' contents (cached while unchanged)."""
    digest = hashlib.sha256()
    for module, path, _, _ in files:
        digest.update(module.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def library_fingerprint(modules: Iterable[str] | None = None) -> str:
    """SHA-256 of the sources of library ``modules`` (names as in
    :data:`seq2seq_lib.chapters.MODULE_CHAPTER`; default: every module of the package)."""
    chosen = chapters.library_modules(LIBRARY_ROOT) if modules is None else modules
    files = []
    for module in sorted(set(chosen)):
        path = chapters.module_path(module, LIBRARY_ROOT)
        if path is not None:
            stat = path.stat()
            files.append((module, path, stat.st_mtime_ns, stat.st_size))
    return _fingerprint(tuple(files))


def _library_uses(obj: Any, seen: set[int]) -> set[str]:
    """The library modules that ``obj`` uses: its own module if it is library code (a module,
    function, class or an instance of a library class); for code defined elsewhere (a
    notebook), the modules of the functions, classes and modules that it refers to by name,
    followed through other code defined there."""
    if id(obj) in seen:
        return set()
    seen.add(id(obj))
    prefix = chapters.PACKAGE + "."
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        return {name[len(prefix):]} if name.startswith(prefix) else set()
    if isinstance(obj, functools.partial):
        parts = [obj.func, *obj.args, *obj.keywords.values()]
        return set().union(*(_library_uses(p, seen) for p in parts))
    if isinstance(obj, types.MethodType):
        return _library_uses(obj.__func__, seen) | _library_uses(obj.__self__, seen)
    module = getattr(obj, "__module__", None) if callable(obj) else type(obj).__module__
    if isinstance(module, str) and module.startswith(prefix):
        return {module[len(prefix):]}
    if not isinstance(module, str) or _installed(module):
        return set()
    if isinstance(obj, type):
        members = [*vars(obj).values(), *obj.__bases__]  # methods (of static/classmethods
        return set().union(*(_library_uses(getattr(m, "__func__", m), seen)  # their function)
                             for m in members))
    if isinstance(obj, types.FunctionType):
        found: set[str] = set()
        codes, names = [obj.__code__], set()
        while codes:
            code = codes.pop()
            names |= set(code.co_names)
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        found |= _imports_in_source(obj)
        refs = [obj.__globals__[n] for n in sorted(names) if n in obj.__globals__]
        refs += [cell.cell_contents for cell in obj.__closure__ or () if _filled(cell)]
        refs += [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()]
        for ref in refs:
            found |= _library_uses(ref, seen)
        return found
    return set()


def _imports_in_source(fn: types.FunctionType) -> set[str]:
    """The library modules that ``fn``'s source imports in its body (``from seq2seq_lib
    import training`` inside a function)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):  # no source, or a lambda inside an expression
        return set()
    return chapters.imported_modules(tree, LIBRARY_ROOT)


def _installed(module: str) -> bool:
    """Whether ``module`` belongs to Python or to an installed package (torch, NumPy, ...),
    whose code :func:`_library_uses` does not read: only the user's own code (a notebook's
    ``__main__``, a script, a test) can use the library."""
    if module == "__main__":  # a notebook or a script
        return False
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return True
    file = getattr(sys.modules.get(module), "__file__", None) or ""
    return "site-packages" in file or "dist-packages" in file


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def model_modules(*code: Any) -> set[str]:
    """The library modules that build and train a model: those that the given functions
    (and classes) use, with everything they import, and :mod:`seq2seq_lib.numerics`."""
    seen: set[int] = set()
    roots = set().union({"numerics"}, *(_library_uses(obj, seen) for obj in code))
    return chapters.import_closure(roots, LIBRARY_ROOT)


def _function_fingerprint(fn: Callable[..., Any]) -> str:
    """SHA-256 of a function's source; of the function inside a ``functools.partial``
    (its bound arguments are the config's business, part of the key elsewhere)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):  # defined somewhere without source: fall back to bytecode
        source = getattr(getattr(fn, "__code__", None), "co_code", b"").hex()
    return hashlib.sha256(source.encode()).hexdigest()


def _canonical(value: Any) -> Any:
    """``value`` as JSON data: a dataclass becomes ``{"dataclass": its class, **its fields}``,
    tuples become lists; anything else is left for :func:`json.dumps` to accept or refuse."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"dataclass": type(value).__qualname__, **fields}
    if isinstance(value, Mapping):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    return value


def cache_key(
    name: str, config: Any, build: Callable[[], nn.Module], train: Callable[..., Any],
    *, smoke: bool = False,
) -> str:
    """The hex key of a model: name, config, the sources of the library modules and of the
    functions that build and train it, torch version, numerics mode and whether it is a smoke
    run (module docstring)."""
    payload = {
        "name": name,
        "config": _canonical(config),
        "library": library_fingerprint(model_modules(build, train)),
        "build": _function_fingerprint(build),
        "train": _function_fingerprint(train),
        "torch": ".".join(torch.__version__.split(".")[:2]),
        "numerics": numerics.mode(),
        "smoke": smoke,  # smoke-run models (a few updates) are never real ones
    }
    try:
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as err:
        raise TypeError(f"config of {name!r} must be JSON-serialisable: {err}") from None
    return hashlib.sha256(text.encode()).hexdigest()


def cache_path(
    name: str,
    config: Any,
    build: Callable[[], nn.Module],
    train: Callable[..., Any],
    *,
    run: Run = CPU,
    directory: str | os.PathLike[str] | None = None,
) -> Path:
    """The file :func:`train_or_load` reads or writes for these arguments.

    ``path.exists()`` tells whether the model is cached, without building or loading it.
    """
    key = cache_key(name, config, build, train, smoke=run.smoke)
    folder = Path(directory) if directory is not None else cache_dir()
    return folder / f"{name}-{key[:16]}.pt"


@dataclass
class Trained:
    """What :func:`train_or_load` returns.

    ``loaded`` says whether the weights came from the cache; never print it in a
    notebook (the stored output would then depend on the cache). ``finished`` is False for
    a run paused by ``train_or_load(..., pause_at=...)``: its model is only partly trained.
    """

    model: nn.Module
    history: History
    path: Path
    loaded: bool
    finished: bool = True


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` (other processes wait) while in the block.

    On systems without ``fcntl`` (Windows) it locks nothing.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS
        yield
        return
    lock = Path(path).with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def resume_path(path: str | os.PathLike[str]) -> Path:
    """Where a paused training run of the cache file ``path`` keeps its state."""
    return Path(path).with_suffix(".resume.pt")


def train_or_load(
    name: str,
    config: Any,
    build: Callable[[], nn.Module],
    train: Callable[[nn.Module], History],
    *,
    run: Run = CPU,
    directory: str | os.PathLike[str] | None = None,
    pause_at: int | None = None,
) -> Trained:
    """Return a trained model and its history, training only when no cached copy exists.

    A long run can be split over several calls (each notebook cell then stays short):
    ``pause_at=n`` trains up to update ``n``, saves the run's state beside the cache file
    (:func:`resume_path`) and returns it with ``finished=False``, caching nothing; the next
    call (without ``pause_at``, or with a later one) continues from there, and the finished
    model is the same, bit for bit, as one trained in a single call. (Not on a GPU for a model
    with dropout between the layers of a cuDNN RNN: cuDNN draws those masks from a generator
    of its own, which no checkpoint saves, so the run goes on with other masks — an equally
    valid run, not the same one.) A run that ends before update ``n`` is cached at once, as
    a call without ``pause_at`` would. While a paused state exists, ``train`` is called as
    ``train(model, resume=..., pause_at=...)``, the keywords of
    :func:`seq2seq_lib.training.fit`.

    Args:
        name: a short name for the file, e.g. ``"ch07-seq2seq"``.
        config: the hyper-parameters, part of the key: JSON data, in which dataclasses
            (model configurations, :class:`~seq2seq_lib.training.TrainConfig`) may appear.
        build: makes a fresh, untrained model (it is also used before loading weights).
        train: trains the model in place on ``run.device`` and returns its history — a dict
            of plain Python numbers, strings and lists (it is saved beside the weights).
        run: the :class:`~seq2seq_lib.device.Run` of :func:`~seq2seq_lib.device.setup`: the
            returned model lives on ``run.device``; a smoke run's models (``run.smoke``) are
            cached apart from real ones. ``train`` is given nothing of it: a recipe passes
            it on itself.
        directory: the cache folder (default :func:`cache_dir`).
        pause_at: stop this call's training after this many updates (see above).

    Processes that ask for the same model at the same time take turns (:func:`locked`): the
    first trains, the others then load its result.
    """
    path = cache_path(name, config, build, train, run=run, directory=directory)
    with locked(path):  # another process training this model: wait for it, then load
        return _train_or_load(name, config, path, build, train, run.device, pause_at)


def _train_or_load(name: str, config: Any, path: Path, build: Callable[[], nn.Module],
                   train: Callable[..., History], device: torch.device | str,
                   pause_at: int | None) -> Trained:
    resume = resume_path(path)
    model = build().to(device)
    if path.exists():
        try:
            ckpt = read_checkpoint(path, rebuild_model=False)
            model.load_state_dict(ckpt.state_dict)
            return Trained(model, ckpt.history, path, loaded=True)
        except Exception as err:  # noqa: BLE001 - any unreadable file: keep it aside, retrain
            aside = path.with_suffix(".corrupt")
            os.replace(path, aside)
            warnings.warn(
                f"cached model {path.name} could not be loaded ({err}); "
                f"moved it to {aside.name} and training again",
                stacklevel=2,
            )
            model = build().to(device)
    if pause_at is not None:
        history = train(model, resume=resume, pause_at=pause_at)
        if history["updates"] >= pause_at:  # paused: a later call continues it
            return Trained(model, history, path, loaded=False, finished=False)
        # the run ended before pause_at (a short budget, a smoke run): cache it now
    else:
        history = train(model, resume=resume) if resume.exists() else train(model)
    save_checkpoint(path, model, history=history, metadata={
        "cache": {"name": name, "config": json.loads(json.dumps(_canonical(config)))}})
    resume.unlink(missing_ok=True)
    return Trained(model, history, path, loaded=False)
