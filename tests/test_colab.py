"""The whole book as a Colab reader runs it, simulated without Colab, under the full profile.

Each chapter's notebook edition (``notebooks/NN_topic.ipynb``, what the Colab button opens) runs
top to bottom in a real kernel, as "Run all" does:

* in a fresh Python environment without ``seq2seq_lib`` (the packages Colab has: torch, NumPy,
  ...), with a stand-in ``google.colab`` module imported before any cell, as on Colab;
* in an empty working directory, like Colab's ``/content``, with a fresh home folder;
* the first cell installs the library the way Colab does, ``pip install git+URL@BRANCH``, from
  a clone of this repository's committed HEAD: a *non-editable* install of the built package,
  which cannot read anything of the checkout;
* the corpus is downloaded into the user cache from a local web server (the one stand-in for
  the Internet: a cell placed after the install cell points the library's corpus URL at it);
* with ``SEQ2SEQ_PROFILE=full`` and ``SEQ2SEQ_SMOKE=1``: the full profile's models, recipes and
  evaluation code, every training run cut to a few updates and the validation and test splits
  of chapters 7–11 to a few sentences (``run.smoke``, :mod:`seq2seq_lib.device`), so that the
  full profile's code runs end to end on the CPU in minutes. Outputs are not compared (the
  smoke run's numbers mean nothing; nbval compares the quick profile's); a cell that raises
  fails the test;
* with the CPU's native kernels (``SEQ2SEQ_NUMERICS=native``, one thread per process, as the
  pinned mode has): the smoke run checks the code path, not the digits, and the pinned
  kernels of :mod:`seq2seq_lib.numerics` cost it about half again as much time (a 4-update
  smoke training of chapter 7's full-profile LSTM: 16 s pinned, 11 s native). nbval runs
  every chapter with the pinned kernels.

The chapters run in course order in one environment and share its model cache, so later
chapters load the smoke models of earlier ones as they would the real ones.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import subprocess
import sys
import sysconfig
import threading
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest
from helpers import ROOT, shared_data_folder
from nbclient import NotebookClient

from scripts.nbtools import COLAB_TAG, TOGGLE_TAG, chapter_paths, load_config
from seq2seq_lib import numerics
from seq2seq_lib.corpus import CORPUS_FILE

EDITION = ROOT / "notebooks"
CHAPTERS = [EDITION / p.name for p in chapter_paths()]


def _cell(nb: nbformat.NotebookNode, tag: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if tag in c.metadata.get("tags", []))


def _site_without_the_library(target: Path) -> Path:
    """A folder of links to this interpreter's installed packages (torch, NumPy, ...), less
    ``seq2seq_lib`` and the ``.pth`` start-up files: the packages Colab has, not ours."""
    target.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.suffix == ".pth" or "seq2seq_lib" in entry.name or entry.name.startswith("__editable__"):
            continue
        (target / entry.name).symlink_to(entry)
    return target


class Colab:
    """The simulated Colab runtime: environment, kernel, folders and local servers."""

    def __init__(self, root: Path, corpus_url: str, corpus_sha1: str) -> None:
        self.root = root
        self.corpus = (corpus_url, corpus_sha1)
        # what `pip install git+URL@BRANCH` reads: a clone of the committed HEAD
        clone = root / "repository.git"  # the cell appends ".git" to the repository's URL
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        branch = subprocess.run(["git", "-C", str(clone), "branch", "--show-current"], check=True,
                                capture_output=True, text=True).stdout.strip()
        self.repository = (f"file://{root / 'repository'}", branch or "HEAD")
        env_dir = root / "venv"
        venv.create(env_dir, with_pip=True)
        self.python = env_dir / "bin" / "python"
        self.purelib = subprocess.run(
            [self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True).stdout.strip()
        site = _site_without_the_library(root / "colab-packages")
        Path(self.purelib, "colab_packages.pth").write_text(f"{site}\n")
        stand_in = root / "stand-ins" / "google" / "colab"
        stand_in.mkdir(parents=True)
        (stand_in.parent / "__init__.py").write_text("")
        (stand_in / "__init__.py").write_text('"""A stand-in for Colab."""\n')
        kernel = root / "jupyter" / "kernels" / "colab"
        kernel.mkdir(parents=True)
        (kernel / "kernel.json").write_text(json.dumps({
            "argv": [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Colab (simulated)", "language": "python"}))
        self.content = root / "content"  # Colab's working directory: empty
        self.content.mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "SEQ2SEQ_DATA", "SEQ2SEQ_CACHE", "VIRTUAL_ENV",
                                 "SEQ2SEQ_DEVICE", "SEQ2SEQ_PROFILE", *numerics.ENVIRONMENT)}
        self.env.update(HOME=str(root / "home"), PYTHONPATH=str(root / "stand-ins"),
                        SEQ2SEQ_PROFILE="full", SEQ2SEQ_SMOKE="1", SEQ2SEQ_DEVICE="cpu",
                        SEQ2SEQ_NUMERICS="native", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

    def prepare(self, nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        """The notebook as the simulated runtime runs it: ``google.colab`` imported first, the
        install cell pointed at the local clone, the corpus URL at the local server."""
        config = load_config()["repository"]
        install = _cell(nb, COLAB_TAG)
        official = f'"{config["url"]}", "{config.get("branch", "main")}"'
        assert official in install.source, "the install cell does not name _config.yml's repository"
        install.source = install.source.replace(official, '"{}", "{}"'.format(*self.repository))
        at = nb.cells.index(install)
        url, sha1 = self.corpus
        nb.cells.insert(at + 1, nbformat.v4.new_code_cell(
            "from seq2seq_lib import corpus\n"
            f"corpus.CORPUS_URL, corpus.CORPUS_ZIP_SHA1 = {url!r}, {sha1!r}"))
        nb.cells.insert(at, nbformat.v4.new_code_cell("import google.colab  # noqa: F401"))
        nb.cells.append(nbformat.v4.new_code_cell(
            "import seq2seq_lib\nprint('library:', seq2seq_lib.__file__)"))
        return nb

    def run(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
        nb = self.prepare(nbformat.read(path, as_version=4))
        monkeypatch.setenv("JUPYTER_PATH", str(self.root / "jupyter"))
        client = NotebookClient(nb, timeout=600, kernel_name="colab",
                                resources={"metadata": {"path": str(self.content)}})
        client.execute(env=self.env)  # raises CellExecutionError at the first cell that raises
        return nb


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory: pytest.TempPathFactory):
    """A web server on 127.0.0.1 serving ``fra-eng.zip`` (the shared corpus, zipped like
    d2l's); yields its URL and the zip's SHA-1."""
    folder = shared_data_folder()
    if folder is None:
        pytest.skip("no copy of fra-eng/fra.txt here")
    served = tmp_path_factory.mktemp("served")
    archive = served / "fra-eng.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(folder / CORPUS_FILE, CORPUS_FILE)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield (f"http://127.0.0.1:{server.server_port}/fra-eng.zip",
               hashlib.sha1(archive.read_bytes()).hexdigest())
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def colab(tmp_path_factory: pytest.TempPathFactory, corpus_server) -> Colab:
    return Colab(tmp_path_factory.mktemp("colab"), *corpus_server)


def _text(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs)


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_run_all_on_colab_under_the_full_profile(path: Path, colab: Colab,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    nb = colab.run(path, monkeypatch)
    shown = _text(_cell(nb, TOGGLE_TAG))
    assert "profile=full" in shown and "smoke run" in shown, shown  # the kernel ran it so
    assert "numerics=native" in shown, shown
    library = _text(nb.cells[-1])
    assert f"library: {colab.purelib}" in library, library  # installed, not this checkout
    assert not list(colab.content.iterdir()), "a chapter wrote into the working directory"


def test_the_first_chapter_installed_the_library_and_the_corpus_was_downloaded(colab: Colab):
    """(Runs after the chapters: pytest keeps a file's tests in order.)"""
    cached = Path(colab.env["HOME"]) / ".cache" / "seq2seq-course" / "data" / CORPUS_FILE
    assert cached.is_file()
    found = subprocess.run([colab.python, "-m", "pip", "show", "-f", "seq2seq_lib"],
                           capture_output=True, text=True, env=colab.env, check=True).stdout
    assert "Editable project location" not in found, found
    assert "seq2seq_lib/results/translator-quick.json" in found, "results files are package data"


def test_the_colab_cell_does_nothing_outside_colab():
    nb = nbformat.read(CHAPTERS[0], as_version=4)
    proc = subprocess.run([sys.executable, "-c", _cell(nb, COLAB_TAG).source], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""
