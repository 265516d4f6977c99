"""The timing loop the peer scripts share (they run in venvs of their own, without react_text).

The same loop as bench/engine_overhead.py's: warm up once, then the median CPU time per step over
RUNS episodes, for 5, 20 and 100 steps; one "steps median_us_per_step" line each.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

RUNS = 20


def report(episode: Callable[[int], None]) -> None:
    for steps in (5, 20, 100):
        episode(steps)
        times = []
        for _ in range(RUNS):
            started = time.process_time()
            episode(steps)
            times.append((time.process_time() - started) / steps * 1e6)
        print(steps, round(statistics.median(times), 1), flush=True)
