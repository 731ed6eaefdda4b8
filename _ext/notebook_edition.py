"""Sphinx extension: the book's notebook buttons open the notebook edition.

Every chapter page has a "launch on Colab" button and a ".ipynb" download button. Made by
sphinx-book-theme, both point at the chapter's source, ``chapters/NN_topic.ipynb``, which is
written in MyST for the book and reads badly in Colab or Jupyter. This extension points them at
the chapter's notebook edition, ``notebooks/NN_topic.ipynb`` (``scripts/make_edition.py``):

* the Colab link of a chapter page is rewritten to open ``notebooks/NN_topic.ipynb``;
* the downloadable ``_sources/chapters/NN_topic.ipynb`` is replaced by the edition file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

CHAPTERS, EDITION = "chapters", "notebooks"


def _edition(app: Sphinx, pagename: str) -> Path | None:
    """The edition file of chapter page ``pagename`` (``None`` for other pages)."""
    folder, _, name = pagename.partition("/")
    if folder != CHAPTERS or not name:
        return None
    path = Path(app.srcdir) / EDITION / f"{name}.ipynb"
    return path if path.is_file() else None


def point_buttons_at_edition(app: Sphinx, pagename: str, templatename: str,
                             context: dict[str, Any], doctree: Any) -> None:
    """Rewrite the Colab link of a chapter page (after sphinx-book-theme made it)."""
    if _edition(app, pagename) is None:
        return
    source, edition = f"/{CHAPTERS}/{pagename.partition('/')[2]}.ipynb", f"/{EDITION}/"
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []):
            url = button.get("url", "")
            if button.get("text") == "Colab" and url.endswith(source):
                button["url"] = url[: -len(source)] + edition + source.rsplit("/", 1)[1]


def copy_edition(app: Sphinx, exception: Exception | None) -> None:
    """Put each edition file where the page's ``.ipynb`` download button points."""
    if exception is not None or app.builder.format != "html":
        return
    for pagename in app.env.found_docs:
        edition = _edition(app, pagename)
        if edition is not None:
            target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(edition, target)


def setup(app: Sphinx) -> dict[str, Any]:
    # sphinx-book-theme adds its buttons at priority 501
    app.connect("html-page-context", point_buttons_at_edition, priority=600)
    app.connect("build-finished", copy_edition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
