"""RunningByEnd keeps the running jobs in the order a full sort by expected end gives (ties in start order)."""

from __future__ import annotations

from operator import attrgetter

from hypothesis import given
from hypothesis import strategies as st

from clustersim.core.state import RunningJob
from clustersim.intervals import IntervalSet
from clustersim.policies.batch.ends import RunningByEnd
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

# Each step: start jobs (their walltimes), end some running jobs (by position), and whether the index is told.
STEPS = st.lists(
    st.tuples(
        st.lists(st.sampled_from([1.0, 2.0, 5.0, 10.0, None]), max_size=4),
        st.lists(st.integers(0, 10), max_size=3),
        st.booleans(),
    ),
    max_size=25,
)


@given(STEPS)
def test_the_index_is_the_running_jobs_sorted_by_expected_end(
    steps: list[tuple[list[float | None], list[int], bool]],
) -> None:
    running: dict[str, RunningJob] = {}
    index = RunningByEnd()
    now, next_id = 0.0, 0
    for walltimes, ends, told in steps:
        now += 1.0
        ended = []
        for position in ends:
            if position < len(running):
                key = list(running)[position]
                del running[key]
                ended.append(key)
        if told:
            index.forget(ended)
        for walltime in walltimes:
            next_id += 1
            job = Job(str(next_id), 0.0, 1, Delay(1.0), walltime=walltime)  # None: unlimited, ends at inf
            running[job.key] = RunningJob(job, now, IntervalSet.range(next_id, next_id + 1))
        index.sync(running)
        assert list(index) == sorted(running.values(), key=attrgetter("expected_end"))
