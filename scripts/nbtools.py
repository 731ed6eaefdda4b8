"""Shared helpers for the notebook scripts and the project tests.

* :func:`colab_cell_source` renders the first code cell of every chapter from ``_config.yml``
  (the one place that names the repository and branch).
* :func:`chapter_paths` lists the chapter notebooks.
* :func:`figure_directives` finds the figures a chapter shows (``figures/make_figures.py``
  draws them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
FIGURES = ROOT / "figures"
COLAB_TAG = "colab-setup"
_FIGURE = re.compile(r"^```\{figure\}[ \t]+(\S+)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
TOGGLE_TAG = "gpu-toggle"


def load_config(root: Path = ROOT) -> dict[str, Any]:
    """The parsed ``_config.yml``."""
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def chapter_paths(root: Path = ROOT) -> list[Path]:
    """Every chapter notebook ``chapters/NN_topic.ipynb``, sorted."""
    return sorted(p for p in (root / "chapters").glob("*.ipynb"))


def colab_cell_source(config: dict[str, Any] | None = None) -> str:
    """The Colab bootstrap cell: on Colab, install ``seq2seq_lib`` when it is missing.

    Elsewhere (a local clone, CI) ``google.colab`` does not exist and the cell does nothing.
    """
    config = load_config() if config is None else config
    url = config["repository"]["url"].rstrip("/")
    branch = config["repository"].get("branch", "main")
    return (
        "# On Colab, install seq2seq_lib from the course repository; elsewhere do nothing.\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        f'REPOSITORY, BRANCH = "{url}", "{branch}"\n'
        'if "google.colab" in sys.modules and importlib.util.find_spec("seq2seq_lib") is None:\n'
        "    subprocess.run(\n"
        '        [sys.executable, "-m", "pip", "install", "-q", f"git+{REPOSITORY}.git@{BRANCH}"],\n'
        "        check=True,\n"
        "    )"
    )


def figure_directives(path: Path) -> list[tuple[Path, str]]:
    """``(image file, directive body)`` of every MyST ``{figure}`` in a chapter notebook's
    markdown cells (or a Markdown page), the image resolved against the document's folder."""
    if path.suffix == ".ipynb":
        cells = nbformat.read(path, as_version=4).cells
        text = "\n\n".join(c.source for c in cells if c.cell_type == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    return [((path.parent / m.group(1)).resolve(), m.group(2)) for m in _FIGURE.finditer(text)]
