"""The built-in `kube` policy's scheduling queue as kube-scheduler v1.34's: the pace of a pass under the facade,
the queueing hints (which cluster event moves which unschedulable pod) and the 5-minute flush, on hand-computed
cases; and the workload generator's manifests."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.kubernetes import PodSpec, Toleration, make_pod
from clustersim.kubernetes.sources import load_kube_platform, load_pod_workload
from clustersim.kubernetes.synthetic import main as synthetic_main
from clustersim.kubernetes.synthetic import saturated
from clustersim.platform.kube_labels import TAINTS_PROPERTY
from clustersim.platform.model import Node, Platform
from clustersim.policies.kube import KubePolicy
from clustersim.policies.kube.bands import BandQueue
from clustersim.policies.kube.queue import SchedulingQueue
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.stream import Workload
from conftest import Collector

GIB = 2**30


def cursor_case() -> tuple[Platform, list[Job]]:
    """One node of 4 cpu. At t=0, x (3 cpu, 10 s) and y (1 cpu, 20 s) start; a (4 cpu), b (3), c (2), d (2),
    10 s each, fail in that order. At t=10 x ends: a fails, b starts; c and d fit nowhere now."""
    cpus = {"x": 3, "y": 1, "a": 4, "b": 3, "c": 2, "d": 2}
    durations = {"y": 20.0}
    pods = [make_pod(PodSpec(name), {"cpu": 1000 * cpu}, durations.get(name, 10.0), job_id=f"{i}{name}")
            for i, (name, cpu) in enumerate(cpus.items())]
    return Platform([Node(0, "n", cores=4, memory=GIB)]), pods


def starts(collector: Collector) -> dict[str, float | None]:
    return {key[1:]: outcome.start for key, outcome in collector.outcomes.items()}


def run(platform: Platform, pods: list[Job], policy: KubePolicy) -> Collector:
    collector = Collector()
    simulate(platform, Workload.from_jobs(pods), policy, extra_sinks=[collector], report_pending=True)
    return collector


def test_a_pass_stops_when_no_queued_pod_fits_and_resumes_there() -> None:
    """The facade moves time on once every pod that fits is bound: kube-scheduler has not reached c and d (they
    fit nowhere), so they stay ahead of a, which failed at t=10; at t=20 (y and b end) c and d start, a at 30.
    Drained (every pod tried at t=10), a failed before c and d and starts first."""
    platform, pods = cursor_case()
    paced = run(platform, pods, KubePolicy(drain="false"))
    assert starts(paced) == {"x": 0, "y": 0, "a": 30, "b": 10, "c": 20, "d": 20}
    platform, pods = cursor_case()
    drained = run(platform, pods, KubePolicy())
    assert starts(drained) == {"x": 0, "y": 0, "a": 20, "b": 10, "c": 30, "d": 30}


def test_a_pod_end_moves_only_pods_refused_for_room_and_a_flush_moves_the_rest_after_5_minutes() -> None:
    """`tainted` wants the only node labelled gpu, whose taint it does not tolerate: no pod's end can change
    that (TaintToleration's hint skips pod deletions), so it is tried at arrival and then only when it has been
    unschedulable for 5 minutes (at the first decision from t=300 on, then t=600); `big` (refused for room) is
    tried again at every pod end. (Drained, so that every moved pod is tried: paced, a pod that fits nowhere
    stays in the active queue untried, as the facade does not wait for the scheduler to reach it.)"""
    platform = Platform([Node(0, "plain", cores=2, memory=GIB),
                         Node(1, "gpu", cores=2, memory=GIB, properties={"accel": "gpu",
                                                                          TAINTS_PROPERTY: "gpu=true:NoSchedule"})])
    pods = [make_pod(PodSpec("tainted", node_selector={"accel": "gpu"}), {"cpu": 100}, 5, job_id="tainted"),
            make_pod(PodSpec("big"), {"cpu": 4000}, 5, job_id="big")]
    pods += [make_pod(PodSpec(f"s{i}"), {"cpu": 100}, 5, 10.0 * i, job_id=f"s{i:03d}") for i in range(70)]
    policy = KubePolicy(drain=True)
    collector = run(platform, pods, policy)
    assert collector.outcomes["tainted"].start is None and collector.outcomes["big"].start is None
    attempts = {queued.pod.key.split("!")[-1]: queued.attempts for queued in policy.queue.parked()}
    assert attempts == {"tainted": 3, "big": 71}


def test_a_node_change_moves_every_unschedulable_pod() -> None:
    policy = KubePolicy()
    platform = Platform([Node(0, "n", cores=1, memory=GIB)])
    pods = [make_pod(PodSpec("picky", node_selector={"disk": "ssd"}), {"cpu": 100}, 5, job_id="picky")]
    simulate(platform, Workload.from_jobs(pods), policy)
    policy.relabel("n", {"disk": "ssd"}, ())
    assert policy.queue.cluster_changed(1.0, pod_ended=False, node_changed=policy._node_changed) is None
    assert len(policy.queue) == 1 and policy.queue.parked() == []


def test_the_generator_writes_manifests_that_load_back_to_the_same_run(tmp_path: Path) -> None:
    synthetic_main(["120", "6", "--seed", "3", "-o", str(tmp_path)])
    platform, pods = saturated(120, 6, seed=3)
    direct = simulate(platform, Workload.from_jobs(pods), create_policy("kube")).metrics
    loaded = simulate(load_kube_platform(tmp_path / "nodes.yaml"),
                      load_pod_workload(tmp_path / "pods.yaml").workload, create_policy("kube")).metrics
    assert (loaded.makespan, loaded.mean("waiting"), loaded.nb_finished) == (
        direct.makespan, direct.mean("waiting"), 120)
    assert {p.request["cpu"] for p in pods} == {250, 500, 1000, 2000}  # type: ignore[index]
    assert saturated(120, 6, seed=3)[1][7].request == pods[7].request and saturated(120, 6, seed=4)[1] != pods


node_kinds = st.tuples(st.sampled_from([1, 2]), st.sampled_from(["a", "b"]), st.booleans())
"""cores, zone, tainted."""
pod_kinds = st.tuples(
    st.sampled_from([500, 1000, 2000]), st.sampled_from([0, 0, 5]), st.sampled_from(["", "", "", "a", "c"]),
    st.booleans(), st.integers(1, 400), st.sampled_from([0, 0, 0, 0, 1, 50, 400]))
"""cpu, priority, zone wanted ("c": none has it, so no pod's end can help), tolerates the taint, duration, gap
since the previous pod (long gaps let the 5-minute flush happen)."""


@settings(max_examples=100, deadline=None)
@given(st.lists(node_kinds, min_size=1, max_size=4), st.lists(pod_kinds, min_size=30, max_size=80))
def test_the_queue_by_bands_decides_as_the_queue_pod_by_pod(nodes: list[tuple[int, str, bool]],
                                                            pods: list[tuple[int, int, str, bool, int, int]]) -> None:
    """Pods of a few signatures and priorities, some refused for room and some for their selector or a taint, on
    nodes a pod's end frees: `BandQueue` with the node columns (the default) and `SchedulingQueue` without backoff
    with the plugins, node by node, start every pod at the same time on the same node, and leave the same pods
    queued with the same attempts and reasons (the columns bring a signature's last failure up to date from the
    nodes changed since)."""
    platform = Platform([Node(i, f"n{i}", cores=cores, memory=GIB, properties={
        "zone": zone, **({TAINTS_PROPERTY: "gpu=true:NoSchedule"} if tainted else {})})
        for i, (cores, zone, tainted) in enumerate(nodes)])
    jobs, time = [], 0.0
    for i, (cpu, priority, zone, tolerates, duration, gap) in enumerate(pods):
        time += gap
        spec = PodSpec(f"p{i}", priority=priority, node_selector={"zone": zone} if zone else {},
                       tolerations=(Toleration("gpu", "Exists"),) if tolerates else ())
        jobs.append(make_pod(spec, {"cpu": cpu}, float(duration), time, job_id=f"{i:03d}"))
    banded, reference = KubePolicy(), KubePolicy()
    assert isinstance(banded.queue, BandQueue)
    reference.queue, reference.vectorized = SchedulingQueue(0.0, 0.0), False
    runs = [run(platform, jobs, policy) for policy in (banded, reference)]
    assert runs[0].schedule() == runs[1].schedule()
    assert banded.reasons == reference.reasons
    assert ({q.pod.key: q.attempts for q in banded.queue.parked()}
            == {q.pod.key: q.attempts for q in reference.queue.parked()})
