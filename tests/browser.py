"""Headless Chromium serving a folder on 127.0.0.1, for the rendered-page tests (the book in
``tests/test_book_render.py``, the notebook edition in ``tests/test_edition.py``).

Needs Debian's ``chromium`` and ``chromium-driver`` and selenium; without them the tests are
skipped locally but fail under CI (``CI=true``), where all must exist. The browser has no other
network: whatever a page needs (MathJax, images) must be served from the folder itself.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def missing() -> str | None:
    """Why no browser can run here (``None`` when one can)."""
    if not (CHROMIUM and CHROMEDRIVER):
        return "Debian's chromium and chromium-driver are not installed"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    return None


def skip_or_fail(reason: str) -> None:
    """Skip a rendered check locally; under CI it must run, so fail."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must check the rendered pages, but {reason}")
    pytest.skip(reason)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass


@contextmanager
def serve_and_browse(folder: Path, width: int = 1280, height: int = 900) -> Iterator[tuple[Any, str]]:
    """``(driver, base URL)`` of a headless Chromium and a server of ``folder``."""
    reason = missing()
    if reason:
        skip_or_fail(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic", f"--window-size={width},{height}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()


def wait_for(driver: Any, script: str, timeout: float = 30.0, what: str = "the page") -> Any:
    """Wait until ``script`` returns something true; fail with ``what`` otherwise."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script))
    except TimeoutException:
        pytest.fail(f"{what} not ready after {timeout:.0f} s ({driver.current_url}): {script}")
