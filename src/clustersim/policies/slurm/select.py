"""select/cons_tres with CR_CPU: which nodes, and how many CPUs on each, a job asking N CPUs gets.

This is `_eval_nodes` of Slurm 22.05 (src/plugins/select/cons_tres/job_test.c) for jobs that ask for CPUs
only (`sbatch -n N`: one node at least, any number of nodes), without topology:

1. the usable nodes (allowed and with a free CPU) form runs of consecutive node indices of the same `Weight`;
2. the run to take from is one of the lowest weight; among those, the first one with enough CPUs, the tightest
   such run (fewest CPUs), or, when none is enough, the largest;
3. in that run, when one node is enough, the best-fit node (fewest free CPUs that suffice, first such);
   otherwise nodes in index order, each giving as many CPUs as are still needed;
4. a run that falls short is used up and the next best run completes the job.

Node sets are Python ints used as bitmaps (bit i: node i), as Slurm uses bitstrings.

Requests shaped by sbatch options (`-N`, `--ntasks-per-node`, `--cpus-per-task`, `--exclusive`, memory with
CR_CPU_Memory) go through `ShapedRequest.select`, which counts tasks where `select_cpus` counts CPUs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Allocation = dict[int, int]
"""node index -> CPUs taken there."""


_BITS_CACHE: dict[int, list[int]] = {}


def bits(nodes: int) -> list[int]:
    """The node indices set in a bitmap, ascending (cached: the same few node sets recur in every pass)."""
    cached = _BITS_CACHE.get(nodes)
    if cached is not None:
        return cached
    text = bin(nodes)[:1:-1]
    out = [i for i, bit in enumerate(text) if bit == "1"]
    if len(_BITS_CACHE) > 4096:
        _BITS_CACHE.clear()
    _BITS_CACHE[nodes] = out
    return out


def select_cpus(
    cpus: int,
    allowed: int,
    free: Sequence[int],
    max_nodes: int | None = None,
    weights: Sequence[int] | None = None,
) -> Allocation | None:
    """The CPUs a job asking `cpus` gets on the `allowed` nodes with `free[i]` idle CPUs; None if it does not fit.

    `weights` are the nodes' `Weight` (None: all equal). With `max_nodes` None the job fits exactly when the
    allowed nodes have `cpus` idle CPUs in all (the backfill pass relies on it).
    """
    members = bits(allowed)
    if sum(map(free.__getitem__, members)) < cpus:
        return None  # too few idle CPUs in all: known without walking the nodes
    runs: list[list[int]] = []
    totals: list[int] = []
    run_weights: list[int] = []
    previous = -2
    idle = 0
    for node in members:
        count = free[node]
        if count <= 0:
            previous = -2
            continue
        idle += count
        if node == previous + 1 and (weights is None or weights[node] == weights[previous]):
            runs[-1].append(node)
            totals[-1] += count
        else:
            runs.append([node])
            totals.append(count)
            run_weights.append(0 if weights is None else weights[node])
        previous = node
    if idle < cpus:
        return None
    allocation: Allocation = {}
    remaining = cpus
    nodes_left = max_nodes if max_nodes is not None else len(free)
    while remaining > 0 and nodes_left > 0:
        best = -1
        best_enough = False
        for i, run in enumerate(runs):
            if not run:
                continue
            enough = totals[i] >= remaining
            if (
                best < 0
                or run_weights[i] < run_weights[best]
                or (run_weights[i] == run_weights[best] and (
                    (enough and not best_enough)
                    or (enough and totals[i] < totals[best])
                    or (not enough and not best_enough and totals[i] > totals[best])
                ))
            ):
                best, best_enough = i, enough
        if best < 0:
            return None
        run = runs[best]
        best_fit = -1  # one node is enough: the best fit (Slurm tries this while at most one node is wanted)
        for node in run:
            if free[node] >= remaining and (best_fit < 0 or free[node] < free[best_fit]):
                best_fit = node
        for node in run if best_fit < 0 else (best_fit,):
            if remaining <= 0 or nodes_left <= 0:
                break
            if nodes_left == 1 and free[node] < remaining:
                continue
            take = min(free[node], remaining)
            allocation[node] = take
            remaining -= take
            nodes_left -= 1
        runs[best] = []
        totals[best] = 0
    return allocation if remaining <= 0 else None


@dataclass(frozen=True, slots=True)
class Shape:
    """A request beyond "N CPUs anywhere" (sbatch `-N`, `--ntasks-per-node`, `-c`, `--exclusive`, memory, GPUs)."""

    tasks: int
    cpus_per_task: int = 1
    nodes: int | None = None
    """`-N`: exactly this many nodes, the tasks spread over them (None: as many nodes as the tasks need)."""
    tasks_per_node: int | None = None
    whole_nodes: bool = False
    """`--exclusive` or select/linear: only idle nodes, and all their CPUs."""
    mem_per_node: int | None = None
    """MiB on each node (0: all of it); with memory consumable and neither given, the job takes all of it."""
    mem_per_cpu: int | None = None
    gpus_per_node: int = 0


@dataclass(slots=True)
class Consumables:
    """What nodes have free besides CPUs: memory (MiB) and GPUs per node (None: not a consumable resource)."""

    memory: list[int] | None = None
    gpus: list[int] | None = None

    def copy(self) -> Consumables:
        return Consumables(None if self.memory is None else list(self.memory),
                           None if self.gpus is None else list(self.gpus))

    def add(self, memory: Allocation, gpus: Allocation, sign: int = 1) -> None:
        """Give back (sign 1) or take (sign -1) what a job holds."""
        if self.memory is not None:
            for node, mib in memory.items():
                self.memory[node] += sign * mib
        if self.gpus is not None:
            for node, count in gpus.items():
                self.gpus[node] += sign * count


@dataclass(frozen=True, slots=True)
class ShapedRequest:
    """A shaped request on a given cluster: what `select` needs besides the free resources."""

    shape: Shape
    sizes: tuple[int, ...]
    """CPUs of each node."""
    real_memory: tuple[int, ...] | None
    """RealMemory of each node (MiB); None: memory is not a consumable resource (CR_CPU)."""
    max_nodes: int | None = None
    """The partition's MaxNodes, for a job that does not name its node count."""
    weights: tuple[int, ...] | None = None

    def select(self, allowed: int, free: Sequence[int], other: Consumables | None = None) -> Allocation | None:
        """The CPUs per node the job gets on `allowed` nodes with `free` CPUs and `other` resources; None: no fit.

        As cons_tres does: each node offers the tasks its free CPUs and memory hold (exactly `tasks_per_node`
        or none) if it has the GPUs asked, the nodes are chosen as `select_cpus` chooses them (with tasks for
        CPUs), and with `-N` the tasks go to the chosen nodes in order, each keeping one task for every node after.
        """
        shape = self.shape
        memory = None if other is None or self.real_memory is None else other.memory
        gpus = None if other is None else other.gpus
        caps = [0] * len(free)
        usable = 0
        for node in bits(allowed):
            cpus = free[node]
            if shape.whole_nodes and cpus != self.sizes[node]:
                continue
            if shape.gpus_per_node and (gpus is None or gpus[node] < shape.gpus_per_node):
                continue
            tasks = cpus // shape.cpus_per_task
            if memory is not None and self.real_memory is not None:
                tasks = min(tasks, self._memory_tasks(memory[node], self.real_memory[node]))
            if shape.tasks_per_node is not None:
                tasks = shape.tasks_per_node if tasks >= shape.tasks_per_node else 0
            if tasks > 0:
                caps[node] = tasks
                usable |= 1 << node
        if shape.nodes is None:
            picked = select_cpus(shape.tasks, usable, caps, self.max_nodes, self.weights)
        else:
            picked = self._spread(shape.nodes, usable, caps)
        if picked is None:
            return None
        if shape.whole_nodes:
            return {node: self.sizes[node] for node in picked}
        return {node: tasks * shape.cpus_per_task for node, tasks in picked.items()}

    def _spread(self, count: int, usable: int, caps: list[int]) -> Allocation | None:
        slots = select_cpus(count, usable, [min(cap, 1) for cap in caps], count, self.weights)
        if slots is None:
            return None
        picked: Allocation = {}
        remaining = self.shape.tasks
        chosen = sorted(slots)
        for position, node in enumerate(chosen):
            take = min(caps[node], remaining - (len(chosen) - position - 1))
            picked[node] = take
            remaining -= take
        return picked if remaining == 0 else None

    def _memory_tasks(self, free: int, real: int) -> int:
        """How many tasks `free` MiB of a node of `real` MiB hold."""
        shape = self.shape
        if shape.mem_per_cpu:
            return free // (shape.mem_per_cpu * shape.cpus_per_task)
        need = real if not shape.mem_per_node else shape.mem_per_node
        return shape.tasks if free >= need else 0

    def holds(self, allocation: Allocation) -> tuple[Allocation, Allocation]:
        """The memory (MiB; empty when not consumable) and the GPUs the job holds on each of its nodes."""
        shape = self.shape
        gpus = {node: shape.gpus_per_node for node in allocation} if shape.gpus_per_node else {}
        if self.real_memory is None:
            return {}, gpus
        if shape.mem_per_cpu is not None:
            return {node: shape.mem_per_cpu * cpus for node, cpus in allocation.items()}, gpus
        return {node: shape.mem_per_node or self.real_memory[node] for node in allocation}, gpus
