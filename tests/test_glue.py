"""glue: the same output as MyST-NB's glue(name, value, display=False), without MyST-NB."""

import nbformat
import pytest
from nbclient import NotebookClient

from scripts.nbtools import chapter_paths


def _outputs(source: str) -> list:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    return nb.cells[0].outputs


def test_glue_writes_what_myst_nb_writes():
    pytest.importorskip("myst_nb")
    values = '"14.7", 3, 0.25, "a \'quoted\' word"'
    ours = _outputs("from seq2seq_lib.glue import glue\n"
                    f"for i, v in enumerate([{values}]):\n    glue(f'k{{i}}', v)")
    theirs = _outputs("from myst_nb import glue\n"
                      f"for i, v in enumerate([{values}]):\n    glue(f'k{{i}}', v, display=False)")
    assert ours == theirs and len(ours) == 4
    assert ours[0]["data"] == {"application/papermill.record/text/plain": "'14.7'"}
    assert ours[0]["metadata"]["scrapbook"]["name"] == "k0"


def test_glue_outside_ipython_does_nothing(capsys):
    from seq2seq_lib.glue import glue

    glue("x", 1.5)
    assert capsys.readouterr() == ("", "")


def test_book_pastes_glued_text():
    """The book's text role turns a glued string into the bare text (no quotes)."""
    myst_nb = pytest.importorskip("myst_nb.core.variables")
    assert myst_nb.format_plain_text("'14.7'", "") == "14.7"


def _glue_order_problems(nb: nbformat.NotebookNode) -> list[str]:
    """Every ``{glue:text}`` whose key no earlier cell glues (a notebook read top to bottom
    would not have the number yet), and every key that no cell glues at all."""
    import re

    defined: set[str] = set()
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for key in re.findall(r"\{glue:text\}`([^`:]+)[^`]*`", cell.source):
                if key not in defined:
                    problems.append(f"cell {i} uses {key!r} before any cell glues it")
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                defined.add(name)
    return problems


def test_the_order_check_finds_a_key_used_too_early():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    glued = code("glue('k', 1)")
    glued.outputs = [nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "1"},
        metadata={"scrapbook": {"name": "k", "mime_prefix": "application/papermill.record/"}})]
    early = nbformat.v4.new_notebook(cells=[md("{glue:text}`k`"), glued])
    late = nbformat.v4.new_notebook(cells=[glued, md("{glue:text}`k`")])
    assert _glue_order_problems(early) == ["cell 0 uses 'k' before any cell glues it"]
    assert _glue_order_problems(late) == []


@pytest.mark.parametrize("path", chapter_paths(), ids=lambda p: p.stem)
def test_every_glued_number_is_computed_before_the_text_that_shows_it(path):
    problems = _glue_order_problems(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_a_claim_is_an_error_in_the_books_run_and_a_note_elsewhere(capsys):
    import torch

    from seq2seq_lib.device import Run
    from seq2seq_lib.glue import claim

    book = Run(torch.device("cpu"), "quick", 0)
    claim(True, "it holds", book)
    assert capsys.readouterr().out == ""
    with pytest.raises(AssertionError, match="it fails"):
        claim(False, "it fails", book)
    for other in (Run(torch.device("cpu"), "full", 0), Run(torch.device("cuda"), "quick", 0),
                  Run(torch.device("cpu"), "quick", 0, smoke=True)):
        claim(False, "it fails", other)
        assert "claim 'it fails' does not hold" in capsys.readouterr().out
