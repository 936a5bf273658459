"""Server-side field validation (kubectl's default `--validate=strict`): unknown fields of the served kinds,
from Kubernetes' own schemas (`fields.json`, checked against the OpenAPI documents of the release the repository
builds kube-scheduler from), and the OpenAPI v3 documents that tell kubectl the server validates."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.kubernetes.fields import FIELDS, StrictDecodingError, check, generate, unknown_fields
from clustersim.kubernetes.kube_scheduler import MODULE
from clustersim.kubernetes.openapi import served_group_version, served_root
from clustersim.kubernetes.resources import RESOURCES
from clustersim.workload.stream import Workload

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"any": "thing"}, "labelz": {}},
       "spec": {"containers": [{"name": "c", "image": "x", "imagee": "x", "resources": {"requests": {"cpu": "1"}},
                                "env": [{"name": "A", "value": "1", "valeu": "2"}]}],
                "nodeSelector": {"free": "form"}, "affinity": {"nodeAffinity": {"required": {}}}}}


def test_unknown_fields_are_named_with_their_path_and_maps_are_free() -> None:
    assert unknown_fields(POD, "v1", "Pod") == [
        "metadata.labelz", "spec.containers[0].imagee", "spec.containers[0].env[0].valeu",
        "spec.affinity.nodeAffinity.required"]
    node = {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}},
            "spec": {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]}}
    assert unknown_fields(node, "v1", "Node") == []
    assert unknown_fields({"spec": {"holderIdentity": "x", "holder": 1}}, "coordination.k8s.io/v1", "Lease") == [
        "spec.holder"]
    patch = {"spec": {"$setElementOrder/containers": [{"name": "c"}], "containers": [{"name": "c", "$patch": "x"}]}}
    assert unknown_fields(patch, "v1", "Pod") == []  # strategic-merge directives are not fields


def test_the_three_modes_as_kube_apiserver() -> None:
    with pytest.raises(StrictDecodingError, match=re.escape(
            'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.labelz", '
            'unknown field "spec.containers[0].imagee"')):
        check(POD, "v1", "Pod", "Strict")
    assert check(POD, "v1", "Pod", "Warn")[0] == 'unknown field "metadata.labelz"'
    assert check(POD, "v1", "Pod", "Ignore") == []
    with pytest.raises(ValueError, match="fieldValidation must be one of"):
        check(POD, "v1", "Pod", "strict")


def test_every_served_kind_has_its_fields_and_kubectl_finds_field_validation() -> None:
    kinds = json.loads(FIELDS.read_text())["kinds"]
    assert {f"{r.group_version}/{r.kind}" for r in RESOURCES} == set(kinds)
    root = served_root()["paths"]
    for resource in RESOURCES:
        where = f"api/{resource.version}" if not resource.group else f"apis/{resource.group_version}"
        assert root[where]["serverRelativeURL"].startswith(f"/openapi/v3/{where}?hash=")
        document = served_group_version(where)
        assert document is not None
        patches = [path["patch"] for path in document["paths"].values() if "patch" in path]
        assert any(op["x-kubernetes-group-version-kind"]["kind"] == resource.kind
                   and any(p["name"] == "fieldValidation" for p in op["parameters"]) for op in patches)


def test_fields_json_is_what_kubernetes_schemas_give() -> None:
    """Regenerated from k8s.io/kubernetes' OpenAPI v3 documents, found in Go's module cache (the kube-scheduler
    module downloads them: its build fixture runs first in CI; `go mod download` here makes sure)."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    release = re.search(r"k8s\.io/kubernetes (v\S+)", (MODULE / "go.mod").read_text())
    assert release is not None
    found = subprocess.run([go, "mod", "download", "-json", f"k8s.io/kubernetes@{release[1]}"], cwd=MODULE,
                           capture_output=True, text=True, timeout=900)
    assert found.returncode == 0, found.stderr
    spec = Path(json.loads(found.stdout)["Dir"]) / "api" / "openapi-spec" / "v3"
    assert generate(spec) == json.loads(FIELDS.read_text())


def test_the_facade_refuses_warns_or_ignores_an_unknown_field(tmp_path: Path) -> None:
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=1)))
    session = KubeSession(batkube_platform(nodes=1), pods, tmp_path / "out", TimeControl(deadlock_timeout=1e9),
                          port=0).start()
    try:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "annotations": {
            "clustersim.io/duration": "5s"}}, "spec": {"containers": [{"name": "c", "imagee": "x"}]}}

        def create(mode: str, name: str) -> tuple[int, dict[str, object], str | None]:
            request = urllib.request.Request(
                f"{session.url}/api/v1/namespaces/default/pods?fieldValidation={mode}",
                json.dumps({**body, "metadata": {**body["metadata"], "name": name}}).encode(),  # type: ignore[dict-item]
                {"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    return answer.status, json.loads(answer.read()), answer.headers.get("Warning")
            except urllib.error.HTTPError as error:
                return error.code, json.loads(error.read()), error.headers.get("Warning")

        code, answer, _ = create("Strict", "a")
        assert (code, answer["reason"]) == (400, "BadRequest") and "spec.containers[0].imagee" in str(answer["message"])
        code, answer, warning = create("Warn", "b")
        assert code == 201 and warning == '299 - "unknown field \\"spec.containers[0].imagee\\""'
        assert create("Ignore", "c")[0] == 201
        assert create("Sloppy", "d")[0] == 400
    finally:
        session.stop()
