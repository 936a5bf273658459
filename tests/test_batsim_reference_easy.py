"""The reference external EASY scheduler, run as its own process over the protocol, gives the in-process
`easy` schedule byte for byte; and `clustersim run` takes Batsim's option names (`-s`, `-e`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import pytest

from clustersim.cli import main
from conftest import csv_rows

EXAMPLES = Path(str(resources.files("clustersim") / "examples"))


@contextmanager
def reference_easy() -> Iterator[str]:
    """`python -m clustersim.protocols.batsim.easy` on a free port; yields its endpoint, kills it at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "clustersim.protocols.batsim.easy", "-s", "tcp://127.0.0.1:*"],
        stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("listening on "), line + process.stderr.read()
        yield line.removeprefix("listening on ").strip()
        assert process.wait(timeout=20) == 0, "the scheduler exits cleanly after SIMULATION_ENDS"
    finally:
        process.kill()
        process.wait()


def test_external_easy_gives_the_in_process_jobs_csv_byte_for_byte(tmp_path: Path) -> None:
    common = ["run", "-p", str(EXAMPLES / "platform.yaml"), "-w", str(EXAMPLES / "workload.json"), "-q", "--no-gantt"]
    assert main([*common, "--policy", "easy", "-o", str(tmp_path / "in-process")]) == 0
    with reference_easy() as endpoint:
        assert main([*common, "--external", endpoint, "-o", str(tmp_path / "external")]) == 0
    expected = (tmp_path / "in-process" / "jobs.csv").read_bytes()
    assert (tmp_path / "external" / "jobs.csv").read_bytes() == expected
    assert (tmp_path / "external" / "schedule.csv").read_bytes() == (
        tmp_path / "in-process" / "schedule.csv"
    ).read_bytes()

    rows = csv_rows(tmp_path / "external" / "jobs.csv")
    states = {row["final_state"] for row in rows}
    assert {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "REJECTED"} <= states
    started = [(float(r["starting_time"]), float(r["submission_time"])) for r in rows if r["starting_time"]]
    assert any(float(r["waiting_time"]) > 0 for r in rows), "jobs collide and wait"
    assert any(
        later_submit > earlier_submit and later_start < earlier_start
        for earlier_start, earlier_submit in started
        for later_start, later_submit in started
    ), "some job is backfilled ahead of an earlier one"


def test_batsim_option_names_socket_and_export_prefix(tmp_path: Path) -> None:
    prefix = tmp_path / "out" / "exp"
    with reference_easy() as endpoint:
        code = main(["run", "-p", str(EXAMPLES / "platform.yaml"), "-w", str(EXAMPLES / "workload.json"),
                     "-s", endpoint, "-e", str(prefix), "-q", "--no-gantt"])
    assert code == 0
    names = sorted(p.name for p in prefix.parent.iterdir())
    assert names == ["exp_extra_metrics.csv", "exp_jobs.csv", "exp_machine_states.csv", "exp_schedule.csv"]
    assert len(csv_rows(prefix.parent / "exp_jobs.csv")) == 201


def test_nothing_listening_is_reported_with_its_own_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = main(["run", "-s", f"tcp://127.0.0.1:{port}", "--timeout", "0.5", "-o", str(tmp_path), "-q", "--no-gantt"])
    assert code == 7
    assert "nothing is listening there" in capsys.readouterr().err
    assert csv_rows(tmp_path / "jobs.csv") == []
    assert csv_rows(tmp_path / "schedule.csv")[0]["nb_jobs"] == "0"
