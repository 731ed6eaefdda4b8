"""Shared pytest setup: the environment the stored notebook outputs were made in, and the
fixtures. Plain helpers (paths, the corpus marker, model factories, the browser) are in
``tests/helpers.py``: test files import them from there, never from a conftest."""

import os

# The stored outputs were computed with the portable numerics: force them (seq2seq_lib pins
# the CPU kernels when it is imported, which must happen before torch and NumPy load).
os.environ["SEQ2SEQ_NUMERICS"] = "portable"
import seq2seq_lib  # noqa: E402,F401

# isort: split
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from helpers import ROOT  # noqa: E402

# nbval compares against outputs stored from a CPU run under the quick profile, so the
# notebook kernels it starts (which inherit this environment) must run the same way, even on
# a machine with a GPU or with other values set by hand.
# With SEQ2SEQ_GPU_TESTS=1 (tests/test_gpu.py on a GPU machine) this process initialises CUDA
# *before* hiding it: the CUDA driver reads CUDA_VISIBLE_DEVICES once, when it starts, and
# PyTorch keeps its device count once CUDA is initialised (before that, it reads the variable
# again at every call, and would count no GPU). So the tests keep the GPU while the notebook
# kernels, started later with this environment, do not.
GPU_TESTS = os.environ.get("SEQ2SEQ_GPU_TESTS") == "1"
if GPU_TESTS:
    import torch

    if torch.cuda.is_available():
        torch.cuda.init()
        torch.cuda.device_count()  # counted once CUDA is initialised, then kept
        torch.backends.cudnn.version()  # (cuDNN checks the device count on first use)
os.environ["SEQ2SEQ_DEVICE"] = "cpu"
os.environ["SEQ2SEQ_PROFILE"] = "quick"
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ.pop("SEQ2SEQ_SMOKE", None)  # (tests/test_colab.py sets it for its kernels)
# Notebook kernels run in the notebook's folder: a relative $SEQ2SEQ_DATA must be made absolute.
if os.environ.get("SEQ2SEQ_DATA"):
    os.environ["SEQ2SEQ_DATA"] = str(Path(os.environ["SEQ2SEQ_DATA"]).expanduser().resolve())
# ... and import this checkout's seq2seq_lib, whatever copy pip installed.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


@pytest.fixture(scope="session")
def tiny_translation_data():
    """A toy French→English corpus (about 100 distinct sources of 1-4 words) split and
    vocabularised like the real one, for tests of code that measures translators."""
    from seq2seq_lib.batches import TranslationData

    english = {"le": "the", "chat": "cat", "chien": "dog", "noir": "black", "dort": "sleeps",
               "mange": "eats", "un": "a", "petit": "small"}
    words = list(english)
    pairs = []
    for i in range(120):
        src = [words[(i // 8**j) % 8] for j in range(1 + i % 4)]
        pairs.append((src, [english[w] for w in src]))
    return TranslationData.from_pairs(pairs, name="tiny")


@pytest.fixture()
def isolated_data_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the user's cache or $SEQ2SEQ_DATA unless it sets them itself."""
    monkeypatch.delenv("SEQ2SEQ_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


# The browser checks of one page run one after another, so that the page loads once for them
# (tests/test_book_render.py keeps the page it shows): first the check that needs a fresh
# load (console messages), last the one that narrows the window to a phone's width.
BROWSER_FIRST, BROWSER_LAST = "test_no_console_error_on_a_page", "test_a_phone_does_not_scroll"


def _page(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("page") if callspec is not None else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    at = [i for i, item in enumerate(items) if item.path.name == "test_book_render.py"]
    browser = [items[i] for i in at]
    pages = list(dict.fromkeys(page for page in map(_page, browser) if page is not None))

    def key(pair: tuple[int, pytest.Item]) -> tuple[int, int, int]:
        index, item = pair
        page = _page(item)
        if page is None:
            return (-1, 0, index)  # the single-page checks first, in their order
        name = item.originalname
        place = 0 if name == BROWSER_FIRST else 2 if name.startswith(BROWSER_LAST) else 1
        return (pages.index(page), place, index)

    for i, (_, item) in zip(at, sorted(enumerate(browser), key=key), strict=True):
        items[i] = item
