"""Kubernetes inputs: quantities, Pod/Job/Node manifests, Batkube's Batsim JSON, SWF as cpu requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clustersim._io.quantities import parse_bytes, parse_millicores
from clustersim.errors import InputError
from clustersim.kubernetes import load_kube_platform, load_pod_workload, pod_spec
from clustersim.kubernetes.manifests import parse_duration
from clustersim.platform.kube_labels import node_taints

MANIFESTS = """
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations: {clustersim.io/duration: 2m30s, clustersim.io/arrival: 5s}
spec:
  schedulerName: my-scheduler
  priority: 10
  nodeSelector: {disk: ssd}
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: a
    resources: {requests: {cpu: 500m, memory: 1Gi}}
  - name: b
    resources: {requests: {cpu: "1.5"}, limits: {nvidia.com/gpu: 1}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  completions: 4
  parallelism: 2
  template:
    metadata: {annotations: {clustersim.io/duration: 170s}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""


def test_quantities_are_exact_and_bad_ones_rejected() -> None:
    assert parse_millicores("100m") == 100
    assert parse_millicores("1.5") == 1500
    assert parse_bytes("500Mi") == 500 * 2**20
    assert parse_bytes("2Gi") == 2 * 2**30
    assert parse_bytes("1e3") == 1000
    with pytest.raises(ValueError, match="not a quantity"):
        parse_millicores("1.5 cores")


def test_durations_in_go_syntax() -> None:
    assert parse_duration("170s") == 170
    assert parse_duration("2m30s") == 150
    assert parse_duration("1h") == 3600
    assert parse_duration(12) == 12
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("soon")


def test_pod_and_job_manifests(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(MANIFESTS)
    pods = load_pod_workload(path)
    jobs = list(pods.workload.jobs)
    names = [pod_spec(j).name for j in jobs]
    assert names == ["batch-0", "batch-1", "web"]  # submit order; batch arrives at 0, web at 5
    web = jobs[2]
    assert web.submit_time == 5 and web.profile.seconds == 150  # type: ignore[attr-defined]
    assert web.request == {"cpu": 2000, "memory": 2**30, "nvidia.com/gpu": 1}
    spec = pod_spec(web)
    assert (spec.scheduler_name, spec.priority, dict(spec.node_selector)) == ("my-scheduler", 10, {"disk": "ssd"})
    assert [pod_spec(j).name for j in pods.held["batch"]] == ["batch-2", "batch-3"]


def test_a_schedule_file_sets_arrivals(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(MANIFESTS)
    (tmp_path / "s.yaml").write_text("web: 1m\nbatch: 30\n")
    jobs = list(load_pod_workload(tmp_path / "w.yaml", schedule=tmp_path / "s.yaml").workload.jobs)
    assert [(pod_spec(j).name, j.submit_time) for j in jobs] == [("batch-0", 30), ("batch-1", 30), ("web", 60)]


def test_job_parallelism_releases_held_pods_on_completion(tmp_path: Path) -> None:
    from clustersim.kubernetes.controller import JobController
    from clustersim.platform.model import Node, Platform
    from clustersim.policies.registry import create_policy
    from clustersim.runner import simulate

    (tmp_path / "w.yaml").write_text(MANIFESTS)
    pods = load_pod_workload(tmp_path / "w.yaml")
    platform = Platform([Node(i, f"n{i}", cores=8, memory=8 * 2**30, gpus=1, properties={"disk": "ssd"})
                         for i in range(2)])
    from conftest import Collector

    collector = Collector()
    simulate(platform, pods.workload, JobController(create_policy("kube"), pods.held), extra_sinks=[collector])
    starts = {pod_spec(o.job).name: o.start for o in collector.outcomes.values()}
    assert starts == {"batch-0": 0, "batch-1": 0, "batch-2": 170, "batch-3": 170, "web": 5}


def test_batkube_batsim_json_profile_fields(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({
        "nb_res": 1,
        "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "delay10"},
                 {"id": "2", "subtime": 3.4, "res": 1, "profile": "delay10"}],
        "profiles": {"delay10": {"type": "delay", "delay": 10, "scheduler": "default", "cpu": "1.5",
                                 "memory": "500Mi"}},
    }))
    jobs = list(load_pod_workload(path).workload.jobs)
    assert [j.request for j in jobs] == [{"cpu": 1500, "memory": 500 * 2**20}] * 2
    assert pod_spec(jobs[0]).scheduler_name == "default"


def test_swf_jobs_become_cpu_requests(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    jobs = list(load_pod_workload(path).workload.jobs)
    assert jobs[0].request == {"cpu": 2000}


def test_nodes_from_manifests_with_labels_and_taints(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("""
kind: Node
apiVersion: v1
metadata: {name: big, labels: {disk: ssd}}
spec: {taints: [{key: gpu, value: "true", effect: NoSchedule}]}
status: {capacity: {cpu: "8", memory: 32Gi, pods: "20", nvidia.com/gpu: "2"}}
""")
    platform = load_kube_platform(path)
    node = platform.nodes[0]
    assert (node.name, node.cores, node.memory, node.gpus, dict(node.extras)) == ("big", 8, 32 * 2**30, 2, {"pods": 20})
    assert node.properties["disk"] == "ssd"
    assert [t.key for t in node_taints(node)] == ["gpu"]


def test_bad_quantity_in_a_manifest_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{resources: {requests: {cpu: lots}}}]\n")
    with pytest.raises(InputError, match=r"requests\.cpu.*not a quantity"):
        load_pod_workload(path)
