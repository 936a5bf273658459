"""Batsim 4.2's command line on `clustersim run`: each of its flags is either honoured or refused by name.

`clustersim run` already has Batsim's names for what it does (`-p`, `-w`, `-s`, `-e`, `-E`, `-q`, the job
options): this module adds the others of `batsim --help`. Honoured here: `--socket-endpoint`, `-v`,
`--enable-profile-reuse` (profiles stay known for the whole run), `--disable-schedule-tracing` (clustersim
writes no Pajé trace) and `--disable-machine-state-tracing` (no machine_states.csv). `-m` is honoured when it
names what clustersim takes as the master anyway (Batsim's default, `master_host`). The rest is refused, with
the reason, rather than silently ignored.
"""

from __future__ import annotations

import argparse

VERBOSITIES = ("quiet", "network-only", "information", "debug")

REFUSED: dict[str, tuple[str, str]] = {
    # flag: (argparse nargs: "0" a switch, "1" one value, "+" several), reason
    "--workflow": ("1", "workflows (DAGs of jobs) are not simulated"),
    "--WS": ("+", "workflows (DAGs of jobs) are not simulated"),
    "--workflow-start": ("+", "workflows (DAGs of jobs) are not simulated"),
    "--workflow-jobs-limit": ("1", "workflows (DAGs of jobs) are not simulated"),
    "--ignore-beyond-last-workflow": ("0", "workflows (DAGs of jobs) are not simulated"),
    "--forward-unknown-events": ("0", "only machine availability events are simulated (--events)"),
    "--add-role-to-hosts": ("1", "host roles come from the platform's `role` properties"),
    "--mmax": ("1", "the platform is used whole; give a smaller platform instead"),
    "--mmax-workload": ("0", "the platform is used whole; give a smaller platform instead"),
    "--sg-cfg": ("1", "clustersim is not SimGrid: it has no SimGrid configuration"),
    "--sg-log": ("1", "clustersim is not SimGrid: it has no SimGrid logging"),
    "--config-file": ("1", "give the options on the command line"),
    "--redis-hostname": ("1", "Redis is not supported: jobs and profiles travel in the messages"),
    "--redis-port": ("1", "Redis is not supported: jobs and profiles travel in the messages"),
    "--redis-prefix": ("1", "Redis is not supported: jobs and profiles travel in the messages"),
    "--enable-redis": ("0", "Redis is not supported: jobs and profiles travel in the messages"),
    "--enable-compute-sharing": ("0", "a compute host runs one job at a time, as Batsim's default"),
    "--disable-storage-sharing": ("0", "storage resources are not simulated"),
    "--no-sched": ("0", "a decision process is needed: give --policy or -s"),
    "--sched-cfg": ("1", "the scheduler's configuration is not forwarded in SIMULATION_BEGINS"),
    "--sched-cfg-file": ("1", "the scheduler's configuration is not forwarded in SIMULATION_BEGINS"),
    "--dump-execution-context": ("0", "there is no execution context to dump"),
}
"""Batsim 4.2 flags clustersim refuses, with why."""

_SHORT = {"--workflow": "-W", "--add-role-to-hosts": "-r"}


def add_batsim_flags(parser: argparse.ArgumentParser) -> None:
    """Add Batsim 4.2's other flags to `clustersim run`."""
    group = parser.add_argument_group("Batsim 4.2 flags", "accepted as Batsim reads them; refused by name otherwise")
    group.add_argument("-m", "--master-host", default="master_host", metavar="NAME",
                       help="Batsim's master host: clustersim takes the host with role=master (default master_host)")
    group.add_argument("-v", "--verbosity", choices=VERBOSITIES, help="quiet prints nothing but errors (as -q)")
    group.add_argument("--enable-profile-reuse", action="store_true",
                       help="dynamic jobs may reuse profiles of other jobs (clustersim always keeps them)")
    group.add_argument("--disable-schedule-tracing", action="store_true",
                       help="no Pajé trace (clustersim writes none anyway)")
    group.add_argument("--disable-machine-state-tracing", action="store_true",
                       help="do not write machine_states.csv (written with -e, as Batsim writes it)")
    for flag, (nargs, _) in REFUSED.items():
        names = [_SHORT[flag], flag] if flag in _SHORT else [flag]
        dest = "batsim_" + flag.lstrip("-").replace("-", "_").lower()
        if nargs == "0":
            group.add_argument(*names, dest=dest, action="store_true", help=argparse.SUPPRESS)
        else:
            group.add_argument(*names, dest=dest, nargs=1 if nargs == "1" else "+", action="append",
                               help=argparse.SUPPRESS)


def refusal(args: argparse.Namespace) -> str | None:
    """The message refusing the first unsupported Batsim flag given, or None."""
    for flag, (_, reason) in REFUSED.items():
        if getattr(args, "batsim_" + flag.lstrip("-").replace("-", "_").lower(), None):
            name = f"{_SHORT[flag]}/{flag}" if flag in _SHORT else flag
            return f"Batsim's {name} is not supported by clustersim: {reason}"
    if args.master_host != "master_host":
        return (f"Batsim's -m/--master-host {args.master_host!r} is not supported by clustersim: it takes the host "
                "whose role property is master (Batsim's default -m master_host names the same one)")
    return None
