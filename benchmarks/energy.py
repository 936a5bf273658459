"""Energy accounting overhead: the same replay with and without energy, and with a power policy.

Replays an SWF trace under `easy` on hosts drawing 100 W idle / 200 W busy / 10 W asleep (switch off 5 s,
switch on 10 s) and prints the CPU seconds of the same run without and with energy accounting: with no power
policy, and with the idle-timeout policy (whose run keeps node power states either way), each without and
with Batsim's per-event trace files (machine_states.csv, consumed_energy.csv). Target: energy accounting slows
a run by at most 20%.

    python benchmarks/energy.py [--trace HPC2N-2002-2.2-cln.swf.gz] [--timeout 600]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from clustersim.core.interface import DecisionProcess
from clustersim.platform.model import Node, Platform
from clustersim.platform.power_model import PowerModel, SleepState, Transition
from clustersim.policies.power.powered import PoweredProcess
from clustersim.policies.power.switch_policies import create_power_off, create_power_on
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.swf import read_swf

TRACES_DIR = Path(__file__).resolve().parents[2] / "shared" / "traces"
POWER = PowerModel(100.0, 200.0, (SleepState(10.0, Transition(5.0, 250.0), Transition(10.0, 1000.0)),))


def measure(trace: Path, power_off: str | None, **options: bool) -> tuple[float, str]:
    """CPU seconds of one replay (steadier than wall time on a shared machine), and what it gave."""
    workload = read_swf(trace)
    platform = Platform([Node(i, f"host{i}", power=POWER) for i in range(int(workload.header["MaxProcs"]))])
    process: DecisionProcess = create_policy("easy")
    if power_off is not None:
        process = PoweredProcess(process, create_power_off(power_off), create_power_on("on-demand"))
    cpu = time.process_time()
    with tempfile.TemporaryDirectory() as out:
        result = simulate(platform, workload, process, out, **options)
    summary = f"mean wait {result.metrics.mean('waiting'):.0f} s"
    if result.energy is not None:
        summary += f", {result.energy.consumed_joules / 3.6e9:.1f} MWh, {result.energy.nb_machine_switches} switches"
    return time.process_time() - cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", default="HPC2N-2002-2.2-cln.swf.gz")
    parser.add_argument("--timeout", type=float, default=600.0, help="idle timeout of the power policy (s)")
    args = parser.parse_args()
    trace = TRACES_DIR / args.trace
    timeout = f"idle-timeout:{args.timeout:g}"
    pairs = [
        ("easy", None, {}, {"energy": True, "energy_traces": False}),
        ("easy, with trace files", None, {}, {"energy": True}),
        (f"easy + {timeout}", timeout, {"power": True}, {"energy": True, "energy_traces": False}),
        (f"easy + {timeout}, with trace files", timeout, {"power": True}, {"energy": True}),
    ]
    print(f"{'run':44} {'cpu s without':>14} {'cpu s with':>11} {'overhead':>9}")
    for label, power_off, without, with_energy in pairs:
        base, _ = measure(trace, power_off, **without)
        cpu, summary = measure(trace, power_off, **with_energy)
        print(f"{label:44} {base:>14.2f} {cpu:>11.2f} {100 * (cpu / base - 1):>+8.0f}%   {summary}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
