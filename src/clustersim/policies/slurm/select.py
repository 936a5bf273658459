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

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

Allocation = dict[int, int]
"""node index -> CPUs taken there."""


_BITS_CACHE: Final[dict[int, list[int]]] = {}


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
    free: list[int],
    max_nodes: int | None = None,
    weights: Sequence[int] | None = None,
) -> Allocation | None:
    """The CPUs a job asking `cpus` gets on the `allowed` nodes with `free[i]` idle CPUs; None if it does not fit.

    `weights` are the nodes' `Weight` (None: all equal). With `max_nodes` None the job fits exactly when the
    allowed nodes have `cpus` idle CPUs in all (the backfill pass relies on it).
    """
    members = bits(allowed)
    total = 0
    for node in members:  # a plain loop: the compiled path reads the list itself
        total += free[node]
    if total < cpus:
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


GresHeld = dict[str, Allocation]
"""GRES name -> count held per node."""


@dataclass(frozen=True, slots=True)
class Shape:
    """A request beyond "N CPUs anywhere" (sbatch `-N`, `--ntasks-per-node`, `-c`, `--exclusive`, memory, GRES)."""

    tasks: int
    cpus_per_task: int = 1
    nodes: int | None = None
    """`-N`: at least this many nodes, the tasks spread over them (None: as many nodes as the tasks need)."""
    tasks_per_node: int | None = None
    whole_nodes: bool = False
    """`--exclusive` or select/linear: only idle nodes, and all their CPUs."""
    mem_per_node: int | None = None
    """MiB on each node (0: all of it); with memory consumable and neither given, the job takes all of it."""
    mem_per_cpu: int | None = None
    max_nodes: int | None = None
    """`-N MIN-MAX`: up to MAX nodes, as many as fit (None: exactly `nodes`)."""
    per_node_tasks: bool = False
    """No task count (`-N` alone): `tasks_per_node` (or one) task on each node it gets."""
    gres: tuple[tuple[str, int], ...] = ()
    """GRES asked on each of its nodes (`--gres`, `--gpus-per-node`)."""
    gpus: int = 0
    """`--gpus`: GPUs for the whole job, one at least on each of its nodes."""
    gpus_per_task: int = 0
    gpu_type: str = ""
    """The type `--gpus` or `--gpus-per-task` asks (empty: any GPU)."""
    cpus_per_gpu: int = 0
    """`--cpus-per-gpu` or DefCpuPerGPU: each node gets at least that many CPUs per GPU it holds (0: none)."""
    mem_per_gpu: int | None = None
    """DefMemPerGPU: MiB per GPU a node holds (a job's own `--mem-per-gpu` arrives as `mem_per_node`)."""
    tasks_unknown: bool = False
    """No `-n`, `-N` or `--ntasks-per-node`: one task, but not one cons_tres counts on (`known_tasks`)."""

    @property
    def has_gres(self) -> bool:
        return bool(self.gres or self.gpus or self.gpus_per_task)

    @property
    def task_cpus(self) -> int:
        """CPUs per task: `-c`, or the CPUs of its GPUs with `--gpus-per-task` and `--cpus-per-gpu` (measured:
        `--gpus-per-task=2 --cpus-per-gpu=1` shows CPUs/Task=2)."""
        return max(self.cpus_per_task, self.gpus_per_task * self.cpus_per_gpu)

    @property
    def node_gpus(self) -> int:
        """The GPUs asked on each node (`--gres=gpu...`, `--gpus-per-node`; typed ones summed)."""
        return sum(count for name, count in self.gres if name.partition(":")[0] == "gpu")

    @property
    def gpu_name(self) -> str:
        """The GRES `--gpus` and `--gpus-per-task` count: `gpu`, or `gpu:TYPE` for a typed request."""
        return f"gpu:{self.gpu_type}" if self.gpu_type else "gpu"

    def gres_needed(self) -> tuple[tuple[str, int], ...]:
        """The GRES asked per node, a typed one (`gpu:a100`) counted in its name's total (`gpu`) too."""
        totals = dict(self.gres)
        for name, count in self.gres:
            base, typed, _ = name.partition(":")
            if typed:
                totals[base] = totals.get(base, 0) + count
        return tuple(totals.items())

    def known_tasks(self, gpus: int) -> int | None:
        """The tasks a GRES job may run on a node when cons_tres knows that number (it then offers only their
        cores, the highest of the node's free ones): `--gpus-per-task` (the node's `gpus` free over it),
        `--ntasks-per-node`, or one (`-n 1`, or `-n` equal to `-N`); None: unknown (all free cores; also for a
        job that gives no task count: measured, `--gres=gpu:1 --cpus-per-gpu=3` takes CPUs 0-2 of an idle node,
        with `-n 1` 5-7)."""
        if not self.has_gres:
            return None
        if self.gpus_per_task:
            return gpus // self.gpus_per_task
        if self.tasks_per_node is not None:
            return self.tasks_per_node
        if not self.per_node_tasks and not self.tasks_unknown and (
                self.tasks == 1 or (self.tasks == self.nodes and self.max_nodes is None)):
            return 1
        return None


@dataclass(slots=True)
class Consumables:
    """What nodes have free besides CPUs: memory (MiB; None: not a consumable resource) and each GRES."""

    memory: list[int] | None = None
    gres: dict[str, list[int]] = field(default_factory=dict)

    def copy(self) -> Consumables:
        return Consumables(None if self.memory is None else list(self.memory),
                           {name: list(counts) for name, counts in self.gres.items()})

    def add(self, memory: Allocation, gres: GresHeld, sign: int = 1) -> None:
        """Give back (sign 1) or take (sign -1) what a job holds."""
        if self.memory is not None:
            for node, mib in memory.items():
                self.memory[node] += sign * mib
        for name, held in gres.items():
            counts = self.gres[name]
            for node, count in held.items():
                counts[node] += sign * count


_NO_GRES: Final[list[int]] = []


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

        As cons_tres does: each node offers the tasks its free CPUs, memory and GPUs hold (exactly
        `tasks_per_node` or none), if it has the GRES asked per node (and a free GPU for a job asking GPUs).
        A job asking only tasks takes nodes as `select_cpus` chooses them; one with `-N`, a node range or
        `--gpus` as `_eval_nodes` does (nodes until the tasks, the node count and the GPUs are there), its
        tasks then dealt to those nodes in turn (`_dist_tasks_compute_c_b`). A job asking GPUs prefers nodes
        with more of them free (cons_tres lowers their sched_weight by the GPUs it could use there).
        """
        shape = self.shape
        memory = None if other is None or self.real_memory is None else other.memory
        gres = {} if other is None else other.gres
        if (shape.gpus or shape.gpus_per_task) and shape.gpu_name not in gres:
            return None
        gpus = gres[shape.gpu_name] if shape.gpus or shape.gpus_per_task else _NO_GRES
        if shape.gpus and shape.cpus_per_gpu:  # a node offers the GPUs its free CPUs can serve
            gpus = [min(count, cpus // shape.cpus_per_gpu) for count, cpus in zip(gpus, free, strict=True)]
        needed = shape.gres_needed() if shape.gres else ()
        task_cpus = shape.task_cpus
        node_cpus = shape.node_gpus * shape.cpus_per_gpu
        caps = [0] * len(free)
        usable = 0
        for node in bits(allowed):
            cpus = free[node]
            if shape.whole_nodes and cpus != self.sizes[node]:
                continue
            if any(name not in gres or gres[name][node] < count for name, count in needed):
                continue
            if (gpus is not _NO_GRES and gpus[node] < 1) or cpus < node_cpus:
                continue
            tasks = cpus // task_cpus
            if memory is not None and self.real_memory is not None:
                tasks = min(tasks, self._memory_tasks(memory[node], self.real_memory[node]))
            known = shape.known_tasks(gpus[node] if shape.gpus_per_task else 0)
            if known is not None:
                tasks = min(tasks, known)
            per_node = shape.tasks_per_node or (1 if shape.per_node_tasks else None)
            if per_node is not None:
                tasks = per_node if tasks >= per_node else 0
            if tasks > 0:
                caps[node] = tasks
                usable |= 1 << node
        weights = self._gpu_weights(usable, gpus) if gpus is not _NO_GRES else self.weights
        if shape.nodes is None and shape.max_nodes is None and not shape.gpus:
            picked = select_cpus(shape.tasks, usable, caps, self.max_nodes, weights)
        else:
            picked = self._eval_nodes(usable, caps, weights, gpus)
        if picked is None:
            return None
        if shape.whole_nodes:
            return {node: self.sizes[node] for node in picked}
        if shape.gpus and shape.cpus_per_gpu:
            node_gpus = _spread(shape.gpus, sorted(picked), gpus)
            return {node: max(tasks * task_cpus, node_gpus[node] * shape.cpus_per_gpu)
                    for node, tasks in picked.items()}
        return {node: max(tasks * task_cpus, node_cpus) for node, tasks in picked.items()}

    def _gpu_weights(self, usable: int, gpus: Sequence[int]) -> tuple[int, ...]:
        """Node weights for a job asking GPUs per job or per task: the configured Weight first, then fewer free
        GPUs weigh more (cons_tres: `sched_weight = Weight << 8 | (0xff - near_gpu_cnt)`, the GPUs counted up
        to the job's `--gpus`). Per-node requests need not: every node they may use offers the same count."""
        shape = self.shape
        wanted = shape.gpus or 0xff
        base = self.weights or (0,) * len(self.sizes)
        return tuple(base[node] * 256 + 0xff - min(gpus[node], wanted, 0xff) if usable >> node & 1 else
                     base[node] * 256 for node in range(len(self.sizes)))

    def _eval_nodes(self, usable: int, caps: list[int], weights: Sequence[int] | None,
                    gpus: Sequence[int]) -> Allocation | None:
        """Nodes for a job with a node count (`-N N`, `-N MIN-MAX`) or GPUs per job, as cons_tres's
        `_eval_nodes` picks them, then its tasks dealt out over them in turn; None: no fit."""
        shape = self.shape
        low = shape.nodes or 1
        most = shape.max_nodes or shape.nodes or len(caps)
        if self.max_nodes is not None:
            most = min(most, self.max_nodes)
        requested = min(shape.max_nodes or low, most)
        if not shape.per_node_tasks:
            most = min(most, max(shape.tasks, low))  # choose_nodes: no more nodes than tasks
        if shape.gpus:
            most = min(most, shape.gpus)  # each node holds one of the job's GPUs at least
        tasks_left = shape.tasks
        budget = math.inf if shape.per_node_tasks else shape.tasks
        nodes_left = min(low, requested) if shape.gpus else max(low, requested)
        low_left = low
        gpus_left = shape.gpus
        runs: list[list[int]] = []
        previous = -2
        for node in bits(usable):
            if node == previous + 1 and (weights is None or weights[node] == weights[previous]):
                runs[-1].append(node)
            else:
                runs.append([node])
            previous = node
        picked: Allocation = {}

        def done() -> bool:
            return nodes_left <= 0 and tasks_left <= 0 and gpus_left <= 0

        while runs and most > 0 and not done():
            best = -1
            best_enough = False
            best_tasks = 0
            for i, run in enumerate(runs):
                total = sum(caps[node] for node in run)
                enough = (total >= tasks_left and _enough_nodes(len(run), nodes_left, low, requested)
                          and (gpus_left <= 0 or sum(gpus[node] for node in run) >= gpus_left))
                weight = 0 if weights is None else weights[run[0]]
                best_weight = 0 if weights is None or best < 0 else weights[runs[best][0]]
                if best < 0 or weight < best_weight or (weight == best_weight and (
                        (enough and not best_enough) or (enough and total < best_tasks)
                        or (not enough and not best_enough and total > best_tasks))):
                    best, best_enough, best_tasks = i, enough, total
            run = runs.pop(best)
            if nodes_left <= 1:  # one node may be enough: the best fit
                fits = [node for node in run if caps[node] >= tasks_left
                        and (gpus_left <= 0 or gpus[node] >= gpus_left)]
                if fits:
                    run = [min(fits, key=lambda node: (caps[node], node))]
            for node in run:
                if most <= 0 or done():
                    break
                if most == 1 and caps[node] < tasks_left:
                    continue
                reserve = max(low_left - 1, 0)
                take = caps[node] if caps[node] <= budget - reserve else max(budget - reserve, 1)
                picked[node] = int(take)
                tasks_left -= int(take)
                budget -= take
                nodes_left -= 1
                low_left -= 1
                most -= 1
                if gpus_left > 0:
                    gpus_left -= gpus[node]
        if tasks_left > 0 or gpus_left > 0 or not _enough_nodes(0, nodes_left, low, requested):
            return None
        return _deal(shape.tasks if not shape.per_node_tasks else sum(picked.values()), picked)

    def _memory_tasks(self, free: int, real: int) -> int:
        """How many tasks `free` MiB of a node of `real` MiB hold."""
        shape = self.shape
        if shape.mem_per_cpu:
            return free // (shape.mem_per_cpu * shape.task_cpus)
        if shape.mem_per_gpu:
            if shape.gpus_per_task:
                return free // (shape.mem_per_gpu * shape.gpus_per_task)
            return shape.tasks if free >= shape.mem_per_gpu * max(shape.node_gpus, 1) else 0
        need = real if not shape.mem_per_node else shape.mem_per_node
        return shape.tasks if free >= need else 0

    def holds(self, allocation: Allocation, other: Consumables | None = None) -> tuple[Allocation, GresHeld]:
        """The memory (MiB; empty when not consumable) and the GRES the job holds on each of its nodes.

        `--gpus=N` is spread as `_spread` says, over what the nodes have free in `other` (and, with
        `--cpus-per-gpu`, what their CPUs serve); DefMemPerGPU holds that much per GPU of the node."""
        shape = self.shape
        held: GresHeld = {name: dict.fromkeys(allocation, count) for name, count in shape.gres}
        if shape.gpus_per_task:
            held[shape.gpu_name] = {node: cpus // shape.task_cpus * shape.gpus_per_task
                                    for node, cpus in allocation.items()}
        elif shape.gpus:
            free = None if other is None else other.gres.get(shape.gpu_name)
            if free is not None and shape.cpus_per_gpu:
                free = [min(count, allocation.get(node, 0) // shape.cpus_per_gpu) for node, count in enumerate(free)]
            held[shape.gpu_name] = _spread(shape.gpus, sorted(allocation), free)
        node_gpus = {node: sum(counts.get(node, 0) for name, counts in held.items() if name.partition(":")[0] == "gpu")
                     for node in allocation}
        if other is not None and any(":" in name for name in other.gres):
            held = _with_types(held, other)
        if self.real_memory is None:
            return {}, held
        if shape.mem_per_gpu is not None and shape.mem_per_cpu is None and shape.mem_per_node is None:
            return {node: shape.mem_per_gpu * count for node, count in node_gpus.items()}, held
        if shape.mem_per_cpu is not None:
            return {node: shape.mem_per_cpu * cpus for node, cpus in allocation.items()}, held
        return {node: shape.mem_per_node or self.real_memory[node] for node in allocation}, held


def _spread(total: int, nodes: list[int], free: Sequence[int] | None) -> Allocation:
    """`--gpus=N` over its nodes: one GPU on each, then the nodes filled in order with what they have `free`
    (`gres_select_filter_select_and_set`: measured, `--gpus=3 -N 2` holds 2 + 1)."""
    share = dict.fromkeys(nodes, 1)
    left = total - len(share)
    for node in share:
        more = min(left, (free[node] if free is not None else total) - 1)
        share[node] += more
        left -= more
    return share


def _with_types(held: GresHeld, other: Consumables) -> GresHeld:
    """What a job holds of typed GRES: a typed count (`gpu:a100`) counts in its name's total (`gpu`) too, and an
    untyped one on a node with types takes the free units of its types in `Gres=` order (measured: `--gres=gpu:1`
    on a node with `gpu:a100:1,gpu:v100:1` takes the a100)."""
    result: GresHeld = {name: dict(counts) for name, counts in held.items() if ":" in name}
    for name, counts in held.items():
        if ":" in name:
            total = result.setdefault(name.partition(":")[0], {})
            for node, count in counts.items():
                total[node] = total.get(node, 0) + count
    for name, counts in held.items():
        if ":" in name:
            continue
        total = result.setdefault(name, {})
        types = [typed for typed in other.gres if typed.partition(":")[0] == name]
        for node, count in counts.items():
            total[node] = total.get(node, 0) + count
            for typed in types:
                take = min(count, other.gres[typed][node] - result.get(typed, {}).get(node, 0))
                if take > 0:
                    result.setdefault(typed, {})[node] = result.get(typed, {}).get(node, 0) + take
                    count -= take
    return result


def _enough_nodes(available: int, wanted: int, low: int, requested: int) -> bool:
    """`_enough_nodes`: with a node range, the nodes beyond the minimum are welcome, not needed."""
    return available >= (wanted + low - requested if requested > low else wanted)


def _deal(tasks: int, caps: Allocation) -> Allocation | None:
    """`tasks` dealt to the nodes in turn, one each per round, each up to its cap (cons_tres's block
    distribution of an allocation: `-N 2-4 -n 8` on 4-CPU nodes gets 3, 3, 1, 1)."""
    if sum(caps.values()) < tasks or len(caps) > tasks:
        return None
    dealt = dict.fromkeys(sorted(caps), 0)
    while tasks > 0:
        for node in dealt:
            if tasks > 0 and dealt[node] < caps[node]:
                dealt[node] += 1
                tasks -= 1
    return dealt
