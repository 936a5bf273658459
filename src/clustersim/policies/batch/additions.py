"""What was added to an insertion-ordered mapping since the last look: the queue and the running jobs grow at
their end, so the policies' indexes over them (`shapes.ShapeIndex`, `ends.RunningByEnd`) catch up by the walk
here instead of a scan of the whole mapping at every decision.

A module of its own, compiled with the hot path (pyproject.toml `[tool.clustersim] compiled`): it runs at every
decision, and `parts`, whose classes users subclass, stays Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Reversible
from typing import TypeVar, cast

V = TypeVar("V")
E = TypeVar("E", bound=tuple[object, ...])


def added_since(mapping: Mapping[str, V], known: dict[str, E]) -> list[V] | None:
    """What was added to an insertion-ordered `mapping` since the caller last saw it, oldest first; None when
    it changed otherwise, and the caller must rebuild from the whole mapping.

    `known` is the caller's index of what it has seen and not dropped: each key with an entry whose last item is
    the value it was given (a dict: compiled, its lookups are direct calls, not method calls). Additions come
    last in the mapping, so the walk goes newest first to the first key known; if that key holds another object
    now, or the counts disagree (something left the mapping unseen), the index is stale. Views of dicts and of
    their read-only proxies are reversible.
    """
    new: list[V] = []
    for key, value in reversed(cast(Reversible[tuple[str, V]], mapping.items())):
        entry = known.get(key)
        if entry is not None:
            if entry[-1] is not value:
                return None
            break
        new.append(value)
    if len(known) + len(new) != len(mapping):
        return None
    new.reverse()
    return new
