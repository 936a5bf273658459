"""Ctrl-C that waits for the end of a critical section, so an interrupted run's outputs agree with each other.

A job's outcome goes to several sinks (schedule metrics, jobs.csv...). An interrupt between two of them would
leave schedule.csv counting a job jobs.csv lacks; while `critical` the interrupt is held and raised as soon
as the section ends. Outside, Ctrl-C interrupts at once, as usual.

Python runs signal handlers in the main thread only; code running in other threads (SimGrid's actors) sees
Ctrl-C through `SignalWatch`, which reads the signal numbers Python writes to a wake-up pipe.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType


class DeferredInterrupt:
    """A SIGINT handler, installed for a `with` block in the main thread, that holds Ctrl-C in critical sections."""

    def __init__(self) -> None:
        self.critical = False
        self.pending = False
        self._previous: object = None
        self._installed = False

    def __enter__(self) -> DeferredInterrupt:
        if threading.current_thread() is threading.main_thread() and (
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *_: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._installed = False

    def raise_pending(self) -> None:
        """Leave the critical section, raising the interrupt it held."""
        self.critical = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.critical:
            self.pending = True
            return
        raise KeyboardInterrupt


class SignalWatch:
    """Ctrl-C seen from any thread, for a `with` block entered in the main thread: `check` raises
    KeyboardInterrupt once SIGINT has arrived. Python's own handler still runs, when the main thread next runs
    Python code."""

    def __init__(self) -> None:
        self._read = -1
        self._write = -1
        self._previous = -1

    def __enter__(self) -> SignalWatch:
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not None:
            self._read, self._write = os.pipe()
            os.set_blocking(self._read, False)
            os.set_blocking(self._write, False)
            self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        return self

    def __exit__(self, *_: object) -> None:
        if self._read >= 0:
            signal.set_wakeup_fd(self._previous)
            os.close(self._read)
            os.close(self._write)
            self._read = self._write = -1

    def check(self) -> None:
        if self._read < 0:
            return
        with contextlib.suppress(BlockingIOError):
            if signal.SIGINT in os.read(self._read, 64):
                raise KeyboardInterrupt
