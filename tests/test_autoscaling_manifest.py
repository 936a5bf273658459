"""A scenario's deployment can come from a Kubernetes Deployment manifest (apps/v1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustersim.autoscaling.scenario import parse_scenario
from clustersim.errors import InputError

MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop}
spec:
  replicas: 3
  template:
    spec:
      terminationGracePeriodSeconds: 20
      containers:
        - name: app
          resources: {requests: {cpu: 250m, memory: 128Mi}}
          readinessProbe: {initialDelaySeconds: 7}
        - name: sidecar
          resources: {requests: {cpu: "0.05", memory: 64Mi}}
"""


def scenario(deployment: dict[str, object]) -> dict[str, object]:
    return {
        "duration": 60, "deployment": deployment, "traffic": {"pattern": "poisson", "rate": 10},
        "cluster": {"nodes": [{"count": 2, "cores": 4, "memory": "8Gi"}]},
    }


def test_deployment_fields_come_from_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(MANIFEST)
    d = parse_scenario(scenario({"manifest": "shop.yaml"}), base=tmp_path).deployment
    assert (d.name, d.replicas, d.cpu_request, d.memory_request) == ("shop", 3, 300, 192 * 2**20)
    assert (d.readiness_delay, d.termination_delay, d.capacity) == (7.0, 20.0, 300)


def test_scenario_keys_win_over_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(MANIFEST)
    d = parse_scenario(scenario({"manifest": "shop.yaml", "replicas": 5, "capacity": "1"}), base=tmp_path).deployment
    assert (d.replicas, d.capacity, d.cpu_request) == (5, 1000, 300)


def test_a_file_without_a_deployment_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    with pytest.raises(InputError, match="no document of kind Deployment"):
        parse_scenario(scenario({"manifest": "pod.yaml"}), base=tmp_path)
