"""Routers: which Ready replica a request goes to. Round-robin, least-outstanding and random, by name.

A router sees the replicas accepting traffic, in the order they became Ready, each with its count of requests in
flight (`n`). Random routing splits a Poisson stream into independent Poisson streams, which is what the
processor-sharing formula assumes; round-robin is smoother, least-outstanding smoother still.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np

from clustersim.errors import UnknownNameError


class Loaded(Protocol):
    @property
    def n(self) -> int: ...


S = TypeVar("S", bound=Loaded)


class Router(Protocol):
    name: str

    def pick(self, servers: Sequence[S]) -> S:
        """One of `servers` (never empty)."""
        ...


class RoundRobin:
    """Each request to the next replica in turn."""

    name = "round-robin"

    def __init__(self, rng: np.random.Generator):
        self._cursor = 0

    def pick(self, servers: Sequence[S]) -> S:
        cursor = self._cursor % len(servers)
        self._cursor = cursor + 1
        return servers[cursor]


class LeastOutstanding:
    """The replica with the fewest requests in flight; ties go to the earliest Ready."""

    name = "least-outstanding"

    def __init__(self, rng: np.random.Generator):
        pass

    def pick(self, servers: Sequence[S]) -> S:
        best = servers[0]
        least = best.n
        if least:
            for server in servers:
                if server.n < least:
                    best, least = server, server.n
                    if not least:
                        break
        return best


class Random:
    """A replica drawn uniformly (from the seeded generator, in blocks)."""

    name = "random"

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._draws: list[float] = []

    def pick(self, servers: Sequence[S]) -> S:
        if not self._draws:
            self._draws = self._rng.random(4096).tolist()
        return servers[int(self._draws.pop() * len(servers))]


ROUTERS: dict[str, type[RoundRobin] | type[LeastOutstanding] | type[Random]] = {
    "round-robin": RoundRobin,
    "least-outstanding": LeastOutstanding,
    "random": Random,
}


def create_router(name: str, rng: np.random.Generator) -> Router:
    cls = ROUTERS.get(name)
    if cls is None:
        raise UnknownNameError("router", name, list(ROUTERS))
    return cls(rng)
