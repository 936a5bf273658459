"""The `clustersim` command: a thin layer over the library that maps errors to exit codes.

Exit codes: 0 success; 1 internal error; 2 bad input or usage; 3 a decision was refused; 4 the run ended with
jobs never started; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from clustersim import __version__
from clustersim.errors import ClusterSimError, DecisionError, InputError, UnknownNameError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED_DECISION = 3
EXIT_UNFINISHED = 4
EXIT_INTERRUPTED = 130


def _example(name: str) -> Path:
    return Path(str(resources.files("clustersim") / "examples" / name))


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clustersim",
        description="Simulate a compute cluster and the scheduler that runs it.",
        epilog="Exit codes: 0 ok, 1 internal error, 2 bad input, 3 refused decision, 4 jobs left unfinished.",
    )
    parser.add_argument("--version", action="version", version=f"clustersim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="simulate a workload on a platform under a policy",
        description="Simulate a workload on a platform under a policy and write jobs.csv, schedule.csv and a "
        "Gantt chart. Without --workload, runs the embedded example.",
    )
    run.add_argument("-p", "--platform", type=Path, help="SimGrid/Batsim XML or cluster YAML/JSON file")
    run.add_argument("-w", "--workload", type=Path, help="SWF (.swf, .swf.gz) or Batsim workload JSON")
    run.add_argument("--policy", default="easy", help="built-in policy name (see `clustersim policies`)")
    run.add_argument("-o", "--output", type=Path, default=Path("clustersim-out"), help="output directory")
    run.add_argument(
        "--processors", choices=("allocated", "requested"), default="allocated",
        help="SWF: which processor count a job requests (default: allocated)",
    )
    run.add_argument(
        "--walltime", choices=("requested", "exact"), default="requested",
        help="SWF: walltime is the requested time, or the exact run time (perfect estimates)",
    )
    run.add_argument(
        "--cores-per-node", action="store_true",
        help="SWF without --platform: MaxNodes nodes of MaxProcs/MaxNodes cores instead of MaxProcs hosts",
    )
    run.add_argument("--no-gantt", action="store_true", help="do not draw gantt.png")
    run.add_argument(
        "--record-wall-clock", action="store_true",
        help="write real seconds in schedule.csv's simulation_time (outputs then differ between runs)",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    run.set_defaults(handler=_run)

    convert = commands.add_parser(
        "convert", help="convert an SWF trace to a Batsim workload JSON",
        description="Convert an SWF trace (.swf or .swf.gz) to a Batsim workload JSON file.",
    )
    convert.add_argument("source", type=Path, help="SWF trace")
    convert.add_argument("target", type=Path, help="Batsim workload JSON to write")
    convert.add_argument("--processors", choices=("allocated", "requested"), default="allocated")
    convert.add_argument("--walltime", choices=("requested", "exact"), default="requested")
    convert.set_defaults(handler=_convert)

    gantt = commands.add_parser(
        "gantt", help="draw a Gantt chart of a jobs.csv", description="Draw a Gantt chart (PNG or SVG)."
    )
    gantt.add_argument("jobs_csv", type=Path, help="a jobs.csv written by clustersim or Batsim")
    gantt.add_argument("-o", "--output", type=Path, default=Path("gantt.png"), help="PNG or SVG file")
    gantt.set_defaults(handler=_gantt)

    policies = commands.add_parser("policies", help="list the built-in policies", description="List policies.")
    policies.set_defaults(handler=_policies)
    return parser


def _say(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from clustersim.platform.load import load_platform
    from clustersim.platform.swf_header import platform_from_swf_header
    from clustersim.progress import ProgressSink
    from clustersim.runner import simulate
    from clustersim.scheduling.registry import create_policy
    from clustersim.workload.load import load_workload, workload_format

    if args.workload is None:
        args.workload = _example("workload.json")
        args.platform = args.platform or _example("platform.yaml")
        _say(args, f"no --workload given: running the embedded example ({args.workload.name})")
    policy = create_policy(args.policy)
    workload = load_workload(args.workload, processors=args.processors, walltime=args.walltime)
    if args.platform is not None:
        platform = load_platform(args.platform)
    elif workload_format(args.workload) == "swf":
        platform = platform_from_swf_header(workload.header, cores_per_node=args.cores_per_node)
    elif workload.nb_res:
        from clustersim.platform.model import Node, Platform

        platform = Platform([Node(i, f"host{i}") for i in range(workload.nb_res)], name="nb_res")
    else:
        raise InputError(str(args.workload), "the workload does not say its platform size; give --platform")
    progress = ProgressSink(enabled=not args.quiet)
    result = simulate(
        platform, workload, policy, args.output,
        extra_sinks=[progress], record_wall_clock=args.record_wall_clock,
    )
    for line in workload.skips.lines():
        _say(args, f"{args.workload}: {line}")
    m = result.metrics
    _say(
        args,
        f"{m.nb_jobs} jobs ({m.nb_success} succeeded, {m.nb_killed} killed, {m.nb_rejected} rejected) on "
        f"{platform.nb_resources} {platform.unit.value}s under '{args.policy}': makespan {m.makespan:.0f} s, "
        f"mean wait {m.mean('waiting'):.1f} s, mean bounded slowdown {m.mean('bounded_slowdown'):.2f}; "
        f"{result.wall_seconds:.2f} s of wall time",
    )
    if not args.no_gantt:
        from clustersim.plots.gantt import plot_gantt

        plot_gantt(args.output / "jobs.csv", args.output / "gantt.png", nb_resources=platform.nb_resources)
    _say(args, f"outputs in {args.output}/")
    if result.summary.unfinished:
        keys = result.summary.unfinished
        print(
            f"clustersim: {len(keys)} job(s) were never started (first: {', '.join(keys[:5])})",
            file=sys.stderr,
        )
        return EXIT_UNFINISHED
    return EXIT_OK


def _convert(args: argparse.Namespace) -> int:
    from clustersim.workload.batsim_writer import write_batsim_workload
    from clustersim.workload.load import load_workload

    workload = load_workload(args.source, processors=args.processors, walltime=args.walltime)
    count = write_batsim_workload(workload, args.target, workload.nb_res)
    for line in workload.skips.lines():
        print(f"{args.source}: {line}", file=sys.stderr)
    print(f"wrote {count} jobs to {args.target}", file=sys.stderr)
    return EXIT_OK


def _gantt(args: argparse.Namespace) -> int:
    from clustersim.plots.gantt import plot_gantt

    summary = plot_gantt(args.jobs_csv, args.output)
    print(f"drew {summary.nb_jobs} jobs to {args.output}", file=sys.stderr)
    return EXIT_OK


def _policies(args: argparse.Namespace) -> int:
    from clustersim.scheduling.registry import POLICIES, create_policy

    create_policy("fcfs")  # imports and registers the built-in policies
    for name in POLICIES.names():
        print(name)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except (InputError, UnknownNameError) as error:
        print(f"clustersim: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except DecisionError as error:
        print(f"clustersim: error: {error}", file=sys.stderr)
        return EXIT_REFUSED_DECISION
    except ClusterSimError as error:
        print(f"clustersim: error: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    except OSError as error:
        print(f"clustersim: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("clustersim: interrupted; outputs written so far are kept", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
