"""A real Slurm cluster on 127.0.0.1: one slurmctld and one slurmd per node, under one accelerated clock.

The daemons run under a single `faketime -m -f "+0 xK"` wrapper, so they share one clock that runs K times
faster than the wall clock (libfaketime also shortens their sleeps K times). Job payloads do not inherit the
wrapper's LD_PRELOAD (a batch job gets the submitter's environment), so they sleep in real time.

The cluster's slurm.conf is derived from the model's: its scheduling settings, nodes (CPUs, RealMemory) and
partitions are kept; the plumbing is replaced (loopback addresses and free ports, `auth/none` and `cred/none`
instead of munge, `proctrack/pgid`, `task/none`, no accounting, `SlurmdParameters=config_overrides` so declared
CPUs need not exist, a large `MinJobAge` so finished jobs stay visible), and timeouts are scaled by K (Slurm
caps them at 65535 s). GPUs (`Gres=gpu:N`, typed `gpu:a100:N`: one `Type=` line each) are empty files named by a
generated gres.conf (`AutoDetect=off`), other GRES are counts (`Count=`).

Every process of the cluster carries a random token in its environment (daemons, job steps, payloads), so
`stop` kills exactly those, by PID, even when slurmd has detached the job steps into sessions of their own.
"""

from __future__ import annotations

import calendar
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from clustersim._io.system import alive, apt_install
from clustersim.errors import ClusterSimError
from clustersim.policies.slurm.conf import NodeConf, SlurmConf, format_minutes

DAEMONS = ("slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "scancel", "faketime")
PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge", "faketime", "libfaketime")
TOKEN_VARIABLE = "CLUSTERSIM_SLURM_CLUSTER"

PLUMBING = {
    "slurmctldhost", "controlmachine", "controladdr", "backupcontroller", "slurmctldport", "slurmdport",
    "authtype", "credtype", "slurmuser", "slurmduser", "statesavelocation", "slurmdspooldir",
    "slurmctldpidfile", "slurmdpidfile", "slurmctldlogfile", "slurmdlogfile", "proctracktype", "taskplugin",
    "switchtype", "mpidefault", "accountingstoragetype", "accountingstoragehost", "jobacctgathertype",
    "jobcomptype", "minjobage", "returntoservice", "slurmdparameters", "clustername", "launchparameters",
    "messagetimeout", "tcptimeout", "slurmctldtimeout", "slurmdtimeout", "batchstarttimeout", "killwait",
    "unkillablesteptimeout", "prologepilogtimeout", "inactivelimit", "slurmctlddebug", "slurmddebug",
    "plugstackconfig", "maxjobcount", "firstjobid", "healthcheckprogram", "grestypes", "cgroupplugin",
}
"""Keys of the model's slurm.conf that the loopback cluster sets itself."""

TIMEOUTS = {
    "MessageTimeout": 10, "TCPTimeout": 2, "SlurmctldTimeout": 120, "SlurmdTimeout": 300,
    "BatchStartTimeout": 10, "KillWait": 30, "UnkillableStepTimeout": 60,
}
"""Slurm's default timeouts (seconds), scaled by the speed-up so they stay the same in wall time."""
MAX_TIMEOUT = 65535


class SlurmUnavailable(ClusterSimError):
    """Slurm (or faketime) is not installed and cannot be installed here."""


class ClusterError(ClusterSimError):
    """The loopback cluster did not start or misbehaved; the message points at its logs."""


def missing_programs() -> list[str]:
    return [name for name in DAEMONS if shutil.which(name) is None]


def ensure_installed(*, install: bool = True) -> None:
    """Install the Debian packages Slurm needs when programs are missing (needs root and apt-get)."""
    missing = missing_programs()
    if not missing:
        return
    if not install:
        raise SlurmUnavailable(f"missing programs: {', '.join(missing)}")
    failure = apt_install(PACKAGES, lambda: not missing_programs())
    if failure is not None:
        raise SlurmUnavailable(f"missing programs {', '.join(missing)}; {failure}")


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 right now (bound then released)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def loopback_conf(
    conf: SlurmConf, workdir: Path, ports: Sequence[int], speedup: float, debug: str = "info"
) -> str:
    """The slurm.conf of the loopback cluster: the model's scheduling settings, loopback plumbing."""
    ctld_port, slurmd_ports = ports[0], ports[1:]
    scale = max(1.0, speedup)
    lines = [
        "# Written by clustersim slurm-replay: a loopback cluster (see clustersim.slurm.cluster)",
        "ClusterName=clustersim",
        "SlurmctldHost=localhost(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        "AuthType=auth/none",
        "CredType=cred/none",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={workdir / 'state'}",
        f"SlurmdSpoolDir={workdir / 'spool'}/%n",
        f"SlurmctldPidFile={workdir / 'slurmctld.pid'}",
        f"SlurmdPidFile={workdir / 'slurmd.%n.pid'}",
        f"SlurmctldLogFile={workdir / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={workdir / 'log' / 'slurmd.%n.log'}",
        "ProctrackType=proctrack/pgid",
        "TaskPlugin=task/none",
        "SwitchType=switch/none",
        "MpiDefault=none",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "MinJobAge=65533",
        "MaxJobCount=100000",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",
        "InactiveLimit=0",
        f"SlurmctldDebug={debug}",
        f"SlurmdDebug={debug}",
    ]
    lines += [f"{key}={min(MAX_TIMEOUT, round(value * scale))}" for key, value in TIMEOUTS.items()]
    names = [name.strip() for name in conf.settings.get("grestypes", "").split(",") if name.strip()]
    names += [name for node in conf.nodes for name, _ in node.gres if name not in names]
    if names:
        lines.append(f"GresTypes={','.join(dict.fromkeys(names))}")
    for key, value in conf.settings.items():
        if key not in PLUMBING:
            lines.append(f"{conf.original_keys.get(key, key)}={value}")
    for node, port in zip(conf.nodes, slurmd_ports, strict=True):
        lines.append(
            f"NodeName={node.name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} "
            f"CPUs={node.cpus} RealMemory={node.real_memory} Weight={node.weight} "
            + (f"Gres={_gres_text(node)} " if node.gres else "")
            + "State=UNKNOWN"
        )
    for part in conf.partitions:
        words = [
            f"PartitionName={part.name}", f"Nodes={','.join(part.nodes)}",
            f"Default={'YES' if part.default else 'NO'}", f"MaxTime={format_minutes(part.max_time)}",
            f"PriorityJobFactor={part.priority_job_factor}", f"PriorityTier={part.priority_tier}",
            f"State={'UP' if part.up else 'DOWN'}",
        ]
        if part.default_time is not None:
            words.append(f"DefaultTime={format_minutes(part.default_time)}")
        if part.max_nodes is not None:
            words.append(f"MaxNodes={part.max_nodes}")
        if part.def_cpu_per_gpu is not None:
            words.append(f"DefCpuPerGPU={part.def_cpu_per_gpu}")
        if part.def_mem_per_gpu is not None:
            words.append(f"DefMemPerGPU={part.def_mem_per_gpu}")
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


@dataclass
class ClockSample:
    """One reading of the cluster's clock: wall time (time.time()) and the daemons' fake time."""

    wall: float
    fake: float


@dataclass
class LoopbackCluster:
    """Start, use and stop a loopback Slurm cluster. Use as a context manager: `stop` always runs."""

    conf: SlurmConf
    workdir: Path
    speedup: float = 1.0
    start_timeout: float = 60.0
    debug: str = "info"
    """SlurmctldDebug and SlurmdDebug (debug2 shows every scheduling pass)."""
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    pids: dict[str, int] = field(default_factory=dict)
    started_at: ClockSample | None = None
    _wrapper: subprocess.Popen[str] | None = None

    @property
    def conf_path(self) -> Path:
        return self.workdir / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """The environment of Slurm commands (clients and, through sbatch, job payloads)."""
        return dict(os.environ, SLURM_CONF=str(self.conf_path), TZ="UTC", **{TOKEN_VARIABLE: self.token})

    def __enter__(self) -> LoopbackCluster:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Write the configuration, start the daemons under faketime and wait until every node is idle."""
        for sub in ("state", "log", "spool"):
            (self.workdir / sub).mkdir(parents=True, exist_ok=True)
        for node in self.conf.nodes:
            (self.workdir / "spool" / node.name).mkdir(exist_ok=True)
        ports = free_ports(1 + len(self.conf.nodes))
        text = loopback_conf(self.conf, self.workdir, ports, self.speedup, self.debug)
        self.conf_path.write_text(text, encoding="utf-8")
        self._write_gres_conf()
        script = self.workdir / "daemons.sh"
        conf = self.conf_path
        lines = ["#!/bin/sh", f"slurmctld -D -i -f {conf} >{self.workdir / 'log' / 'slurmctld.out'} 2>&1 &",
                 'echo "slurmctld $!"']
        for node in self.conf.nodes:
            out = self.workdir / "log" / f"slurmd.{node.name}.out"
            lines += [f"slurmd -D -N {node.name} -f {conf} >{out} 2>&1 &", f'echo "slurmd:{node.name} $!"']
        lines += ['echo "ready"', "while read line; do date +%s.%N; done"]
        script.write_text("\n".join(lines) + "\n", encoding="utf-8")
        script.chmod(0o755)
        # SLURM_CONF: the daemons look for gres.conf next to it (-f alone leaves them at /etc/slurm).
        env = dict(os.environ, TZ="UTC", SLURM_CONF=str(conf), **{TOKEN_VARIABLE: self.token})
        rate = f"{self.speedup:g}"
        self._wrapper = subprocess.Popen(
            ["faketime", "-m", "-f", f"+0 x{rate}", str(script)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, start_new_session=True,
        )
        try:
            self._read_pids()
            self.started_at = self.clock()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _write_gres_conf(self) -> None:
        """gres.conf for the nodes' GRES: one empty file per GPU stands for its device (slurmd logs that it is
        not a device, and counts it: the jobs never touch it); other GRES are counts (`Count=`)."""
        lines = ["AutoDetect=off"]
        devices = self.workdir / "gpus"
        for node in self.conf.nodes:
            first = 0
            for name, count in _gres_items(node):
                if name.partition(":")[0] != "gpu":
                    lines.append(f"NodeName={node.name} Name={name} Count={count}")
                    continue
                (devices / node.name).mkdir(parents=True, exist_ok=True)
                for i in range(first, first + count):
                    (devices / node.name / f"gpu{i}").touch()
                kind = f" Type={name[4:]}" if name != "gpu" else ""
                files = f"{devices / node.name}/gpu[{first}-{first + count - 1}]"
                lines.append(f"NodeName={node.name} Name=gpu{kind} File={files}")
                first += count
        if len(lines) > 1:
            (self.workdir / "gres.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _read_pids(self) -> None:
        assert self._wrapper is not None and self._wrapper.stdout is not None
        while True:
            line = self._wrapper.stdout.readline()
            if not line:
                raise ClusterError(f"the daemons' wrapper exited early; see {self.workdir / 'log'}")
            if line.strip() == "ready":
                return
            name, pid = line.split()
            self.pids[name] = int(pid)

    def clock(self) -> ClockSample:
        """Read the daemons' clock (a `date` run under the same faketime wrapper)."""
        wrapper = self._wrapper
        if wrapper is None or wrapper.stdin is None or wrapper.stdout is None:
            raise ClusterError("the cluster is not running")
        before = time.time()
        wrapper.stdin.write("t\n")
        wrapper.stdin.flush()
        fake = float(wrapper.stdout.readline())
        after = time.time()
        return ClockSample((before + after) / 2, fake)

    def controller_started(self) -> float | None:
        """When slurmctld became the primary controller (its log, cluster clock): its threads' phase origin."""
        log = self.workdir / "log" / "slurmctld.log"
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if "Running as primary controller" in line and line.startswith("["):
                        stamp = line[1:line.index("]")]
                        whole, _, fraction = stamp.partition(".")
                        seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
                        return seconds + float(f"0.{fraction or 0}")
        except (OSError, ValueError):
            return None
        return None

    def run(self, *command: str, check: bool = True) -> str:
        """Run a Slurm client command against the cluster; return its standard output."""
        result = subprocess.run(command, env=self.env, capture_output=True, text=True, check=False, timeout=60)
        if check and result.returncode != 0:
            raise ClusterError(f"{' '.join(command)} failed: {result.stderr.strip() or result.stdout.strip()}")
        return result.stdout

    def _wait_ready(self) -> None:
        deadline = time.time() + self.start_timeout
        wanted = {node.name for node in self.conf.nodes}
        last = ""
        while time.time() < deadline:
            for name, pid in self.pids.items():
                if not alive(pid):
                    raise ClusterError(f"{name} (pid {pid}) exited at start-up; see {self.workdir / 'log'}")
            result = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env, capture_output=True,
                                    text=True, check=False, timeout=30)
            last = result.stdout.strip() or result.stderr.strip()
            states = dict(line.split() for line in result.stdout.splitlines() if len(line.split()) == 2)
            if result.returncode == 0 and wanted <= set(states) and all(
                states[n].rstrip("*") == "idle" for n in wanted
            ):
                return
            time.sleep(0.2)
        raise ClusterError(f"the nodes did not become idle within {self.start_timeout:g} s ({last}); "
                           f"see {self.workdir / 'log'}")

    def stop(self) -> None:
        """Stop exactly the processes of this cluster, by PID: daemons, then job steps and payloads."""
        daemons = [pid for pid in self.pids.values() if alive(pid)]
        for pid in daemons:
            _signal(pid, signal.SIGTERM)
        deadline = time.time() + 10
        while time.time() < deadline and any(alive(pid) for pid in daemons):
            time.sleep(0.05)
        for pid in daemons:
            if alive(pid):
                _signal(pid, signal.SIGKILL)
        wrapper = self._wrapper
        self._wrapper = None
        if wrapper is not None:
            if wrapper.stdin is not None:
                with contextlib.suppress(OSError):
                    wrapper.stdin.close()
            try:
                wrapper.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _signal(wrapper.pid, signal.SIGKILL)
                wrapper.wait(timeout=10)
            if wrapper.stdout is not None:
                wrapper.stdout.close()
        for pid in self.stray_pids():
            _signal(pid, signal.SIGKILL)

    def stray_pids(self) -> list[int]:
        """Processes still carrying this cluster's token (job steps, payloads), except this process."""
        marker = f"{TOKEN_VARIABLE}={self.token}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker in environ.split(b"\0"):
                found.append(int(entry.name))
        return found


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _gres_items(node: NodeConf) -> list[tuple[str, int]]:
    """The node's GRES as slurm.conf gives them: typed ones (`gpu:a100`) in place of their name's total."""
    typed = {name.partition(":")[0] for name, _ in node.gres_types}
    return [item for item in node.gres if item[0] not in typed] + list(node.gres_types)


def _gres_text(node: NodeConf) -> str:
    return ",".join(f"{name}:{count}" for name, count in _gres_items(node))
