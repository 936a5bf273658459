"""Built-in policies registered by name; an unknown name fails listing the valid ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from clustersim.errors import InputError, UnknownNameError
from clustersim.policies.base import Policy

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

    def create(self, name: str, **options: object) -> Policy:
        """A new instance; `options` are its constructor's keyword arguments (a slurm.conf path...)."""
        cls = self._classes.get(name)
        if cls is None:
            raise UnknownNameError("policy", name, self.names())
        if options:
            import inspect

            kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            parameters = inspect.signature(cls.__init__).parameters.values()
            valid = [p.name for p in parameters if p.kind in kinds and p.name != "self"]
            for option in options:
                if option not in valid:
                    raise UnknownNameError(f"option of policy '{name}':", option, valid or ["(none)"])
        return cls(**options)


POLICIES = PolicyRegistry()
"""The registry of built-in policies; each policy module registers itself on import."""


def create_policy(name: str, **options: object) -> Policy:
    """A fresh instance of the built-in policy `name`, with its options (unknown options are errors)."""
    import clustersim.policies.builtin  # noqa: F401  (registers the built-in policies)

    return POLICIES.create(name, **options)


def parse_policy_options(pairs: list[str] | None) -> dict[str, object]:
    """`KEY=VALUE` strings (the CLI's --policy-option) as keyword arguments; values stay strings."""
    options: dict[str, object] = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise InputError("--policy-option", f"'{pair}' is not KEY=VALUE")
        options[key.strip().replace("-", "_")] = value
    return options
