"""The facade's API beyond pods and bindings, through real clients: events, leases, label-selector watches,
BOOKMARKs, list pagination, and `serve-k8s --keep-serving`."""

from __future__ import annotations

import datetime
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

kubernetes = pytest.importorskip("kubernetes", reason="the official Python client is in the [dev] extra")
from kubernetes import client, config, watch  # noqa: E402

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods  # noqa: E402
from clustersim.workload.stream import Workload  # noqa: E402


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[KubeSession, client.ApiClient]]:
    """A facade with 4 pending pods on 2 nodes, published, and no scheduler; stopped afterwards."""
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=4)))
    session = KubeSession(batkube_platform(nodes=2), pods, tmp_path / "out", TimeControl(deadlock_timeout=20), port=0)
    session.start()
    try:
        api_client = config.new_client_from_config(str(session.kubeconfig))
        v1 = client.CoreV1Api(api_client)
        deadline = time.monotonic() + 10
        while len(v1.list_pod_for_all_namespaces().items) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        yield session, api_client
    finally:
        session.stop()


def _follow(stream: Iterator[dict], seen: list[tuple[str, str]], until: int) -> threading.Thread:  # type: ignore[type-arg]
    def run() -> None:
        for event in stream:
            obj = event["object"]
            name = obj["metadata"].get("name", "") if isinstance(obj, dict) else obj.metadata.name
            seen.append((event["type"], name))
            if len(seen) >= until:
                break

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_core_and_events_k8s_io_events_are_created_and_listed(api) -> None:  # type: ignore[no-untyped-def]
    _, api_client = api
    v1 = client.CoreV1Api(api_client)
    v1.create_namespaced_event("default", client.CoreV1Event(
        metadata=client.V1ObjectMeta(generate_name="pod-0."), involved_object=client.V1ObjectReference(
            kind="Pod", name="pod-0", namespace="default"), reason="Scheduled", message="assigned", type="Normal"))
    events = client.EventsV1Api(api_client)
    created = events.create_namespaced_event("default", client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="pod-1.failed"),
        event_time=datetime.datetime(2026, 11, 24, 4, 20, 1, 123456, tzinfo=datetime.UTC),  # the client's clock
        reason="FailedScheduling", action="Scheduling", note="0/2 nodes are available", type="Warning",
        reporting_controller="default-scheduler", reporting_instance="x",
        regarding=client.V1ObjectReference(kind="Pod", name="pod-1", namespace="default")))
    assert created.metadata.resource_version
    simulated = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)  # t=0 of the simulation
    assert created.event_time == simulated and created.metadata.creation_timestamp == simulated
    # One store, as in a real apiserver: kubectl (core/v1) sees what kube-scheduler wrote (events.k8s.io/v1).
    core = sorted(v1.list_namespaced_event("default").items, key=lambda e: e.reason)
    assert [(e.reason, e.involved_object.name, e.message) for e in core] == [
        ("FailedScheduling", "pod-1", "0/2 nodes are available"), ("Scheduled", "pod-0", "assigned")]
    assert core[1].metadata.name.startswith("pod-0.")
    assert core[0].last_timestamp == simulated and core[0].source.component == "default-scheduler"
    new = events.list_namespaced_event("default").items
    assert [(e.reason, e.regarding.name, e.note) for e in new] == [
        ("FailedScheduling", "pod-1", "0/2 nodes are available")]
    assert events.list_event_for_all_namespaces().items[0].metadata.name == "pod-1.failed"


def test_a_null_creation_timestamp_is_set_by_the_server(api) -> None:  # type: ignore[no-untyped-def]
    """Go clients send `creationTimestamp: null` for an unset time: the server sets it, as kube-apiserver does."""
    session, _ = api
    body = {"metadata": {"name": "e1", "creationTimestamp": None}, "involvedObject": {"kind": "Pod", "name": "pod-0"},
            "reason": "Test", "firstTimestamp": None}
    request = urllib.request.Request(session.url + "/api/v1/namespaces/default/events", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        created = json.loads(answer.read())
    assert created["metadata"]["creationTimestamp"] == "2000-01-01T00:00:00Z"


def test_a_watch_as_table_streams_rows_aged_in_simulated_time(api) -> None:  # type: ignore[no-untyped-def]
    """`kubectl get pods -w` asks for Tables: rows whose Age is simulated (a raw pod would be aged from 2000 by
    kubectl's wall clock: "26y")."""
    session, _ = api
    request = urllib.request.Request(session.url + "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1",
                                     headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        event = json.loads(answer.readline())
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    names = [c["name"] for c in event["object"]["columnDefinitions"]]
    row = dict(zip(names, event["object"]["rows"][0]["cells"], strict=True))
    assert row["Name"] == "pod-0" and row["Status"] == "Pending" and row["Age"] == "0s"


def test_leases_are_created_read_renewed_with_put_and_a_stale_renewal_is_409(api) -> None:  # type: ignore[no-untyped-def]
    _, api_client = api
    leases = client.CoordinationV1Api(api_client)
    start = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    leases.create_namespaced_lease("kube-system", client.V1Lease(
        metadata=client.V1ObjectMeta(name="kube-scheduler"), spec=client.V1LeaseSpec(
            holder_identity="a", lease_duration_seconds=15, acquire_time=start, renew_time=start)))
    lease = leases.read_namespaced_lease("kube-scheduler", "kube-system")
    assert lease.spec.holder_identity == "a"
    stale = lease.metadata.resource_version
    lease.spec.renew_time = start + datetime.timedelta(seconds=2)
    renewed = leases.replace_namespaced_lease("kube-scheduler", "kube-system", lease)
    assert int(renewed.metadata.resource_version) > int(stale)
    assert leases.read_namespaced_lease("kube-scheduler", "kube-system").spec.renew_time == lease.spec.renew_time
    lease.metadata.resource_version = stale  # another candidate renewing from an old read loses
    with pytest.raises(client.ApiException) as conflict:
        leases.replace_namespaced_lease("kube-scheduler", "kube-system", lease)
    assert conflict.value.status == 409


def test_label_selector_watch_sees_only_matching_pods_and_a_label_removal_as_deleted(api) -> None:  # type: ignore[no-untyped-def]
    _, api_client = api
    v1 = client.CoreV1Api(api_client)
    listing = v1.list_namespaced_pod("default", label_selector="app=web")
    assert listing.items == []
    seen: list[tuple[str, str]] = []
    stream = watch.Watch().stream(v1.list_namespaced_pod, "default", label_selector="app=web",
                                  resource_version=listing.metadata.resource_version, timeout_seconds=20)
    follower = _follow(stream, seen, until=3)
    for name, app in (("web-1", "web"), ("db-1", "db"), ("web-2", "web")):
        v1.create_namespaced_pod("default", {
            "metadata": {"name": name, "labels": {"app": app}, "annotations": {"clustersim.io/duration": "5s"}},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}})
    v1.patch_namespaced_pod("web-1", "default", {"metadata": {"labels": {"app": "gone"}}})
    follower.join(20)
    assert seen == [("ADDED", "web-1"), ("ADDED", "web-2"), ("DELETED", "web-1")]
    assert [p.metadata.name for p in v1.list_namespaced_pod("default", label_selector="app in (web,db)").items] == [
        "db-1", "web-2"]


def test_bookmarks_come_only_when_asked_and_carry_the_current_version(api) -> None:  # type: ignore[no-untyped-def]
    session, api_client = api
    session.server.api.bookmark_every = 0.2
    v1 = client.CoreV1Api(api_client)
    rv = v1.list_node().metadata.resource_version
    marks: list[tuple[str, str]] = []
    stream = watch.Watch().stream(v1.list_node, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=10)
    for event in stream:
        obj = event["raw_object"]
        marks.append((event["type"], obj["metadata"]["resourceVersion"]))
        if len(marks) == 2:
            break
    assert marks == [("BOOKMARK", rv), ("BOOKMARK", rv)]
    plain = list(watch.Watch().stream(v1.list_node, resource_version=rv, timeout_seconds=1))
    assert plain == []  # nothing changed and no bookmark was asked for


def test_list_pages_come_from_one_snapshot_with_continue_tokens(api) -> None:  # type: ignore[no-untyped-def]
    _, api_client = api
    v1 = client.CoreV1Api(api_client)
    first = v1.list_namespaced_pod("default", limit=3)
    assert [p.metadata.name for p in first.items] == ["pod-0", "pod-1", "pod-2"]
    assert first.metadata.remaining_item_count == 1 and first.metadata._continue
    v1.create_namespaced_pod("default", client.V1Pod(
        metadata=client.V1ObjectMeta(name="late", annotations={"clustersim.io/duration": "5s"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")])))
    rest = v1.list_namespaced_pod("default", limit=3, _continue=first.metadata._continue)
    assert [p.metadata.name for p in rest.items] == ["pod-3"]  # the snapshot: the pod created since is not in it
    assert rest.metadata.resource_version == first.metadata.resource_version and rest.metadata._continue is None
    assert len(v1.list_namespaced_pod("default", limit=3, _continue=None).items) == 3
    # kube-scheduler's reflectors list at resourceVersion=0 with limit=500: served whole, as from the watch cache.
    assert len(v1.list_namespaced_pod("default", limit=2, resource_version="0").items) == 5


def test_bad_and_expired_continue_tokens(api) -> None:  # type: ignore[no-untyped-def]
    session, api_client = api
    v1 = client.CoreV1Api(api_client)
    session.server.api.pages.keep = 1
    stale = v1.list_namespaced_pod("default", limit=1).metadata._continue
    v1.list_namespaced_pod("default", limit=1)  # a newer snapshot pushes the first one out
    with pytest.raises(client.ApiException) as expired:
        v1.list_namespaced_pod("default", limit=1, _continue=stale)
    assert (expired.value.status, json.loads(expired.value.body)["reason"]) == (410, "Expired")
    with pytest.raises(client.ApiException) as bad:
        v1.list_namespaced_pod("default", limit=1, _continue="not-a-token")
    assert bad.value.status == 400
    with pytest.raises(client.ApiException) as negative:
        v1.list_namespaced_pod("default", limit=-1)
    assert negative.value.status == 400


def test_serve_k8s_keep_serving_stays_up_after_the_run_until_interrupted(tmp_path: Path) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text("kind: Pod\nmetadata: {name: p, annotations: {clustersim.io/duration: 10s}}\n"
                        "spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}\n")
    platform = tmp_path / "p.yaml"
    platform.write_text("nodes: [{count: 1, cores: 1, memory: 1Gi}]\n")
    out = tmp_path / "out"
    server = subprocess.Popen([sys.executable, "-m", "clustersim.cli", "serve-k8s", "-p", str(platform), "-w",
                               str(workload), "-o", str(out), "--port", "0", "--keep-serving"],
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        assert "serving the Kubernetes API" in server.stderr.readline()
        v1 = client.CoreV1Api(config.new_client_from_config(str(out / "kubeconfig.yaml")))
        deadline = time.monotonic() + 10
        while not v1.list_namespaced_pod("default").items and time.monotonic() < deadline:
            time.sleep(0.01)
        v1.create_namespaced_pod_binding("p", "default", client.V1Binding(
            metadata=client.V1ObjectMeta(name="p"), target=client.V1ObjectReference(name="node0")),
            _preload_content=False)
        assert "1 pods, 1 bindings: makespan 10 s" in server.stderr.readline()
        assert "--keep-serving: still serving" in server.stderr.readline()
        assert (out / "pods.csv").read_text().count("\n") == 2  # outputs written before it keeps serving
        assert v1.read_namespaced_pod("p", "default").status.phase == "Succeeded"
        kubectl = shutil.which("kubectl")
        if kubectl is not None:
            listing = subprocess.run([kubectl, "--kubeconfig", str(out / "kubeconfig.yaml"), "get", "pods", "-o",
                                      "json"], capture_output=True, text=True, timeout=60)
            assert json.loads(listing.stdout)["items"][0]["status"]["phase"] == "Succeeded"
        assert server.poll() is None
        server.send_signal(signal.SIGINT)
        server.wait(10)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)


def test_malformed_http_requests_get_400(api) -> None:  # type: ignore[no-untyped-def]
    import socket

    session, _ = api
    for request in (b"GARBAGE\r\n\r\n", b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nContent-Length: x\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", session.server.port), timeout=10) as sock:
            sock.sendall(request)
            assert sock.recv(4096).startswith(b"HTTP/1.1 400 "), request
