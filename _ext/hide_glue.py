"""Sphinx extension: the book's code cells show code, not the plumbing that feeds the prose.

A chapter pastes numbers from its outputs into the text with ``glue("name", value)`` calls
in its code cells, and checks each sentence that states a result with
``claim(holds, sentence, run)``. They matter to the notebook, which must compute every number
it quotes and stop when the text no longer says what the outputs say, but on the page they
are noise, often right under a plot. In the book each cell's displayed source loses:

* every statement that is a ``glue(...)`` or ``claim(...)`` call, with the comment lines
  right above it, and the import of the two;
* a ``for``/``if``/``with`` block left with nothing but such calls;
* the whole cell input when nothing but comments remains, or when the cell says it only
  feeds the prose (its first line is :data:`PROSE_ONLY`, a comment).

The source is parsed with :mod:`ast`, so a call that spans several lines goes as a whole;
a cell that does not parse (none should) is shown as it is. The notebook edition
(``scripts/make_edition.py``) removes the same statements from the code it runs, where the
text has the values pasted in.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

GLUE = "glue"
#: The calls hidden from the book's code cells: pasting a number, checking a sentence.
HIDDEN = (GLUE, "claim")
GLUE_MODULE = "seq2seq_lib.glue"
PROSE_ONLY = "# the numbers quoted in the text below"


def _is_glue(stmt: ast.stmt) -> bool:
    """A ``glue(...)`` or ``claim(...)`` call, or the import of the two."""
    if isinstance(stmt, ast.ImportFrom):
        return stmt.module == GLUE_MODULE
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id in HIDDEN)


def _removable(stmt: ast.stmt) -> bool:
    """A glue call, or a block whose every statement (else branches too) is removable."""
    if _is_glue(stmt):
        return True
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
        bodies = [stmt.body, getattr(stmt, "orelse", [])]
        return all(_removable(s) for body in bodies for s in body)
    return False


def _spans(body: list[ast.stmt], lines: list[str]) -> list[tuple[int, int]]:
    """1-based inclusive line spans of the removable statements of ``body``, recursively."""
    spans = []
    for stmt in body:
        if _removable(stmt):
            spans.append((stmt.lineno, stmt.end_lineno or stmt.lineno))
            continue
        orelse = getattr(stmt, "orelse", None)
        if orelse and all(_removable(s) for s in orelse):  # an else branch of glue only
            first = orelse[0].lineno
            if not lines[first - 1].lstrip().startswith("elif"):  # the `else:` line goes too
                first = next(n for n in range(first - 1, 0, -1)
                             if lines[n - 1].lstrip().startswith("else"))
            spans.append((first, orelse[-1].end_lineno or orelse[-1].lineno))
            stmt = copy.copy(stmt)
            stmt.orelse = []
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                spans += _spans(inner, lines)
        for handler in getattr(stmt, "handlers", []):
            spans += _spans(handler.body, lines)
    return spans


def strip_glue(source: str, *, keep_prose_only: bool = False) -> str:
    """``source`` without its glue and claim calls (module docstring); unchanged if it does
    not parse. A cell that only feeds the prose becomes empty, unless ``keep_prose_only``
    (the notebook edition, which runs the code: it keeps what the cell computes)."""
    if source.startswith(PROSE_ONLY) and not keep_prose_only:
        return ""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines()
    drop: set[int] = set()  # 0-based line numbers
    for first, last in _spans(tree.body, lines):
        drop.update(range(first - 1, last))
        above = first - 2  # comment lines right above the call belong to it
        while above >= 0 and lines[above].strip().startswith("#") and above not in drop:
            drop.add(above)
            above -= 1
    if not drop:
        return source
    kept = [line for i, line in enumerate(lines) if i not in drop]
    out: list[str] = []
    for line in kept:  # at most two blank lines in a row (as PEP 8), none at either end
        if line.strip() or (out and any(x.strip() for x in out[-2:])):
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    if all(not line.strip() or line.strip().startswith("#") for line in out):
        return ""
    return "\n".join(out)


def hide_glue(app: Sphinx, doctree: nodes.document) -> None:
    for container in list(doctree.findall(nodes.container)):
        if "cell_input" not in container["classes"]:
            continue
        for block in list(container.findall(nodes.literal_block)):
            text = block.astext()
            if GLUE_MODULE not in text and not any(name + "(" in text for name in HIDDEN):
                continue
            shown = strip_glue(text)
            if not shown:
                container.parent.remove(container)
                break
            block.children = [nodes.Text(shown)]
            block.rawsource = shown


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-read", hide_glue)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
