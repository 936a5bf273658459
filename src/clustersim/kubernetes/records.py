"""`pods.csv`: one row per pod with its node's name, streamed as pods end (jobs.csv has unit ids only)."""

from __future__ import annotations

import csv
from pathlib import Path

from clustersim._io.numbers import fmt
from clustersim.core.outcome import JobOutcome
from clustersim.platform.model import Platform
from clustersim.workload.pods import pod_spec

COLUMNS = ("job_id", "namespace", "name", "scheduler", "node", "cpu_m", "memory", "submission_time",
           "starting_time", "finish_time", "waiting_time", "final_state")


class PodsCsvWriter:
    """An outcome sink writing each pod's placement (node name) and times."""

    def __init__(self, path: Path | str, platform: Platform):
        self.platform = platform
        self._file = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115 (closed in close)
        self._csv = csv.writer(self._file, lineterminator="\n")
        self._csv.writerow(COLUMNS)

    def record(self, outcome: JobOutcome) -> None:
        job = outcome.job
        spec = pod_spec(job)
        request = job.request or {}
        node = self.platform.node_of(outcome.resources.intervals[0][0]).name if outcome.resources else ""
        start, finish = outcome.start, outcome.finish
        self._csv.writerow((
            job.id, spec.namespace, spec.name, spec.scheduler_name, node, request.get("cpu", 0),
            request.get("memory", 0), fmt(job.submit_time), "-1" if start is None else fmt(start),
            "-1" if finish is None else fmt(finish), "-1" if start is None else fmt(start - job.submit_time),
            outcome.state.value,
        ))

    def close(self) -> None:
        self._file.close()
