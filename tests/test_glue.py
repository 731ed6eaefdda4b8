"""glue: the same output as MyST-NB's glue(name, value, display=False), without MyST-NB."""

import nbformat
import pytest
from nbclient import NotebookClient


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
