"""The real kube-scheduler against the facade: built from the repository's Go module `kube-scheduler/`, run as a
process with an ordinary KubeSchedulerConfiguration file.

Two builds (see docs/kubernetes.md): `kube-scheduler`, the upstream command unmodified, and `kube-scheduler-sim`,
the same scheduler made through its Go API for simulated time: its wall-clock per-pod backoff off, each instant
taken whole and its end reported to the facade (POST /clustersim/v1/idle), nodes filtered in order and ties drawn
from a per-cycle seed (and the example out-of-tree plugin `PodPacking` registered). `go build` keeps Go's module
and build caches: the first build compiles Kubernetes (minutes), later ones only check the caches (seconds).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import TracebackType
from typing import IO

from clustersim.errors import ClusterSimError

MODULE = Path(__file__).resolve().parents[3] / "kube-scheduler"
"""The Go module (in the source tree, beside `src/`)."""
PLAIN = "kube-scheduler"
SIMULATION = "kube-scheduler-sim"

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {kubeconfig}
  contentType: application/json
  qps: 5000
  burst: 10000
leaderElection:
  leaderElect: false
"""
"""What the facade needs: JSON (it does not speak protobuf), a client rate limit far above the default 50
requests/s, no leader election (leases are served, but renewing costs a request every 2 s)."""
FAST_BACKOFF = "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n"
"""For the plain binary: its shortest backoff (the configuration's minimum), 1 s instead of 1 s doubling to 10 s."""


def go_tool() -> str:
    """The `go` command: on PATH, or in GOROOT's (default /usr/local/go) bin."""
    go = shutil.which("go") or shutil.which("go", path=str(Path(os.environ.get("GOROOT", "/usr/local/go")) / "bin"))
    if go is None:
        raise ClusterSimError("building kube-scheduler needs Go 1.24 or newer on PATH (and the Go module proxy)")
    return go


def build(name: str, module: Path = MODULE) -> Path:
    """`go build` one of the two commands into `module/bin/` and return its path (cached after the first)."""
    if name not in (PLAIN, SIMULATION):
        raise ValueError(f"unknown kube-scheduler build '{name}'; valid: {PLAIN}, {SIMULATION}")
    go = go_tool()
    if not (module / "go.mod").is_file():
        raise ClusterSimError(f"{module}: no go.mod (the kube-scheduler module is in the source tree only)")
    release = re.search(r"k8s\.io/kubernetes (v[0-9][^\s]*)", (module / "go.mod").read_text())
    stamp = f"-X k8s.io/component-base/version.gitVersion={release[1]}" if release else ""
    output = module / "bin" / name
    nice = shutil.which("nice")  # the build takes minutes of both cores: let the tests beside it run
    command = [go, "build", "-buildvcs=false", f"-ldflags={stamp}", "-o", str(output), f"./cmd/{name}"]
    done = subprocess.run([*([nice] if nice else []), *command], cwd=module, capture_output=True, text=True)
    if done.returncode:
        raise ClusterSimError(f"go build ./cmd/{name} failed in {module}:\n{done.stderr.strip()}")
    return output


def write_config(path: Path, kubeconfig: Path, extra: str = "") -> Path:
    """A KubeSchedulerConfiguration for the facade at `kubeconfig`; `extra` is appended YAML (top-level keys,
    e.g. FAST_BACKOFF or `profiles:`)."""
    path.write_text(CONFIG.format(kubeconfig=kubeconfig) + extra, encoding="utf-8")
    return path


class KubeScheduler:
    """A kube-scheduler process (`binary`) with `config`, its log in `log`; a context manager that stops it."""

    def __init__(self, binary: Path, config: Path, log: Path, *args: str):
        self.command = [str(binary), f"--config={config}", "--secure-port=0", *args]
        self.log = log
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    def start(self) -> KubeScheduler:
        self._log_file = open(self.log, "ab")  # noqa: SIM115 (the process writes it until stop())
        self._process = subprocess.Popen(self.command, stdout=self._log_file, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        return self

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def cpu_seconds(self) -> float:
        """User + system CPU time of the running process so far (Linux /proc), for benchmarks."""
        if self._process is None:
            return 0.0
        fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def schedstat(self) -> tuple[float, float]:
        """CPU time and run-queue wait (runnable, waiting for a core) of the process's threads so far, summed, in
        seconds (Linux /proc/PID/task/*/schedstat), for benchmarks: on a loaded machine the second says how much
        of the wall time the scheduler spent waiting for a core rather than for the facade."""
        if self._process is None:
            return 0.0, 0.0
        cpu = waited = 0
        for task in Path(f"/proc/{self._process.pid}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):  # a thread may end while read
                ran, queued, _ = (task / "schedstat").read_text().split()
                cpu, waited = cpu + int(ran), waited + int(queued)
        return cpu / 1e9, waited / 1e9

    def __enter__(self) -> KubeScheduler:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

