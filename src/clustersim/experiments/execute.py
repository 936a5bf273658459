"""Executing one run of a campaign in its own directory, on whatever process or machine a backend chose.

A run directory holds `config.yaml` (written first, so even a failed run can be replayed), the outputs of
`runner.simulate` (`jobs.csv`, `schedule.csv`, `extra_metrics.csv`), then either `error.txt` or the completion
marker `done.json`
(which also keeps what the workload reader skipped or noticed, and the run's wall-clock seconds).
The marker is written last and atomically (a temporary file renamed), so a run interrupted at any point is
never mistaken for a complete one. A run's errors are caught and recorded: one bad run never stops a campaign.
"""

from __future__ import annotations

import json
import os
import random
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from clustersim._version import __version__
from clustersim.core.interface import DecisionProcess
from clustersim.errors import ClusterSimError, InputError
from clustersim.experiments.config import RunConfig, write_run_config
from clustersim.platform.model import Node, Platform
from clustersim.policies.registry import create_policy
from clustersim.runner import RunResult, simulate
from clustersim.workload.stream import Workload
from clustersim.workload.transforms import cap_size, scale_load, set_walltimes, time_window

CONFIG_FILE = "config.yaml"
DONE_FILE = "done.json"
ERROR_FILE = "error.txt"


@dataclass(frozen=True)
class RunTask:
    """What a worker needs to execute one run: plain picklable data."""

    name: str
    directory: str
    config: RunConfig


@dataclass(frozen=True)
class RunRecord:
    """How a run ended. `error` is one line for tables; the details are in the run's `error.txt`."""

    name: str
    status: Literal["ok", "failed"]
    error: str = ""
    nb_unfinished: int = 0
    wall_seconds: float = 0.0


def open_platform(config: RunConfig, workload: Workload) -> Platform:
    """The run's platform: a file, N identical hosts, or sized by the workload (SWF header, `nb_res`)."""
    from clustersim.platform.load import load_platform
    from clustersim.platform.swf_header import platform_from_swf_header

    if isinstance(config.platform, int):
        return Platform([Node(i, f"host{i}") for i in range(config.platform)], name=f"{config.platform}-hosts")
    if config.platform is not None:
        return load_platform(config.platform)
    if workload.header.get("MaxProcs"):
        return platform_from_swf_header(workload.header, cores_per_node=config.cores_per_node, source=workload.source)
    if workload.nb_res:
        return Platform([Node(i, f"host{i}") for i in range(workload.nb_res)], name="nb_res")
    raise InputError(workload.source, "the workload does not say its platform size; set 'platform'")


def open_run(config: RunConfig) -> tuple[Platform, Workload]:
    """The platform and the transformed workload of a run; the workload is read lazily, once.

    Transformations apply in a fixed order: time window (on the original submit times), load scaling, size
    cap, walltime model (which needs the platform's speed when run times depend on it).
    """
    from clustersim.workload.load import load_workload

    workload = load_workload(config.workload, processors=config.processors)
    jobs = workload.jobs
    if config.time_window is not None:
        start, end = config.time_window
        jobs = time_window(jobs, start, end, shift=config.time_window_shift)
    if config.load_scale != 1.0:
        jobs = scale_load(jobs, config.load_scale)
    if config.size_cap is not None:
        jobs = cap_size(jobs, config.size_cap, config.size_cap_mode, workload.skips)
    platform = open_platform(config, workload)
    if config.walltime != "requested":
        rng = random.Random(config.seed)
        speed = platform.homogeneous_speed
        jobs = set_walltimes(jobs, config.walltime, config.walltime_factor, speed=speed, rng=rng)
    workload.jobs = jobs
    return platform, workload


def simulate_config(config: RunConfig, output: Path) -> tuple[RunResult, Platform, Workload]:
    """Simulate a configured run into `output` (jobs.csv, schedule.csv): what `clustersim run --config` does."""
    platform, workload = open_run(config)
    process: DecisionProcess = create_policy(config.policy)
    if config.power_off is not None:
        from clustersim.policies.power.powered import PoweredProcess
        from clustersim.policies.power.switch_policies import create_power_off, create_power_on

        off, on = create_power_off(config.power_off, config.seed), create_power_on(config.power_on)
        process = PoweredProcess(process, off, on)
    energy = config.energy or config.power_off is not None
    return simulate(platform, workload, process, output, energy=energy), platform, workload


def execute(task: RunTask) -> RunRecord:
    """Execute one run in its directory; never raises for the run's own errors (they are recorded)."""
    directory = Path(task.directory)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.iterdir():  # outputs of an earlier attempt, perhaps with another configuration
        if stale.is_file():
            stale.unlink()
    write_run_config(task.config, directory / CONFIG_FILE)
    started = time.perf_counter()
    try:
        result, _, workload = simulate_config(task.config, directory)
    except Exception as error:  # a failed run is recorded, never raised: the campaign goes on
        message = str(error) if isinstance(error, ClusterSimError) else f"{type(error).__name__}: {error}"
        details = "" if isinstance(error, ClusterSimError) else "\n" + traceback.format_exc()
        (directory / ERROR_FILE).write_text(message + "\n" + details, encoding="utf-8")
        return RunRecord(task.name, "failed", message.splitlines()[0] if message else type(error).__name__)
    wall = time.perf_counter() - started
    unfinished = result.summary.unfinished
    marker = {
        "status": "ok",
        "config_sha256": task.config.digest(),
        "nb_unfinished": len(unfinished),
        "unfinished_first": unfinished[:5],
        "workload_notes": workload.skips.lines(),
        "wall_seconds": round(wall, 6),
        "clustersim": __version__,
    }
    write_atomically(directory / DONE_FILE, json.dumps(marker, indent=1) + "\n")
    return RunRecord(task.name, "ok", nb_unfinished=len(unfinished), wall_seconds=wall)


def write_atomically(path: Path, text: str) -> None:
    """Write a file so that readers see either nothing or all of it (write a temporary file, then rename).

    This protects against clustersim dying at any point (Ctrl-C, kill, out of memory). There is no fsync: it
    would cost milliseconds per run, and without syncing the outputs too it would not make a run durable
    against a power cut anyway; a marker emptied by one is unreadable, so its run simply runs again.
    """
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def read_marker(directory: Path) -> dict[str, object] | None:
    """A run's completion marker, or None when the run is not complete."""
    try:
        marker = json.loads((directory / DONE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and marker.get("status") == "ok" else None


def is_complete(directory: Path, config: RunConfig) -> bool:
    """Whether the run in `directory` finished with exactly this configuration (else it must run again)."""
    marker = read_marker(directory)
    return marker is not None and marker.get("config_sha256") == config.digest()
