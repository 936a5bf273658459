"""Compare power policies on one workload: energy saved against never switching off, and what it costs.

Each power-off policy runs in its own directory with energy on; the never-off baseline always runs first.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clustersim._io.numbers import fmt
from clustersim.platform.model import Platform
from clustersim.plots.machine_states import plot_machine_states
from clustersim.policies.power.powered import PoweredProcess
from clustersim.policies.power.switch_policies import create_power_off, create_power_on
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.stream import Workload

BASELINE = "never"


@dataclass
class PolicyResult:
    power_off: str
    joules: float
    mean_waiting: float
    mean_bounded_slowdown: float
    switches: int


def run_directory(power_off: str) -> str:
    """A directory name for a power-off spec: `idle-timeout:600` -> `idle-timeout_600`."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", power_off)


def compare(
    platform: Platform,
    workload: Callable[[], Workload],
    policy: str,
    power_offs: Sequence[str],
    power_on: str,
    output: Path,
    seed: int = 0,
) -> list[PolicyResult]:
    """Run each power-off policy (the baseline first); write comparison.csv and machine-state charts."""
    results = []
    for spec in [BASELINE, *(p for p in power_offs if p != BASELINE)]:
        out = output / run_directory(spec)
        process = PoweredProcess(create_policy(policy), create_power_off(spec, seed), create_power_on(power_on))
        run = simulate(platform, workload(), process, out, energy=True)
        assert run.energy is not None
        plot_machine_states(out / "machine_states.csv", out / "machine_states.png", title=f"power-off {spec}")
        results.append(PolicyResult(
            spec, run.energy.consumed_joules, run.metrics.mean("waiting"), run.metrics.mean("bounded_slowdown"),
            run.energy.nb_machine_switches,
        ))
    _write(results, output / "comparison.csv")
    return results


def _write(results: list[PolicyResult], path: Path) -> None:
    base = results[0]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["power_off", "consumed_joules", "energy_saved", "mean_waiting_time", "waiting_time_change",
                         "mean_bounded_slowdown", "bounded_slowdown_change", "nb_machine_switches"])
        for r in results:
            saved = 1 - r.joules / base.joules if base.joules else 0.0
            writer.writerow([r.power_off, fmt(r.joules), fmt(saved), fmt(r.mean_waiting),
                             fmt(r.mean_waiting - base.mean_waiting), fmt(r.mean_bounded_slowdown),
                             fmt(r.mean_bounded_slowdown - base.mean_bounded_slowdown), r.switches])


def table(results: list[PolicyResult]) -> str:
    """The comparison as a terminal table."""
    base = results[0]
    lines = [f"{'power-off':22} {'energy (kWh)':>13} {'saved':>7} {'mean wait (s)':>14} {'change':>9} "
             f"{'mean bsld':>10} {'change':>8} {'switches':>9}"]
    for r in results:
        saved = 100 * (1 - r.joules / base.joules) if base.joules else 0.0
        lines.append(
            f"{r.power_off:22} {r.joules / 3.6e6:>13.1f} {saved:>6.1f}% {r.mean_waiting:>14.1f} "
            f"{r.mean_waiting - base.mean_waiting:>+9.1f} {r.mean_bounded_slowdown:>10.2f} "
            f"{r.mean_bounded_slowdown - base.mean_bounded_slowdown:>+8.2f} {r.switches:>9}"
        )
    return "\n".join(lines)
