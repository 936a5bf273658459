"""What an unmodified kube-scheduler v1.26.15 asks of an API server (measured: ../shared/kube/), replayed against the
facade: every list, every watch (with the same query keys), the discovery, the lease cycle, the binding, the
status patch and both kinds of events it made must be answered as the real apiserver answered it.

No v1.26 binary can be built here (the Go module proxy serves k8s.io/kubernetes from v1.34.0 on only), so the
older release is checked through the requests it is known to make; v1.34.4 itself runs in test_kube_scheduler.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.workload.stream import Workload

REQUESTS = Path(__file__).resolve().parents[1].parent / "shared" / "kube" / "kube-scheduler-v1.26-requests.txt"
LINE = re.compile(r"^\s*(\d+)\s+(GET|POST|PUT|PATCH)\s+(\S+)\s+(\{.*?\})\s+->\s+(\d+)")


def measured() -> list[tuple[str, str, dict[str, str], int]]:
    """(method, path, query, status) of every distinct request in the measurement."""
    rows = []
    for text in REQUESTS.read_text(encoding="utf-8").splitlines():
        match = LINE.match(text)
        if match:
            rows.append((match[2], match[3], json.loads(match[4]), int(match[5])))
    return rows


def call(url: str, method: str = "GET", body: object = None, content: str = "application/json") -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": content, "Accept": "application/json, */*"},
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def session(tmp_path: Path) -> KubeSession:
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=2)))
    return KubeSession(batkube_platform(nodes=2), pods, tmp_path, TimeControl(deadlock_timeout=30), port=0)


def test_the_measurement_covers_the_fourteen_informers() -> None:
    listed = {path for method, path, query, _ in measured() if method == "GET" and "limit" in query}
    watched = {path for method, path, query, _ in measured() if method == "GET" and query.get("watch") == "true"}
    assert len(listed) == 14 and watched == listed


def test_every_list_and_watch_of_kube_scheduler_v126_is_served(session: KubeSession) -> None:
    with session:
        for method, path, query, _ in measured():
            if method != "GET" or "limit" not in query:
                continue
            selector = {"fieldSelector": query["fieldSelector"]} if "fieldSelector" in query else {}
            status, data = call(session.url + path + "?" + urllib.parse.urlencode(
                {"limit": "500", "resourceVersion": "0", **selector}))
            assert status == 200, (path, data[:300])
            listing = json.loads(data)
            assert listing["kind"].endswith("List") and isinstance(listing["items"], list), path
            version = listing["metadata"]["resourceVersion"]
            status, data = call(session.url + path + "?" + urllib.parse.urlencode(
                {"watch": "true", "allowWatchBookmarks": "true", "resourceVersion": version, "timeoutSeconds": "1",
                 **selector}))
            assert status == 200, (path, data[:300])
            for line in data.splitlines():  # a JSON-lines stream of watch events, ended by its timeout
                assert json.loads(line)["type"] in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"), path
        pods = json.loads(call(session.url + "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded"
                                             "%2Cstatus.phase%21%3DFailed&limit=500&resourceVersion=0")[1])["items"]
        assert len(pods) == 2  # pending pods reach the scheduler's pods informer


def test_the_writes_of_kube_scheduler_v126_are_answered_as_measured(session: KubeSession) -> None:
    """Discovery, the lease cycle (404, create, get, renew), a binding, a status patch, both kinds of events."""
    with session:
        url = session.url
        assert call(url + "/apis/events.k8s.io/v1")[0] == 200
        lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
        assert call(url + lease_path + "/kube-scheduler")[0] == 404
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
                 "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}
        status, data = call(url + lease_path, "POST", lease)
        assert status == 201
        status, data = call(url + lease_path + "/kube-scheduler")
        assert status == 200
        assert call(url + lease_path + "/kube-scheduler", "PUT", json.loads(data))[0] == 200
        pods = json.loads(call(url + "/api/v1/pods")[1])["items"]
        first, second = (p["metadata"]["name"] for p in pods)
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": first, "namespace": "default"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "node0"}}
        assert call(url + f"/api/v1/namespaces/default/pods/{first}/binding", "POST", binding)[0] == 201
        patch = {"status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "message": "0/2 nodes are available"}]}}
        status, data = call(url + f"/api/v1/namespaces/default/pods/{second}/status", "PATCH", patch,
                            "application/strategic-merge-patch+json")
        assert status == 200
        assert json.loads(data)["status"]["conditions"][-1]["reason"] == "Unschedulable"
        core = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "kube-system"},
                "involvedObject": {"kind": "Lease", "name": "kube-scheduler"}, "reason": "LeaderElection"}
        assert call(url + "/api/v1/namespaces/kube-system/events", "POST", core)[0] == 201
        event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2", "namespace": "default"},
                 "regarding": {"kind": "Pod", "name": first}, "reason": "Scheduled", "action": "Binding",
                 "eventTime": "2000-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
                 "reportingInstance": "default-scheduler-x", "type": "Normal"}
        assert call(url + "/apis/events.k8s.io/v1/namespaces/default/events", "POST", event)[0] == 201
