"""Task pickers: on which machines a scheduler puts the tasks of a job, by name.

A picker looks at a view of free resources (the true cell, an Omega snapshot or a Mesos offer) and returns a
placement for up to `tasks` tasks; it never changes the view. Randomness comes from the scheduler's own
generator. Each picker first computes, in one vectorised pass, how many tasks fit on every machine, then draws
in Python only for the tasks it places, so a decision costs O(machines) numpy work plus O(tasks).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from clustersim._io.fields import Checker, child
from clustersim.architectures.cell import IntArray, Placement
from clustersim.plugins import Registry

FloatArray = npt.NDArray[np.float64]


class View(Protocol):
    """Free resources as a scheduler sees them, and the machines' capacities."""

    free_cpu: IntArray
    free_memory: IntArray
    capacity_cpu: IntArray
    capacity_memory: IntArray


class TaskPicker(Protocol):
    def place(self, view: View, cpu: int, memory: int, tasks: int, rng: random.Random) -> Placement: ...


def room(view: View, cpu: int, memory: int, reserve_cpu: IntArray | int = 0, reserve_memory: IntArray | int = 0
         ) -> IntArray:
    """How many tasks of this size fit on each machine, keeping `reserve` free."""
    by_cpu = (view.free_cpu - reserve_cpu) // cpu
    by_memory = (view.free_memory - reserve_memory) // memory
    fit: IntArray = np.maximum(np.minimum(by_cpu, by_memory), 0)
    return fit


def _from_counts(counts: dict[int, int], cpu: int, memory: int) -> Placement:
    """A placement listing machines in the order they were first picked (deterministic)."""
    return Placement(
        np.fromiter(counts.keys(), np.int64, len(counts)), np.fromiter(counts.values(), np.int64, len(counts)),
        cpu, memory,
    )


def _fill_in_order(machines: IntArray, fit: IntArray, tasks: int, cpu: int, memory: int) -> Placement:
    """Fill machines in the given order, each with as many tasks as fit, until `tasks` are placed."""
    if len(machines) == 0:
        return Placement.empty(cpu, memory)
    totals = np.cumsum(fit)
    last = int(np.searchsorted(totals, tasks))
    if last >= len(machines):
        return Placement(machines, fit, cpu, memory)
    counts = fit[: last + 1].copy()
    counts[last] = tasks - (int(totals[last - 1]) if last > 0 else 0)
    return Placement(machines[: last + 1], counts, cpu, memory)


def _load(view: View, machines: IntArray) -> FloatArray:
    used_cpu = 1.0 - view.free_cpu[machines] / view.capacity_cpu[machines]
    used_memory = 1.0 - view.free_memory[machines] / view.capacity_memory[machines]
    return np.maximum(used_cpu, used_memory)


def _by_load(view: View, machines: IntArray) -> IntArray:
    """Machines from most to least loaded (largest used fraction of cpu or memory), ties by machine id."""
    order = np.lexsort((machines, -_load(view, machines)))
    ordered: IntArray = machines[order]
    return ordered


class RandomizedFirstFit:
    """The seed's (and the paper's) picker: random machines until a task fits, dropping those it does not fit.

    The seed draws machines uniformly from a shrinking pool and drops each one found too full; conditioned on
    fitting, the machine a task lands on is uniform among those with room. This draws directly among those,
    which gives the same placements in distribution without probing full machines.
    """

    def place(self, view: View, cpu: int, memory: int, tasks: int, rng: random.Random) -> Placement:
        fit = room(view, cpu, memory)
        candidates: IntArray = np.flatnonzero(fit > 0).astype(np.int64, copy=False)
        capacities: IntArray = fit[candidates]
        if int(capacities.sum()) <= tasks:
            return Placement(candidates, capacities, cpu, memory)
        # memoryviews of the fresh arrays: Python ints without converting every candidate to a list
        pool = candidates.data
        left = capacities.data
        size = len(pool)
        counts: dict[int, int] = {}
        draw = rng.random
        for _ in range(tasks):
            i = int(draw() * size)
            machine = pool[i]
            counts[machine] = counts.get(machine, 0) + 1
            remaining = left[i] - 1
            if remaining:
                left[i] = remaining
            else:
                size -= 1
                pool[i], left[i] = pool[size], left[size]
        return _from_counts(counts, cpu, memory)


@dataclass(frozen=True)
class RandomProbe:
    """Each task probes `tries` machines drawn uniformly from the whole cell and takes the first with room.

    Cheap and oblivious, like sampling-based schedulers; unlike randomised first fit it may leave tasks
    unplaced in a nearly full cell even though some machine has room, so they wait for a retry.
    """

    tries: int = 3

    def place(self, view: View, cpu: int, memory: int, tasks: int, rng: random.Random) -> Placement:
        left: list[int] = room(view, cpu, memory).tolist()
        machines = len(left)
        counts: dict[int, int] = {}
        draw = rng.random
        for _ in range(tasks):
            for _ in range(self.tries):
                machine = int(draw() * machines)
                if left[machine] > 0:
                    left[machine] -= 1
                    counts[machine] = counts.get(machine, 0) + 1
                    break
        return _from_counts(counts, cpu, memory)


class MostLoaded:
    """Packs: fills the most loaded machine with room first (deterministic, ties by machine id).

    Packing keeps whole machines free for large tasks, but concurrent schedulers all aim at the same machines,
    which is what makes Omega conflicts likely.
    """

    def place(self, view: View, cpu: int, memory: int, tasks: int, rng: random.Random) -> Placement:
        fit = room(view, cpu, memory)
        ordered = _by_load(view, np.flatnonzero(fit > 0).astype(np.int64))
        return _fill_in_order(ordered, fit[ordered], tasks, cpu, memory)


@dataclass(frozen=True)
class SpreadMargin:
    """The seed's energy extension picker: pack with a safety margin, spread randomly to avoid conflicts.

    Only machines keeping `margin` of their capacity free after the task are candidates; each task goes to a
    random one among the `spread` fraction of the cell's machines that are the most loaded candidates. The
    ranking is computed once per decision.
    """

    spread: float = 0.1
    margin: float = 0.1

    def place(self, view: View, cpu: int, memory: int, tasks: int, rng: random.Random) -> Placement:
        reserve_cpu = (view.capacity_cpu * self.margin).astype(np.int64)
        reserve_memory = (view.capacity_memory * self.margin).astype(np.int64)
        fit = room(view, cpu, memory, reserve_cpu, reserve_memory)
        ordered = _by_load(view, np.flatnonzero(fit > 0).astype(np.int64))
        pool: list[int] = ordered.tolist()
        left: list[int] = fit[ordered].tolist()
        bucket = max(1, int(self.spread * len(view.capacity_cpu)))
        counts: dict[int, int] = {}
        draw = rng.random
        for _ in range(tasks):
            if not pool:
                break
            i = int(draw() * min(bucket, len(pool)))
            machine = pool[i]
            counts[machine] = counts.get(machine, 0) + 1
            left[i] -= 1
            if left[i] == 0:
                del pool[i], left[i]
        return _from_counts(counts, cpu, memory)


PickerParser = Callable[[Mapping[str, object], str, Checker], TaskPicker]
PICKERS: Registry[PickerParser] = Registry("picker")
"""Task pickers by name; each parser reads the picker's options from its configuration mapping."""


def _no_options(make: Callable[[], TaskPicker]) -> PickerParser:
    def parse(options: Mapping[str, object], field: str, check: Checker) -> TaskPicker:
        check.known_keys(options, field, ("name",))
        return make()

    return parse


def _random_probe(options: Mapping[str, object], field: str, check: Checker) -> TaskPicker:
    check.known_keys(options, field, ("name", "tries"))
    return RandomProbe(check.integer(options.get("tries", RandomProbe.tries), child(field, "tries"), 1))


def _spread_margin(options: Mapping[str, object], field: str, check: Checker) -> TaskPicker:
    check.known_keys(options, field, ("name", "spread", "margin"))
    spread = check.number(options.get("spread", SpreadMargin.spread), child(field, "spread"), 0, above=True)
    margin = check.number(options.get("margin", SpreadMargin.margin), child(field, "margin"), 0)
    if spread > 1:
        check.expected(child(field, "spread"), "a fraction in (0, 1]", options["spread"])
    if margin >= 1:
        check.expected(child(field, "margin"), "a fraction in [0, 1)", options["margin"])
    return SpreadMargin(spread, margin)


PICKERS.add("randomized-first-fit", _no_options(RandomizedFirstFit))
PICKERS.add("random", _random_probe)
PICKERS.add("most-loaded", _no_options(MostLoaded))
PICKERS.add("spread-margin", _spread_margin)


def parse_picker(value: object, field: str, check: Checker) -> TaskPicker:
    """A picker from `name` or `{name: ..., option: ...}`."""
    options: Mapping[str, object] = {"name": value} if isinstance(value, str) else check.mapping(value, field)
    name = check.string(check.required(options, "name", field), child(field, "name"))
    if name not in PICKERS:
        check.fail(field, f"unknown picker '{name}'; valid: {', '.join(PICKERS.names())}")
    return PICKERS.get(name)(options, field, check)


def create_picker(name: str, **options: object) -> TaskPicker:
    """A picker by name, for code (tests, benchmarks); raises UnknownNameError for an unknown name."""
    return PICKERS.get(name)({"name": name, **options}, "picker", Checker("<code>"))
