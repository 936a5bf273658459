"""The queue stays in order when jobs leave it and it is compacted (`ClusterState.unqueue`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.core.state import ClusterState
from clustersim.platform.model import Node, Platform
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

# Each step: how many jobs are queued, then which queued jobs leave (by position, modulo the queue's length).
STEPS = st.lists(st.tuples(st.integers(0, 40), st.lists(st.integers(0, 10**6), max_size=40)), max_size=60)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(STEPS)
def test_the_queue_keeps_submit_order_across_compactions(steps: list[tuple[int, list[int]]]) -> None:
    state = ClusterState(Platform([Node(0, "h0")]))
    model: list[str] = []
    next_id = 0
    for added, leaving in steps:
        for _ in range(added):
            job = Job(str(next_id), 0.0, 1, Delay(1.0))
            next_id += 1
            state.pending[job.key] = job
            model.append(job.key)
        for position in leaving:
            if model:
                key = model.pop(position % len(model))
                assert state.unqueue(key).key == key
        assert list(state.pending) == model
        assert next(iter(state.pending), None) == (model[0] if model else None)


def test_a_long_fifo_queue_is_compacted() -> None:
    """Jobs leave from the head of a queue of 10,000: the dict is compacted again and again (each time the
    holes number sqrt(128 x its length), about 1,100), so finding the head never walks 10,000 holes."""
    state = ClusterState(Platform([Node(0, "h0")]))
    keys = []
    for i in range(20_000):
        job = Job(str(i), 0.0, 1, Delay(1.0))
        state.pending[job.key] = job
        keys.append(job.key)
    compactions = 0
    for key in keys[:10_000]:
        holes = state._holes
        state.unqueue(key)
        compactions += state._holes < holes
        assert state._holes <= 1_700
    assert compactions >= 5
    assert list(state.pending) == keys[10_000:]
