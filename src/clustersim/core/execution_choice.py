"""Which execution model a run uses: `fast`, `step` or `simgrid`, named by the user or following the inputs.

By default the inputs decide, never the environment: `simgrid` when the workload's profiles communicate and
the platform is a SimGrid file (it has links); `step` when Batsim's actors would run (Batsim's delivery, no
built-in power policy, no external events) on a workload whose jobs only wait or compute on their own hosts
(delays, parallel tasks without communication; in energy runs, with SimGrid's energy plugin emulated) and a
SimGrid platform whose messages take known times (platform/messages.py): there it gives Batsim's values,
SimGrid's solver steps included, without SimGrid; `fast` otherwise. When SimGrid is needed and missing the run
stops with SimgridMissing, which says how to install it or to pass `--platform-model fast`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from clustersim.core.execution import ExecutionModel, FastExecution
from clustersim.errors import InputError
from clustersim.platform.messages import message_rates
from clustersim.platform.model import Platform
from clustersim.workload.stream import Workload

MODELS = ("fast", "step", "simgrid")


class CommunicationIgnored(UserWarning):
    """The workload's profiles communicate, and the fast model runs them as if communication were free."""


def resolve_model(requested: str | None, platform_file: Path | None, workload: Workload,
                  batsim_actors: bool = False, energy: bool = False) -> str:
    """The model's name: the requested one, else `simgrid` when jobs communicate on a SimGrid platform, else
    `step` when Batsim's actors would run (`batsim_actors`: Batsim's delivery, no built-in power policy, no external
    events) jobs that wait or compute on their own hosts on a platform whose messages take known times (with
    `energy`, Batsim's -E, too: the step model emulates SimGrid's energy plugin), else `fast`."""
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
    if batsim_actors and (workload.local_only or workload.delays_only) and message_rates(platform_file) is not None:
        return "step"
    return "fast"


def execution_model(
    name: str, platform: Platform, platform_file: Path | None, workload: Workload, energy: bool = False
) -> ExecutionModel:
    """Build the named model; the fast one warns once when it ignores the workload's communication. `energy`: the
    run accounts for energy (the simgrid model then turns SimGrid's energy plugin on, as Batsim's -E)."""
    if name == "step":
        from clustersim.core.step_execution import StepExecution

        rates = message_rates(platform_file) if platform_file is not None else None
        if rates is None:
            raise InputError("--platform-model", "the step model needs a SimGrid platform file whose messages to the "
                             "master host take known times (hosts in clusters of one bandwidth, or hosts with "
                             "explicit routes to a master host; no latency: docs/platform-model.md)")
        if not (workload.local_only or workload.delays_only):
            raise InputError("--platform-model", "the step model runs workloads whose profiles only wait or compute "
                             "on the job's own hosts (delays, parallel tasks without communication, compositions of "
                             "them): use --platform-model simgrid for communication and I/O")
        return StepExecution(rates, platform, energy=energy)
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
