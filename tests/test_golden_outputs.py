"""jobs.csv and schedule.csv are byte-for-byte what they were: a change of format must be deliberate.

The case is the hand-computed EASY schedule of test_oracle_schedules.py plus a walltime kill and a rejection.
To accept a deliberate change: CLUSTERSIM_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py, then review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.stream import Workload
from conftest import delay_job, hosts
from test_oracle_schedules import CASE

GOLDEN = Path(__file__).parent / "golden"
JOBS = [*CASE, delay_job(6, 5, 1, 40, walltime=8), delay_job(7, 6, 9, 1)]


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
@pytest.mark.parametrize("output", ["jobs.csv", "schedule.csv"])
def test_output_matches_its_golden_file(policy: str, output: str, tmp_path: Path) -> None:
    simulate(hosts(4), Workload.from_jobs(JOBS), create_policy(policy), tmp_path)
    golden = GOLDEN / f"{policy}_{output}"
    if os.environ.get("CLUSTERSIM_UPDATE_GOLDEN"):
        golden.write_bytes((tmp_path / output).read_bytes())
    assert (tmp_path / output).read_text() == golden.read_text()
