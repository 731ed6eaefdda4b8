"""Sphinx extension: each page loads each script once.

sphinx-thebe (which Jupyter Book always loads) adds its configuration script, ``const
THEBE_JS_URL = ...``, each time Sphinx reads the sources; a page that gets it twice stops with
"Identifier 'THEBE_JS_URL' has already been declared" in the browser console. This drops the
second copy of any script (same file, same inline body) from every page.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _identity(script: Any) -> tuple[str, str]:
    attributes = getattr(script, "attributes", {}) or {}
    return str(getattr(script, "filename", script) or ""), str(attributes.get("body", ""))


def drop_repeated_scripts(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree: Any) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, str]] = set()
    kept = []
    for script in scripts:
        key = _identity(script)
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    scripts[:] = kept


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
