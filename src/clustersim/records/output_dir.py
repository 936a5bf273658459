"""Output directories that cannot mix two runs: an earlier run's files are refused, or cleared with --force.

Without this, `run -o DIR` over an earlier run would leave its machine_states.csv or gantt.png beside the new
results (a run without --energy or with --no-gantt does not rewrite them), and nothing would tell them apart.
"""

from __future__ import annotations

from pathlib import Path

from clustersim.errors import InputError

RUN_FILES = ("jobs.csv", "schedule.csv", "extra_metrics.csv", "machine_states.csv", "consumed_energy.csv", "gantt.png")
"""Every file `clustersim run` writes (each behind the run's prefix)."""


def claim_output_dir(directory: Path, prefix: str = "", *, force: bool = False) -> None:
    """Make `directory` ready for a run's files: refuse one holding another run's files, unless `force`.

    `force` deletes those files only (never anything clustersim does not write).
    """
    if directory.exists() and not directory.is_dir():
        raise InputError(str(directory), "the output directory is a file")
    found = [directory / f"{prefix}{name}" for name in RUN_FILES if (directory / f"{prefix}{name}").exists()]
    if found and not force:
        names = ", ".join(path.name for path in found)
        raise InputError(
            str(directory), f"holds the outputs of an earlier run ({names}); give --force to replace them, or "
            "another output directory"
        )
    for path in found:
        if path.is_dir():
            raise InputError(str(path), "is a directory where a run writes a file")
        path.unlink()
    directory.mkdir(parents=True, exist_ok=True)
