"""The path a Colab reader takes, simulated without Colab: a fresh Python environment without
``seq2seq_lib``, a stand-in ``google.colab`` module, the chapters' first cell installing the
library from the course repository (here: a local clone), the next cells importing it, and
the corpus downloaded into the user cache (no ``$SEQ2SEQ_DATA``) from a local web server.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbtools import COLAB_TAG, TOGGLE_TAG, load_config

from conftest import shared_data_folder
from seq2seq_lib.corpus import CORPUS_FILE

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "07_seq2seq.ipynb"


def _cell(nb: nbformat.NotebookNode, tag: str) -> str:
    return next(c.source for c in nb.cells if tag in c.metadata.get("tags", []))


def _site_without_the_library(target: Path) -> Path:
    """A folder of links to this interpreter's installed packages (torch, NumPy, ...), less
    ``seq2seq_lib`` and the ``.pth`` start-up files: the packages Colab has, not ours."""
    target.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.suffix == ".pth" or "seq2seq_lib" in entry.name:
            continue
        (target / entry.name).symlink_to(entry)
    return target


@pytest.fixture()
def local_repository(tmp_path: Path) -> str:
    """A clone of this repository's committed HEAD: what ``pip install git+URL@BRANCH`` reads."""
    clone = tmp_path / "repository.git"  # the cell appends ".git" to the repository's URL
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    branch = subprocess.run(["git", "-C", str(clone), "branch", "--show-current"], check=True,
                            capture_output=True, text=True).stdout.strip()
    return f"file://{tmp_path / 'repository'}", branch or "HEAD"


@pytest.fixture()
def corpus_server(tmp_path: Path):
    """A web server on 127.0.0.1 serving ``fra-eng.zip`` (the shared corpus, zipped like
    d2l's); yields its URL and the zip's SHA-1."""
    folder = shared_data_folder()
    if folder is None:
        pytest.skip("no copy of fra-eng/fra.txt here")
    served = tmp_path / "served"
    served.mkdir()
    archive = served / "fra-eng.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(folder / CORPUS_FILE, CORPUS_FILE)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield (f"http://127.0.0.1:{server.server_port}/fra-eng.zip",
               hashlib.sha1(archive.read_bytes()).hexdigest())
    finally:
        server.shutdown()
        server.server_close()


def test_colab_cells_install_the_library_and_fetch_the_corpus(tmp_path, local_repository,
                                                              corpus_server):
    url, branch = local_repository
    corpus_url, corpus_sha1 = corpus_server
    nb = nbformat.read(CHAPTER, as_version=4)
    config = load_config()["repository"]
    install = _cell(nb, COLAB_TAG)
    assert f'"{config["url"]}", "{config.get("branch", "main")}"' in install
    install = install.replace(f'"{config["url"]}", "{config.get("branch", "main")}"',
                              f'"{url}", "{branch}"')
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    toggle = _cell(nb, TOGGLE_TAG)
    imports = code[code.index(toggle) + 1]
    data_cell = code[code.index(toggle) + 2]
    assert "load_translation_data(" in data_cell

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    site = _site_without_the_library(tmp_path / "colab-packages")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True,
                             text=True).stdout.strip()
    Path(purelib, "colab_packages.pth").write_text(f"{site}\n")

    work = tmp_path / "notebook"
    (work / "google" / "colab").mkdir(parents=True)
    (work / "google" / "__init__.py").write_text("")
    (work / "google" / "colab" / "__init__.py").write_text('"""A stand-in for Colab."""\n')
    script = work / "run_cells.py"
    script.write_text(textwrap.dedent(f"""\
        import importlib.util
        import sys

        import google.colab  # noqa: F401 - Colab has imported it before any cell runs

        assert importlib.util.find_spec("seq2seq_lib") is None, "seq2seq_lib is installed"
        cells = {[install, toggle, imports]!r}
        for cell in cells:
            exec(compile(cell, "<cell>", "exec"))
        import seq2seq_lib
        from seq2seq_lib import corpus

        print("library:", seq2seq_lib.__file__)
        # The one stand-in for the Internet: the course's corpus URL and its zip's SHA-1 name
        # the local server's copy. The text file's SHA-256 is still checked as it is.
        corpus.CORPUS_URL, corpus.CORPUS_ZIP_SHA1 = {corpus_url!r}, {corpus_sha1!r}
        exec(compile({data_cell!r}, "<cell>", "exec"))
    """))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SEQ2SEQ_DATA", "VIRTUAL_ENV")}
    env["HOME"] = str(tmp_path / "home")
    proc = subprocess.run([python, script.name], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert f"library: {purelib}" in out, out  # installed into the fresh environment
    assert "device=cpu | profile=quick" in out
    stored = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                     and c.source == data_cell for o in c.outputs)
    assert stored and stored in out  # the data cell prints what the book shows
    cached = tmp_path / "home" / ".cache" / "seq2seq-course" / "data" / CORPUS_FILE
    assert cached.is_file()


def test_the_colab_cell_does_nothing_outside_colab():
    nb = nbformat.read(CHAPTER, as_version=4)
    proc = subprocess.run([sys.executable, "-c", _cell(nb, COLAB_TAG)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""
