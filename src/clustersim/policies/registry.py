"""Scheduling policies by name: any decision process, built-in or third-party.

A policy is anything callable with keyword options that returns a decision process (usually a class):
register it with `@register_policy("name")`, declare it as an entry point of the `clustersim.policies` group,
or name it as `package.module:Class` (`clustersim run --policy mypkg.lifo:Lifo`, or `policy:` in a sweep file).

Jobs that can never fit (asking for no resource, or for more than the platform has) are rejected for every
policy `create_policy` makes: built-in policies do it in `Policy.decide`; any other decision process is wrapped
in `RejectNeverFitting`, which rejects them before the process sees them (it gets no JobSubmitted for them).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from clustersim.core.decisions import Decision
from clustersim.core.events import Event, JobSubmitted
from clustersim.core.interface import DecisionProcess
from clustersim.core.state import ClusterView
from clustersim.errors import InputError, PluginError, UnknownNameError
from clustersim.plugins import Registry
from clustersim.policies.base import Policy, never_fitting

PolicyFactory = Callable[..., DecisionProcess]
F = TypeVar("F", bound=PolicyFactory)

POLICIES: Registry[PolicyFactory] = Registry(
    "policy", group="clustersim.policies", builtins="clustersim.policies.builtin"
)
"""Every policy by name; the built-in ones register themselves when `clustersim.policies.builtin` is imported."""


def register_policy(name: str) -> Callable[[F], F]:
    """Register a policy class (or any factory of decision processes) under `name`; a taken name is an error."""

    def decorate(factory: F) -> F:
        POLICIES.add(name, factory)
        if isinstance(factory, type) and issubclass(factory, Policy):
            factory.name = name
        return factory

    return decorate


def policy_names() -> list[str]:
    """The valid policy names (built-in, registered, and installed entry points)."""
    return POLICIES.names()


def create_policy(name: str, **options: object) -> DecisionProcess:
    """A fresh decision process of the policy `name` (or `package.module:Class`), given its keyword options.

    Unknown options are errors naming the valid ones. A process that is not a built-in `Policy` is wrapped in
    `RejectNeverFitting`.
    """
    factory = POLICIES.get(name)
    if not callable(factory):
        raise PluginError("policy", name, "is not a class or a function that makes a decision process")
    if options:
        _check_options(name, factory, options)
    process = factory(**options)
    if not callable(getattr(process, "decide", None)):
        raise PluginError("policy", name, "did not make a decision process (an object with decide(now, events, view))")
    return process if isinstance(process, Policy) else RejectNeverFitting(process)


def _check_options(name: str, factory: Callable[..., object], options: dict[str, object]) -> None:
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    valid = [p.name for p in parameters if p.kind in kinds and p.name != "self"]
    for option in options:
        if option not in valid:
            raise UnknownNameError(f"option of policy '{name}':", option, valid or ["(none)"])


class RejectNeverFitting:
    """A decision process that first rejects the jobs that can never fit, then lets `process` decide.

    `process` never hears of those jobs: their JobSubmitted events are removed from what it is given.
    """

    def __init__(self, process: DecisionProcess):
        self.process = process

    def begin(self, view: ClusterView) -> Iterable[Decision] | None:
        return self.process.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        rejected = list(never_fitting(events, view))
        yield from rejected
        if rejected:
            keys = {decision.job_key for decision in rejected}
            events = [e for e in events if not (isinstance(e, JobSubmitted) and e.job.key in keys)]
        yield from self.process.decide(now, events, view)

    def end(self, view: ClusterView) -> None:
        self.process.end(view)


def parse_policy_options(pairs: list[str] | None) -> dict[str, object]:
    """`KEY=VALUE` strings (the CLI's --policy-option) as keyword arguments; values stay strings."""
    options: dict[str, object] = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise InputError("--policy-option", f"'{pair}' is not KEY=VALUE")
        options[key.strip().replace("-", "_")] = value
    return options

