"""The `clustersim` command: a thin layer over the library that maps errors to exit codes (`exit_codes.py`)."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from clustersim._version import __version__
from clustersim.errors import (
    ClusterSimError,
    DecisionError,
    DuplicateNameError,
    InputError,
    MissingExtraError,
    PluginError,
    UnknownNameError,
)
from clustersim.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NO_ANSWER,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_REFUSED_DECISION,
    EXIT_RUNS_FAILED,
    EXIT_UNFINISHED,
    MEANINGS,
)
from clustersim.protocols.batsim.errors import NoAnswerError, ProtocolError
from clustersim.workload.swf import add_swf_options

if TYPE_CHECKING:
    from clustersim.core.execution import ExecutionModel
    from clustersim.core.interface import DecisionProcess
    from clustersim.platform.model import Platform
    from clustersim.protocols.batsim.adapter import ExternalScheduler
    from clustersim.workload.stream import Workload


def _example(name: str) -> Path:
    return Path(str(resources.files("clustersim") / "examples" / name))


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clustersim",
        description="Simulate a compute cluster and the scheduler that runs it.",
        epilog="Exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in MEANINGS.items()) + ".",
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
    _add_host_order(run)
    run.add_argument(
        "--platform-model", choices=("fast", "step", "simgrid"),
        help="how jobs execute: 'fast' (profile times at the hosts' speeds, communication free), 'step' (delay "
        "and computing jobs, with Batsim's actors on SimGrid's solver steps computed without SimGrid) or "
        "'simgrid' (SimGrid times computation and communication on the platform's hosts and links); default: "
        "simgrid when the workload's profiles communicate and the platform is a SimGrid file, step for Batsim's "
        "delivery of jobs that wait or compute on a SimGrid platform whose messages take known times (with -E "
        "too; no --power-off, no --events), else fast (see docs/platform-model.md)",
    )
    run.add_argument(
        "--events", type=Path, metavar="FILE",
        help="Batsim external events: machines that become unavailable and available again (JSON lines, "
        "see docs/platform-model.md)",
    )
    run.add_argument("-w", "--workload", type=Path, help="SWF (.swf, .swf.gz) or Batsim workload JSON")
    run.add_argument("--workload-format", metavar="NAME",
                     help="read the workload with this reader (swf, batsim-json, or a plugin's name or module:Name) "
                     "instead of recognising its format")
    run.add_argument("--platform-format", metavar="NAME",
                     help="read the platform with this reader (simgrid, cluster, or a plugin's) instead of "
                     "recognising its format")
    run.add_argument("--policy", default="easy", help="policy name (see `clustersim policies`) or package.module:Class")
    run.add_argument(
        "--policy-option", action="append", metavar="KEY=VALUE",
        help="an option of the policy, repeatable (e.g. --policy slurm --policy-option conf=slurm.conf)",
    )
    run.add_argument("-o", "--output", type=Path, default=Path("clustersim-out"), help="output directory")
    run.add_argument(
        "--force", action="store_true",
        help="replace the outputs of an earlier run in the output directory (without it, such a directory is refused)",
    )
    run.add_argument(
        "-e", "--export", metavar="PREFIX",
        help="Batsim's output prefix, instead of --output: '-e out/exp' writes out/exp_jobs.csv, out/exp_schedule.csv",
    )
    external = run.add_argument_group("external scheduler (Batsim protocol, see docs/batsim-protocol.md)")
    external.add_argument(
        "-s", "--socket", "--socket-endpoint", "--external", dest="external", metavar="ENDPOINT",
        help="let the scheduler listening at ENDPOINT (e.g. tcp://localhost:28000) decide, instead of --policy",
    )
    external.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS",
        help="longest wait for each answer of the external scheduler; 0 waits forever (default: 30)",
    )
    external.add_argument("--forward-profiles-on-submission", action="store_true",
                          help="JOB_SUBMITTED carries the job's profile")
    external.add_argument("--enable-dynamic-jobs", action="store_true",
                          help="the scheduler may register jobs and profiles (REGISTER_JOB, REGISTER_PROFILE)")
    external.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                          help="registered jobs are acknowledged with JOB_SUBMITTED")
    add_swf_options(run)
    run.add_argument(
        "--delivery", choices=("batsim", "instant"), default="batsim",
        help="how the events of one instant reach the scheduler: in Batsim 4.2's rounds (default), or all in one "
        "call (see docs/policies.md)",
    )
    run.add_argument("--no-gantt", action="store_true", help="do not draw gantt.png")
    _add_energy_options(run)
    run.add_argument(
        "--record-wall-clock", action="store_true",
        help="write real seconds in schedule.csv's simulation_time (outputs then differ between runs)",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    run.add_argument(
        "--config", type=Path,
        help="replay a run of a campaign from its config.yaml (its workload, platform, policy and options win)",
    )
    from clustersim.protocols.batsim.command_line import add_batsim_flags

    add_batsim_flags(run)
    run.set_defaults(handler=_run)

    convert = commands.add_parser(
        "convert", help="convert an SWF trace to a Batsim workload JSON",
        description="Convert an SWF trace (.swf or .swf.gz) to a Batsim workload JSON file.",
    )
    convert.add_argument("source", type=Path, help="SWF trace")
    convert.add_argument("target", type=Path, help="Batsim workload JSON to write")
    add_swf_options(convert, cores_per_node=False)
    convert.set_defaults(handler=_convert)

    gantt = commands.add_parser(
        "gantt", help="draw a Gantt chart of a jobs.csv", description="Draw a Gantt chart (PNG or SVG)."
    )
    gantt.add_argument("jobs_csv", type=Path, help="a jobs.csv written by clustersim or Batsim")
    gantt.add_argument("-o", "--output", type=Path, default=Path("gantt.png"), help="PNG or SVG file")
    gantt.set_defaults(handler=_gantt)

    _add_power_compare_command(commands)

    policies = commands.add_parser("policies", help="list the built-in policies", description="List policies.")
    policies.set_defaults(handler=_policies)
    _add_architectures_command(commands)
    _add_autoscale_command(commands)
    _add_view_command(commands)
    _add_campaign_commands(commands)
    from clustersim.slurm.commands import add_slurm_commands

    add_slurm_commands(commands)
    from clustersim.kubernetes.commands import add_kubernetes_commands

    add_kubernetes_commands(commands)
    return parser


def _say(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from clustersim.core.simulation import Delivery
    from clustersim.platform.events import read_events
    from clustersim.policies.registry import create_policy, parse_policy_options
    from clustersim.protocols.batsim.command_line import refusal
    from clustersim.records.output_dir import claim_output_dir
    from clustersim.records.progress import ProgressSink
    from clustersim.runner import simulate

    refused = refusal(args)
    if refused is not None:
        raise InputError("command line", refused)
    if args.verbosity == "quiet":
        args.quiet = True
    if args.config is not None:
        return _run_config(args)
    if args.workload is None:
        args.workload = _example("workload.json")
        args.platform = args.platform or _example("platform.yaml")
        _say(args, f"no --workload given: running the embedded example ({args.workload.name})")
    options = parse_policy_options(args.policy_option)
    policy = create_policy(args.policy, **options) if args.external is None else None
    platform, workload = _load_inputs(args, getattr(policy, "platform", None))
    execution = _execution_model(args, platform, workload)
    events = read_events(args.events, platform.nb_resources) if args.events is not None else []
    progress = ProgressSink(enabled=not args.quiet)
    args.output, prefix = _export_target(args.export) if args.export is not None else (args.output, "")
    claim_output_dir(args.output, prefix, force=args.force)
    external = None
    process: DecisionProcess
    if policy is None:
        process = external = _external_scheduler(args, workload.name)
    else:
        process = policy
    energy = args.energy or args.power_off is not None
    if args.power_off is not None:
        process = _powered(process, args.power_off, args.power_on, args.seed)
    try:
        result = simulate(
            platform, workload, process, args.output,
            extra_sinks=[progress], record_wall_clock=args.record_wall_clock, prefix=prefix, energy=energy,
            execution=execution, events=events,
            delivery=Delivery(args.delivery), energy_traces=not args.disable_machine_state_tracing,
            machine_states=args.export is not None and not args.disable_machine_state_tracing,
        )
    except DecisionError as error:
        raise (error if external is None else external.explain(error)) from None
    for line in workload.skips.lines():
        _say(args, f"{args.workload}: {line}")
    m = result.metrics
    _say(
        args,
        f"{m.nb_jobs} jobs ({m.nb_success} succeeded, {m.nb_killed} killed, {m.nb_rejected} rejected) on "
        f"{platform.nb_resources} {platform.unit.value}s under "
        f"{repr(args.policy) if external is None else f'the scheduler at {args.external}'}: "
        f"makespan {m.makespan:.0f} s, "
        f"mean wait {m.mean('waiting'):.1f} s, mean bounded slowdown {m.mean('bounded_slowdown'):.2f}; "
        f"{result.wall_seconds:.2f} s of wall time",
    )
    if result.energy is not None:
        e = result.energy
        _say(args, f"energy {e.consumed_joules:.6g} J, {e.nb_machine_switches} machine switches")
    if not args.no_gantt:
        from clustersim.plots.gantt import plot_gantt

        plot_gantt(
            args.output / f"{prefix}jobs.csv", args.output / f"{prefix}gantt.png", nb_resources=platform.nb_resources
        )
    _say(args, f"outputs in {args.output}/")
    if result.summary.unfinished:
        keys = result.summary.unfinished
        print(
            f"clustersim: {len(keys)} job(s) were never started (first: {', '.join(keys[:5])})",
            file=sys.stderr,
        )
        return EXIT_UNFINISHED
    return EXIT_OK


def _add_host_order(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host-order", choices=("document", "name"), default="document",
                        help="how SimGrid XML hosts are numbered: in document order (default) or by name, as "
                        "Batsim with SimGrid >= 3.25 numbers them (n0 n1 n10 n2...)")


def _load_inputs(args: argparse.Namespace, default: Platform | None = None) -> tuple[Platform, Workload]:
    """The platform and workload the options name; the platform comes from the workload when not given.

    `default` is the policy's own platform (the slurm policy's slurm.conf cluster), used without --platform.
    """
    from clustersim.platform.load import load_platform
    from clustersim.platform.model import Node
    from clustersim.platform.model import Platform as PlatformOf
    from clustersim.platform.simgrid import IgnoredPlatformElements
    from clustersim.platform.swf_header import platform_from_swf_header
    from clustersim.workload.load import load_workload, workload_format

    formats = {"workload": getattr(args, "workload_format", None), "platform": getattr(args, "platform_format", None)}
    workload = load_workload(args.workload, processors=args.processors, walltime=args.walltime,
                             format=formats["workload"])
    if args.platform is not None:
        with warnings.catch_warnings():
            model = getattr(args, "platform_model", "fast")
            if model == "simgrid" or (model is None and workload.communicates):  # SimGrid reads the links
                warnings.simplefilter("ignore", IgnoredPlatformElements)
            elif model in ("step", None) and (workload.local_only or workload.delays_only) and _batsim_actors(args):
                from clustersim.platform.messages import message_rates

                if message_rates(args.platform) is not None:  # the step model times messages on the links
                    warnings.simplefilter("ignore", IgnoredPlatformElements)
            return load_platform(args.platform, host_order=args.host_order, format=formats["platform"]), workload
    if default is not None:
        return default, workload
    if (formats["workload"] or workload_format(args.workload)) == "swf":
        return platform_from_swf_header(
            workload.header, cores_per_node=args.cores_per_node, source=f"{args.workload} (SWF header)"
        ), workload
    if workload.nb_res:
        return PlatformOf([Node(i, f"host{i}") for i in range(workload.nb_res)], name="nb_res"), workload
    raise InputError(str(args.workload), "the workload does not say its platform size; give --platform")


def _batsim_actors(args: argparse.Namespace) -> bool:
    """Whether the run would deliver events with Batsim's actors: Batsim's delivery, no built-in power policy, no
    external events."""
    return (getattr(args, "delivery", None) == "batsim" and getattr(args, "power_off", None) is None
            and getattr(args, "events", None) is None)


def _execution_model(args: argparse.Namespace, platform: Platform, workload: Workload) -> ExecutionModel:
    """The execution model `--platform-model` names, or the one the inputs call for (docs/platform-model.md)."""
    from clustersim.core.execution_choice import execution_model, resolve_model
    from clustersim.platform.load import platform_format

    platform_file = args.platform if args.platform is not None and platform_format(args.platform) == "simgrid" else None
    name = resolve_model(args.platform_model, platform_file, workload, _batsim_actors(args), energy=args.energy)
    return execution_model(name, platform, platform_file, workload, energy=args.energy or args.power_off is not None)


def _add_energy_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("energy", "power states and energy (every node needs a power model)")
    group.add_argument(
        "-E", "--energy", action="store_true",
        help="account for energy (Batsim's -E); writes machine_states.csv, consumed_energy.csv and pstate_changes.csv",
    )
    group.add_argument(
        "--power-off", metavar="POLICY",
        help="switch idle nodes off: never, always, idle-timeout[:SECONDS], random[:P], load-threshold[:LOAD], "
        "security-margin[:SHARE], exponential[:QUANTILE], gamma[:QUANTILE] (implies --energy)",
    )
    group.add_argument(
        "--power-on", metavar="POLICY", default="on-demand",
        help="switch sleeping nodes on: on-demand (default), margin[:SHARE]",
    )
    group.add_argument("--seed", type=int, default=0, help="seed of random power policies (default 0)")


def _add_power_compare_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = commands.add_parser(
        "power-compare", help="compare power policies on one workload",
        description="Run a workload under several power-off policies (plus the never-off baseline) and print "
        "the energy saved next to the change in mean waiting time and bounded slowdown. Writes one directory per "
        "policy (with machine_states.png) and comparison.csv.",
    )
    compare.add_argument("-w", "--workload", type=Path, required=True, help="SWF or Batsim workload JSON")
    compare.add_argument("-p", "--platform", type=Path, help="platform with power models (Batsim XML or cluster file)")
    _add_host_order(compare)
    compare.add_argument("--policy", default="easy", help="scheduling policy (default easy)")
    compare.add_argument("--power-off", nargs="+", required=True, metavar="POLICY",
                         help="power-off policies to compare, e.g. always idle-timeout:600 gamma:0.9")
    compare.add_argument("--power-on", default="on-demand", help="power-on policy for every run (default on-demand)")
    compare.add_argument("--seed", type=int, default=0, help="seed of random power policies")
    compare.add_argument("-o", "--output", type=Path, default=Path("power-compare"), help="output directory")
    add_swf_options(compare)
    compare.set_defaults(handler=_power_compare)


def _power_compare(args: argparse.Namespace) -> int:
    from clustersim.experiments.power_compare import compare, table

    platform, _ = _load_inputs(args)
    results = compare(
        platform, lambda: _load_inputs(args)[1], args.policy, args.power_off, args.power_on, args.output, args.seed
    )
    print(table(results))
    print(f"outputs in {args.output}/", file=sys.stderr)
    return EXIT_OK


def _powered(process: DecisionProcess, power_off: str, power_on: str, seed: int) -> DecisionProcess:
    from clustersim.policies.power.powered import PoweredProcess
    from clustersim.policies.power.switch_policies import create_power_off, create_power_on

    return PoweredProcess(process, create_power_off(power_off, seed), create_power_on(power_on))


def _export_target(prefix: str) -> tuple[Path, str]:
    """Batsim's `-e PREFIX` as (directory, file-name prefix): `out/exp` -> out/exp_jobs.csv, `out/` -> out/_jobs.csv."""
    directory, _, name = prefix.rpartition("/")
    return Path(directory or "."), f"{name}_"


def _external_scheduler(args: argparse.Namespace, workload_name: str) -> ExternalScheduler:
    from clustersim.protocols.batsim.adapter import ExternalScheduler
    from clustersim.protocols.batsim.options import ProtocolOptions

    options = ProtocolOptions(
        timeout=args.timeout if args.timeout > 0 else None,
        forward_profiles=args.forward_profiles_on_submission,
        dynamic_jobs=args.enable_dynamic_jobs,
        acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs,
    )
    return ExternalScheduler(args.external, options, {workload_name: str(Path(args.workload).resolve())})


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
    from clustersim.policies.registry import policy_names, policy_summary

    names = policy_names()
    width = max(map(len, names))
    for name in names:
        print(f"{name:<{width}}  {policy_summary(name)}".rstrip())
    return EXIT_OK


# -- campaigns (sweep, report, run --config) -------------------------------------------------------------

def _add_campaign_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sweep = commands.add_parser(
        "sweep", help="run a campaign described by an experiment file",
        description="Run every run of an experiment file (base configuration x axes), skipping runs already "
        "complete in the output directory, then write results and summary tables. Exits 5 when some runs failed.",
    )
    sweep.add_argument("experiment", type=Path, help="experiment file (YAML), see docs/experiments.md")
    sweep.add_argument("-o", "--output", type=Path, required=True, help="campaign directory")
    sweep.add_argument("--strict", action="store_true", help="unknown keys in the experiment file are errors")
    sweep.add_argument(
        "--dask", metavar="ADDRESS|local",
        help="run on the Dask scheduler at ADDRESS (tcp://host:8786), or on a new LocalCluster with 'local'",
    )
    sweep.add_argument("--workers", type=int, help="local processes or LocalCluster workers (default: all cores)")
    sweep.add_argument("--report", action="store_true", help="also write the HTML report")
    sweep.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    sweep.set_defaults(handler=_sweep)

    report = commands.add_parser(
        "report", help="write the HTML report of a campaign",
        description="Refresh a campaign's tables and write its HTML report (tables and figures) and figures.",
    )
    report.add_argument("directory", type=Path, help="campaign directory written by `clustersim sweep`")
    report.add_argument("-o", "--output", type=Path, help="HTML file (default: DIRECTORY/report.html)")
    report.set_defaults(handler=_report)


def _sweep(args: argparse.Namespace) -> int:
    from clustersim.experiments import DaskBackend, LocalBackend, load_experiment, run_campaign
    from clustersim.experiments.backends import Backend

    if args.workers is not None and args.workers < 1:
        raise InputError("--workers", f"expected a number of workers >= 1, got {args.workers}")
    experiment = load_experiment(args.experiment, strict=args.strict)
    for warning in experiment.warnings:
        print(f"clustersim: warning: {warning}", file=sys.stderr)
    backend: Backend = LocalBackend(args.workers)
    if args.dask is not None:
        backend = DaskBackend(None if args.dask == "local" else args.dask, args.workers)
    _say(args, f"{len(experiment.runs)} runs in {args.output}/ on {backend.describe()}")
    result = run_campaign(experiment, args.output, backend, progress=not args.quiet)
    _say(
        args,
        f"{result.executed} run(s) executed ({result.ok} ok, {len(result.failed)} failed), {result.skipped} already "
        f"complete; tables: {args.output}/results.csv, {args.output}/summary.csv",
    )
    for record in result.failed:
        print(f"clustersim: run {record.name} failed: {record.error}", file=sys.stderr)
    if args.report:
        from clustersim.experiments.report import write_report

        _say(args, f"report: {write_report(args.output)}")
    return EXIT_RUNS_FAILED if result.failed else EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from clustersim.experiments.report import write_report

    print(f"wrote {write_report(args.directory, args.output)}", file=sys.stderr)
    return EXIT_OK


def _run_config(args: argparse.Namespace) -> int:
    from clustersim.experiments.config import load_run_config
    from clustersim.experiments.execute import simulate_config
    from clustersim.records.output_dir import claim_output_dir

    config = load_run_config(args.config)
    claim_output_dir(args.output, force=args.force)
    result, platform, _ = simulate_config(config, args.output)
    m = result.metrics
    _say(args, f"{m.nb_jobs} jobs, makespan {m.makespan:.0f} s, mean wait {m.mean('waiting'):.1f} s; "
         f"outputs in {args.output}/")
    if not args.no_gantt:
        from clustersim.plots.gantt import plot_gantt

        plot_gantt(args.output / "jobs.csv", args.output / "gantt.png", nb_resources=platform.nb_resources)
    if result.summary.unfinished:
        print(f"clustersim: {len(result.summary.unfinished)} job(s) were never started", file=sys.stderr)
        return EXIT_UNFINISHED
    return EXIT_OK


def _add_architectures_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`clustersim architectures`: monolithic, Mesos and Omega schedulers sharing a cell (docs/architectures.md)."""
    arch = commands.add_parser(
        "architectures", help="compare monolithic, Mesos and Omega schedulers sharing a cluster",
        description="Simulate a cell shared by several schedulers (the Omega paper's model) from a YAML "
        "configuration; write per-scheduler, per-job-type, per-job and utilisation CSVs and figures.",
    )
    arch.add_argument("config", type=Path, nargs="?", help="configuration (YAML); default: the embedded example")
    arch.add_argument("-o", "--output", type=Path, default=Path("clustersim-architectures"), help="output directory")
    arch.add_argument("--architecture", help="monolithic, mesos, omega or all (default: the file's choice, else all)")
    arch.add_argument("--sweep", action="store_true",
                      help="vary one scheduler's t_job under monolithic and Omega variants: sweep.csv, sweep.png")
    arch.add_argument("--sweep-scheduler", help="the scheduler whose t_job varies (default: the file's, else batch)")
    arch.add_argument("--t-job", help="comma-separated t_job values for --sweep (default: the file's sweep.t_job, "
                      "else 0.01,0.1,1,10,100)")
    arch.add_argument("--no-figures", action="store_true", help="write CSV files only")
    arch.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")

    def handler(args: argparse.Namespace) -> int:
        from clustersim.architectures.commands import run_command

        return run_command(args)

    arch.set_defaults(handler=handler)


def _add_autoscale_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`clustersim autoscale`: a deployment, its HPA and request traffic in the cluster (docs/autoscaling.md)."""
    scale = commands.add_parser(
        "autoscale", help="simulate the Horizontal Pod Autoscaler scaling a deployment under request traffic",
        description="Run an autoscaling scenario (YAML); write timeseries.csv, jobs.csv, replicas.png and "
        "latency.png. Without a scenario, runs the embedded example (a step in traffic on a small cluster).",
    )
    scale.add_argument("scenario", type=Path, nargs="?", help="scenario file; default: the embedded example")
    scale.add_argument("-o", "--output", type=Path, default=Path("clustersim-autoscale"), help="output directory")
    scale.add_argument("--no-figures", action="store_true", help="write CSV files only")
    scale.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")

    def handler(args: argparse.Namespace) -> int:
        from clustersim.autoscaling.commands import run_command

        return run_command(args, args.scenario or _example("autoscale.yaml"))

    scale.set_defaults(handler=handler)


def _add_view_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`clustersim view`: an interactive page over run output directories (docs/viewer.md)."""
    view = commands.add_parser(
        "view", help="look at runs in the browser: Gantt chart, utilisation, queue, energy, pods, schedulers",
        description="Open an interactive page over one or more run output directories (any command's): served on "
        "loopback and opened in the browser, or written as one self-contained HTML file with --html. Two "
        "directories are compared job by job.",
    )
    view.add_argument("directories", type=Path, nargs="+", metavar="DIR", help="a run's output directory")
    view.add_argument("--html", type=Path, metavar="FILE", help="write the page to FILE instead of serving it")
    view.add_argument("--no-browser", action="store_true", help="serve without opening a browser")
    view.add_argument("-w", "--workload", type=Path,
                      help="the runs' workload (SWF or Batsim JSON): colours jobs by their user")

    def handler(args: argparse.Namespace) -> int:
        from clustersim.view.command import run_command

        return run_command(args)

    view.set_defaults(handler=handler)


_KEPT = "; outputs written so far are kept (partial: extra_metrics.csv says so)"
_ERRORS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], int, str], ...] = (
    ((InputError, UnknownNameError, PluginError, DuplicateNameError, MissingExtraError, OSError), EXIT_BAD_INPUT, ""),
    (DecisionError, EXIT_REFUSED_DECISION, ""),
    (NoAnswerError, EXIT_NO_ANSWER, _KEPT),
    (ProtocolError, EXIT_PROTOCOL, _KEPT),
    (ClusterSimError, EXIT_INTERNAL, ""),
)
"""Errors a user can cause, most specific first: the exit code each gives and what the message adds."""


def _explain(error: BaseException) -> str:
    """An error's message; an OSError as `FILE: reason`, not Python's `[Errno 2] No such file...: 'FILE'`."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error)


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except (ClusterSimError, OSError) as error:
        for kinds, exit_code, suffix in _ERRORS:
            if isinstance(error, kinds):
                print(f"clustersim: error: {_explain(error)}{suffix}", file=sys.stderr)
                return exit_code
        raise  # unreachable: ClusterSimError closes the table
    except KeyboardInterrupt:
        print(f"clustersim: interrupted{_KEPT}", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
