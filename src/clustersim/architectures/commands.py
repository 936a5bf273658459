"""`clustersim architectures`: run a configuration under one or every architecture, or the t_job sweep.

The shared CLI only declares the arguments; everything else is here, imported when the command runs, so other
commands do not pay for numpy and matplotlib.
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib import resources
from pathlib import Path

from clustersim.architectures.config import default_sweep_scheduler, load_config
from clustersim.architectures.run import run_architectures
from clustersim.architectures.simulation import RunResult
from clustersim.architectures.sweep import run_sweep, write_sweep
from clustersim.errors import InputError

EXAMPLE = "architectures.yaml"


def example_config() -> Path:
    return Path(str(resources.files("clustersim") / "examples" / EXAMPLE))


def parse_t_jobs(text: str) -> tuple[float, ...]:
    values = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise InputError("--t-job", f"expected comma-separated seconds, got {part!r}") from None
        if not value >= 0 or value == float("inf"):
            raise InputError("--t-job", f"expected finite seconds >= 0, got {part!r}")
        values.append(value)
    return tuple(values)


def run_command(args: argparse.Namespace) -> int:
    quiet = args.quiet

    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr)

    path = args.config
    if path is None:
        path = example_config()
        say(f"no configuration given: running the embedded example ({path.name})")
    config = load_config(path)
    output: Path = args.output
    figures = not args.no_figures
    started = time.perf_counter()
    if args.sweep:
        spec = config.sweep
        scheduler = args.sweep_scheduler or (spec.scheduler if spec else default_sweep_scheduler(config.schedulers))
        t_jobs = parse_t_jobs(args.t_job) if args.t_job else (spec.t_job if spec else parse_t_jobs("0.01,0.1,1,10,100"))
        rows = run_sweep(config, scheduler, t_jobs,
                         progress=lambda label, t_job: say(f"sweep: {label}, t_job({scheduler}) = {t_job:g} s"))
        output.mkdir(parents=True, exist_ok=True)
        write_sweep(output / "sweep.csv", rows)
        if figures:
            from clustersim.architectures.figures import plot_sweep

            plot_sweep(rows, output / "sweep.png", scheduler)
        say(f"{len(rows)} rows in {output}/sweep.csv; {time.perf_counter() - started:.1f} s of wall time")
        return 0

    def done(result: RunResult, directory: Path) -> None:
        paths = ", ".join(
            f"{m.scheduler} busy {m.busyness:.1%} (conflicts {m.conflict_fraction:.3g}, abandoned "
            f"{m.jobs_abandoned}, pending {m.jobs_pending})" for m in result.schedulers
        )
        say(f"{result.architecture}: {result.jobs_submitted} jobs, cpu in use {result.mean_cpu:.1%}; {paths}; "
            f"outputs in {directory}/")

    run_architectures(config, args.architecture, output, figures=figures, done=done)
    say(f"{time.perf_counter() - started:.1f} s of wall time")
    return 0
