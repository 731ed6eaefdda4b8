"""Automatic checkers for the exercises.

Each chapter with an auto-checked exercise has a module here, named by the chapter
(``exercises.ch01`` for chapter 1, ...). A checker calls the reader's function on fresh
inputs, compares the result with a reference, and raises :class:`AssertionError` with a
message that says *what* is wrong — the type, the shape, or the first element that differs
and by how much. On success it prints one short line, so the solution cell's stored output
is stable.

An exercise starts as a *stub*, a function whose body is ``raise NotImplementedError(...)``.
Every checker is wrapped by :func:`checker`: when the reader's function raises
``NotImplementedError`` the checker prints one line saying that the exercise is not solved
yet and returns, so running a whole notebook never stops at an exercise the reader has not
tried.

A checker also refuses a "solution" that only calls what the exercise asks the reader to
write: the library's reference implementation the checker compares with, or PyTorch's
ready-made module when the exercise is to build that module. :func:`~seq2seq_lib.exercises.refuse_reference`
inspects the reader's function before anything runs (its code, the functions it calls from
the same notebook or module, its closures and default arguments) and fails with an
:class:`AssertionError` that names the function it calls. It reads the code, it does not
run it, so it catches the accident — the notebook has already imported the reference — and
not every contortion (``getattr`` with a computed name, ``eval``); ordinary building blocks
(``torch.softmax``, ``F.cross_entropy``, ``topk``, ``Counter``) stay allowed.

This module holds that wrapper, the refusal and the comparison helpers every checker uses.
"""

from __future__ import annotations

import builtins
import dis
import functools
import importlib
import inspect
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import torch


class NotSolvedYet(BaseException):
    """The reader's function is still the stub (it raised ``NotImplementedError``).

    A :class:`BaseException`, not an :class:`Exception`, so that a checker's own
    ``except Exception`` (which reports the reader's errors as failures) lets it through to
    :func:`checker`.
    """


def checker(check: Callable[..., None]) -> Callable[..., None]:
    """Make ``check(fn, ..., exercise="Exercise N.M")`` polite to an unsolved stub.

    The wrapped checker calls ``fn`` through a guard: if ``fn`` raises
    ``NotImplementedError``, it prints ``"Exercise N.M is not solved yet: ..."`` and returns
    ``None`` instead of raising. Any other outcome is the checker's own: one line on
    success, an :class:`AssertionError` with the diagnosis otherwise. The checker must take
    the reader's function first and have a parameter ``exercise`` (the label it prints).
    """
    signature = inspect.signature(check)
    if "exercise" not in signature.parameters:
        raise TypeError(f"{check.__name__} needs a parameter 'exercise' (the label it prints)")

    @functools.wraps(check)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        fn, *rest = bound.args
        name = getattr(fn, "__name__", "your function")

        @functools.wraps(fn)
        def guarded(*a: Any, **kw: Any) -> Any:
            try:
                return fn(*a, **kw)
            except NotImplementedError as err:
                raise NotSolvedYet(name) from err

        guarded._reader_function = fn  # type: ignore[attr-defined]  # for refuse_reference

        try:
            check(guarded, *rest, **bound.kwargs)
        except NotSolvedYet:
            print(f"{bound.arguments['exercise']} is not solved yet: replace the line "
                  f"`raise NotImplementedError(...)` in `{name}` with your code and run "
                  "this cell again.")

    return wrapper


def call_reader(fn: Callable[..., Any], args: tuple[Any, ...], what: str) -> Any:
    """Call the reader's ``fn(*args)``; any error it raises (but the stub's
    ``NotImplementedError``, see :func:`checker`) becomes an :class:`AssertionError` naming
    ``what``, and tensor arguments must come back unchanged (no in-place edits)."""
    copies = [a.clone() if isinstance(a, torch.Tensor) else None for a in args]
    try:
        out = fn(*args)
    except Exception as err:  # noqa: BLE001 - report any error of the reader's code as a failure
        raise AssertionError(f"your {what} raised {type(err).__name__}: {err}") from err
    for i, (arg, before) in enumerate(zip(args, copies, strict=True)):
        if before is not None and not torch.equal(arg, before):
            raise AssertionError(
                f"your {what} changed its argument {i} in place; return new tensors"
            )
    return out


# -- refusing a solution that calls the reference ----------------------------------------
REFERENCE = "the reference it is checked against"
"""What :func:`~seq2seq_lib.exercises.refuse_reference` calls an entry given without its own description."""

_MISSING = object()
_PASS_THROUGH = frozenset({"CACHE", "EXTENDED_ARG", "NOP", "PUSH_NULL", "RESUME",
                           "COPY_FREE_VARS", "MAKE_CELL"})  # do not end an attribute chain


class Forbidden(NamedTuple):
    """One thing a solution must not call: ``name`` as shown to the reader, the object
    (``None`` for a method name such as ``".backward"``) and what it is."""

    name: str
    obj: Any
    what: str


@functools.cache
def resolve(path: str) -> Any:
    """The object at the dotted ``path`` (``"seq2seq_lib.losses.masked_cross_entropy"``,
    ``"torch.nn.GRUCell"``): the longest importable module, then attributes. ``None`` when it
    does not exist (an optional package, an older PyTorch)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return None
        return obj
    return None


def forbidden_list(references: Sequence[str | tuple[str, str]]) -> list[Forbidden]:
    """:class:`Forbidden` entries for ``references``: each a dotted path, or ``(path, what)``;
    a path that starts with ``"."`` is a method name refused on any object. Paths that do
    not resolve (:func:`resolve`) are left out."""
    found = []
    for entry in references:
        path, what = (entry, REFERENCE) if isinstance(entry, str) else entry
        if path.startswith("."):
            found.append(Forbidden(f"{path}()", None, what))
            continue
        obj = resolve(path)
        if obj is not None:
            found.append(Forbidden(path, obj, what))
    return found


def refuse_reference(
    fn: Callable[..., Any],
    references: Sequence[str | tuple[str, str]],
    exercise: str,
    how: str = "",
) -> None:
    """Fail if the reader's ``fn`` calls one of ``references`` instead of solving the exercise.

    ``references`` are dotted paths (``"seq2seq_lib.losses.masked_cross_entropy"``), each
    optionally paired with what it is (default :data:`REFERENCE`); a class also refuses its
    instances and subclasses, and a path ``".name"`` refuses a method of that name on any
    object (``".backward"``: autograd). The check reads ``fn`` without running it: every name
    its code (and the code of its lambdas, comprehensions and inner functions) loads,
    resolved in ``fn.__globals__``, its closure and its default arguments, with attribute
    chains on modules and classes (``losses.masked_cross_entropy``, ``torch.nn.GRUCell``)
    and imports inside the function; the reader's own functions and classes that it uses
    (defined in the same module or notebook) are read in turn, to any depth. Everything
    else — PyTorch, the standard library, library code that is not listed — is allowed.

    Raises :class:`AssertionError`, e.g. ``"Exercise 7.1: `my_loss` calls
    seq2seq_lib.losses.masked_cross_entropy, the reference it is checked against. The
    exercise is to write it yourself, with torch operations."`` (``how`` is the end of that
    sentence). A stub, whose body only raises ``NotImplementedError``, calls nothing, so
    :func:`checker` still reports it as not solved yet.
    """
    fn = getattr(fn, "_reader_function", fn)  # the reader's function inside checker's guard
    found = _find(fn, forbidden_list(references))
    if found is None:
        return
    trail, hit, obj = found
    shown = hit.name
    if hit.obj is not None and obj is not hit.obj and isinstance(hit.obj, type):
        kind = "a subclass" if isinstance(obj, type) else "an instance"
        shown = f"{kind} of {hit.name}"
    if trail:
        who = trail[0] if trail[0].isidentifier() else ""
        via = "".join(f"`{name}`, which calls " if name.isidentifier() else
                      "a lambda, which calls " for name in trail[1:])
        said = f"{f'`{who}`' if who else 'your function'} calls {via}{shown}"
    else:
        said = f"you passed {shown} itself"
    raise AssertionError(
        f"{exercise}: {said}, {hit.what}. The exercise is to write it "
        f"yourself{', ' + how if how else ''}."
    )


def _matches(obj: Any, ref: Any) -> bool:
    """``obj`` is ``ref``, a method bound from it, or (``ref`` a class) an instance or a
    subclass of it."""
    try:
        if obj is ref or getattr(obj, "__func__", None) is ref:
            return True
        if isinstance(ref, type):
            return issubclass(obj, ref) if isinstance(obj, type) else isinstance(obj, ref)
    except Exception:  # noqa: BLE001 - an object that cannot be asked is not the reference
        return False
    return False


def _home(fn: Any) -> tuple[str | None, dict[str, Any] | None]:
    """The module name and globals of the reader's function (under partials and methods)."""
    for _ in range(10):
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif isinstance(fn, types.MethodType):
            fn = fn.__func__
        else:
            break
    if not isinstance(fn, types.FunctionType | type):
        fn = type(fn)  # a callable object: its class is the reader's
    return getattr(fn, "__module__", None), getattr(fn, "__globals__", None)


Found = tuple[tuple[str, ...], Forbidden, Any]


def _find(fn: Any, forbidden: list[Forbidden]) -> Found | None:
    """The first forbidden thing ``fn`` uses: the reader's functions that lead to it (from
    ``fn``), the entry, and the object found (the entry's, or an instance or subclass)."""
    module, globals_ = _home(fn)
    objects = [f for f in forbidden if f.obj is not None]
    methods = {f.name[1:-2]: f for f in forbidden if f.obj is None}
    seen: set[int] = set()

    def own(obj: Any) -> bool:  # written next to the solution: in its module or notebook
        if globals_ is not None and getattr(obj, "__globals__", None) is globals_:
            return True
        return getattr(obj, "__module__", None) in {module, "__main__"}

    def visit(obj: Any, trail: tuple[str, ...]) -> Found | None:
        for f in objects:
            if _matches(obj, f.obj):
                return trail, f, obj
        if id(obj) in seen:
            return None
        seen.add(id(obj))
        inner: list[Any] = []
        if isinstance(obj, functools.partial):
            inner = [obj.func, *obj.args, *obj.keywords.values()]
        elif isinstance(obj, types.MethodType):
            inner = [obj.__func__]
        elif isinstance(obj, staticmethod | classmethod):
            inner = [obj.__func__]
        elif isinstance(obj, property):
            inner = [obj.fget, obj.fset]
        elif isinstance(obj, types.FunctionType):
            if not (own(obj) or not trail):
                return None
            trail = (*trail, obj.__name__)
            code = obj.__code__
            cells = {}
            for name, cell in zip(code.co_freevars, obj.__closure__ or (), strict=False):
                try:
                    cells[name] = cell.cell_contents
                except ValueError:  # an empty cell
                    pass
            inner = [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values(),
                     *cells.values()]
            for attr, value in _loads(code, obj.__globals__, cells):
                if attr is not None and attr in methods:
                    return trail, methods[attr], None
                if value is not _MISSING:
                    inner.append(value)
        elif isinstance(obj, type):
            if not own(obj):
                return None
            inner = list(vars(obj).values())
        elif callable(obj) and own(type(obj)):
            inner = [type(obj)]
        for value in inner:
            found = visit(value, trail)
            if found is not None:
                return found
        return None

    return visit(fn, ())


def _loads(
    code: types.CodeType, globals_: dict[str, Any], cells: dict[str, Any]
) -> Iterator[tuple[str | None, Any]]:
    """``(attribute name or None, object or _MISSING)`` for every name and attribute that
    ``code`` loads, and the code nested in it; attribute chains are followed on modules and
    classes, and local names bound to a resolved object keep it."""
    local: dict[str, Any] = {}
    current: Any = _MISSING  # the object the last instructions resolved to
    imported: Any = _MISSING  # the module of the last IMPORT_NAME (for IMPORT_FROM)
    last_const: Any = None
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        if op in _PASS_THROUGH:
            continue
        value: Any = _MISSING
        if op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"):
            if isinstance(arg, str):
                value = globals_.get(arg, builtins.__dict__.get(arg, _MISSING))
                value = local.get(arg, value) if op == "LOAD_NAME" else value
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FAST", "LOAD_FAST_CHECK",
                    "LOAD_FAST_AND_CLEAR"):
            value = local.get(arg, cells.get(arg, _MISSING))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            yield arg, _MISSING
            if isinstance(current, types.ModuleType | type):
                try:
                    value = getattr(current, arg, _MISSING)
                except Exception:  # noqa: BLE001 - a descriptor that fails: not ours to judge
                    value = _MISSING
        elif op == "IMPORT_NAME":
            module = sys.modules.get(arg)
            if module is None:
                try:
                    module = importlib.import_module(arg)
                except Exception:  # noqa: BLE001 - the reader's import fails when it runs
                    module = None
            imported = module if module is not None else _MISSING
            if module is not None and not last_const:  # `import a.b` binds a
                value = sys.modules.get(arg.partition(".")[0], _MISSING)
            else:
                value = imported
        elif op == "IMPORT_FROM":
            if isinstance(imported, types.ModuleType):
                value = getattr(imported, arg, _MISSING)
                if value is _MISSING:
                    value = sys.modules.get(f"{imported.__name__}.{arg}", _MISSING)
        elif op in ("STORE_FAST", "STORE_DEREF", "STORE_NAME") and current is not _MISSING:
            local[arg] = current
        elif op == "LOAD_CONST":
            last_const = arg
            if isinstance(arg, types.CodeType):
                yield from _loads(arg, globals_, {**cells, **local})
        if value is not _MISSING:
            yield None, value
        current = value


def assert_tensor(name: str, got: Any) -> torch.Tensor:
    """Fail with a readable message unless ``got`` is a tensor."""
    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"{name} should be a torch.Tensor, got {type(got).__name__}")
    return got


def assert_shape(name: str, got: torch.Tensor, shape: tuple[int, ...] | torch.Size) -> None:
    """Fail unless ``got.shape == shape``, naming both shapes."""
    assert_tensor(name, got)
    if tuple(got.shape) != tuple(shape):
        raise AssertionError(
            f"{name} has shape {tuple(got.shape)}, expected {tuple(shape)}"
        )


def assert_close(
    name: str,
    got: Any,
    expected: torch.Tensor,
    *,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> None:
    """Fail unless ``got`` matches ``expected`` element-wise (``|g - e| <= atol + rtol|e|``).

    The message names the first differing element (as an index tuple), both values, and
    how many elements differ, e.g.::

        dL/dU differs from the reference at index (1, 2): got 0.1234, expected 0.4321
        (3 of 16 elements differ; largest |difference| 0.31)
    """
    got = assert_tensor(name, got)
    assert_shape(name, got, expected.shape)
    got_d = got.detach().to(dtype=torch.float64, device="cpu")
    exp_d = expected.detach().to(dtype=torch.float64, device="cpu")
    if not torch.isfinite(got_d).all():
        bad = tuple(int(i) for i in torch.nonzero(~torch.isfinite(got_d))[0])
        raise AssertionError(f"{name} has a non-finite value at index {bad}: {got_d[bad].item()}")
    diff = (got_d - exp_d).abs()
    wrong = diff > atol + rtol * exp_d.abs()
    if wrong.any():
        first = tuple(int(i) for i in torch.nonzero(wrong)[0])
        raise AssertionError(
            f"{name} differs from the reference at index {first}: got {got_d[first].item():.6g}, "
            f"expected {exp_d[first].item():.6g} ({int(wrong.sum())} of {wrong.numel()} "
            f"elements differ; largest |difference| {diff.max().item():.3g})"
        )


def assert_differentiable(what: str, out: torch.Tensor) -> None:
    """Fail unless ``out`` carries a gradient (it was computed with torch operations)."""
    if not out.requires_grad:
        raise AssertionError(
            f"{what} is not differentiable (no grad_fn): compute it with torch operations, "
            "without .item(), .detach() or .numpy()"
        )


def passed(exercise: str) -> None:
    """Print the one line a checker prints on success."""
    print(f"{exercise}: all checks passed.")
