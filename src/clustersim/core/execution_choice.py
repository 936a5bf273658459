"""Which execution model a run uses: `fast`, `step` or `simgrid`, named by the user or following the inputs.

By default the inputs decide, never the environment: `simgrid` when the workload's profiles communicate and
the platform is a SimGrid file (it has links); `step` when Batsim's actors would run (Batsim's delivery, no
built-in power policy, no external events) on a workload of delays only (in energy runs: of delays and
computations without communication, with SimGrid's energy plugin emulated) and a SimGrid platform whose every
message takes one known time (platform/messages.py): there it gives Batsim's values, SimGrid's solver steps
included, without SimGrid; `fast` otherwise. When SimGrid is needed and missing the run stops with
SimgridMissing, which says how to install it or to pass `--platform-model fast`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from clustersim.core.execution import ExecutionModel, FastExecution
from clustersim.errors import InputError
from clustersim.platform.messages import message_bandwidth
from clustersim.platform.model import Platform
from clustersim.workload.stream import Workload

MODELS = ("fast", "step", "simgrid")


class CommunicationIgnored(UserWarning):
    """The workload's profiles communicate, and the fast model runs them as if communication were free."""


def resolve_model(requested: str | None, platform_file: Path | None, workload: Workload,
                  batsim_actors: bool = False, energy: bool = False) -> str:
    """The model's name: the requested one, else `simgrid` when jobs communicate on a SimGrid platform, else
    `step` when Batsim's actors would run (`batsim_actors`: Batsim's delivery, no built-in power policy, no external
    events) jobs of delays (with `energy`, Batsim's -E: delays and computations without communication) on a
    platform whose messages all take one known time, else `fast`."""
    if requested is not None:
        if requested not in MODELS:
            raise InputError("--platform-model", f"unknown platform model '{requested}'; valid: {', '.join(MODELS)}")
        if requested == "step" and not batsim_actors:
            raise InputError("--platform-model", "the step model runs Batsim's actors: it needs Batsim's delivery, "
                             "no built-in power policy (--power-off) and no external events")
        return requested
    if platform_file is None:
        return "fast"
    if workload.communicates:
        return "simgrid"
    runs = workload.on_hosts if energy else workload.delays_only
    if batsim_actors and runs and message_bandwidth(platform_file) is not None:
        return "step"
    return "fast"


def execution_model(
    name: str, platform: Platform, platform_file: Path | None, workload: Workload, energy: bool = False
) -> ExecutionModel:
    """Build the named model; the fast one warns once when it ignores the workload's communication. `energy`: the
    run accounts for energy (the simgrid model then turns SimGrid's energy plugin on, as Batsim's -E)."""
    if name == "step":
        from clustersim.core.step_execution import StepExecution

        bandwidth = message_bandwidth(platform_file) if platform_file is not None else None
        if bandwidth is None:
            raise InputError("--platform-model", "the step model needs a SimGrid platform file whose every message "
                             "to the master host takes one known time (hosts in clusters of one bandwidth, no "
                             "latency: docs/platform-model.md)")
        if energy:  # the hosts' energy as SimGrid's plugin keeps it; jobs may compute without communicating
            return StepExecution(bandwidth, platform, energy=True)
        if not workload.delays_only:
            raise InputError("--platform-model", "the step model runs workloads whose profiles are all delays")
        return StepExecution(bandwidth)
    if name == "simgrid":
        from clustersim.core.simgrid_execution import SimgridExecution

        if platform_file is None:
            raise InputError("--platform-model", "the simgrid model needs a SimGrid platform file (--platform)")
        return SimgridExecution(platform, platform_file, energy=energy)
    if workload.communicates:
        warnings.warn(
            f"{workload.source}: the fast platform model ignores the communication and I/O of the jobs' profiles "
            "(use --platform-model simgrid with a SimGrid platform to simulate it)",
            CommunicationIgnored,
            stacklevel=2,
        )
    return FastExecution(platform)
