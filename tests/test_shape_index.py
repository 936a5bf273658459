"""ShapeIndex finds the job a walk over the whole queue finds: the first, in queue order, that may backfill; and
the fewest units a queued job needs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clustersim.policies.batch.shapes import ShapeIndex, may_backfill
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

# Each step: queue jobs (units, walltime), start some (by position: 0 is the head), whether the index is told of
# those starts, then one lookup (now, reservation start, free units, units outside the reservation).
STEPS = st.lists(
    st.tuples(
        st.lists(st.tuples(st.integers(1, 6), st.sampled_from([1.0, 2.0, 5.0, None])), max_size=5),
        st.lists(st.integers(0, 8), max_size=3),
        st.booleans(),
        st.tuples(st.sampled_from([0.0, 1.0, 3.0]), st.sampled_from([0.0, 2.0, 4.0, 8.0]), st.integers(0, 7),
                  st.integers(0, 7)),
    ),
    max_size=25,
)


@given(STEPS)
def test_the_first_backfill_is_the_first_job_of_the_queue_that_may(
    steps: list[tuple[list[tuple[int, float | None]], list[int], bool, tuple[float, float, int, int]]],
) -> None:
    pending: dict[str, Job] = {}
    index = ShapeIndex()
    next_id = 0
    for queued, starts, told, (now, start, nb_free, nb_outside) in steps:
        for nb_res, walltime in queued:
            next_id += 1
            job = Job(str(next_id), 0.0, nb_res, Delay(1.0), walltime=walltime)
            pending[job.key] = job
        index.sync(pending)
        for position in starts:
            if position < len(pending):
                key = list(pending)[position]
                del pending[key]
                if told:
                    index.discard(key)
        index.sync(pending)
        nb_outside = min(nb_outside, nb_free)
        expected = next((job for job in pending.values()
                         if may_backfill(job.nb_res, job.walltime, now, start, nb_free, nb_outside)), None)
        assert index.first_backfill(now, start, nb_free, nb_outside) is expected
        assert index.fewest_units() == min((job.nb_res for job in pending.values()), default=0)
