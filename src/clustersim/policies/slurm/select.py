"""select/cons_tres with CR_CPU: which nodes, and how many CPUs on each, a job asking N CPUs gets.

This is `_eval_nodes` of Slurm 22.05 (src/plugins/select/cons_tres/job_test.c) for jobs that ask for CPUs
only (`sbatch -n N`: one node at least, any number of nodes), on nodes of equal weight without topology:

1. the usable nodes (allowed and with a free CPU) form runs of consecutive node indices;
2. the run to take from is the first one with enough CPUs, the tightest such run (fewest CPUs), or, when none
   is enough, the largest;
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


def select_cpus(cpus: int, allowed: int, free: Sequence[int], max_nodes: int | None = None) -> Allocation | None:
    """The CPUs a job asking `cpus` gets on the `allowed` nodes with `free[i]` idle CPUs; None if it does not fit."""
    runs: list[list[int]] = []
    previous = -2
    candidates = bits(allowed)
    if sum(free[n] for n in candidates) < cpus:
        return None
    for node in candidates:
        if free[node] <= 0:
            previous = -2
            continue
        if node == previous + 1 and runs:
            runs[-1].append(node)
        else:
            runs.append([node])
        previous = node
    totals = [sum(free[n] for n in run) for run in runs]
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
                or (enough and not best_enough)
                or (enough and totals[i] < totals[best])
                or (not enough and not best_enough and totals[i] > totals[best])
            ):
                best, best_enough = i, enough
        if best < 0:
            return None
        run = runs[best]
        candidates = run
        fitting = [n for n in run if free[n] >= remaining]
        if fitting:  # one node is enough: the best fit (Slurm tries this while at most one node is wanted)
            candidates = [min(fitting, key=lambda n: (free[n], n))]
        for node in candidates:
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
