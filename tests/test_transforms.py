"""Workload transformations: each keeps submit order, streams (never reads more than it needs), and does what
its name says on small hand-checked workloads."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from clustersim.errors import InputError
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay, ParallelHomogeneous
from clustersim.workload.stream import SkipReport
from clustersim.workload.transforms import (
    NOTE_CAPPED,
    SKIP_TOO_BIG,
    cap_size,
    scale_load,
    set_walltimes,
    time_window,
)


def job(job_id: int, submit: float, nb_res: int = 1, runtime: float = 10.0, walltime: float | None = 100.0) -> Job:
    return Job(str(job_id), submit, nb_res, Delay(runtime), walltime, profile_name=f"delay{runtime:g}")


JOBS = [job(1, 100, 1), job(2, 110, 4), job(3, 130, 8), job(4, 130, 2), job(5, 200, 16)]


def submits(jobs: Iterator[Job]) -> list[float]:
    return [j.submit_time for j in jobs]


class Counting:
    """An iterator over jobs that counts how many were pulled, to check that transforms stream."""

    def __init__(self, jobs: list[Job]):
        self.jobs = iter(jobs)
        self.pulled = 0

    def __iter__(self) -> Counting:
        return self

    def __next__(self) -> Job:
        item = next(self.jobs)
        self.pulled += 1
        return item


# -- load scaling ------------------------------------------------------------------------------------------


def test_load_scale_divides_interarrival_times_and_keeps_the_first_submission() -> None:
    assert submits(scale_load(JOBS, 2.0)) == [100, 105, 115, 115, 150]


def test_load_scale_below_one_spreads_submissions() -> None:
    assert submits(scale_load(JOBS, 0.5)) == [100, 120, 160, 160, 300]


def test_load_scale_keeps_jobs_other_fields_and_never_mutates_the_input() -> None:
    scaled = list(scale_load(JOBS, 4.0))
    assert [(j.id, j.nb_res, j.walltime, j.key) for j in scaled] == [(j.id, j.nb_res, j.walltime, j.key) for j in JOBS]
    assert submits(iter(JOBS)) == [100, 110, 130, 130, 200]


def test_load_scale_of_one_and_of_an_empty_workload() -> None:
    assert submits(scale_load(JOBS, 1.0)) == submits(iter(JOBS))
    assert list(scale_load([], 2.0)) == []


@pytest.mark.parametrize("factor", [0.0, -1.0, float("inf"), float("nan")])
def test_load_scale_refuses_meaningless_factors(factor: float) -> None:
    with pytest.raises(ValueError, match="load scale"):
        list(scale_load(JOBS, factor))


# -- time window -------------------------------------------------------------------------------------------


def test_time_window_keeps_submissions_in_start_inclusive_end_exclusive() -> None:
    kept = list(time_window(JOBS, 110, 200, shift=False))
    assert [j.id for j in kept] == ["2", "3", "4"]
    assert submits(iter(kept)) == [110, 130, 130]


def test_time_window_shifts_the_window_start_to_zero() -> None:
    assert submits(time_window(JOBS, 110, 200)) == [0, 20, 20]


def test_time_window_without_end_keeps_the_rest_of_the_trace() -> None:
    assert [j.id for j in time_window(JOBS, 130)] == ["3", "4", "5"]


def test_time_window_stops_reading_at_the_first_job_after_the_window() -> None:
    source = Counting(JOBS)
    assert [j.id for j in time_window(source, 0, 111)] == ["1", "2"]
    assert source.pulled == 3


def test_time_window_refuses_an_empty_window() -> None:
    with pytest.raises(ValueError, match="after its start"):
        list(time_window(JOBS, 100, 100))


# -- walltime models ---------------------------------------------------------------------------------------


def test_walltime_requested_passes_jobs_through() -> None:
    assert list(set_walltimes(JOBS, "requested")) == JOBS


def test_walltime_exact_is_the_run_time() -> None:
    jobs = [job(1, 0, runtime=42, walltime=None), job(2, 1, runtime=7.5, walltime=1.0)]
    assert [j.walltime for j in set_walltimes(jobs, "exact")] == [42, 7.5]


def test_walltime_multiplied_is_run_time_times_factor() -> None:
    assert [j.walltime for j in set_walltimes([job(1, 0, runtime=40)], "multiplied", 1.5)] == [60]


def test_walltime_uniform_draws_within_one_and_factor_and_is_reproducible_by_seed() -> None:
    jobs = [job(i, i, runtime=10) for i in range(200)]
    first = [j.walltime for j in set_walltimes(jobs, "uniform", 3.0, rng=random.Random(7))]
    again = [j.walltime for j in set_walltimes(jobs, "uniform", 3.0, rng=random.Random(7))]
    other = [j.walltime for j in set_walltimes(jobs, "uniform", 3.0, rng=random.Random(8))]
    assert first == again != other
    assert all(w is not None and 10 <= w <= 30 for w in first)
    assert min(w for w in first if w is not None) < 12 and max(w for w in first if w is not None) > 28


def test_walltime_uniform_needs_a_generator_and_a_factor_of_at_least_one() -> None:
    with pytest.raises(ValueError, match="random generator"):
        list(set_walltimes(JOBS, "uniform", 2.0))
    with pytest.raises(ValueError, match=">= 1"):
        list(set_walltimes(JOBS, "uniform", 0.5, rng=random.Random(0)))


def test_walltime_exact_of_speed_dependent_profiles_uses_the_platform_speed() -> None:
    flops = Job("1", 0, 2, ParallelHomogeneous(1e10), None, profile_name="p")
    assert [j.walltime for j in set_walltimes([flops], "exact", speed=1e9)] == [10.0]
    with pytest.raises(InputError, match="identical speed"):
        list(set_walltimes([flops], "exact"))


# -- size caps ---------------------------------------------------------------------------------------------


def test_size_cap_caps_bigger_requests_and_counts_them() -> None:
    skips = SkipReport()
    capped = list(cap_size(JOBS, 4, "cap", skips))
    assert [j.nb_res for j in capped] == [1, 4, 4, 2, 4]
    assert skips.notes[NOTE_CAPPED] == 2 and skips.total_skipped == 0


def test_size_cap_drop_leaves_bigger_jobs_out_and_counts_them() -> None:
    skips = SkipReport()
    kept = list(cap_size(JOBS, 4, "drop", skips))
    assert [j.id for j in kept] == ["1", "2", "4"]
    assert skips.skipped[SKIP_TOO_BIG] == 2


def test_size_cap_refuses_a_cap_below_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        list(cap_size(JOBS, 0))


def test_transforms_compose_lazily_in_submit_order() -> None:
    source = Counting(JOBS)
    jobs = set_walltimes(cap_size(scale_load(time_window(source, 100, 150), 2.0), 4), "exact")
    assert source.pulled == 0
    out = list(jobs)
    assert [(j.id, j.submit_time, j.nb_res, j.walltime) for j in out] == [
        ("1", 0, 1, 10), ("2", 5, 4, 10), ("3", 15, 4, 10), ("4", 15, 2, 10)
    ]
