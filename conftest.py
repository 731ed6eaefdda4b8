"""Hooks for the whole test session, notebooks included.

They live at the repository root because pytest calls a test item's hooks only from the
conftest files on its path: hooks in ``tests/conftest.py`` never see the nbval items of
``chapters/``.
"""

# No notebook cell may come within a factor of two of nbval's per-cell timeout: a busier or
# slower machine would then time out. nbval runs one test item per cell; collect their times.
_cell_seconds: list[tuple[float, str]] = []


def pytest_runtest_logreport(report):
    if report.when == "call" and ".ipynb::" in report.nodeid:
        _cell_seconds.append((report.duration, report.nodeid))


def _cell_budget(config) -> float | None:
    timeout = config.getoption("nbval_cell_timeout", default=None)
    return float(timeout) / 2 if timeout else None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
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
