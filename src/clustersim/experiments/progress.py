"""A campaign's progress bar: runs done, failed and remaining, on a terminal only (logs stay clean)."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from clustersim.experiments.execute import RunRecord


class CampaignProgress:
    """Counts finished runs; draws a tqdm bar on stderr when it is a terminal and `enabled`."""

    def __init__(self, total: int, *, skipped: int = 0, enabled: bool = True):
        self.total = total
        self.ok = 0
        self.failed = 0
        self._bar: Any = None
        if enabled and total and sys.stderr.isatty():
            from tqdm import tqdm

            class Bar(tqdm):  # type: ignore[misc]
                """No monitor thread: a single-threaded process may fork its workers (see backends)."""

                monitor_interval = 0

            note = f" ({skipped} already complete)" if skipped else ""
            self._bar = Bar(total=total, unit="run", desc=f"campaign{note}", file=sys.stderr, mininterval=0.2)
            self._postfix()

    @property
    def remaining(self) -> int:
        return self.total - self.ok - self.failed

    def update(self, record: RunRecord) -> None:
        if record.status == "ok":
            self.ok += 1
        else:
            self.failed += 1
        if self._bar is not None:
            self._postfix()
            self._bar.update(1)

    def _postfix(self) -> None:
        self._bar.set_postfix_str(f"done={self.ok} failed={self.failed} remaining={self.remaining}", refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> CampaignProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
