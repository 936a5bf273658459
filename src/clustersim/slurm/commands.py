"""The `slurm-replay` and `compare` commands; cli.py registers them with `add_slurm_commands`.

Kept here so the CLI stays a thin layer and imports nothing of Slurm's until one of these commands runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clustersim.exit_codes import EXIT_OK, EXIT_UNAVAILABLE, EXIT_UNFINISHED
from clustersim.workload.swf import add_swf_options


def add_slurm_commands(commands: argparse._SubParsersAction[Any]) -> None:
    replay = commands.add_parser(
        "slurm-replay",
        help="replay a workload into a real Slurm cluster on loopback",
        description="Start slurmctld and one slurmd per node of the slurm.conf on 127.0.0.1 under an accelerated "
        "clock (faketime), submit every job at its submit time (sbatch --wrap 'sleep D'), and write Slurm's own "
        "record of the schedule as jobs.csv (the simulation's format) plus replay.json. Installs the Debian "
        "packages it needs when missing (as root). Exits 9 when Slurm cannot be installed or started.",
    )
    replay.add_argument("workload", type=Path, help="SWF, Batsim JSON or sbatch-options CSV workload of delay jobs")
    replay.add_argument("--conf", type=Path, required=True, help="slurm.conf: nodes, partitions, scheduling")
    replay.add_argument("--speedup", type=float, default=10.0, help="clock acceleration K (default: 10)")
    replay.add_argument("-o", "--output", type=Path, default=Path("slurm-replay"), help="output directory")
    add_swf_options(replay, cores_per_node=False)
    replay.add_argument("--overhead", type=float, help="per-job overhead in cluster seconds (default: measured)")
    replay.add_argument("--timeout", type=float, default=3600.0, help="wall seconds to wait for the jobs")
    replay.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    replay.add_argument("--simulate", action="store_true",
                        help="also simulate the replayed jobs with the slurm policy (simulated/jobs.csv) and compare")
    replay.set_defaults(handler=_slurm_replay)

    compare = commands.add_parser(
        "compare",
        help="compare two schedules of the same jobs (real vs simulated)",
        description="Job by job start-time differences, start-order flips, and the differences in makespan, "
        "mean waiting time, mean bounded slowdown and utilisation; with --baseline (a second real run), the "
        "same figures between the two real runs.",
    )
    compare.add_argument("reference", type=Path, help="jobs.csv of the reference (real) run")
    compare.add_argument("other", type=Path, help="jobs.csv of the other (simulated) run")
    compare.add_argument("--baseline", type=Path, help="jobs.csv of a second real run, for the run-to-run spread")
    compare.add_argument("--resources", type=int, help="number of allocation units (default: from the files)")
    compare.add_argument("--whole-seconds", action="store_true",
                         help="floor every time first, as Slurm's records keep them (sacct, scontrol)")
    compare.add_argument("--json", type=Path, help="also write the figures as JSON")
    compare.add_argument("--plot", type=Path, help="also draw real vs simulated start times (PNG)")
    compare.set_defaults(handler=_compare)


def _slurm_replay(args: argparse.Namespace) -> int:
    from clustersim.policies.slurm.conf import read_slurm_conf
    from clustersim.slurm.cluster import ClusterError, SlurmUnavailable
    from clustersim.slurm.replay import replay, simulate_replay, write_replay
    from clustersim.workload.load import load_workload

    conf = read_slurm_conf(args.conf)
    workload = load_workload(args.workload, processors=args.processors, walltime=args.walltime)
    jobs = list(workload.jobs)
    output: Path = args.output
    try:
        result = replay(jobs, conf, output / "cluster", speedup=args.speedup, overhead=args.overhead,
                        timeout=args.timeout, install=not args.no_install)
    except (SlurmUnavailable, ClusterError) as error:
        print(f"clustersim: slurm-replay: {error}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    write_replay(result, output)
    print(f"replayed {len(result.outcomes)} jobs at x{args.speedup:g} in {result.wall_seconds:.1f} s of wall time; "
          f"outputs in {output}/", file=sys.stderr)
    if args.simulate:
        from clustersim.slurm.compare import compare_files, report
        from clustersim.slurm.validation import replay_options

        options = replay_options(output / "replay.json")
        simulate_replay(output / "jobs.csv", conf, result.ctld_start, output / "simulated",
                        clock_origin=result.origin, epilog_delay=options["epilog_delay"],
                        loop_period=options["loop_period"])
        print(report(compare_files(output / "jobs.csv", output / "simulated" / "jobs.csv")))
    return EXIT_UNFINISHED if result.unfinished else EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from clustersim.slurm.compare import compare_files, plot, report, write_json

    deviations = compare_files(args.reference, args.other, args.baseline, args.resources, args.whole_seconds)
    print(report(deviations))
    if args.json is not None:
        write_json(deviations, args.json)
    if args.plot is not None:
        plot(args.reference, args.other, args.plot)
    return EXIT_OK
