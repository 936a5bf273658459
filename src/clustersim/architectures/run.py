"""Running a configuration into an output directory: CSV records, metrics and figures.

One architecture writes jobs.csv, utilisation.csv, schedulers.csv, workloads.csv, summary.csv and figures into
the directory; several (`all`) write each into a subdirectory named after it, plus schedulers.csv and
workloads.csv comparing them at the top.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clustersim.architectures.architecture import ArchitectureSpec
from clustersim.architectures.config import Config
from clustersim.architectures.outputs import JobsCsv, UtilisationCsv, write_metrics, write_summary
from clustersim.architectures.simulation import RunResult, simulate


def run_to_directory(config: Config, spec: ArchitectureSpec, directory: Path, *, figures: bool = True
                     ) -> RunResult:
    directory.mkdir(parents=True, exist_ok=True)
    with JobsCsv(directory / "jobs.csv") as jobs, UtilisationCsv(directory / "utilisation.csv") as utilisation:
        result = simulate(config, spec, job_sink=jobs, utilisation_sink=utilisation)
    write_metrics(directory, [result])
    write_summary(directory / "summary.csv", result, config.seed, config.total_machines)
    if figures:
        from clustersim.architectures.figures import plot_busyness, plot_utilisation

        plot_utilisation(result.utilisation, directory / "utilisation.png", result.architecture)
        plot_busyness(result.schedulers, directory / "busyness.png", result.architecture)
    return result


def run_architectures(config: Config, name: str | None, directory: Path, *, figures: bool = True,
                      done: Callable[[RunResult, Path], None] | None = None) -> list[RunResult]:
    """Run the selected architecture(s); `done` is told about each finished run."""
    specs = config.selected(name)
    results = []
    for spec in specs:
        target = directory if len(specs) == 1 else directory / spec.name
        result = run_to_directory(config, spec, target, figures=figures)
        if done is not None:
            done(result, target)
        results.append(result)
    if len(specs) > 1:
        write_metrics(directory, results)
    return results
