"""Plain helpers shared by the test files: ``from helpers import ...`` (pytest puts ``tests/`` on
``sys.path``, as the folder of ``tests/conftest.py``). Fixtures live in ``tests/conftest.py``;
nothing imports from a conftest.

Importing this module stays cheap: torch, the library's models and selenium are imported only
inside the helpers that use them.

* paths and data: :data:`ROOT`, :func:`shared_data_folder`, :data:`needs_corpus`,
  :data:`TINY_CORPUS`, :func:`leftovers`;
* models and searches: :func:`make_seq2seq`, :func:`make_cho`, :class:`MultiTableStep`,
  :func:`as_pairs`, :func:`flat_state`;
* a headless browser for the rendered-page tests (the book in ``tests/test_book_render.py``,
  the notebook edition in ``tests/test_edition.py``): :func:`missing`, :func:`skip_or_fail`,
  :func:`serve_and_browse`, :func:`wait_for`. They need Debian's ``chromium`` and
  ``chromium-driver`` and selenium; without them the tests are skipped locally but fail under
  CI (``CI=true``), where all must exist. The browser has no other network: whatever a page
  needs (MathJax, images) must be served from the folder itself.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from seq2seq_lib.encoder_decoder import ChoModel
    from seq2seq_lib.seq2seq import Seq2SeqModel

#: The repository's root folder.
ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------------------ paths and data


def shared_data_folder() -> Path | None:
    """The folder holding the real corpus ``fra-eng/fra.txt``: ``$SEQ2SEQ_DATA`` (CI:
    ``../shared/data``) or the repository's sibling ``shared/data``; ``None`` where there is
    no copy (the tests that need it are then skipped)."""
    from seq2seq_lib.corpus import CORPUS_FILE, ENV_DATA

    for folder in (os.environ.get(ENV_DATA), ROOT.parent / "shared" / "data", "/work/shared/data"):
        if folder and (Path(folder) / CORPUS_FILE).is_file():
            return Path(folder)
    return None


#: Three lines of the corpus format (English \t French), for the data modules' tests.
TINY_CORPUS = "Go.\tVa !\nRun!\tCours\u202f!\nI'm OK, thanks.\tÇa va, merci.\n"
needs_corpus = pytest.mark.skipif(shared_data_folder() is None,
                                  reason="no copy of fra-eng/fra.txt here")


def leftovers(folder: Path) -> list[str]:
    """The names of everything under ``folder`` (none if it does not exist), sorted."""
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


# ------------------------------------------------------------------------ models and searches


def make_seq2seq(src: int, tgt: int, **sizes) -> Seq2SeqModel:
    from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel

    return Seq2SeqModel(Seq2SeqConfig(src, tgt, **sizes))


def make_cho(src: int, tgt: int, **sizes) -> ChoModel:
    from seq2seq_lib.encoder_decoder import ChoConfig, ChoModel

    return ChoModel(ChoConfig(src, tgt, **sizes))


class MultiTableStep:
    """A step function for a batch of table examples (tests of the searches): sentence ``b``
    has its own :class:`~seq2seq_lib.decoding.TableStep`; the state is the sentence id of
    each row."""

    def __init__(self, tables):
        self.tables = tables

    def __call__(self, prefix, state):
        import torch

        pairs = zip(state.tolist(), prefix[:, 1:].tolist(), strict=True)
        rows = [self.tables[b].probs(p) for b, p in pairs]
        return torch.tensor(rows, dtype=torch.float64).log(), state


def as_pairs(hyps):
    """``(tokens, log-probability)`` of each hypothesis of a search."""
    return [(tuple(h.tokens), h.log_prob) for h in hyps]


def flat_state(state):
    """A recurrent state as a tuple: ``(h, c)`` of an LSTM as it is, ``(h,)`` of the others."""
    return state if isinstance(state, tuple) else (state,)


# --------------------------------------------------------------------------- headless browser

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


@contextmanager
def serve_and_browse(folder: Path, width: int = 1280, height: int = 900) -> Iterator[tuple[Any, str]]:
    """``(driver, base URL)`` of a headless Chromium and a server of ``folder``."""
    reason = missing()
    if reason:
        skip_or_fail(reason)
    import functools
    import http.server
    import threading

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep pytest output clean
            pass

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


# --------------------------------------------------------------------------- readers' solutions
# Exercise solutions written the way a reader would, shared by the checker tests.


def own_bptt(U, W, xs, h0, dL_dh):
    """Exercise 1.1 by hand (``bptt.forward`` is allowed; ``bptt.bptt`` is the reference)."""
    import torch

    from seq2seq_lib import bptt

    h = bptt.forward(U, W, xs, h0).h
    h_prev = torch.cat([h0[None], h[:-1]])
    dU, dW, g = torch.zeros_like(U), torch.zeros_like(W), torch.zeros_like(h0)
    for t in reversed(range(xs.shape[0])):
        delta = (1 - h[t] ** 2) * (g + dL_dh[t])
        dU += torch.outer(delta, h_prev[t])
        dW += torch.outer(delta, xs[t])
        g = U.T @ delta
    return dU, dW, g


def gru_gates(X, H, p):
    """The reset and update gates of a GRU step from its parameter dict (exercise 2.1)."""
    import torch

    R = torch.sigmoid(X @ p["W_xr"] + H @ p["W_hr"] + p["b_r"])
    Z = torch.sigmoid(X @ p["W_xz"] + H @ p["W_hz"] + p["b_z"])
    return R, Z


def own_segment(piece, ranks):
    """Exercise 11.4: apply the best-ranked merge until none applies."""
    from itertools import pairwise

    symbols = list(piece)
    while len(symbols) > 1:
        rank, i = min((ranks.get(p, len(ranks)), i) for i, p in enumerate(pairwise(symbols)))
        if rank == len(ranks):
            break
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
    return symbols


def run_cell(cell, X, reverse=False):
    """Exercises 4.1 and 5.1: a cell called step by step over ``X`` (B, T, d); (B, T, h)."""
    import torch

    H = X.new_zeros(X.size(0), cell.hidden_size)
    out = [None] * X.size(1)
    for t in (reversed(range(X.size(1))) if reverse else range(X.size(1))):
        H = cell(X[:, t], H)
        out[t] = H
    return torch.stack(out, 1)


def own_stacked(X, cells):
    """Exercise 4.1: the layers one after another; the outputs and each layer's last state."""
    import torch

    inp, last = X, []
    for cell in cells:
        inp = run_cell(cell, inp)
        last.append(inp[:, -1])
    return inp, torch.stack(last)


def own_bidirectional(X, cell_f, cell_b):
    """Exercise 5.1: both directions' states side by side."""
    import torch

    return torch.cat([run_cell(cell_f, X), run_cell(cell_b, X, reverse=True)], dim=2)


def own_coupled(p):
    """Exercise 3.2: F = Z, I = σ(-a_z) = 1 - F, O = σ(30) = 1, C̃ = H̃."""
    import torch

    h = p["b_z"].shape[0]
    return {
        "W_xf": p["W_xz"], "W_hf": p["W_hz"], "b_f": p["b_z"],
        "W_xi": -p["W_xz"], "W_hi": -p["W_hz"], "b_i": -p["b_z"],
        "W_xo": torch.zeros_like(p["W_xz"]), "W_ho": torch.zeros_like(p["W_hz"]),
        "b_o": torch.full((h,), 30.0),
        "W_xc": p["W_xh"], "W_hc": p["W_hh"], "b_c": p["b_h"],
    }
