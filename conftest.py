"""Hooks for the whole test session, notebooks included.

They live at the repository root because pytest calls a test item's hooks only from the
conftest files on its path: hooks in ``tests/conftest.py`` never see the nbval items of
``chapters/``.
"""

from collections import defaultdict
from pathlib import Path

# The order of the long notebooks, longest first. With two workers
# (`pytest -n 2 --dist loadfile --no-loadscope-reorder`) each file is one unit of work, taken
# in this order: one worker starts chapter 11 (the longest file), the other chapters 8, 7,
# 9 and the rest. Chapter 11 loads the models of chapters 7 and 8, and chapter 9
# chapter 8's; a worker that asks for a model the other is still training waits for it and
# loads it, and one that asks first trains it (seq2seq_lib.cache.locked), so any order is
# correct, and this one keeps both workers busy. Every long training run is split into
# steps, one cell each (chapters 8 and 11: 250 updates of the translators; chapters 7 and
# 11: 600 of chapter 7's LSTM), so that no cell comes near the per-cell limit below,
# whichever chapter trains a model first and even with the other worker busy.
FIRST = (
    "chapters/11_translator.ipynb",
    "chapters/08_attention.ipynb",
    "chapters/07_seq2seq.ipynb",
    "chapters/09_beam_search.ipynb",
)
ROOT = Path(__file__).resolve().parent
assert all((ROOT / name).is_file() for name in FIRST), "FIRST names a file that is gone"


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(FIRST)))  # stable


# No notebook cell may come within a factor of two of nbval's per-cell timeout: a busier or
# slower machine would then time out. nbval runs one test item per cell; collect their times.
_cell_seconds: list[tuple[float, str]] = []
_file_seconds: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    _file_seconds[report.nodeid.split("::", 1)[0]] += report.duration
    if report.when == "call" and ".ipynb::" in report.nodeid:
        _cell_seconds.append((report.duration, report.nodeid))


def _cell_budget(config) -> float | None:
    timeout = config.getoption("nbval_cell_timeout", default=None)
    return float(timeout) / 2 if timeout else None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _file_seconds:
        terminalreporter.section("slowest files (setup, calls and teardown)")
        for name, seconds in sorted(_file_seconds.items(), key=lambda kv: -kv[1])[:20]:
            terminalreporter.line(f"{seconds:7.1f} s  {name}")
    if not _cell_seconds:
        return
    budget = _cell_budget(config)
    terminalreporter.section("slowest notebook cells")
    for seconds, nodeid in sorted(_cell_seconds, reverse=True)[:5]:
        terminalreporter.line(f"{seconds:7.1f} s  {nodeid}")
    slow = [(s, n) for s, n in _cell_seconds if budget and s > budget]
    for seconds, nodeid in slow:
        terminalreporter.line(f"TOO SLOW: {nodeid} took {seconds:.0f} s, more than half of the "
                              f"{2 * budget:.0f} s per-cell timeout: split or shorten it", red=True)


def pytest_sessionfinish(session, exitstatus):
    budget = _cell_budget(session.config)
    if budget and any(s > budget for s, _ in _cell_seconds) and exitstatus == 0:
        session.exitstatus = 1
