"""The chapters' exercise cells, run through today's checkers without running the notebooks.

For every auto-checked exercise of every chapter, the stub cell (``raise
NotImplementedError``) and the hidden solution cell (between ``{solution-start}`` and
``{solution-end}``) are executed in a namespace that holds the chapter's imports, the stub
first, as a reader would. Their printed output must be the output stored in the notebook:
"not solved yet" for the stub, "all checks passed" for the solution. So a checker that
starts refusing something (:func:`seq2seq_lib.exercises.refuse_reference`) cannot refuse
the book's own solutions, nor change the stored outputs, unnoticed.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import warnings
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
CHECK_CALL = re.compile(r"^check_\w+\(", re.M)
FENCE = re.compile(r"\{solution-(start|end)\}")


def _text(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def exercise_cells(nb: nbformat.NotebookNode) -> list[tuple[str, int, str, str]]:
    """``(kind, index, source, stored output)`` of every code cell that calls a checker:
    ``kind`` is ``"stub"`` outside a solution block and ``"solution"`` inside one."""
    inside, found = False, []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for fence in FENCE.findall(cell.source):
                inside = fence == "start"
        elif CHECK_CALL.search(cell.source):
            found.append(("solution" if inside else "stub", i, cell.source, _text(cell)))
    return found


def chapter_imports(nb: nbformat.NotebookNode) -> str:
    """Every top-level import statement of the chapter's code cells."""
    lines = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython magics
            continue
        lines += [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return "\n".join(lines)


def _read(path: Path) -> nbformat.NotebookNode:
    with warnings.catch_warnings():  # nbformat's warning about missing cell ids: not ours
        warnings.simplefilter("ignore")
        return nbformat.read(path, as_version=4)


CASES = [(path, _read(path)) for path in CHAPTERS]


@pytest.mark.parametrize(("path", "nb"), CASES, ids=[p.stem for p, _ in CASES])
def test_stubs_and_solutions_print_their_stored_output(path, nb):
    cells = exercise_cells(nb)
    assert any(kind == "solution" for kind, *_ in cells), f"{path.name}: no checked solution"
    namespace: dict = {"__name__": "__main__"}  # as in a notebook kernel
    exec(compile(chapter_imports(nb), f"{path.name}:imports", "exec"), namespace)  # noqa: S102
    for kind, i, source, stored in cells:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, f"{path.name}:cell {i}", "exec"), namespace)  # noqa: S102
        printed = out.getvalue()
        assert printed == stored, f"{path.name} cell {i} ({kind}): {printed!r} != {stored!r}"
        if kind == "solution":
            assert re.fullmatch(r"Exercise \d+\.\d+: all checks passed\.\n", printed), printed
        else:
            assert re.fullmatch(r"Exercise \d+\.\d+ is not solved yet: [^\n]*\n", printed), printed


def test_every_checker_has_a_solution_in_a_chapter():
    called = set()
    for _, nb in CASES:
        for kind, _, source, _ in exercise_cells(nb):
            if kind == "solution":
                called |= set(re.findall(r"^(check_\w+)\(", source, re.M))
    assert len(called) == 15, sorted(called)
