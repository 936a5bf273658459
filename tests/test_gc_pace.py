"""Runs collect garbage at a slower pace, and give the caller's pace back, even when runs overlap or fail."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from clustersim.core.decisions import Decision
from clustersim.core.events import Event
from clustersim.core.gc_pace import YOUNG_THRESHOLD, fewer_collections
from clustersim.core.state import ClusterView
from clustersim.platform.model import Node, Platform
from clustersim.policies.batch.fcfs import Fcfs
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload


def test_the_pace_is_slower_during_overlapping_runs_and_restored_after_the_last() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()  # a run of another test's thread may be on
    with fewer_collections():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
        assert gc.get_freeze_count() > 0  # what existed before the run is out of the collections
        with fewer_collections():
            pass
        assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD)  # the other run is still on
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("a failed run")
    assert gc.get_threshold() == before


class Watching(Fcfs):
    """FCFS, noting the collector's young threshold at each decision."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[int] = []

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self.seen.append(gc.get_threshold()[0])
        return super().decide(now, events, view)


def test_a_simulation_runs_at_the_slower_pace(tmp_path: Path) -> None:
    before = gc.get_threshold()
    policy = Watching()
    workload = Workload("one", iter([Job("0", 0.0, 1, Delay(1.0), 2.0)]))
    simulate(Platform([Node(0, "h0")]), workload, policy, tmp_path)
    assert policy.seen and all(young == max(before[0], YOUNG_THRESHOLD) for young in policy.seen)
    assert gc.get_threshold() == before
