"""The `clustersim autoscale` command: load a scenario, run it, say where the outputs are."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from clustersim.autoscaling.run import run_scenario
from clustersim.autoscaling.scenario import load_scenario


def run_command(args: argparse.Namespace, scenario_path: Path) -> int:
    scenario = load_scenario(scenario_path)
    result = run_scenario(scenario, args.output, figures=not args.no_figures)
    if not args.quiet:
        rows = result.rows
        completed = sum(r.completed for r in rows)
        failed = sum(r.failed for r in rows)
        peak = max((r.replicas for r in rows), default=0)
        pending = max((r.replicas_pending for r in rows), default=0)
        latencies = [r.latency_p99 for r in rows if not math.isnan(r.latency_p99)]
        print(
            f"{scenario.name}: {scenario.duration:g} s simulated in {result.wall_seconds:.2f} s "
            f"({scenario.mode}, scheduler {result.scheduler}); {completed:.0f} requests completed, {failed:.0f} "
            f"failed; up to {peak} replicas ({pending} pending at most); worst interval p99 "
            f"{max(latencies, default=math.nan):.3f} s; outputs in {args.output}/",
            file=sys.stderr,
        )
    return 0
