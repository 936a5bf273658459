"""Which execution model a run uses: `fast` or `simgrid`, named by the user or following the inputs.

By default the inputs decide, never the environment: `simgrid` when the workload's profiles communicate and
the platform is a SimGrid file (it has links), `fast` otherwise. When SimGrid is needed and missing the run
stops with SimgridMissing, which says how to install it or to pass `--platform-model fast`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from clustersim.core.execution import ExecutionModel, FastExecution
from clustersim.errors import InputError
from clustersim.platform.model import Platform
from clustersim.workload.stream import Workload

MODELS = ("fast", "simgrid")


class CommunicationIgnored(UserWarning):
    """The workload's profiles communicate, and the fast model runs them as if communication were free."""


def resolve_model(requested: str | None, platform_is_simgrid: bool, workload: Workload) -> str:
    """The model's name: the requested one, else `simgrid` when jobs communicate on a SimGrid platform."""
    if requested is not None:
        if requested not in MODELS:
            raise InputError("--platform-model", f"unknown platform model '{requested}'; valid: {', '.join(MODELS)}")
        return requested
    return "simgrid" if workload.communicates and platform_is_simgrid else "fast"


def execution_model(
    name: str, platform: Platform, platform_file: Path | None, workload: Workload, energy: bool = False
) -> ExecutionModel:
    """Build the named model; the fast one warns once when it ignores the workload's communication. `energy`: the
    run accounts for energy (the simgrid model then turns SimGrid's energy plugin on, as Batsim's -E)."""
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
