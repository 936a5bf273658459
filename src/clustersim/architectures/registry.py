"""Named strategies (architectures, pickers, conflict detectors, transaction modes, distributions).

Every strategy is a small class registered under a name, so configurations say `picker: most-loaded` instead of
an integer mode switch, and an unknown name fails listing the valid ones. A registry refuses a name twice so
two modules cannot silently shadow each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from clustersim.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to factories of one kind of strategy."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(entry: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} '{name}' is already registered")
            self._entries[name] = entry
            return entry

        return decorate

    def add(self, name: str, entry: T) -> None:
        self.register(name)(entry)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None
