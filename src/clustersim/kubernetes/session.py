"""One facade run: the API server, the simulation on its own thread, and the outputs of the run."""

from __future__ import annotations

import threading
from pathlib import Path

from clustersim.core.interface import DecisionProcess
from clustersim.kubernetes.api import ApiServer
from clustersim.kubernetes.controller import JobController
from clustersim.kubernetes.facade import KubeFacade
from clustersim.kubernetes.records import PodsCsvWriter
from clustersim.kubernetes.sources import PodWorkload
from clustersim.kubernetes.store import Store
from clustersim.kubernetes.timecontrol import TimeControl
from clustersim.platform.model import Platform
from clustersim.runner import RunResult, simulate

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: clustersim
  cluster:
    server: {url}
    insecure-skip-tls-verify: true
contexts:
- name: clustersim
  context:
    cluster: clustersim
    user: clustersim
current-context: clustersim
users:
- name: clustersim
  user: {{}}
"""


def write_kubeconfig(path: Path, url: str) -> Path:
    """A kubeconfig pointing at the facade (no credentials: it serves loopback only). `insecure-skip-tls-verify`
    means nothing over plain HTTP, but clients such as the JavaScript one refuse `http://` without it."""
    path.write_text(KUBECONFIG.format(url=url), encoding="utf-8")
    return path


class KubeSession:
    """Serve a simulated cluster until every pod has completed; outputs (jobs, schedule, pods CSV) in `output`.

    `watch_history` events are kept for watches: a watch from an older version gets 410 Gone."""

    def __init__(self, platform: Platform, pods: PodWorkload, output: Path | str, control: TimeControl | None = None,
                 host: str = "127.0.0.1", port: int = 8001, watch_history: int = 25_000):
        self.platform = platform
        self.pods = pods
        self.output = Path(output)
        self.output.mkdir(parents=True, exist_ok=True)
        self.store = Store(watch_history)
        self.facade = KubeFacade(platform, self.store, control)
        self.server = ApiServer(self.store, self.facade, host, port)
        self.kubeconfig = write_kubeconfig(self.output / "kubeconfig.yaml", self.server.url)
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._simulate, name="k8s-simulation", daemon=True)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> KubeSession:
        self.server.start()
        self._thread.start()
        return self

    def _simulate(self) -> None:
        process: DecisionProcess = self.facade
        if self.pods.held:
            process = JobController(self.facade, self.pods.held)
        try:
            self.result = simulate(self.platform, self.pods.workload, process, self.output,
                                   extra_sinks=[PodsCsvWriter(self.output / "pods.csv", self.platform)],
                                   report_pending=True)
        except BaseException as error:  # handed to the caller of wait()
            self.error = error

    def wait(self, timeout: float | None = None) -> RunResult:
        """The run's result once the simulation is over; re-raises its error."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the simulation is still running after {timeout} s")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def stop(self) -> None:
        self.server.stop()

    def __enter__(self) -> KubeSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
