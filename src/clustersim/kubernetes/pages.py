"""List pagination (`limit` and `continue`): every page of one list comes from the same snapshot.

etcd serves the pages of a list at the first page's revision, so a client paging through a changing collection
sees each object once. The facade does the same with a snapshot of the list (references to the objects, which
the store replaces rather than mutates), kept until its last page is served; the oldest snapshots are dropped
beyond `keep`, and their tokens get 410 Expired, as an apiserver answers a token older than its compaction.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import OrderedDict
from dataclasses import dataclass

from clustersim.kubernetes.store import Obj

EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You can start a new "
           "list without the continue parameter.")


class InvalidToken(Exception):
    """A continue token this server did not issue or no longer holds (`expired`)."""

    def __init__(self, message: str, expired: bool):
        super().__init__(message)
        self.expired = expired


@dataclass
class Page:
    items: list[Obj]
    rv: int
    token: str
    remaining: int


class ListPages:
    """Snapshots of the lists being paged through, by id."""

    def __init__(self, keep: int = 64):
        self.keep = keep
        self._snapshots: OrderedDict[int, tuple[int, list[Obj]]] = OrderedDict()
        self._next_id = 0

    def first(self, items: list[Obj], rv: int, limit: int) -> Page:
        """The first `limit` items; the rest are kept for the continue token."""
        if len(items) <= limit:
            return Page(items, rv, "", 0)
        self._next_id += 1
        self._snapshots[self._next_id] = (rv, items)
        while len(self._snapshots) > self.keep:
            self._snapshots.popitem(last=False)
        return self._page(self._next_id, rv, items, 0, limit)

    def next(self, token: str, limit: int) -> Page:
        """The page a token points at (InvalidToken if malformed or expired)."""
        try:
            fields = json.loads(base64.urlsafe_b64decode(token.encode()))
            snapshot, start = int(fields["id"]), int(fields["start"])
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise InvalidToken(f"invalid continue token '{token}'", expired=False) from None
        found = self._snapshots.get(snapshot)
        if found is None:
            raise InvalidToken(EXPIRED, expired=True)
        rv, items = found
        return self._page(snapshot, rv, items, start, limit)

    def _page(self, snapshot: int, rv: int, items: list[Obj], start: int, limit: int) -> Page:
        end = start + limit
        if end >= len(items):
            self._snapshots.pop(snapshot, None)
            return Page(items[start:], rv, "", 0)
        fields = {"v": "meta.k8s.io/v1", "rv": rv, "id": snapshot, "start": end}
        token = base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode()
        return Page(items[start:end], rv, token, len(items) - end)
