"""The bundled Python-client scheduler, run as its command against serve-k8s: it exits 0 without a traceback
when the simulation ends, and exits 7 with one clear line for a server it never reached."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the official Python client is in the [kubernetes] and [dev] extras")

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.workload.stream import Workload

SRC = str(Path(__file__).parents[1] / "src")


def _scheduler(kubeconfig: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "clustersim.kubernetes.client_scheduler", "--kubeconfig",
                             str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_the_client_scheduler_exits_cleanly_when_serve_k8s_finishes(tmp_path: Path) -> None:
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=6)))
    session = KubeSession(batkube_platform(nodes=2), pods, tmp_path / "out", TimeControl(deadlock_timeout=60), port=0)
    session.start()
    process = _scheduler(session.kubeconfig)
    try:
        session.wait(120)
    finally:
        session.stop()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "the simulation is over; 6 pods bound" in stderr


def test_the_client_scheduler_without_a_server_is_one_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    process = _scheduler(kubeconfig)
    _, stderr = process.communicate(timeout=120)  # it gives up by itself: a hang fails here, not a slow machine
    assert process.returncode == 7, stderr
    assert "Traceback" not in stderr and stderr.startswith("clustersim: error: cannot reach the API server")
