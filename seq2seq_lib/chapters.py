"""Which chapter introduces each library module, and what each module imports.

The course's rule is that chapter :math:`N` uses only library code introduced by chapters
:math:`\\le N`, *including what that code imports*. :data:`MODULE_CHAPTER` is the one table
that says where each module of ``seq2seq_lib`` is introduced; ``tests/test_chapters.py``
reads every notebook's imports, follows the library's own imports (:func:`import_closure`)
and checks the rule, that every module is in the table, and that no modules import each other
in a cycle. :mod:`seq2seq_lib.cache` uses the same import graph for its keys: a model's key
covers the source of exactly the modules that build and train it.

Chapter 0 is infrastructure that every chapter relies on but no chapter teaches: the pinned
numerics, the device and profile toggle, the model cache, this table, the glue that puts
computed numbers into the prose, and the helpers of the exercise checkers
(``seq2seq_lib.exercises``). An exercise checker belongs to the chapter whose exercise it
checks.

Module names are relative to the package: ``"bptt"``, ``"exercises.ch02"``; the package
``seq2seq_lib.exercises`` itself is ``"exercises"``. This module imports nothing from the
library.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

PACKAGE = "seq2seq_lib"
ROOT = Path(__file__).resolve().parent
"""The folder of the ``seq2seq_lib`` package."""

#: ``{module: the chapter that introduces it}`` for every module of the package, in course
#: order (the API reference lists the modules in this order).
MODULE_CHAPTER: dict[str, int] = {
    # chapter 0: infrastructure
    "numerics": 0, "atomic": 0, "checkpoint": 0, "device": 0, "cache": 0, "chapters": 0,
    "glue": 0, "exercises": 0,
    # chapter 1: backpropagation through time
    "bptt": 1, "exercises.ch01": 1,
    # chapters 2-5: gated cells, layers over time, synthetic tasks
    "cells": 2, "rnn": 2, "tasks": 2, "sequence_model": 2, "exercises.ch02": 2,
    "exercises.ch03": 3, "exercises.ch04": 4, "exercises.ch05": 5,
    # chapter 6: the encoder-decoder, its data pipeline, training, greedy decoding, evaluation
    "vocab": 6, "batches": 6, "buckets": 6, "synthetic": 6,
    "losses": 6, "decoding": 6, "encoder_decoder": 6, "training": 6, "evaluation": 6,
    "exercises.ch06": 6,
    # chapter 7: the real corpus and seq2seq (its recipe is reused by chapter 11)
    "download": 7, "corpus": 7, "seq2seq": 7, "recipes": 7, "recipes.ch07": 7,
    "exercises.ch07": 7,
    # chapter 8: attention, the translators and their recipes
    "attention": 8, "attention_seq2seq": 8, "recipes.ch08": 8, "exercises.ch08": 8,
    # chapter 9: beam search
    "beam": 9, "exhaustive": 9, "search_examples": 9, "exercises.ch09": 9,
    # chapter 10: BLEU
    "bleu": 10, "exercises.ch10": 10,
    # chapter 11: the translator: subword units, ablation, export, the command line
    "subwords": 11, "recipes.ch11": 11, "ablation": 11, "translator": 11, "exercises.ch11": 11,
}


def module_path(module: str, root: Path = ROOT) -> Path | None:
    """The source file of library module ``module`` (``None`` when there is none)."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def library_modules(root: Path = ROOT) -> list[str]:
    """Every module of the package (its ``__init__`` excluded), sorted."""
    found = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts == ("__init__",):
            continue
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(found)


def _with_parents(module: str) -> set[str]:
    """``"exercises.ch02"`` → ``{"exercises.ch02", "exercises"}``: importing a module runs
    its packages' ``__init__``."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def imported_modules(tree: ast.AST, root: Path = ROOT, *, package: str = "") -> set[str]:
    """The library modules a parsed source imports, anywhere in it (functions included).

    ``package`` is the importing module's package, for relative imports. ``from seq2seq_lib
    import name`` counts when ``name`` is a module; names of the package's ``__init__`` (like
    ``__version__``) are not modules and do not count.
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
            found |= {n[len(PACKAGE) + 1:] for n in names if n.startswith(PACKAGE + ".")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([PACKAGE, *filter(None, anchor), *filter(None, [base])])
            if base != PACKAGE and not base.startswith(PACKAGE + "."):
                continue
            prefix = base[len(PACKAGE) + 1:]
            if prefix:
                found.add(prefix)
            for alias in node.names:
                name = f"{prefix}.{alias.name}" if prefix else alias.name
                if module_path(name, root) is not None:
                    found.add(name)
    return {parent for module in found for parent in _with_parents(module)}


def library_imports(module: str, root: Path = ROOT) -> set[str]:
    """The library modules that ``module``'s source imports directly."""
    path = module_path(module, root)
    if path is None:
        raise ValueError(f"{PACKAGE}.{module} has no source file under {root}")
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return imported_modules(tree, root, package=package) - {module}


def import_closure(modules: Iterable[str], root: Path = ROOT) -> set[str]:
    """``modules`` and every library module they import, directly or not."""
    todo = [m for module in modules for m in _with_parents(module)]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(library_imports(module, root))
    return seen
