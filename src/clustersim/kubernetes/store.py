"""The facade's object store: one global resourceVersion, objects by resource, and a log of watch events.

Every write bumps the single resourceVersion, appends an event and publishes it to the watch feeds of its
resource (`feeds.py`); a watch catches up from the log after its version, then follows its feed, so a watch
started from a list's version misses nothing. The log keeps the last `history` events: older versions get
410 Gone, as from a real apiserver whose watch cache has moved on.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from clustersim.kubernetes.feeds import Feed, Match, Watcher, encode

Obj = dict[str, object]


@dataclass
class WatchEvent:
    """One change: the object after it (`obj`) and before it (`old`, None for ADDED)."""

    rv: int
    resource: str
    kind: str
    obj: Obj
    old: Obj | None
    _lines: dict[str, bytes] = field(default_factory=dict)

    def line(self, kind: str, obj: Obj | None = None, cache: str = "") -> bytes:
        """The JSON line of this event as type `kind` (cached: every watcher of the same view shares it)."""
        key = cache or kind
        cached = self._lines.get(key)
        if cached is None:
            cached = self._lines[key] = encode(kind, self.obj if obj is None else obj)
        return cached


class Gone(Exception):
    """The requested resourceVersion is older than the oldest kept event."""


def metadata(obj: Mapping[str, object]) -> dict[str, object]:
    meta = obj.get("metadata")
    assert isinstance(meta, dict)
    return meta


class Store:
    """Objects keyed by (resource, namespace, name); thread-safe through one lock (`cond`, held by callers)."""

    def __init__(self, history: int = 25_000):
        self.cond = threading.Condition()
        self._feeds: dict[str, dict[tuple[str, str, str], Feed]] = {}
        self.rv = 1
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {}
        self._latest: dict[str, dict[tuple[str, str], WatchEvent]] = {}
        """The event that wrote each current object: its cached line serves every watch's initial ADDED."""
        self._log: list[WatchEvent] = []
        self._history = history
        self._uid = 0
        self.closed = False
        self.watchers = 0
        """Open watch streams (they pace themselves by it)."""

    def feed(self, resource: str, namespace: str, selectors: tuple[str, str], fields: Match, labels: Match) -> Feed:
        """The shared feed of one watch view (made on first use), joined by one more watcher. Hold `cond`."""
        feeds = self._feeds.setdefault(resource, {})
        key = (namespace, *selectors)
        found = feeds.get(key)
        if found is None:
            found = feeds[key] = Feed(namespace, fields, labels, self._history)
        found.watchers += 1
        self.watchers += 1
        return found

    def unfeed(self, resource: str, feed: Feed, watcher: Watcher) -> None:
        """A watcher leaves its feed; the feed goes with its last watcher. Hold `cond`."""
        feed.leave(watcher)
        self.watchers -= 1
        if not feed.watchers:
            feeds = self._feeds.get(resource, {})
            for key, value in list(feeds.items()):
                if value is feed:
                    del feeds[key]

    def watching(self, resource: str) -> bool:
        """Some client watches `resource` now (the facade holds time while no scheduler watches pods)."""
        return bool(self._feeds.get(resource))

    def close(self) -> None:
        """Stop every watch: they see `closed` once woken."""
        with self.cond:
            self.closed = True
            for feeds in self._feeds.values():
                for feed in feeds.values():
                    feed.wake_all()

    def oldest(self) -> int:
        return self._log[0].rv - 1 if self._log else self.rv

    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self._objects.get(resource, {}).get((namespace, name))

    def items(self, resource: str, namespace: str = "") -> list[Obj]:
        objects = self._objects.get(resource, {})
        if not namespace:
            return list(objects.values())
        return [obj for (ns, _), obj in objects.items() if ns == namespace]

    def added_lines(self, resource: str, namespace: str, match: Match) -> list[bytes]:
        """The current objects as ADDED watch lines, encoded once and shared by every watch that starts. Hold `cond`."""
        return [event.line("ADDED") for (ns, _), event in self._latest.get(resource, {}).items()
                if (not namespace or ns == namespace) and match(event.obj)]

    def write(self, resource: str, kind: str, obj: Obj) -> Obj:
        """Create or replace an object (ADDED or MODIFIED); stamps its uid and resourceVersion. Hold `cond`."""
        meta = metadata(obj)
        key = (str(meta.get("namespace", "")), str(meta["name"]))
        objects = self._objects.setdefault(resource, {})
        old = objects.get(key)
        if old is None:
            self._uid += 1
            meta.setdefault("uid", f"00000000-0000-4000-8000-{self._uid:012d}")
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        objects[key] = obj
        event = WatchEvent(self.rv, resource, kind if old is None else "MODIFIED", obj, old)
        self._latest.setdefault(resource, {})[key] = event
        self._append(event)
        return obj

    def remove(self, resource: str, namespace: str, name: str) -> Obj | None:
        """Delete an object (DELETED event). Hold `cond`."""
        old = self._objects.get(resource, {}).pop((namespace, name), None)
        if old is None:
            return None
        self._latest[resource].pop((namespace, name), None)
        self.rv += 1
        gone = {**old, "metadata": {**metadata(old), "resourceVersion": str(self.rv)}}
        self._append(WatchEvent(self.rv, resource, "DELETED", gone, old))
        return gone

    def _append(self, event: WatchEvent) -> None:
        log = self._log
        log.append(event)
        if len(log) > 2 * self._history:
            del log[: len(log) - self._history]
        feeds = self._feeds.get(event.resource)
        if feeds:
            for feed in feeds.values():
                feed.publish(event)

    def events_after(self, rv: int, resource: str) -> list[WatchEvent]:
        """Events of `resource` newer than `rv` (Gone if `rv` predates the log). Hold `cond`.

        Every write appends exactly one event and bumps the version by one, so an event's index is its version
        minus the first kept one.
        """
        if rv < self.oldest():
            raise Gone(rv)
        log = self._log
        if not log or log[-1].rv <= rv:
            return []
        return [e for e in log[rv + 1 - log[0].rv :] if e.resource == resource]
