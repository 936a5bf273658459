"""The `clustersim` command: the embedded example, every subcommand, and exit codes that mean something."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from clustersim.cli import EXIT_BAD_INPUT, EXIT_OK, main
from conftest import csv_rows

SWF_HEADER = "; MaxJobs: 3\n; MaxNodes: 4\n; MaxProcs: 4\n"
SWF_JOBS = [
    "1 0 0 100 2 -1 -1 2 120 -1 1 1 1 -1 1 -1 -1 -1",
    "2 10 0 50 4 -1 -1 4 60 -1 1 2 1 -1 1 -1 -1 -1",
    "3 20 0 30 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1",
]


def test_plain_run_simulates_the_embedded_example_and_draws_a_gantt_chart(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["run", "-o", str(out), "--quiet"]) == EXIT_OK
    jobs = csv_rows(out / "jobs.csv")
    assert len(jobs) == 201
    states = {row["final_state"] for row in jobs}
    assert states == {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "REJECTED"}
    assert [row["job_id"] for row in jobs if row["final_state"] == "REJECTED"] == ["201"]
    schedule = csv_rows(out / "schedule.csv")[0]
    assert schedule["nb_jobs"] == "201" and schedule["nb_jobs_rejected"] == "1"
    assert (out / "gantt.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_installed_command_runs_the_embedded_example(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clustersim.cli", "run", "--no-gantt"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == EXIT_OK, result.stderr
    assert "201 jobs" in result.stderr
    assert (tmp_path / "clustersim-out" / "schedule.csv").exists()


def test_two_runs_write_byte_identical_outputs(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert main(["run", "-o", str(tmp_path / name), "--quiet", "--no-gantt", "--policy", "conservative"]) == 0
    for output in ("jobs.csv", "schedule.csv"):
        assert (tmp_path / "a" / output).read_bytes() == (tmp_path / "b" / output).read_bytes()


@pytest.mark.parametrize("command", [[], ["run"], ["convert"], ["gantt"], ["policies"]])
def test_help_is_available_everywhere(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: clustersim" in capsys.readouterr().out


def test_policies_lists_the_built_in_policies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policies"]) == EXIT_OK
    assert {"fcfs", "sjf", "easy", "conservative"} <= set(capsys.readouterr().out.split())


def test_unknown_policy_fails_listing_the_valid_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--policy", "nope", "-o", str(tmp_path), "-q"]) == EXIT_BAD_INPUT
    message = capsys.readouterr().err
    assert "unknown policy 'nope'" in message and "easy" in message and "Traceback" not in message


def test_malformed_swf_line_fails_naming_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "bad.swf"
    trace.write_text(SWF_HEADER + SWF_JOBS[0] + "\n2 10 0 fifty 4\n")
    assert main(["run", "-w", str(trace), "-o", str(tmp_path / "out"), "-q", "--no-gantt"]) == EXIT_BAD_INPUT
    message = capsys.readouterr().err
    assert str(trace) in message and "line 5" in message and "Traceback" not in message


def test_missing_workload_file_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.swf"
    assert main(["run", "-w", str(missing), "-o", str(tmp_path / "out"), "-q"]) == EXIT_BAD_INPUT
    assert "missing.swf" in capsys.readouterr().err


def test_swf_run_uses_the_header_platform_and_kills_at_walltime(tmp_path: Path) -> None:
    trace = tmp_path / "t.swf.gz"
    trace.write_bytes(gzip.compress((SWF_HEADER + "\n".join(SWF_JOBS) + "\n").encode()))
    assert main(["run", "-w", str(trace), "--policy", "fcfs", "-o", str(tmp_path / "out"), "-q", "--no-gantt"]) == 0
    by_id = {row["job_id"]: row for row in csv_rows(tmp_path / "out" / "jobs.csv")}
    assert (by_id["1"]["starting_time"], by_id["1"]["finish_time"]) == ("0", "100")
    assert (by_id["2"]["starting_time"], by_id["2"]["finish_time"]) == ("100", "150")
    # Job 3 waits behind job 2 (strict fcfs), then runs 30 s against a requested 20 s: killed at its walltime.
    assert (by_id["3"]["starting_time"], by_id["3"]["finish_time"]) == ("150", "170")
    assert by_id["3"]["final_state"] == "COMPLETED_WALLTIME_REACHED" and by_id["3"]["allocated_resources"] == "0"


def test_converted_workload_gives_the_same_schedule_as_the_trace(tmp_path: Path) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(SWF_HEADER + "\n".join(SWF_JOBS) + "\n")
    converted = tmp_path / "t.json"
    assert main(["convert", str(trace), str(converted)]) == EXIT_OK
    for name, workload in (("swf", trace), ("json", converted)):
        out = str(tmp_path / name)
        assert main(["run", "-w", str(workload), "--policy", "easy", "-o", out, "-q", "--no-gantt"]) == 0
    swf_rows, json_rows = csv_rows(tmp_path / "swf" / "jobs.csv"), csv_rows(tmp_path / "json" / "jobs.csv")
    columns = ("job_id", "starting_time", "finish_time", "allocated_resources", "final_state")
    assert [[r[c] for c in columns] for r in swf_rows] == [[r[c] for c in columns] for r in json_rows]


def test_gantt_command_draws_any_jobs_csv(tmp_path: Path) -> None:
    assert main(["run", "-o", str(tmp_path), "-q", "--no-gantt"]) == EXIT_OK
    assert main(["gantt", str(tmp_path / "jobs.csv"), "-o", str(tmp_path / "g.svg")]) == EXIT_OK
    assert "<svg" in (tmp_path / "g.svg").read_text()


def test_every_exit_code_means_one_thing() -> None:
    from clustersim import exit_codes

    codes = {name: value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    assert len(set(codes.values())) == len(codes), codes


def test_host_order_name_numbers_simgrid_hosts_as_batsim(tmp_path: Path) -> None:
    """n2 is slow and n10 fast: a 3-host job on hosts 0-2 takes 10 s in document order, 1 s in name order."""
    speeds = {2: "100Mf"}
    hosts = "".join(f'<host id="n{i}" speed="{speeds.get(i, "1Gf")}"/>' for i in range(11))
    platform = tmp_path / "p.xml"
    platform.write_text(f'<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">{hosts}'
                        "</zone></platform>\n")
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 11, "jobs": [{"id": "1", "subtime": 0, "res": 3, "profile": "p"}],
                                    "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}))
    times = {}
    for order in ("document", "name"):
        out = tmp_path / order
        assert main(["run", "-p", str(platform), "-w", str(workload), "--policy", "fcfs", "--host-order", order,
                     "-o", str(out), "-q", "--no-gantt"]) == EXIT_OK
        times[order] = float(csv_rows(out / "jobs.csv")[0]["execution_time"])
    assert times == {"document": 10.0, "name": 1.0}
