"""The paper's qualitative claims, on the shipped example cell shortened to one hour.

Varying the batch scheduler's t_job: the monolithic scheduler saturates and every job's wait explodes, while
Omega's service scheduler is unaffected; coarse-grained conflict detection and all-or-nothing transactions
raise conflicts (checked below saturation, where the batch scheduler keeps up with its arrivals).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from clustersim.architectures import load_config
from clustersim.architectures.config import Config
from clustersim.architectures.monolithic import MonolithicSpec
from clustersim.architectures.omega import OmegaSpec
from clustersim.architectures.sweep import SweepRow, run_sweep
from clustersim.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "clustersim" / "examples" / "architectures.yaml"
FAST, SLOW = 0.01, 100.0
UNSATURATED = (0.3, 1.0)


@pytest.fixture(scope="module")
def cell() -> Config:
    return replace(load_config(EXAMPLE), duration=3600.0)


def row(rows: list[SweepRow], variant: str, t_job: float, job_type: str) -> SweepRow:
    (found,) = [r for r in rows if r.variant == variant and r.t_job == t_job and r.job_type == job_type]
    return found


@pytest.fixture(scope="module")
def head_of_line(cell: Config) -> list[SweepRow]:
    return run_sweep(cell, "batch", [FAST, SLOW], [MonolithicSpec(), OmegaSpec()])


def test_monolithic_busyness_saturates_and_every_wait_explodes(head_of_line: list[SweepRow]) -> None:
    fast, slow = (row(head_of_line, "monolithic", t, "service") for t in (FAST, SLOW))
    assert fast.busyness < 0.2 and slow.busyness > 0.95
    assert fast.waits.first_mean is not None and slow.waits.first_mean is not None
    assert slow.waits.first_mean > 100 * fast.waits.first_mean  # service jobs wait behind batch decisions
    assert slow.jobs_pending > 0 and fast.jobs_pending == 0


def test_omega_service_scheduler_is_unaffected_by_a_slow_batch_scheduler(head_of_line: list[SweepRow]) -> None:
    variant = OmegaSpec().label()
    fast, slow = (row(head_of_line, variant, t, "service") for t in (FAST, SLOW))
    assert row(head_of_line, variant, SLOW, "batch").busyness > 0.95  # the batch scheduler itself saturates
    assert slow.busyness <= 1.2 * fast.busyness
    assert fast.waits.first_mean is not None and slow.waits.first_mean is not None
    assert slow.waits.first_mean <= 1.5 * fast.waits.first_mean
    assert slow.jobs_pending == 0 and slow.jobs_abandoned == 0


@pytest.fixture(scope="module")
def conflicts(cell: Config) -> list[SweepRow]:
    variants = [OmegaSpec(c, t) for c in ("resource-fit", "sequence-numbers")
                for t in ("incremental", "all-or-nothing")]
    return run_sweep(cell, "batch", UNSATURATED, variants)


def cell_wide(rows: list[SweepRow], conflicts: str, transactions: str, t_job: float) -> tuple[float, float]:
    """(conflicted per committed transaction, wasted busyness) over every scheduler of one run."""
    label = OmegaSpec(conflicts, transactions).label()
    paths = {r.scheduler: r for r in rows if r.variant == label and r.t_job == t_job}
    failed = sum(r.transactions_failed for r in paths.values())
    committed = sum(r.transactions_committed for r in paths.values())
    return failed / committed, sum(r.busyness_wasted for r in paths.values())


@pytest.mark.parametrize("t_job", UNSATURATED)
@pytest.mark.parametrize("transactions", ["incremental", "all-or-nothing"])
def test_coarse_grained_conflict_detection_raises_conflicts(conflicts: list[SweepRow], t_job: float,
                                                            transactions: str) -> None:
    fine, _ = cell_wide(conflicts, "resource-fit", transactions, t_job)
    coarse, _ = cell_wide(conflicts, "sequence-numbers", transactions, t_job)
    assert coarse > 3 * fine


@pytest.mark.parametrize("t_job", UNSATURATED)
def test_all_or_nothing_transactions_raise_conflicts(conflicts: list[SweepRow], t_job: float) -> None:
    incremental = cell_wide(conflicts, "sequence-numbers", "incremental", t_job)
    gang = cell_wide(conflicts, "sequence-numbers", "all-or-nothing", t_job)
    assert gang[0] > incremental[0] and gang[1] > incremental[1]  # more conflicts, more work wasted


def test_sweep_command_writes_a_table_and_a_figure(tmp_path: Path) -> None:
    document = yaml.safe_load(EXAMPLE.read_text())
    document["duration"] = 300
    (tmp_path / "cell.yaml").write_text(yaml.safe_dump(document))
    assert main(["architectures", str(tmp_path / "cell.yaml"), "-o", str(tmp_path / "out"), "--sweep",
                 "--t-job", "0.1,10", "-q"]) == 0
    lines = (tmp_path / "out" / "sweep.csv").read_text().splitlines()
    assert lines[0].startswith("variant,architecture,t_job,job_type,scheduler,busyness")
    assert len(lines) == 1 + 5 * 2 * 2  # 5 variants, 2 t_job values, 2 job types
    assert (tmp_path / "out" / "sweep.png").stat().st_size > 10_000
    assert main(["architectures", str(tmp_path / "cell.yaml"), "--sweep", "--t-job", "fast", "-q"]) == 2
