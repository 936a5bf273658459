"""Fewer garbage collections during a run: a replay allocates a few objects per job and event, almost none in
reference cycles, and keeps the whole queue alive; at Python's default pace (a young collection every 700
allocations, an older one every 10 of those) the collector walked the queue again and again, 8% of a RICC
replay whose queue holds tens of thousands of jobs. Cycles are still collected, in fewer, larger passes, and
what exists when the first run starts (platform, workload) is frozen out of them: it outlives the run.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000
"""Allocations between two collections of the youngest generation during a run (Python's default: 700)."""

_lock = threading.Lock()
_runs = 0
_saved = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect the youngest generation every `YOUNG_THRESHOLD` allocations, and skip the objects that existed
    before, while any run is on (runs may overlap, in threads); then restore the pace set before the first."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(_saved[0], YOUNG_THRESHOLD), *_saved[1:])
            gc.freeze()
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                gc.unfreeze()
                gc.set_threshold(*_saved)
