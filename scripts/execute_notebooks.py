"""Re-execute chapter notebooks in place, exactly as CI's nbval will re-run them.

    python scripts/execute_notebooks.py                 # every chapter
    python scripts/execute_notebooks.py chapters/01_bptt.ipynb

Each notebook runs top to bottom in a fresh kernel, in its own folder, on the CPU under the
``quick`` profile (``SEQ2SEQ_DEVICE=cpu``, ``SEQ2SEQ_PROFILE=quick``, no visible CUDA device),
so the stored outputs are the ones CI reproduces. Before running, the Colab cell is rewritten
from ``_config.yml``. An error stops the script and leaves the notebook untouched (no cell may
raise: an unsolved exercise prints that it is not solved). Files are replaced atomically.
Afterwards the notebook edition (``notebooks/``, ``scripts/make_edition.py``) is written again
from the chapters, so it never lags them.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from seq2seq_lib.atomic import atomic_file

# The sibling scripts: as ``scripts.execute_notebooks`` (tests), the modules of the same package,
# so that a test patching ``scripts.make_edition`` patches the module used here; run as a file,
# Python puts ``scripts/`` first on ``sys.path``, so they import by their plain names.
if __package__:
    from . import make_edition
    from .nbtools import COLAB_TAG, chapter_paths, colab_cell_source
else:
    import make_edition
    from nbtools import COLAB_TAG, chapter_paths, colab_cell_source


def sync_colab_cell(nb: nbformat.NotebookNode) -> None:
    """Make the first code cell the canonical Colab cell (insert it after the title if missing)."""
    source = colab_cell_source()
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code and COLAB_TAG in code[0].metadata.get("tags", []):
        code[0].source = source
        return
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [COLAB_TAG, "hide-cell"]})
    nb.cells.insert(1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0, cell)


def is_progress_bar(out: nbformat.NotebookNode) -> bool:
    """A stderr stream of tqdm bar redraws (``\\r`` ... ``it/s]``, or ``s/it]`` when an
    update takes longer than a second), or only blank redraws."""
    if out.output_type != "stream" or out.name != "stderr":
        return False
    text = out.text
    rate = "it/s" in text or "s/it" in text
    return ("\r" in text and rate) or (text.strip() == "" and "\r" in text)


def join_streams(outputs: list[nbformat.NotebookNode]) -> list[nbformat.NotebookNode]:
    """Consecutive outputs of one stream (stdout, stderr) as one: on a busy machine the
    kernel flushes a cell's printout in pieces, which the book would show as separate blocks
    and a re-run would store split differently."""
    joined: list[nbformat.NotebookNode] = []
    for out in outputs:
        last = joined[-1] if joined else None
        if (last is not None and out.output_type == last.output_type == "stream"
                and out.name == last.name):
            last.text += out.text
        else:
            joined.append(out)
    return joined


def clean(nb: nbformat.NotebookNode) -> None:
    """Drop per-run metadata (timestamps, widget state) so diffs show only real changes.

    Stored tracebacks (only exercise stubs raise) are cut to their last line, the error itself:
    the frames name files on the machine that ran the notebook. nbval does not compare them.
    Training progress bars (tqdm's redrawn lines on stderr) are dropped: they are timings,
    hundreds of lines long in the book, and differ on every run. What is left of a cell's
    printout is stored as one output per stream (:func:`join_streams`).
    """
    for cell in nb.cells:
        if "outputs" in cell:
            cell.outputs = join_streams([out for out in cell.outputs if not is_progress_bar(out)])
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                out.traceback = out.traceback[-1:]
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}


def cell_seconds(nb: nbformat.NotebookNode) -> list[tuple[float, int]]:
    """``(seconds, index)`` of every executed code cell, from nbclient's timing metadata."""
    out = []
    for i, cell in enumerate(nb.cells):
        timing = cell.metadata.get("execution", {})
        begin, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if begin and end:
            seconds = (datetime.fromisoformat(end.replace("Z", "+00:00"))
                       - datetime.fromisoformat(begin.replace("Z", "+00:00"))).total_seconds()
            out.append((seconds, i))
    return out


def execute(path: Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    sync_colab_cell(nb)
    start = time.perf_counter()
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    elapsed = time.perf_counter() - start
    times = cell_seconds(nb)
    if times:
        seconds, index = max(times)
        flag = "  <-- over half the per-cell timeout: split or shorten it" * (
            seconds > timeout / 2)
        print(f"{path.name}: slowest cell {index} took {seconds:.0f} s{flag}", flush=True)
        others = ", ".join(f"{i} ({s:.0f} s)" for s, i in sorted(times, reverse=True)[1:6])
        print(f"{path.name}: next slowest cells: {others}", flush=True)
    clean(nb)
    with atomic_file(path, "w") as handle:
        nbformat.write(nb, handle)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    args = parser.parse_args()
    os.environ.update(SEQ2SEQ_DEVICE="cpu", SEQ2SEQ_PROFILE="quick", CUDA_VISIBLE_DEVICES="")
    os.environ.pop("SEQ2SEQ_SMOKE", None)  # stored outputs are never a smoke run's
    # the kernels import this checkout's seq2seq_lib, whatever copy pip installed
    root = str(Path(__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    for path in args.notebooks or chapter_paths():
        print(f"{path}: executing ...", flush=True)
        print(f"{path}: done in {execute(path.resolve(), args.timeout):.0f} s", flush=True)
    make_edition.main([])


if __name__ == "__main__":
    main()
