"""The built-in `kube` policy: Batkube's experiments with exact, hand-computed results, and each plugin's rule."""

from __future__ import annotations

import pytest

from clustersim.kubernetes import PodSpec, Requirement, Taint, Toleration, batkube_platform, batkube_pods, make_pod
from clustersim.platform.kube_labels import TAINTS_PROPERTY, format_taints, parse_taints
from clustersim.platform.model import Node, Platform
from clustersim.policies.kube import nodes_to_find
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from conftest import Collector

GIB = 2**30


def run(platform: Platform, pods: list, **options: object) -> Collector:  # type: ignore[type-arg]
    collector = Collector()
    simulate(platform, Workload.from_jobs(pods), create_policy("kube", **options), extra_sinks=[collector])
    return collector


def node_of(collector: Collector, platform: Platform, job_id: str) -> str:
    return platform.node_of(collector.outcomes[job_id].resources.intervals[0][0]).name


def ideal(kind: str, count: int = 200, nodes: int = 16, duration: float = 170.0, spacing: float = 10.0) -> tuple:
    """FIFO on identical one-pod nodes: pod i starts when pod i-16 ends, or on arrival (by hand, see docs)."""
    gap = spacing if kind == "spaced" else 0.0
    starts: list[float] = []
    for i in range(count):
        arrival = i * gap
        starts.append(max(arrival, starts[i - nodes] + duration) if i >= nodes else arrival)
    waits = [s - i * gap for i, s in enumerate(starts)]
    return max(starts) + duration, sum(waits) / count


def test_ideal_figures_are_the_hand_computed_ones() -> None:
    # burst: 13 waves of 16 (the last of 8): makespan 13 x 170; wave k waits 170 k.
    assert ideal("burst") == (2210.0, (16 * 170 * sum(range(12)) + 8 * 170 * 12) / 200)
    assert ideal("burst") == (2210.0, 979.2)
    # spaced: pod i waits 10 x (i // 16); the last pod (i = 199) starts at 170 x 12 + 10 x 7.
    assert ideal("spaced") == (170 * 12 + 10 * 7 + 170, 57.6)


@pytest.mark.parametrize("kind", ["burst", "spaced"])
def test_batkube_experiments_reach_the_ideal_schedule(kind: str) -> None:
    platform = batkube_platform()
    collector = run(platform, batkube_pods(kind))
    outcomes = collector.outcomes.values()
    makespan = max(o.finish for o in outcomes if o.finish is not None)
    mean_wait = sum(o.start - o.job.submit_time for o in outcomes if o.start is not None) / 200
    assert (makespan, mean_wait) == ideal(kind)


def test_create_policy_kube_works_with_defaults_and_is_deterministic() -> None:
    platform = Platform([Node(i, f"n{i}", cores=4, memory=8 * GIB) for i in range(5)])
    pods = [make_pod(PodSpec(f"p{i}"), {"cpu": 500 * (1 + i % 3), "memory": GIB}, 10 + i, i // 4) for i in range(40)]
    first = run(platform, pods).schedule()
    assert first == run(platform, [make_pod(PodSpec(f"p{i}"), {"cpu": 500 * (1 + i % 3), "memory": GIB}, 10 + i,
                                            i // 4) for i in range(40)]).schedule()


def test_least_allocated_spreads_and_most_allocated_packs() -> None:
    platform = Platform([Node(i, f"n{i}", cores=4, memory=8 * GIB) for i in range(2)])

    def pods() -> list:  # type: ignore[type-arg]
        return [make_pod(PodSpec(f"p{i}"), {"cpu": 1000, "memory": GIB}, 10) for i in range(2)]

    spread = run(platform, pods())
    assert {node_of(spread, platform, "p0"), node_of(spread, platform, "p1")} == {"n0", "n1"}
    packed = run(platform, pods(), strategy="MostAllocated")
    assert node_of(packed, platform, "p0") == node_of(packed, platform, "p1") == "n0"


def test_node_selector_affinity_taints_and_node_name_filter_nodes() -> None:
    nodes = [
        Node(0, "plain", cores=2, memory=GIB),
        Node(1, "gpu", cores=2, memory=GIB, properties={"accel": "gpu", TAINTS_PROPERTY: "gpu=true:NoSchedule"}),
        Node(2, "ssd", cores=2, memory=GIB, properties={"disk": "ssd", "zone": "b"}),
    ]
    platform = Platform(nodes)
    pods = [
        make_pod(PodSpec("selector", node_selector={"disk": "ssd"}), {"cpu": 100}, 5),
        make_pod(PodSpec("untolerated", node_selector={"accel": "gpu"}), {"cpu": 100}, 5),
        make_pod(PodSpec("tolerated", node_selector={"accel": "gpu"},
                         tolerations=(Toleration("gpu", "Equal", "true", "NoSchedule"),)), {"cpu": 100}, 5),
        make_pod(PodSpec("affinity", required_terms=((Requirement("zone", "In", ("a", "b")),),)), {"cpu": 100}, 5),
        make_pod(PodSpec("named", node_name="plain"), {"cpu": 100}, 5),
    ]
    collector = run(platform, pods)
    assert node_of(collector, platform, "selector") == "ssd"
    assert node_of(collector, platform, "tolerated") == "gpu"
    assert node_of(collector, platform, "affinity") == "ssd"
    assert node_of(collector, platform, "named") == "plain"
    assert collector.outcomes.get("untolerated") is None  # never placed: the gpu node's taint repels it


def test_pod_count_caps_a_node_and_unschedulable_pods_wait_for_a_completion() -> None:
    platform = Platform([Node(0, "n", cores=8, memory=GIB, extras={"pods": 2})])
    pods = [make_pod(PodSpec(f"p{i}"), {"cpu": 100}, 10 * (i + 1)) for i in range(3)]
    collector = run(platform, pods)
    assert collector.schedule() == {"p0": (0, 10, "0"), "p1": (0, 20, "0"), "p2": (10, 40, "0")}


def test_priority_orders_the_queue_before_creation_time() -> None:
    platform = Platform([Node(0, "n", cores=1, memory=GIB)])
    pods = [make_pod(PodSpec("low"), {"cpu": 1000}, 10, 0), make_pod(PodSpec("first"), {"cpu": 1000}, 10, 0),
            make_pod(PodSpec("high", priority=100), {"cpu": 1000}, 10, 0)]
    collector = run(platform, pods)
    assert collector.outcomes["high"].start == 0


def test_seeded_random_tie_break_is_reproducible() -> None:
    platform = batkube_platform(nodes=8)
    a = run(platform, batkube_pods("burst", count=8), seed=3).schedule()
    b = run(platform, batkube_pods("burst", count=8), seed=3).schedule()
    assert a == b
    lowest = run(platform, batkube_pods("burst", count=8)).schedule()
    assert [v[2] for v in lowest.values()] == [str(i) for i in range(8)]  # pod-i -> node i: lowest id first


def test_percentage_of_nodes_to_score_follows_kube_scheduler() -> None:
    assert nodes_to_find(50, 0) == 50
    assert nodes_to_find(5000, 0) == 5000 * 10 // 100  # 50 - 5000/125 = 10 %
    assert nodes_to_find(100_000, 0) == 5000  # at least 5 %
    assert nodes_to_find(150, 0) == 100  # at least 100 nodes


def test_taints_round_trip_and_bad_ones_are_explained() -> None:
    taints = (Taint("gpu", "true", "NoSchedule"), Taint("dedicated", "", "NoExecute"))
    assert parse_taints(format_taints(taints)) == taints
    with pytest.raises(ValueError, match="is not a taint"):
        parse_taints("gpu=true:Sometimes")


def test_jobs_without_requests_are_rejected_with_a_reason() -> None:
    from conftest import delay_job

    collector = run(batkube_platform(nodes=2), [delay_job(1, 0, 1, 10)])
    assert collector.outcomes["1"].metadata.startswith("kube: not a pod")
