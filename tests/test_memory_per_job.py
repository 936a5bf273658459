"""Memory grows with the jobs alive, not with the trace (measured with `tracemalloc`, no timing).

A run of jobs spaced so that each ends before the next arrives holds one job at a time: twice the jobs must not
need more memory. Jobs submitted together wait in the queue: what each one adds is bounded (the `Job`, its id
and key, its queue entry and its submission event; EASY also indexes it by shape).
"""

from __future__ import annotations

import tempfile
import tracemalloc
from collections.abc import Iterator

import pytest

from clustersim.core.simulation import Delivery
from clustersim.platform.model import Node, Platform
from clustersim.policies.registry import create_policy
from clustersim.records.jobs_csv import LINES_PER_WRITE
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload

SPACED = LINES_PER_WRITE + 404
"""More jobs than jobs.csv holds before it writes, so both spaced runs hold a full block of lines."""
QUEUED = 2_000
"""Jobs queued at once (the run peaks before any line is written)."""

BYTES_PER_QUEUED_JOB = {"fcfs": 700, "easy": 1_000}
"""About 1.5 times what a queued job costs on this workload (fcfs 460 bytes, easy 650-680, pure or compiled)."""


def _jobs(n: int, spacing: float) -> Iterator[Job]:
    for i in range(n):
        yield Job(str(100_000 + i), i * spacing, 1, Delay(10.0), walltime=20.0)


def _peak_bytes(policy: str, n: int, spacing: float) -> int:
    """The most memory a run held at once beyond what was held when it started."""
    with tempfile.TemporaryDirectory() as out:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        simulate(Platform([Node(0, "h0")]), Workload("w0", _jobs(n, spacing)), create_policy(policy), out,
                 delivery=Delivery.BATSIM)
        return tracemalloc.get_traced_memory()[1] - before


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_memory_does_not_grow_with_the_trace_when_jobs_do_not_overlap(policy: str, traced: None) -> None:
    _peak_bytes(policy, 100, 100.0)  # first-run imports and caches
    once = _peak_bytes(policy, SPACED, 100.0)
    twice = _peak_bytes(policy, 2 * SPACED, 100.0)
    assert twice - once < 16 * SPACED, (once, twice)


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_each_queued_job_costs_a_bounded_number_of_bytes(policy: str, traced: None) -> None:
    _peak_bytes(policy, 100, 0.0)
    queue_of_n = _peak_bytes(policy, QUEUED, 0.0)
    queue_of_2n = _peak_bytes(policy, 2 * QUEUED, 0.0)
    assert (queue_of_2n - queue_of_n) / QUEUED < BYTES_PER_QUEUED_JOB[policy], (queue_of_n, queue_of_2n)
