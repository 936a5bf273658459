"""The API facade driven by real clients: the official Python client, a scheduler built on it, and kubectl."""

from __future__ import annotations

import contextlib
import datetime
import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

kubernetes = pytest.importorskip("kubernetes", reason="the official Python client is in the [dev] extra")
from kubernetes import client, config, watch  # noqa: E402

from clustersim.kubernetes import (  # noqa: E402
    KubeSession,
    PodWorkload,
    TimeControl,
    batkube_platform,
    batkube_pods,
)
from clustersim.kubernetes.client_scheduler import ClientScheduler  # noqa: E402
from clustersim.kubernetes.records import PodsCsvWriter  # noqa: E402
from clustersim.policies.registry import create_policy  # noqa: E402
from clustersim.runner import simulate  # noqa: E402
from clustersim.workload.stream import Workload  # noqa: E402
from conftest import csv_rows  # noqa: E402

SCHEDULER_RESOURCES = [
    "/api/v1/pods", "/api/v1/nodes", "/api/v1/namespaces", "/api/v1/persistentvolumes",
    "/api/v1/persistentvolumeclaims", "/api/v1/services", "/api/v1/replicationcontrollers",
    "/apis/storage.k8s.io/v1/storageclasses", "/apis/storage.k8s.io/v1/csinodes", "/apis/storage.k8s.io/v1/csidrivers",
    "/apis/storage.k8s.io/v1/csistoragecapacities", "/apis/apps/v1/replicasets", "/apis/apps/v1/statefulsets",
    "/apis/policy/v1/poddisruptionbudgets",
]


def session_for(tmp_path: Path, kind: str = "burst", count: int = 200, nodes: int = 16,
                **control: float) -> KubeSession:
    pods = PodWorkload(Workload.from_jobs(batkube_pods(kind, count=count)))
    timing = TimeControl(**{"deadlock_timeout": 20.0, **control})  # type: ignore[arg-type]
    return KubeSession(batkube_platform(nodes=nodes), pods, tmp_path / "out", timing, port=0)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[KubeSession, client.CoreV1Api]]:
    """A facade with 4 pods on 2 nodes and no scheduler yet; stopped afterwards."""
    session = session_for(tmp_path, count=4, nodes=2).start()
    try:
        published(session, 4)
        api_client = config.new_client_from_config(str(session.kubeconfig))
        yield session, client.CoreV1Api(api_client)
    finally:
        session.stop()


def published(session: KubeSession, pods: int) -> None:
    """Wait until the simulation thread has published its pods (it starts concurrently with the server)."""
    deadline = time.monotonic() + 10
    while len(get(session.url + "/api/v1/pods")[1]["items"]) < pods and time.monotonic() < deadline:
        time.sleep(0.01)


def get(url: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def run_client_scheduler(session: KubeSession, late: float = 0.0) -> tuple[list[dict[str, str]], ClientScheduler]:
    """Run the Python-client scheduler (`late` seconds after the session) against the session; fails at once,
    with its error, if the scheduler dies."""
    scheduler = ClientScheduler(config.new_client_from_config(str(session.kubeconfig)))
    died: list[BaseException] = []

    def schedule() -> None:
        try:
            scheduler.run()
        except BaseException as error:
            died.append(error)

    thread = threading.Thread(target=schedule, daemon=True)
    session.start()
    time.sleep(late)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(TimeoutError):
                session.wait(0.2)
                break
            if died:
                raise AssertionError("the client scheduler died") from died[0]
            assert time.monotonic() < deadline, "the simulation is still running after 120 s"
    finally:
        scheduler.stop.set()
        session.stop()
        thread.join(10)
    return csv_rows(session.output / "pods.csv"), scheduler


def builtin_pods_csv(tmp_path: Path, kind: str, count: int = 200) -> list[dict[str, str]]:
    platform = batkube_platform()
    out = tmp_path / f"builtin-{kind}.csv"
    simulate(platform, Workload.from_jobs(batkube_pods(kind, count=count)), create_policy("kube"),
             extra_sinks=[PodsCsvWriter(out, platform)])
    return csv_rows(out)


def summary(rows: list[dict[str, str]]) -> tuple[float, float]:
    makespan = max(float(r["finish_time"]) for r in rows)
    return makespan, sum(float(r["waiting_time"]) for r in rows) / len(rows)


# -- the API surface ---------------------------------------------------------------------------------------


def test_every_resource_kube_scheduler_informs_on_lists_with_one_global_version(served) -> None:  # type: ignore[no-untyped-def]
    session, _ = served
    versions = set()
    for path in SCHEDULER_RESOURCES:
        code, body = get(session.url + path + "?limit=500&resourceVersion=0")
        assert code == 200, path
        versions.add(body["metadata"]["resourceVersion"])
    assert len(versions) == 1
    assert get(session.url + "/apis/events.k8s.io/v1")[0] == 200
    assert get(session.url + "/apis/coordination.k8s.io/v1")[1]["resources"][0]["name"] == "leases"


def test_python_client_lists_creates_binds_and_a_second_binding_is_409(served) -> None:  # type: ignore[no-untyped-def]
    _, v1 = served
    assert [n.metadata.name for n in v1.list_node().items] == ["node0", "node1"]
    pending = v1.list_namespaced_pod("default").items
    assert [p.metadata.name for p in pending] == ["pod-0", "pod-1", "pod-2", "pod-3"]
    assert pending[0].metadata.creation_timestamp.year == 2000  # simulated time
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="pod-0"), target=client.V1ObjectReference(name="node0"))
    v1.create_namespaced_pod_binding("pod-0", "default", body, _preload_content=False)
    bound = v1.read_namespaced_pod("pod-0", "default")
    assert bound.spec.node_name == "node0"
    assert {c.type: c.status for c in bound.status.conditions}["PodScheduled"] == "True"
    running = bound.status.container_statuses[0]  # what `kubectl describe` and dashboards read
    assert running.ready and running.state.running.started_at == bound.status.start_time
    assert running.state.running.started_at.year == 2000  # simulated time
    with pytest.raises(client.ApiException) as again:
        v1.create_namespaced_pod_binding("pod-0", "default", body, _preload_content=False)
    assert again.value.status == 409
    # node0 has one cpu, taken: a second pod there is refused by the core's check, never applied.
    other = client.V1Binding(metadata=client.V1ObjectMeta(name="pod-1"), target=client.V1ObjectReference(name="node0"))
    with pytest.raises(client.ApiException) as over:
        v1.create_namespaced_pod_binding("pod-1", "default", other, _preload_content=False)
    assert over.value.status == 422 and "insufficient cpu" in over.value.body
    assert v1.read_namespaced_pod("pod-1", "default").spec.node_name is None
    created = v1.create_namespaced_pod("default", {
        "metadata": {"name": "extra", "annotations": {"clustersim.io/duration": "5s"}},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "250m"}}}]}})
    assert created.status.phase == "Pending"


def test_deleting_a_running_pod_frees_its_node_before_the_answer(served) -> None:  # type: ignore[no-untyped-def]
    """A scheduler that binds the moment a DELETE is answered (or its watch says DELETED) finds the room free."""
    _, v1 = served
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="pod-0"), target=client.V1ObjectReference(name="node0"))
    v1.create_namespaced_pod_binding("pod-0", "default", body, _preload_content=False)
    deleted = v1.delete_namespaced_pod("pod-0", "default")
    assert deleted.metadata.name == "pod-0"
    other = client.V1Binding(metadata=client.V1ObjectMeta(name="pod-1"), target=client.V1ObjectReference(name="node0"))
    v1.create_namespaced_pod_binding("pod-1", "default", other, _preload_content=False)
    assert v1.read_namespaced_pod("pod-1", "default").spec.node_name == "node0"
    assert "pod-0" not in [p.metadata.name for p in v1.list_namespaced_pod("default").items]


def test_a_bound_pod_runs_with_container_statuses_in_simulated_time(served) -> None:  # type: ignore[no-untyped-def]
    """`kubectl describe` and clients read `containerStatuses`: a running container started at simulated t=0."""
    _, v1 = served
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="pod-2"), target=client.V1ObjectReference(name="node1"))
    v1.create_namespaced_pod_binding("pod-2", "default", body, _preload_content=False)
    pod = v1.read_namespaced_pod("pod-2", "default")
    simulated = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    assert pod.status.phase == "Running" and pod.status.start_time == simulated
    (container,) = pod.status.container_statuses
    assert container.state.running.started_at == simulated and container.ready and container.started


def test_a_pod_created_without_a_duration_is_refused_with_422(served) -> None:  # type: ignore[no-untyped-def]
    """A simulated pod must say how long it runs: without it, it would end as it starts (and a scheduler caching
    it would loop on a pod that is gone)."""
    _, v1 = served
    for given in ({}, {"clustersim.io/duration": "0s"}):
        with pytest.raises(client.ApiException) as refused:
            v1.create_namespaced_pod("default", {"metadata": {"name": "bare", "annotations": given},
                                                 "spec": {"containers": [{"name": "c", "image": "x"}]}})
        assert refused.value.status == 422 and "clustersim.io/duration" in refused.value.body
    assert "bare" not in [p.metadata.name for p in v1.list_namespaced_pod("default").items]


def test_watch_streams_changes_and_selector_transitions_as_deleted(served) -> None:  # type: ignore[no-untyped-def]
    session, v1 = served
    listing = v1.list_pod_for_all_namespaces(field_selector="status.phase!=Succeeded,status.phase!=Failed")
    seen: list[tuple[str, str]] = []

    def follow() -> None:
        stream = watch.Watch()
        for event in stream.stream(v1.list_pod_for_all_namespaces, resource_version=listing.metadata.resource_version,
                                   field_selector="status.phase!=Succeeded,status.phase!=Failed", timeout_seconds=20):
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 2:
                stream.stop()

    follower = threading.Thread(target=follow)
    follower.start()
    for name in ("pod-0", "pod-1", "pod-2", "pod-3"):  # bind all four (2 nodes x 1 cpu: only two fit at first)
        with contextlib.suppress(client.ApiException):
            v1.create_namespaced_pod_binding(name, "default", client.V1Binding(
                metadata=client.V1ObjectMeta(name=name),
                target=client.V1ObjectReference(name=f"node{int(name[-1]) % 2}")), _preload_content=False)
    follower.join(30)
    assert seen[:2] == [("MODIFIED", "pod-0"), ("MODIFIED", "pod-1")]
    assert get(session.url + "/api/v1/pods?watch=true&resourceVersion=-5")[0] == 410


def test_too_old_resource_version_is_410_gone(tmp_path: Path) -> None:
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=4)))
    session = KubeSession(batkube_platform(nodes=2), pods, tmp_path, port=0, watch_history=2).start()
    try:
        code, body = get(session.url + "/api/v1/nodes?watch=true&resourceVersion=1")
        assert (code, body["reason"]) == (410, "Expired")
    finally:
        session.stop()


def test_a_connection_stays_usable_after_its_watch_ends(served) -> None:  # type: ignore[no-untyped-def]
    """Clients pool connections: one that carried a finished watch carries the next request (a binding, which
    urllib3 does not retry), as with a real apiserver. Closing it silently once killed the client scheduler."""
    import http.client

    session, _ = served
    connection = http.client.HTTPConnection("127.0.0.1", session.server.port, timeout=10)
    connection.request("GET", "/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=1")
    answer = connection.getresponse()
    assert [json.loads(line)["type"] for line in answer.read().splitlines()] == ["ADDED", "ADDED"]
    assert not answer.will_close
    binding = json.dumps({"target": {"kind": "Node", "name": "node0"}})
    connection.request("POST", "/api/v1/namespaces/default/pods/pod-0/binding", binding,
                       {"Content-Type": "application/json"})
    answer = connection.getresponse()
    assert (answer.status, json.loads(answer.read())["status"]) == (201, "Success")
    connection.close()


# -- a whole workload through the facade -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["burst", "spaced"])
def test_python_client_scheduler_reproduces_batkube_exactly_and_agrees_with_the_builtin(tmp_path: Path,
                                                                                        kind: str) -> None:
    rows, scheduler = run_client_scheduler(session_for(tmp_path, kind))
    ideal = {"burst": (2210.0, 979.2), "spaced": (2280.0, 57.6)}[kind]  # hand-computed in test_kubernetes_policy
    assert summary(rows) == ideal
    assert scheduler.nb_bound == 200
    builtin = builtin_pods_csv(tmp_path, kind)
    key = ("name", "node", "starting_time", "finish_time")
    assert sorted(tuple(r[k] for k in key) for r in rows) == sorted(tuple(r[k] for k in key) for r in builtin)


def test_repeated_runs_give_the_same_schedule(tmp_path: Path) -> None:
    first, _ = run_client_scheduler(session_for(tmp_path / "a", "spaced", count=40))
    second, _ = run_client_scheduler(session_for(tmp_path / "b", "spaced", count=40))
    assert first == second


def test_finished_pods_are_garbage_collected_beyond_the_threshold(tmp_path: Path) -> None:
    """As kube-controller-manager's pod GC: memory follows the pods alive, outputs still list every pod."""
    session = session_for(tmp_path, "spaced", count=40)
    session.facade.terminated_pods_kept = 5
    rows, _ = run_client_scheduler(session)
    assert len(rows) == 40
    kept = session.store.items("pods")
    assert len(kept) == 5 and all(p["status"]["phase"] == "Succeeded" for p in kept)  # type: ignore[index]
    assert sorted(p["metadata"]["name"] for p in kept) == [f"pod-{i}" for i in range(35, 40)]  # type: ignore[index]


def test_nodes_are_served_before_the_simulation_starts(tmp_path: Path) -> None:
    """A scheduler lists nodes once, first thing: they must all be there however late the simulation starts."""
    session = session_for(tmp_path, count=4, nodes=3)
    session.server.start()
    try:
        assert [n["metadata"]["name"] for n in get(session.url + "/api/v1/nodes")[1]["items"]] == [
            "node0", "node1", "node2"]
    finally:
        session.stop()


def test_time_waits_for_a_scheduler_to_watch_pods(tmp_path: Path) -> None:
    """Time does not run on timeouts before the scheduler is up: a scheduler started late gets the same schedule."""
    session = session_for(tmp_path, "burst", count=40, timeout=1.0)
    rows, _ = run_client_scheduler(session, late=2.5)
    assert summary(rows) == summary(builtin_pods_csv(tmp_path, "burst", count=40))


def test_no_scheduler_ends_in_a_clear_deadlock(tmp_path: Path) -> None:
    from clustersim.kubernetes import DeadlockError

    session = session_for(tmp_path, count=2, nodes=1, deadlock_timeout=0.5).start()
    try:
        with pytest.raises(DeadlockError, match="schedulerName"):
            session.wait(30)
    finally:
        session.stop()


def test_serve_k8s_command_exits_8_on_deadlock(tmp_path: Path) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text("kind: Pod\nmetadata: {name: p, annotations: {clustersim.io/duration: 10s}}\n"
                        "spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}\n")
    platform = tmp_path / "p.yaml"
    platform.write_text("nodes: [{count: 1, cores: 1, memory: 1Gi}]\n")
    done = subprocess.run([sys.executable, "-m", "clustersim.cli", "serve-k8s", "-p", str(platform), "-w",
                           str(workload), "-o", str(tmp_path / "out"), "--port", "0", "--deadlock-timeout", "0.5"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 8, done.stderr
    assert "deadlock at t=0" in done.stderr


# -- kubectl -----------------------------------------------------------------------------------------------


def _kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        subprocess.run(["apt-get", "install", "-y", "kubernetes-client"], capture_output=True, timeout=600)
        found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is missing and `apt-get install -y kubernetes-client` could not install it")
    return found


def test_kubectl_get_describe_create_delete(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    session, v1 = served
    kubectl = _kubectl()

    def run(*args: str) -> str:
        done = subprocess.run([kubectl, "--kubeconfig", str(session.kubeconfig), *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    nodes = run("get", "nodes")
    assert "node0" in nodes and "Ready" in nodes and "OS-IMAGE" not in nodes
    assert "CONTAINER-RUNTIME" in run("get", "nodes", "-o", "wide")
    assert "cordoned" in run("cordon", "node0")
    assert "node0   Ready,SchedulingDisabled" in run("get", "nodes")
    assert "uncordoned" in run("uncordon", "node0")
    v1.create_namespaced_pod_binding("pod-0", "default", client.V1Binding(
        metadata=client.V1ObjectMeta(name="pod-0"), target=client.V1ObjectReference(name="node1")),
        _preload_content=False)
    wide = run("get", "pods", "-o", "wide")
    assert "NOMINATED NODE" in wide.splitlines()[0]
    assert any(line.split()[0] == "pod-0" and "Running" in line and "node1" in line for line in wide.splitlines())
    assert "Node:" in run("describe", "pod", "pod-0")
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: made, annotations: {clustersim.io/duration: 9s}}\n"
                        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n")
    assert "created" in run("create", "-f", str(manifest))  # validated by the server (fieldValidation=Strict)
    typo = tmp_path / "typo.yaml"
    typo.write_text(manifest.read_text().replace("made", "typo").replace("image:", "imagee:"))
    refused = subprocess.run([kubectl, "--kubeconfig", str(session.kubeconfig), "create", "-f", str(typo)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1
    assert ('Error from server (BadRequest): error when creating "' + str(typo) + '": Pod in version "v1" cannot be '
            'handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagee"') in refused.stderr
    paged = run("get", "pods", "--chunk-size=2", "--no-headers")  # three pages of Table rows
    assert sorted(line.split()[0] for line in paged.splitlines()) == ["made", "pod-0", "pod-1", "pod-2", "pod-3"]
    assert "deleted" in run("delete", "pod", "made")
    assert "made" not in run("get", "pods")
