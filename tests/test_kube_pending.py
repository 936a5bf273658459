"""Pods that never start (they fit no node) are listed as Kubernetes users see them: Pending, with no node.

In jobs.csv (final_state PENDING, no times, no allocation), pods.csv (no node, times -1), schedule.csv's
nb_jobs (neither finished nor rejected) and the command's summary line, for the built-in policy (golden files)
and for the facade under the real kube-scheduler.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clustersim.cli import main
from clustersim.exit_codes import EXIT_UNFINISHED
from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform
from clustersim.kubernetes.kube_scheduler import SIMULATION, KubeScheduler, build, write_config
from clustersim.workload.pods import PodSpec, make_pod
from clustersim.workload.stream import Workload
from conftest import csv_rows

GOLDEN = Path(__file__).parent / "golden"
NODES = """kind: Node
metadata: {name: a}
status: {capacity: {cpu: "4", memory: 8Gi}}
"""
PODS = """kind: Pod
metadata: {name: small, annotations: {clustersim.io/duration: "60"}}
spec: {containers: [{name: c, resources: {requests: {cpu: "3"}}}]}
---
kind: Pod
metadata: {name: second, annotations: {clustersim.io/duration: "30"}}
spec: {containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]}
---
kind: Pod
metadata: {name: huge, annotations: {clustersim.io/duration: "60"}}
spec: {containers: [{name: c, resources: {requests: {cpu: "16"}}}]}
"""


@pytest.mark.parametrize("output", ["jobs.csv", "pods.csv", "schedule.csv"])
def test_a_pod_that_fits_no_node_is_listed_pending_in_every_output(
        output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "n.yaml").write_text(NODES)
    (tmp_path / "p.yaml").write_text(PODS)
    assert main(["run-k8s", "-p", str(tmp_path / "n.yaml"), "-w", str(tmp_path / "p.yaml"), "-o",
                 str(tmp_path / "out")]) == EXIT_UNFINISHED
    assert "3 pods (1 Pending, never started): makespan 90 s" in capsys.readouterr().err
    golden = GOLDEN / f"kube_pending_{output}"
    if os.environ.get("CLUSTERSIM_UPDATE_GOLDEN"):
        golden.write_bytes((tmp_path / "out" / output).read_bytes())
    assert (tmp_path / "out" / output).read_text() == golden.read_text()


def test_the_facade_lists_a_pod_the_real_scheduler_never_binds_as_pending(tmp_path: Path) -> None:
    binary = build(SIMULATION)
    pods = [make_pod(PodSpec(f"p{i}"), {"cpu": 1000}, 100.0, job_id=f"p{i}") for i in range(3)]
    pods.append(make_pod(PodSpec("huge"), {"cpu": 64000}, 100.0, job_id="huge"))
    session = KubeSession(batkube_platform(nodes=2), PodWorkload(Workload.from_jobs(pods)), tmp_path / "out",
                          TimeControl(deadlock_timeout=30.0), port=0)
    config = write_config(tmp_path / "scheduler.yaml", session.kubeconfig)
    with session, KubeScheduler(binary, config, tmp_path / "scheduler.log"):
        result = session.wait(120)
    assert result.summary.unfinished == ["w0!huge"]
    assert result.metrics.nb_jobs == 4 and result.metrics.nb_pending == 1 and result.metrics.nb_finished == 3
    pending = [row for row in csv_rows(tmp_path / "out" / "pods.csv") if row["final_state"] == "PENDING"]
    assert pending == [{"job_id": "huge", "namespace": "default", "name": "huge", "scheduler": "default-scheduler",
                        "node": "", "cpu_m": "64000", "memory": "0", "submission_time": "0", "starting_time": "-1",
                        "finish_time": "-1", "waiting_time": "-1", "final_state": "PENDING"}]
    jobs = {row["job_id"]: row for row in csv_rows(tmp_path / "out" / "jobs.csv")}
    assert jobs["huge"]["final_state"] == "PENDING" and jobs["huge"]["allocated_resources"] == ""
    assert jobs["huge"]["starting_time"] == "" and jobs["huge"]["success"] == "0"
