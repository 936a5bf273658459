"""A scheduler built on the official JavaScript Kubernetes client (informers: list + watch + relist, as
client-go's reflectors) drives the facade in a separate process: Batkube's experiments come out ideal."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.workload.stream import Workload
from conftest import csv_rows

CLIENT = "@kubernetes/client-node@1.4.0"
"""The newest release that runs on Node.js 20 (2.x needs Node.js 22)."""
SCHEDULER = Path(__file__).parent / "nodejs" / "kube_scheduler.mjs"


@pytest.fixture(scope="session")
def node_modules(pytestconfig: pytest.Config) -> Path:
    """`node_modules` holding the official JavaScript client, installed with npm on first use."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js (node and npm) is not installed on this machine")
    prefix = pytestconfig.cache.mkdir("node-kubernetes-client-1.4.0")
    if not (prefix / "node_modules" / "@kubernetes" / "client-node" / "package.json").exists():
        installed = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", CLIENT],
                                   capture_output=True, text=True, check=False, timeout=600)
        assert installed.returncode == 0, f"could not install {CLIENT}: {installed.stdout}{installed.stderr}"
    return prefix / "node_modules"


@pytest.mark.parametrize(("kind", "ideal"), [("burst", (2210.0, 979.2)), ("spaced", (2280.0, 57.6))])
def test_a_javascript_client_scheduler_reaches_batkubes_ideal(node_modules: Path, tmp_path: Path, kind: str,
                                                               ideal: tuple[float, float]) -> None:
    pods = PodWorkload(Workload.from_jobs(batkube_pods(kind)))
    session = KubeSession(batkube_platform(), pods, tmp_path, TimeControl(deadlock_timeout=20), port=0).start()
    # The module resolves its import from a node_modules beside it: link the installed one there.
    (tmp_path / "node_modules").symlink_to(node_modules, target_is_directory=True)
    script = tmp_path / SCHEDULER.name
    shutil.copy(SCHEDULER, script)
    scheduler = subprocess.Popen(["node", str(script), str(session.kubeconfig)], stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "NODE_PATH": str(node_modules)})
    try:
        session.wait(120)
    finally:
        scheduler.terminate()
        _, errors = scheduler.communicate(timeout=10)
        session.stop()
    assert "scheduling" in errors, errors
    rows = csv_rows(tmp_path / "pods.csv")
    assert len(rows) == 200
    makespan = max(float(r["finish_time"]) for r in rows)
    assert (makespan, sum(float(r["waiting_time"]) for r in rows) / len(rows)) == ideal
