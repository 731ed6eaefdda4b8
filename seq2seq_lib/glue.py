"""Numbers in the prose that come from the outputs: MyST-NB's *glue*, without MyST-NB.

A chapter states results in its text ("the model reaches 14.7 BLEU"). Typed by hand, such a
number drifts from the output it describes the first time the code changes. Instead a code
cell *glues* the value under a name,

.. code-block:: python

    glue("ch07-test-bleu", f"{test_bleu.score:.1f}")

and the markdown pastes it with the role ``{glue:text}`ch07-test-bleu```. The value is
stored in the cell's output as a ``display_data`` that MyST-NB finds when it builds the book
(with execution off) and that nbval compares like any other output: the prose and the
result cannot disagree.

:func:`glue` writes exactly what ``myst_nb.glue(name, value, display=False)`` writes (the
MIME type ``application/papermill.record/text/plain`` and the ``scrapbook`` metadata),
but needs only IPython, so the notebooks also run where the book's tools are not installed
(Colab). Glue *formatted strings*: what a reader sees is then fixed by the code, not by
float formatting in the book builder.
"""

from __future__ import annotations

from typing import Any

GLUE_PREFIX = "application/papermill.record/"
"""The MIME-type prefix of a value glued without displaying it (MyST-NB's)."""


def glue(name: str, value: Any) -> None:
    """Store ``value``'s plain-text form under ``name`` in the current cell's outputs,
    hidden from the rendered page; the prose pastes it with ``{glue:text}`name```.

    Outside IPython (a plain script) there is no cell to store it in: nothing happens.
    """
    try:
        from IPython import get_ipython
        from IPython.core.formatters import format_display_data
        from IPython.display import display
    except ImportError:  # no IPython: a plain script
        return
    if get_ipython() is None:
        return
    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    display({GLUE_PREFIX + key: data for key, data in bundle.items()}, raw=True,
            metadata=metadata)


def claim(holds: bool, sentence: str, run: Any) -> None:
    """Check a sentence of the text that describes this run's results ("every concat run is
    above every dot run").

    The text describes the book's own run: the ``quick`` profile on a CPU, not a smoke run.
    There a claim that does not hold is an error (the text must change). In any other run —
    the ``full`` profile, a GPU, a smoke run — the numbers differ and the claim may not
    hold; then a note says so instead, and "Run all" goes on.
    """
    if holds:
        return
    if run.profile == "quick" and not run.smoke and run.device.type == "cpu":
        raise AssertionError(f"the text says: {sentence!r}, but this run's results do not")
    print(f"Note: in this run, the text's claim {sentence!r} does not hold (the text "
          "describes the book's run: quick profile, CPU).")
