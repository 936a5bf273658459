"""Batch policies as compositions of a queue order, a backfilling strategy and a host selection."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import clustersim
from clustersim.cli import EXIT_BAD_INPUT, main
from conftest import csv_rows

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _starts(policy: str, **options: object) -> dict[str, float | None]:
    platform = clustersim.load_platform(EXAMPLES / "platform.yaml")
    result = clustersim.simulate(platform, clustersim.load_workload(EXAMPLES / "workload.json"),
                                 clustersim.create_policy(policy, **options), extra_sinks=[sink := _Starts()])
    assert result.summary.unfinished == []
    return sink.starts


class _Starts:
    def __init__(self) -> None:
        self.starts: dict[str, float | None] = {}

    def record(self, outcome: clustersim.JobOutcome) -> None:
        self.starts[outcome.job.id] = outcome.start

    def close(self) -> None:
        """Nothing to flush."""


def test_easy_with_largest_first_order_is_configuration() -> None:
    """The schedule worked out by hand in examples/workload.json (and in test_public_api for the out-of-tree
    largest-first policy): 2 at 0; 4 and, backfilled before 1's reservation, 3 at 10; 1 at 30."""
    assert _starts("easy", order="largest-first") == {"1": 30, "2": 0, "3": 10, "4": 10, "5": None}
    assert _starts("easy") == {"1": 0, "2": 10, "3": 0, "4": 20, "5": None}


def test_the_named_policies_are_their_compositions() -> None:
    for name, parts in [("fcfs", {"order": "submit", "backfilling": "none"}),
                        ("sjf", {"order": "shortest-first", "backfilling": "none"}),
                        ("easy", {"order": "submit", "backfilling": "easy"}),
                        ("conservative", {"order": "submit", "backfilling": "conservative"})]:
        assert _starts(name) == _starts("batch", **parts), name


def test_highest_host_selection_takes_the_largest_free_ids(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["run", "-w", str(EXAMPLES / "workload.json"), "-p", str(EXAMPLES / "platform.yaml"), "-o", str(out),
                 "-q", "--no-gantt", "--policy", "fcfs", "--policy-option", "hosts=highest"]) == 0
    allocated = {row["job_id"]: row["allocated_resources"] for row in csv_rows(out / "jobs.csv")}
    # fcfs: 1 (2 hosts) at 0 on the highest ids; 2 (4) at 10; 3 (1) and 4 (3) at 20: 3 takes the highest.
    assert allocated == {"1": "2-3", "2": "0-3", "3": "3", "4": "0-2", "5": ""}


def test_an_unknown_part_lists_the_valid_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(clustersim.UnknownNameError, match="unknown queue order 'biggest-first'; valid: largest-first"):
        clustersim.create_policy("easy", order="biggest-first")
    code = main(["run", "-w", str(EXAMPLES / "workload.json"), "-o", str(tmp_path), "--policy", "conservative",
                 "--policy-option", "backfilling=easy"])
    assert code == EXIT_BAD_INPUT
    assert "option of policy 'conservative': 'backfilling'; valid: hosts, order" in capsys.readouterr().err


class _Recording:
    """A decision process that passes the built-in fcfs's decisions on, in order, as the core applies them."""

    def __init__(self) -> None:
        self.fcfs = clustersim.create_policy("fcfs")
        self.decisions: list[str] = []

    def begin(self, view: clustersim.ClusterView) -> None:
        self.fcfs.begin(view)

    def decide(self, now: float, events: Sequence[clustersim.Event],
               view: clustersim.ClusterView) -> Iterator[clustersim.Decision]:
        for decision in self.fcfs.decide(now, events, view):
            self.decisions.append(f"{type(decision).__name__} {decision.job_key.split('!')[-1]}")  # type: ignore[union-attr]
            yield decision

    def end(self, view: clustersim.ClusterView) -> None:
        self.fcfs.end(view)


def test_fcfs_rejects_in_submission_order_among_the_starts(tmp_path: Path) -> None:
    """batsched's fcfs answers new jobs one by one: a job larger than the platform is rejected after the starts of
    the jobs submitted before it. On four hosts: 1 (1 host) starts, 2 (5) is rejected, 3 (2) starts, 4 (3) waits,
    5 (6) is rejected; nothing starts after 4."""
    workload = tmp_path / "workload.json"
    jobs = [{"id": n, "subtime": 0, "res": res, "walltime": 10, "profile": "d"}
            for n, res in enumerate([1, 5, 2, 3, 6], start=1)]
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 5}}}))
    process = _Recording()
    clustersim.simulate(clustersim.load_platform(EXAMPLES / "platform.yaml"), clustersim.load_workload(workload),
                        process)
    assert process.decisions[:4] == ["StartJob 1", "RejectJob 2", "StartJob 3", "RejectJob 5"]
    assert process.decisions[4:] == ["StartJob 4"]  # at t=5, when 1 and 3 end
