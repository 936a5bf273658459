"""The node tracker's flat lists (kept until a policy asks for the nodes of a state) give what its dicts give.

A tracker asked for its dicts at the start and one asked only at the end go through the same random sequence of
job starts and ends (whole allocations of idle hosts, released later) and power moves (an idle host switches off,
a sleeping one on): their states, counts, node-seconds per state and the members of each state, in order, with
the time each entered it, must be identical.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.core.nodes import NodeState, NodeTracker
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform, Unit

HOSTS = 12


def _snapshot(tracker: NodeTracker) -> list[object]:
    return [
        [tracker.state(node) for node in range(HOSTS)],
        [(tracker.count(s), tracker.units_in(s), tracker.seconds_in(s)) for s in NodeState],
        [list(tracker.members(s).items()) for s in NodeState],
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sets(st.integers(0, HOSTS - 1), max_size=6),
                          st.floats(0, 10, allow_nan=False)), max_size=40))
def test_flat_lists_give_the_dicts_order_counts_and_seconds(steps: list[tuple[int, set[int], float]]) -> None:
    platform = Platform([Node(i, f"host{i}") for i in range(HOSTS)])
    early, late = NodeTracker(platform), NodeTracker(platform)
    early.members(NodeState.IDLE)  # builds the dicts now: kept up to date from here on
    running: list[IntervalSet] = []
    now = 0.0
    for action, hosts, elapsed in steps:
        now += elapsed
        idle = sorted(h for h in hosts if early.state(h) is NodeState.IDLE)
        if action == 0 and idle:  # a job starts on the idle hosts drawn
            job = IntervalSet.from_ids(idle)
            running.append(job)
            for tracker in (early, late):
                tracker.occupy(job, now)
        elif action == 1 and running:  # the oldest running job ends
            job = running.pop(0)
            for tracker in (early, late):
                tracker.release(job, now)
        elif action == 2 and idle:  # idle hosts switch off, then are asleep
            for tracker in (early, late):
                for host in idle:
                    tracker.move(host, NodeState.SWITCHING_OFF, now)
                for host in reversed(idle):
                    tracker.move(host, NodeState.SLEEPING, now)
        elif action == 3:  # sleeping hosts wake up
            for host in sorted(hosts):
                if early.state(host) is NodeState.SLEEPING:
                    for tracker in (early, late):
                        tracker.move(host, NodeState.IDLE, now)
        assert [late.count(s) for s in NodeState] == [early.count(s) for s in NodeState]
    assert _snapshot(late) == _snapshot(early)
    # once built, the late tracker's dicts stay in step too
    for job in running:
        for tracker in (early, late):
            tracker.release(job, now + 1.0)
    assert _snapshot(late) == _snapshot(early)


def test_a_multicore_node_computes_while_any_of_its_cores_is_busy() -> None:
    tracker = NodeTracker(Platform([Node(0, "n0", cores=4), Node(1, "n1", cores=4)], Unit.CORE))
    tracker.occupy(IntervalSet.range(0, 2), 1.0)  # two cores of n0
    tracker.occupy(IntervalSet.range(2, 3), 2.0)  # a third
    assert tracker.state(0) is NodeState.COMPUTING and tracker.units_in(NodeState.COMPUTING) == 4
    tracker.release(IntervalSet.range(0, 2), 3.0)
    assert tracker.state(0) is NodeState.COMPUTING
    tracker.release(IntervalSet.range(2, 3), 5.0)
    assert tracker.state(0) is NodeState.IDLE and tracker.count(NodeState.IDLE) == 2
    assert tracker.seconds_in(NodeState.COMPUTING) == 4.0  # n0 from 1 to 5
    assert tracker.seconds_in(NodeState.IDLE) == 1.0  # n0 from 0 to 1 (n1's period is not over)
    assert list(tracker.members(NodeState.IDLE).items()) == [(1, 0.0), (0, 5.0)]
