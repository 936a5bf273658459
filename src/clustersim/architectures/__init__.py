"""Shared-cluster scheduling architectures (monolithic, Mesos, Omega) on clustersim's event queue.

The Omega paper (EuroSys 2013) compared how several schedulers can share one cluster with a lightweight
simulator: a model of scheduler decision time and of transaction conflicts. This package reproduces it. It is
a second simulator with its own cell (machines as cpu/memory vectors) and ledger, on the core's event queue
only: its schedulers are not decision processes of the core (see docs/architectures.md).

    from clustersim.architectures import load_config, simulate
    config = load_config("cell.yaml")
    result = simulate(config, config.architectures["omega"])

or from the command line: `clustersim architectures cell.yaml -o out/ [--architecture omega] [--sweep]`.
"""

from clustersim.architectures import mesos, monolithic, omega  # noqa: F401  (register the architectures)
from clustersim.architectures.architecture import ARCHITECTURES, Architecture, ArchitectureSpec, default_spec
from clustersim.architectures.config import Config, load_config, parse_config
from clustersim.architectures.pickers import PICKERS, create_picker
from clustersim.architectures.run import run_architectures, run_to_directory
from clustersim.architectures.simulation import RunResult, simulate

__all__ = [
    "ARCHITECTURES",
    "PICKERS",
    "Architecture",
    "ArchitectureSpec",
    "Config",
    "RunResult",
    "create_picker",
    "default_spec",
    "load_config",
    "parse_config",
    "run_architectures",
    "run_to_directory",
    "simulate",
]
