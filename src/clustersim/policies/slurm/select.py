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
"""

from __future__ import annotations

from collections.abc import Sequence

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
    runs: list[list[int]] = []
    totals: list[int] = []
    run_weights: list[int] = []
    previous = -2
    idle = 0
    for node in bits(allowed):
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
