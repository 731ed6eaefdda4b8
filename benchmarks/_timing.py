"""Timing shared by the benchmarks: the median of repeated calls, every time, the last result."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """Call ``fn`` ``repeats`` times; return the median seconds, all of them and the last
    result."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, out
