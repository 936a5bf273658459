"""ScheduleMetrics' running sums and maxima: kept as fields, read by name through `sums` and `maxima`."""

from __future__ import annotations

from clustersim.core.events import FinalState
from clustersim.core.outcome import JobOutcome
from clustersim.intervals import IntervalSet
from clustersim.records.metrics import ScheduleMetrics
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay


def _outcome(submit: float, start: float | None, finish: float | None) -> JobOutcome:
    job = Job(f"j{submit}", submit, 2, Delay(1.0), 100.0)
    state = FinalState.REJECTED if start is None else FinalState.COMPLETED_SUCCESSFULLY
    return JobOutcome(job, state, start, finish, IntervalSet() if start is None else IntervalSet([(0, 1)]))


def test_sums_and_maxima_by_name_are_the_running_fields_over_the_jobs_that_ran() -> None:
    metrics = ScheduleMetrics(4)
    for outcome in (_outcome(0.0, 5.0, 25.0), _outcome(1.0, 1.0, 3.0), _outcome(2.0, None, None)):
        metrics.record(outcome)
    # waits 5 and 0; turnarounds 25 and 2; slowdowns 25/20 and 2/2; bounded slowdowns 25/20 and 2/10 -> 1
    assert metrics.sums == {"waiting": 5.0, "turnaround": 27.0, "slowdown": 2.25, "bounded_slowdown": 2.25}
    assert metrics.maxima == {"waiting": 5.0, "turnaround": 25.0, "slowdown": 1.25, "bounded_slowdown": 1.25}
    assert (metrics.sum_waiting, metrics.max_turnaround) == (5.0, 25.0)
    assert metrics.mean("turnaround") == 13.5  # over the 2 jobs that ran
    assert metrics.batsim_mean("turnaround") == 9.0  # over the 3 jobs, the rejected one counting 0
