"""Built-in policies registered by name; an unknown name fails listing the valid ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from clustersim.errors import UnknownNameError
from clustersim.scheduling.policy import Policy

P = TypeVar("P", bound=type[Policy])


class PolicyRegistry:
    """Maps names to policy classes; refuses a name registered twice."""

    def __init__(self) -> None:
        self._classes: dict[str, type[Policy]] = {}

    def register(self, name: str) -> Callable[[P], P]:
        def decorate(cls: P) -> P:
            if name in self._classes:
                raise ValueError(f"policy '{name}' is already registered by {self._classes[name].__name__}")
            self._classes[name] = cls
            cls.name = name
            return cls

        return decorate

    def names(self) -> list[str]:
        return sorted(self._classes)

    def create(self, name: str) -> Policy:
        cls = self._classes.get(name)
        if cls is None:
            raise UnknownNameError("policy", name, self.names())
        return cls()


POLICIES = PolicyRegistry()
"""The registry of built-in policies; each policy module registers itself on import."""


def create_policy(name: str) -> Policy:
    """A fresh instance of the built-in policy `name`."""
    import clustersim.scheduling.policies  # noqa: F401  (registers the built-in policies)

    return POLICIES.create(name)
