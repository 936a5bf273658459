"""Shared helpers for tests: small platforms and workloads built in memory, and an outcome collector."""

from __future__ import annotations

import csv
import signal
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import settings

from clustersim.core.outcome import JobOutcome
from clustersim.platform.model import Node, Platform
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay, ParallelHomogeneous
from clustersim.workload.stream import Workload

# Hypothesis draws the same examples on every machine, so a CI run is reproducible.
settings.register_profile("clustersim", derandomize=True, database=None, deadline=None)
settings.load_profile("clustersim")

# Ctrl-C as in a terminal, even when the suite runs as a background job (which starts with SIGINT ignored, and
# passes that on to the processes the tests start): the tests of interrupted runs send SIGINT.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def csv_rows(path: Path) -> list[dict[str, str]]:
    """The rows of an output CSV file (jobs.csv, schedule.csv, pods.csv...) as dicts by column name."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def hosts(count: int) -> Platform:
    return Platform([Node(i, f"host{i}") for i in range(count)])


def delay_job(job_id: int, submit: float, nb_res: int, runtime: float, walltime: float | None = None) -> Job:
    """A delay job; its walltime defaults to its run time (perfect estimate)."""
    return Job(
        str(job_id), submit, nb_res, Delay(runtime),
        walltime=runtime if walltime is None else walltime, profile_name=f"delay_{runtime:g}",
    )


def compute_job(job_id: int, submit: float, nb_res: int, runtime: float, walltime: float | None = None) -> Job:
    """A job that computes (parallel_homogeneous) for `runtime` seconds on 1 flop/s units: it loads its hosts to
    full power, where a delay job leaves them idle."""
    return Job(
        str(job_id), submit, nb_res, ParallelHomogeneous(runtime),
        walltime=runtime if walltime is None else walltime, profile_name=f"ph_{runtime:g}",
    )


@dataclass
class Collector:
    """An outcome sink keeping every outcome, by job id."""

    outcomes: dict[str, JobOutcome] = field(default_factory=dict)
    closed: bool = False

    def record(self, outcome: JobOutcome) -> None:
        assert outcome.job.id not in self.outcomes, f"job {outcome.job.id} ended twice"
        self.outcomes[outcome.job.id] = outcome

    def close(self) -> None:
        self.closed = True

    def schedule(self) -> dict[str, tuple[float | None, float | None, str]]:
        """job id -> (start, finish, allocation) for compact assertions."""
        return {k: (o.start, o.finish, str(o.resources)) for k, o in sorted(self.outcomes.items())}


def run_policy(policy: str, platform: Platform, jobs: list[Job]) -> Collector:
    collector = Collector()
    simulate(platform, Workload.from_jobs(jobs), create_policy(policy), extra_sinks=[collector])
    assert collector.closed
    return collector


@pytest.fixture
def collector() -> Collector:
    return Collector()


@pytest.fixture(scope="module")
def slurm_installed() -> None:
    """Real Slurm for the tests that run it on loopback: apt-installed on first use, skipped only where impossible."""
    from clustersim.slurm.cluster import SlurmUnavailable, ensure_installed

    try:
        ensure_installed()
    except SlurmUnavailable as error:
        pytest.skip(f"Slurm is not installed and cannot be installed here: {error}")
