"""The small things a new user tripped on: every exit code in --help, help on every option, described
policies, -q on run-k8s, errno texts that name the address, a loopback default for the example Batsim
scheduler, outputs ignored by git, and a Gantt chart with a title, a legend and a density view for huge runs."""

from __future__ import annotations

import argparse
import socket
import subprocess
from pathlib import Path

import pytest

from clustersim.cli import _build_parser, main
from clustersim.exit_codes import EXIT_BAD_INPUT, EXIT_OK, MEANINGS
from clustersim.plots import gantt
from clustersim.protocols.batsim.host import LISTEN_ENDPOINT

ROOT = Path(__file__).parents[1]


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = _build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_top_level_help_lists_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for code, meaning in MEANINGS.items():
        assert f"{code} {meaning}" in text


def test_every_option_of_every_command_has_help() -> None:
    missing = [f"{name} {a.option_strings or a.dest}" for name, sub in _subcommands().items() for a in sub._actions
               if not a.help and not isinstance(a, argparse._HelpAction)]
    assert missing == []


def test_policies_are_listed_with_what_they_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policies"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("easy ") and "backfilling" in line for line in lines)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_run_k8s_is_quiet_with_q(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "n.yaml").write_text('kind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: "4"}}\n')
    (tmp_path / "p.yaml").write_text("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    assert main(["run-k8s", "-p", str(tmp_path / "n.yaml"), "-w", str(tmp_path / "p.yaml"), "-o",
                 str(tmp_path / "out"), "-q"]) == EXIT_OK
    assert capsys.readouterr().err == ""


def test_a_port_in_use_names_the_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "n.yaml").write_text('kind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: "4"}}\n')
    (tmp_path / "p.yaml").write_text("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve-k8s", "-p", str(tmp_path / "n.yaml"), "-w", str(tmp_path / "p.yaml"), "-o",
                     str(tmp_path / "out"), "--port", str(port)]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in error and "[Errno" not in error


def test_a_missing_file_is_named_without_python_errno_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gantt", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "g.png")]) == EXIT_BAD_INPUT
    assert "[Errno" not in capsys.readouterr().err


def test_the_example_batsim_scheduler_listens_on_loopback_by_default() -> None:
    assert LISTEN_ENDPOINT == "tcp://127.0.0.1:28000"


def test_default_output_directories_are_ignored_by_git() -> None:
    for path in ("clustersim-out/jobs.csv", "clustersim-autoscale/x.csv", "clustersim-architectures/x.csv"):
        result = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False)
        assert result.returncode == 0, path


def _jobs_csv(path: Path, count: int, killed_every: int = 7) -> Path:
    header = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
              "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
              "allocated_resources,consumed_energy,metadata\n")
    rows = []
    for i in range(count):
        state = "COMPLETED_WALLTIME_REACHED" if i % killed_every == 0 else "COMPLETED_SUCCESSFULLY"
        unit = i % 16
        rows.append(f"{i},w0,p,{i},1,10,1,{state},{i},10,{i + 10},0,10,1,{unit},-1,\n")
    path.write_text(header + "".join(rows))
    return path


def test_a_readable_gantt_chart_has_a_title_and_a_legend(tmp_path: Path) -> None:
    summary = gantt.plot_gantt(_jobs_csv(tmp_path / "jobs.csv", 30), tmp_path / "g.svg")
    svg = (tmp_path / "g.svg").read_text()
    assert not summary.density
    assert "jobs.csv: 30 jobs (5 killed)" in svg
    assert "a job (one colour per job)" in svg and "killed (walltime or scheduler)" in svg


def test_past_the_readable_size_the_gantt_chart_is_a_density_view(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gantt, "READABLE", 100)
    summary = gantt.plot_gantt(_jobs_csv(tmp_path / "jobs.csv", 500), tmp_path / "g.svg")
    svg = (tmp_path / "g.svg").read_text()
    assert summary.density and "density view" in svg and "jobs running in each cell" in svg
    grid, group = gantt._density(gantt._read(tmp_path / "jobs.csv", None)[0], 0.0, 509.0, 16)
    # 500 jobs of 10 s on 16 units: the grid holds each job in about 10 s / (509 s / 1000 bins) time bins
    assert group == 1 and grid.shape == (1000, 16)
    assert abs(grid.sum() * 509.0 / 1000 - 500 * 10) < 500 * 10 * 0.1
