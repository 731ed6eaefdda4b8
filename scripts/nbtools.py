"""Shared helpers for the notebook scripts and the project tests.

* :func:`colab_cell_source` renders the first code cell of every chapter from ``_config.yml``
  (the one place that names the repository and branch).
* :func:`chapter_paths` lists the chapter notebooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
COLAB_TAG = "colab-setup"
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
