"""Pods (jobs with Kubernetes-style requests) share nodes: the core checks every placement against what is left."""

from __future__ import annotations

import pytest

from clustersim.core.decisions import StartJob
from clustersim.core.sharing import allocatable
from clustersim.errors import DecisionError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Node, Platform
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from conftest import Collector

GIB = 2**30


def pod(job_id: int, submit: float, cpu: int, memory: int, seconds: float) -> Job:
    return Job(str(job_id), submit, 1, Delay(seconds), request={"cpu": cpu, "memory": memory})


def nodes(count: int, cores: int = 2, memory: int = 4 * GIB) -> Platform:
    return Platform([Node(i, f"node{i}", cores=cores, memory=memory) for i in range(count)])


class Placer:
    """Starts each pending pod on a fixed node (by job id), in queue order, when told to."""

    def __init__(self, placement: dict[str, int]):
        self.placement = placement

    def begin(self, view: object) -> None:
        return None

    def decide(self, now, events, view):  # type: ignore[no-untyped-def]
        for job in list(view.pending.values()):
            yield StartJob(job.key, IntervalSet.from_ids([self.placement[job.id]]))

    def end(self, view: object) -> None:
        return None


def test_allocatable_follows_kubernetes_units() -> None:
    node = Node(0, "n", cores=4, memory=8 * GIB, gpus=1, extras={"example.com/fpga": 2, "pods": 20})
    assert allocatable(node) == {
        "cpu": 4000, "memory": 8 * GIB, "pods": 20, "nvidia.com/gpu": 1, "example.com/fpga": 2,
    }


def test_pods_share_a_node_within_its_allocatable() -> None:
    collector = Collector()
    jobs = [pod(1, 0, 1000, GIB, 10), pod(2, 0, 1000, GIB, 20)]
    simulate(nodes(1), Workload.from_jobs(jobs), Placer({"1": 0, "2": 0}), extra_sinks=[collector])
    assert collector.schedule() == {"1": (0, 10, "0"), "2": (0, 20, "0")}


def test_a_pod_that_does_not_fit_is_refused_naming_the_resource() -> None:
    jobs = [pod(1, 0, 1500, GIB, 10), pod(2, 0, 1000, GIB, 10)]
    with pytest.raises(DecisionError, match=r"insufficient cpu \(1000 requested, 500 free\)"):
        simulate(nodes(1), Workload.from_jobs(jobs), Placer({"1": 0, "2": 0}))


def test_a_node_hosting_pods_is_not_free_for_exclusive_jobs_until_its_last_pod_ends() -> None:
    class Mixed:
        def begin(self, view: object) -> None:
            return None

        def decide(self, now, events, view):  # type: ignore[no-untyped-def]
            for job in list(view.pending.values()):
                if job.request is not None:
                    yield StartJob(job.key, IntervalSet.from_ids([0]))
                elif len(view.free) >= job.nb_res:
                    yield StartJob(job.key, view.free.lowest(job.nb_res))

        def end(self, view: object) -> None:
            return None

    collector = Collector()
    jobs = [pod(1, 0, 500, GIB, 10), Job("2", 0, 2, Delay(5), 5)]
    simulate(nodes(2), Workload.from_jobs(jobs), Mixed(), extra_sinks=[collector])
    # The exclusive job needs both nodes: it waits until the pod on node 0 ends.
    assert collector.schedule() == {"1": (0, 10, "0"), "2": (10, 15, "0-1")}


def test_a_pod_cannot_go_on_a_node_an_exclusive_job_holds() -> None:
    class Clash:
        def begin(self, view: object) -> None:
            return None

        def decide(self, now, events, view):  # type: ignore[no-untyped-def]
            yield StartJob("w0!2", IntervalSet.from_ids([0]))
            yield StartJob("w0!1", IntervalSet.from_ids([0]))

        def end(self, view: object) -> None:
            return None

    jobs = [pod(1, 0, 500, GIB, 10), Job("2", 0, 1, Delay(5), 5)]
    with pytest.raises(DecisionError, match="node 0 is held by exclusive jobs"):
        simulate(nodes(1), Workload.from_jobs(jobs), Clash())


def test_pod_count_is_capped_by_the_pods_allocatable() -> None:
    platform = Platform([Node(0, "n", cores=8, memory=8 * GIB, extras={"pods": 2})])
    jobs = [pod(i, 0, 100, 1, 10) for i in range(3)]
    with pytest.raises(DecisionError, match=r"insufficient pods \(1 requested, 0 free\)"):
        simulate(platform, Workload.from_jobs(jobs), Placer({"0": 0, "1": 0, "2": 0}))
