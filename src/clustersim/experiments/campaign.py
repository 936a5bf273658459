"""Running a campaign: plan the run directories, skip complete runs, execute the rest, write the tables.

Layout of a campaign directory:

```
DIR/experiment.yaml     copy of the experiment file, for the record
DIR/campaign.json       manifest: the runs in plan order and their axis values
DIR/runs/NAME/          one directory per run (see `execute`)
DIR/results.csv|.parquet  one row per run
DIR/summary.csv|.parquet  aggregated over seeds, with 95% confidence intervals
```

A run counts as complete when its marker exists and records the same configuration: editing the experiment
file's base re-runs the runs it changes, a restart after a crash or Ctrl-C re-runs only the unfinished ones.
The tables are written even when the campaign is interrupted, with the unfinished runs marked `pending`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from clustersim.experiments.aggregate import aggregate
from clustersim.experiments.backends import Backend, LocalBackend
from clustersim.experiments.execute import ERROR_FILE, RunRecord, RunTask, is_complete
from clustersim.experiments.progress import CampaignProgress
from clustersim.experiments.results import RUNS_DIR, Manifest, Table, collect_results, write_table
from clustersim.experiments.spec import Experiment


@dataclass
class CampaignResult:
    """What a campaign did: counts of runs, the failures, and the tables written."""

    directory: Path
    planned: int
    skipped: int
    ok: int = 0
    failed: list[RunRecord] = field(default_factory=list)
    results: Table | None = None
    summary: Table | None = None

    @property
    def executed(self) -> int:
        return self.ok + len(self.failed)


def run_campaign(
    experiment: Experiment,
    directory: Path | str,
    backend: Backend | None = None,
    *,
    progress: bool = True,
) -> CampaignResult:
    """Execute the experiment's runs that are not complete yet in `directory`, then write its tables."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    backend = backend or LocalBackend()
    source = Path(experiment.source)
    if source.is_file() and source.resolve() != (directory / "experiment.yaml").resolve():
        shutil.copyfile(source, directory / "experiment.yaml")
    manifest = Manifest(
        experiment.name, experiment.axes, experiment.aggregate_over, [(r.name, dict(r.axes)) for r in experiment.runs],
        experiment.description,
    )
    manifest.write(directory)
    tasks = [
        RunTask(run.name, str(directory / RUNS_DIR / run.name), run.config)
        for run in experiment.runs
        if not is_complete(directory / RUNS_DIR / run.name, run.config)
    ]
    result = CampaignResult(directory, len(experiment.runs), len(experiment.runs) - len(tasks))
    try:
        with CampaignProgress(len(tasks), skipped=result.skipped, enabled=progress) as bar:
            for record in backend.run(tasks):
                bar.update(record)
                if record.status == "ok":
                    result.ok += 1
                else:
                    result.failed.append(record)
                    _record_lost(directory / RUNS_DIR / record.name, record)
    finally:
        result.results, result.summary = write_tables(directory)
    order = {run.name: index for index, run in enumerate(experiment.runs)}
    result.failed.sort(key=lambda r: order.get(r.name, 0))
    return result


def _record_lost(run_dir: Path, record: RunRecord) -> None:
    """A run whose worker died wrote no error file: write it here, so the table shows the run as failed."""
    error_file = run_dir / ERROR_FILE
    if run_dir.is_dir() and not error_file.exists():
        error_file.write_text(record.error + "\n", encoding="utf-8")


def write_tables(directory: Path) -> tuple[Table, Table]:
    """(Re)write `results` and `summary` (CSV and Parquet) from the campaign's run directories."""
    manifest = Manifest.read(directory)
    results = collect_results(directory)
    write_table(results, directory, "results")
    summary = aggregate(results, manifest.axes, manifest.aggregate_over)
    write_table(summary, directory, "summary")
    return results, summary
