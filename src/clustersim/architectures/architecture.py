"""The interface every architecture implements, and the registry of architectures by name.

An architecture receives jobs, decides when and where their tasks start through the core's `Context`, and
reports its decision paths' counters. Its configuration is a small spec object, parsed from the `architectures`
section of a configuration file, that builds the architecture for one run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from clustersim._io.fields import Checker
from clustersim.architectures.context import Context
from clustersim.architectures.jobs import Job
from clustersim.architectures.scheduler import SchedulerStats
from clustersim.plugins import Registry


class Architecture(Protocol):
    def path_for(self, scheduler: str) -> str:
        """The decision path that handles the jobs of this scheduler."""
        ...

    def submit(self, job: Job) -> None: ...

    def close(self, end: float) -> None:
        """The run ends: account decisions still in progress."""
        ...

    def stats(self) -> list[SchedulerStats]: ...


class ArchitectureSpec(Protocol):
    @property
    def name(self) -> str: ...

    def label(self) -> str:
        """The name with the options that matter, for tables and figures (`omega/resource-fit/incremental`)."""
        ...

    def build(self, ctx: Context) -> Architecture: ...


SpecParser = Callable[[Mapping[str, object], str, Checker], ArchitectureSpec]
ARCHITECTURES: Registry[SpecParser] = Registry("architecture", group="clustersim.architectures")
"""Architectures by name; each entry parses the architecture's options (an empty mapping gives defaults)."""


def default_spec(name: str) -> ArchitectureSpec:
    """The architecture `name` with default options; raises UnknownNameError for an unknown name."""
    return ARCHITECTURES.get(name)({}, name, Checker("<defaults>"))
