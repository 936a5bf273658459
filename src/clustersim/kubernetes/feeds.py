"""Watch fan-out: one feed per distinct watch view, filled once per event, read by all watchers of that view.

A feed is a view (resource, namespace, field and label selectors). The store publishes every event into the feeds
of its resource as it is written: the selectors run and the JSON line is encoded once per view, not once per
watcher. A watcher keeps its own position in its feed and sleeps on its own `threading.Event`, which is set only
when its feed gains a line and only if the watcher is asleep (armed): a write wakes the watchers that have
something new, each at most once, instead of every watch thread through one condition variable.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clustersim.kubernetes.store import WatchEvent

Match = Callable[[dict[str, object]], bool]


def _meta(obj: Mapping[str, object]) -> dict[str, object]:
    meta = obj.get("metadata")
    assert isinstance(meta, dict)
    return meta


def encode(kind: str, obj: object) -> bytes:
    """One watch event as a JSON line."""
    return (json.dumps({"type": kind, "object": obj}, separators=(",", ":")) + "\n").encode()


@dataclass(eq=False)
class Watcher:
    """One watch stream's place in its feed, and what it sleeps on."""

    position: int
    wake: threading.Event = field(default_factory=threading.Event)
    armed: bool = False


class Feed:
    """The lines one watch view sees, in version order; positions are absolute (lines trimmed from the front)."""

    def __init__(self, namespace: str, fields: Match, labels: Match, history: int):
        self.namespace = namespace
        self.fields = fields
        self.labels = labels
        self.lines: list[bytes] = []
        self.base = 0
        self.watchers = 0
        self._history = history
        self._sleepers: list[Watcher] = []

    @property
    def end(self) -> int:
        return self.base + len(self.lines)

    def matches(self, obj: dict[str, object]) -> bool:
        if self.namespace and _meta(obj).get("namespace") != self.namespace:
            return False
        return self.fields(obj) and self.labels(obj)

    def view(self, event: WatchEvent) -> bytes:
        """The event as this view sees it: a change across its selectors is an ADDED or a DELETED."""
        before = event.old
        was_in = before is not None and self.matches(before)
        if event.kind == "DELETED":
            return event.line("DELETED") if was_in else b""
        now_in = self.matches(event.obj)
        if now_in and (was_in or event.kind == "ADDED"):
            return event.line(event.kind)
        if now_in:
            return event.line("ADDED")
        if was_in:
            assert before is not None
            gone = {**before, "metadata": {**_meta(before), "resourceVersion": str(event.rv)}}
            return event.line("DELETED", gone, cache="left")
        return b""

    def publish(self, event: WatchEvent) -> None:
        """Append the event's line if this view sees it, and wake the sleeping watchers. Hold the store's lock."""
        line = self.view(event)
        if not line:
            return
        lines = self.lines
        lines.append(line)
        if len(lines) > 2 * self._history:
            drop = len(lines) - self._history
            del lines[:drop]
            self.base += drop
        self.wake_all()

    def wake_all(self) -> None:
        for watcher in self._sleepers:
            watcher.armed = False
            watcher.wake.set()
        self._sleepers.clear()

    def take(self, watcher: Watcher) -> list[bytes] | None:
        """The lines after the watcher's position (None if they were trimmed away: 410); arms it when none.

        Hold the store's lock: arming and publishing under one lock means no line is missed between them.
        """
        if watcher.position < self.base:
            return None
        lines = self.lines[watcher.position - self.base:]
        watcher.position = self.end
        if not lines and not watcher.armed:
            watcher.armed = True
            watcher.wake.clear()
            self._sleepers.append(watcher)
        return lines

    def leave(self, watcher: Watcher) -> None:
        if watcher.armed:
            self._sleepers.remove(watcher)
            watcher.armed = False
        self.watchers -= 1
