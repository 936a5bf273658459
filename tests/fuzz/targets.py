"""The fuzz targets: every reader, and serve-k8s's request parser, each fed raw bytes.

A target returns normally or raises `ClusterSimError` (a clean, reported error); anything else is a crash.
`run.py` drives them with atheris (coverage-guided); tests/test_fuzz.py runs each for a bounded time and
replays every crash kept in crashes/.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from clustersim.errors import ClusterSimError

_DIR = Path(tempfile.mkdtemp(prefix="clustersim-fuzz-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)  # each run (and each child process) leaves nothing behind


def _file(data: bytes, name: str) -> Path:
    path = _DIR / name
    path.write_bytes(data)
    return path


def swf(data: bytes) -> None:
    from clustersim.platform.swf_header import platform_from_swf_header
    from clustersim.workload.load import load_workload

    workload = load_workload(_file(data, "trace.swf"))
    for _ in workload.jobs:
        pass
    platform_from_swf_header(workload.header)


def batsim_json(data: bytes) -> None:
    from clustersim.workload.load import load_workload

    for _ in load_workload(_file(data, "workload.json")).jobs:
        pass


def platform_xml(data: bytes) -> None:
    from clustersim.platform.load import load_platform

    load_platform(_file(data, "platform.xml"))


def cluster_file(data: bytes) -> None:
    from clustersim.platform.load import load_platform

    load_platform(_file(data, "cluster.yaml"))
    load_platform(_file(data, "cluster.json"))


def kubernetes_manifests(data: bytes) -> None:
    from clustersim.kubernetes.sources import load_kube_platform, load_pod_workload

    path = _file(data, "manifests.yaml")
    for _ in load_pod_workload(path).workload.jobs:
        pass
    load_kube_platform(path)


def slurm_conf(data: bytes) -> None:
    from clustersim.policies.slurm.conf import platform_from_conf, read_slurm_conf

    platform_from_conf(read_slurm_conf(_file(data, "slurm.conf")))


def experiment(data: bytes) -> None:
    from clustersim.experiments import load_experiment

    load_experiment(_file(data, "experiment.yaml"), strict=True)


def autoscale_scenario(data: bytes) -> None:
    from clustersim.autoscaling.scenario import load_scenario

    load_scenario(_file(data, "scenario.yaml"))


def architectures_config(data: bytes) -> None:
    from clustersim.architectures.config import load_config

    load_config(_file(data, "architectures.yaml"))


class _Facade:
    """One serve-k8s on loopback for the whole fuzzing run, whose handler errors are crashes."""

    def __init__(self) -> None:
        from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
        from clustersim.workload.stream import Workload

        pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=2)))
        self.session = KubeSession(batkube_platform(nodes=2), pods, _DIR / "k8s", TimeControl(deadlock_timeout=1e9),
                                   port=0)
        self.session.start()
        self.errors: list[str] = []
        server = self.session.server._server

        def record(request: object, client_address: object) -> None:
            import traceback

            self.errors.append(traceback.format_exc())

        server.handle_error = record  # type: ignore[method-assign]
        self.port = self.session.server.port


_FACADE: list[_Facade] = []


def serve_k8s_request(data: bytes) -> None:
    """One raw request (line, headers, body) to serve-k8s: it must answer, and its handler must not fail."""
    if b"watch" in data.lower():  # a watch is held open for its timeout; watches have their own tests
        return
    if not _FACADE:
        _FACADE.append(_Facade())
    facade = _FACADE[0]
    with socket.create_connection(("127.0.0.1", facade.port), timeout=5) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except ConnectionResetError:  # the server may close before reading everything sent
            pass
    if facade.errors:
        raise AssertionError(f"serve-k8s's handler failed:\n{facade.errors[-1]}")


TARGETS: dict[str, Callable[[bytes], None]] = {
    "swf": swf,
    "batsim_json": batsim_json,
    "platform_xml": platform_xml,
    "cluster_file": cluster_file,
    "kubernetes_manifests": kubernetes_manifests,
    "slurm_conf": slurm_conf,
    "experiment": experiment,
    "autoscale_scenario": autoscale_scenario,
    "architectures_config": architectures_config,
    "serve_k8s_request": serve_k8s_request,
}


FUZZ_LIMITS = {"MAX_NODES": 10_000, "MAX_UNITS": 100_000, "MAX_JOBS": 100_000}
"""The size limits while fuzzing, 100 times below clustersim.limits: an input at the real limits (a
1,000,000-node platform of 10,000,000 cores) is bounded but takes tens of seconds under coverage
instrumentation on a loaded machine, which libFuzzer's per-input timeout would report as a hang. With these, the
largest input any target accepts takes well under a second, so the timeout catches real hangs only; the real
limits themselves are tested in tests/test_hardening.py."""


def lower_limits() -> None:
    """Put FUZZ_LIMITS in every loaded clustersim module (readers import the limits by name) and in the table."""
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("clustersim"):
            for limit, value in FUZZ_LIMITS.items():
                if hasattr(module, limit):
                    setattr(module, limit, value)


def check(name: str, data: bytes) -> None:
    """Run one input through a target: a clean `ClusterSimError` is fine, anything else propagates (a crash)."""
    with contextlib.suppress(ClusterSimError):
        TARGETS[name](data)


os.environ.setdefault("MPLBACKEND", "Agg")
