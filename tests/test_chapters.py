"""The chapter order is a test: chapter N uses only library modules of chapters <= N.

``seq2seq_lib.chapters.MODULE_CHAPTER`` says which chapter introduces each module. Every
notebook's code cells are parsed for ``seq2seq_lib`` imports, the library's own imports are
followed (``import_closure``), and every module reached must come from the notebook's chapter
or an earlier one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from scripts.nbtools import chapter_paths
from seq2seq_lib import chapters

NOTEBOOKS = chapter_paths()


def notebook_imports(path: Path) -> set[str]:
    """The library modules that a notebook's code cells import (shell and magic lines
    removed)."""
    found: set[str] = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            source = "\n".join(line for line in cell.source.splitlines()
                               if not line.lstrip().startswith(("!", "%")))
            found |= chapters.imported_modules(ast.parse(source))
    return found


def test_every_library_module_is_in_the_table():
    modules = set(chapters.library_modules())
    assert modules - set(chapters.MODULE_CHAPTER) == set(), "add these modules to MODULE_CHAPTER"
    assert set(chapters.MODULE_CHAPTER) - modules == set(), "MODULE_CHAPTER names missing modules"
    assert all(0 <= chapter <= len(NOTEBOOKS) for chapter in chapters.MODULE_CHAPTER.values())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_chapter_uses_only_modules_of_earlier_chapters(path):
    chapter = int(path.name[:2])
    direct = notebook_imports(path)
    assert direct, f"{path.name} imports nothing from seq2seq_lib"
    late = {m: chapters.MODULE_CHAPTER[m] for m in chapters.import_closure(direct)
            if chapters.MODULE_CHAPTER[m] > chapter}
    assert not late, f"chapter {chapter} uses modules of later chapters (with imports): {late}"


def test_a_module_imports_only_modules_of_its_chapter_or_earlier():
    for module in chapters.library_modules():
        later = {m for m in chapters.library_imports(module)
                 if chapters.MODULE_CHAPTER[m] > chapters.MODULE_CHAPTER[module]}
        assert not later, f"{module} (chapter {chapters.MODULE_CHAPTER[module]}) imports {later}"


def test_every_chapter_introduces_what_it_imports_first():
    """A module is listed under the first chapter that imports it (directly or not): a table
    entry that says a later chapter would hide where the reader meets the code."""
    first: dict[str, int] = {}
    for path in NOTEBOOKS:
        for module in chapters.import_closure(notebook_imports(path)):
            first.setdefault(module, int(path.name[:2]))
    for module, chapter in first.items():
        if chapters.MODULE_CHAPTER[module] > 0:  # chapter 0: infrastructure, used from chapter 1
            assert chapters.MODULE_CHAPTER[module] == chapter, (module, chapter)


def test_module_chapters_are_in_course_order():
    """MODULE_CHAPTER lists the modules in course order (the API pages follow it)."""
    assert list(chapters.MODULE_CHAPTER.values()) == sorted(chapters.MODULE_CHAPTER.values())


def test_no_import_cycles():
    graph = {m: chapters.library_imports(m) for m in chapters.library_modules()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep] if dep in path else [module, dep]
                pytest.fail(f"import cycle: {' -> '.join(cycle)}")
            if dep not in state:
                visit(dep, [*path, dep])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_import_parser_sees_every_form_of_import(tmp_path):
    package = tmp_path / "seq2seq_lib"
    (package / "exercises").mkdir(parents=True)
    for name in ("vocab", "decoding", "beam", "exercises/__init__", "exercises/ch02"):
        (package / f"{name}.py").write_text("")
    (package / "cache.py").write_text(
        "import seq2seq_lib.vocab\n"
        "from seq2seq_lib import decoding, __version__\n"
        "def f():\n    from seq2seq_lib.exercises.ch02 import check\n")
    assert chapters.library_imports("cache", package) == {"vocab", "decoding", "exercises",
                                                          "exercises.ch02"}
    assert chapters.import_closure(["exercises.ch02"], package) == {"exercises.ch02",
                                                                     "exercises"}
    assert not re.search("beam", " ".join(chapters.import_closure(["cache"], package)))


def private_names(tree: ast.AST) -> set[str]:
    """Attributes and imported names that start with ``_`` (dunders such as ``__name__``
    excepted): what a reader's code should never need."""
    def private(name: str) -> bool:
        return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))

    names = {node.attr for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and private(node.attr)}
    names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
              for alias in node.names if private(alias.name)}
    return names


def test_private_names_are_found():
    tree = ast.parse("from m import _x, y\nmodel.decoder._rnn.weight\nprint(f.__name__)")
    assert private_names(tree) == {"_x", "_rnn"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_notebook_touches_a_private_attribute(path: Path):
    """The pages use the library's public API only (a model is read through its own
    classes and documented attributes, never by reaching into private ones)."""
    found: set[str] = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            source = "\n".join(line for line in cell.source.splitlines()
                               if not line.lstrip().startswith(("!", "%")))
            found |= private_names(ast.parse(source))
    assert not found, f"{path.name} uses private names: {sorted(found)}"
