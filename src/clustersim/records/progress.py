"""A progress bar on a terminal for long runs, silent otherwise."""

from __future__ import annotations

import sys

from clustersim.core.outcome import JobOutcome


class ProgressSink:
    """An outcome sink that counts finished jobs on a tqdm bar, only when stderr is a terminal."""

    _EVERY = 1000

    def __init__(self, enabled: bool = True, total: int | None = None):
        self._count = 0
        self._bar = None
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="job", desc="simulating", file=sys.stderr, mininterval=0.5)

    def record(self, outcome: JobOutcome) -> None:
        self._count += 1
        if self._bar is not None and self._count % self._EVERY == 0:
            self._bar.update(self._EVERY)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self._count % self._EVERY)
            self._bar.close()
