"""Every chapter under the ``full`` profile, end to end on the CPU, as a *smoke run*.

The stored outputs (and nbval) cover the ``quick`` profile only. Here each chapter runs with
``SEQ2SEQ_PROFILE=full`` and ``SEQ2SEQ_SMOKE=1`` (:func:`seq2seq_lib.device.smoke`): the
full profile's models, recipes and evaluation code, with every training run cut to a few
updates of small batches and the validation and test splits and every evaluation sample to a
few sentences. Outputs are not compared (their
numbers mean nothing); a cell that raises fails the test, except the exercise stubs
(``raises-exception``). The chapters share one fresh model cache, in course order, so later
chapters load the smoke models of earlier ones as they would the real ones.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbtools import chapter_paths

from conftest import shared_data_folder

CHAPTERS = chapter_paths()


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("smoke-cache")


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_under_the_full_profile(path: Path, smoke_cache: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    if "translation_data(" in code and shared_data_folder() is None:
        pytest.skip("no copy of fra-eng/fra.txt here")
    monkeypatch.setenv("SEQ2SEQ_PROFILE", "full")
    monkeypatch.setenv("SEQ2SEQ_SMOKE", "1")
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(smoke_cache))
    if shared_data_folder() is not None:
        monkeypatch.setenv("SEQ2SEQ_DATA", str(shared_data_folder()))
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError on the first unexpected error
    toggle = next(c for c in nb.cells if "gpu-toggle" in c.metadata.get("tags", []))
    shown = "".join(o.get("text", "") for o in toggle.outputs)
    assert "profile=full" in shown and "smoke run" in shown, shown  # the kernel ran it so
