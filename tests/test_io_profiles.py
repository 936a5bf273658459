"""Batsim's I/O profiles with the platform's storage hosts: `parallel_homogeneous_pfs` (each of the job's hosts reads
from and writes to a storage host) and `data_staging` (bytes from one storage host to another), timed by SimGrid
as Batsim 4.2 builds their parallel tasks. The fast model gives them no time, with its one warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import clustersim.core.simgrid_execution as simgrid_model
from clustersim.cli import main
from clustersim.core.execution_choice import CommunicationIgnored
from clustersim.errors import InputError
from clustersim.exit_codes import EXIT_OK
from clustersim.platform.load import load_platform
from clustersim.platform.simgrid import IgnoredPlatformElements
from clustersim.workload.load import load_workload
from clustersim.workload.profiles import DataStaging, StorageTransfer
from test_platform_model import finishes, run_cli

# Two 1 Gf hosts and two storage hosts. Both hosts reach `pfs` through the one link `io` (100 MB/s, 1 ms); `pfs`
# reaches `archive` through `stage` (100 MB/s, 1 ms).
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/>
    <host id="pfs" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="archive" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <link id="io" bandwidth="100MBps" latency="1ms"/>
    <link id="stage" bandwidth="100MBps" latency="1ms"/>
    <route src="h0" dst="pfs"><link_ctn id="io"/></route>
    <route src="h1" dst="pfs"><link_ctn id="io"/></route>
    <route src="pfs" dst="archive"><link_ctn id="stage"/></route>
  </zone>
</platform>
"""
PROFILES = {
    "read": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8, "bytes_to_write": 0, "storage": "pfs"},
    "both": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8, "bytes_to_write": 5e7, "storage": "pfs"},
    "stage": {"type": "data_staging", "nb_bytes": 2e8, "from": "pfs", "to": "archive"},
    "nothing": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0, "bytes_to_write": 0, "storage": "pfs"},
    "then": {"type": "composed", "seq": ["read", "stage"]},
}
JOBS = [(1, 0, 1, "read"), (2, 10, 2, "both"), (3, 20, 1, "stage"), (4, 30, 2, "nothing"), (5, 40, 1, "then")]
# Hand-computed: the latency (1 ms) first, then the bytes crossing the busiest link at 1e8 B/s.
EXPECTED = {
    "1": 1.001,  # 1e8 bytes from pfs to h0
    "2": 13.001,  # both hosts read 1e8 and write 5e7 through `io`: 3e8 bytes
    "3": 22.001,  # 2e8 bytes from pfs to archive through `stage`; the job's own host takes no part
    "4": 30.0,  # no bytes: no communication, no latency
    "5": 43.002,  # 1.001 + 2.001
}


@pytest.fixture()
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    platform = tmp_path / "storage.xml"
    platform.write_text(PLATFORM)
    workload = tmp_path / "io.json"
    jobs = [{"id": i, "subtime": t, "res": n, "profile": p} for i, t, n, p in JOBS]
    workload.write_text(json.dumps({"nb_res": 2, "jobs": jobs, "profiles": PROFILES}))
    return platform, workload


def test_io_profiles_take_the_hand_computed_times_in_simgrid(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    simgrid_model.ensure_simgrid()
    platform, workload = inputs
    done = run_cli("-p", platform, "-w", workload, "--policy", "fcfs", "-o", tmp_path / "out")  # simgrid by default
    assert done.returncode == EXIT_OK, done.stderr
    got = finishes(tmp_path / "out" / "jobs.csv")
    assert {job: state for job, (state, _) in got.items()} == dict.fromkeys(EXPECTED, "COMPLETED_SUCCESSFULLY")
    for job, end in EXPECTED.items():
        assert got[job][1] == pytest.approx(end, abs=1e-9), job


def test_the_fast_model_gives_io_no_time_and_says_so(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    platform, workload = inputs
    with (pytest.warns(CommunicationIgnored, match="ignores the communication and I/O"),
          pytest.warns(IgnoredPlatformElements, match=r"ignored 2 <link>, 3 <route>")):
        code = main(["run", "-p", str(platform), "-w", str(workload), "--policy", "fcfs", "--platform-model", "fast",
                     "-o", str(tmp_path / "out"), "-q", "--no-gantt"])
    assert code == EXIT_OK
    assert finishes(tmp_path / "out" / "jobs.csv") == {
        str(i): ("COMPLETED_SUCCESSFULLY", float(t)) for i, t, _, _ in JOBS
    }


def test_the_reader_builds_io_profiles_and_the_platform_names_its_storage(inputs: tuple[Path, Path]) -> None:
    platform, workload = inputs
    with pytest.warns(IgnoredPlatformElements, match=r"ignored 2 <link>, 3 <route>"):
        assert load_platform(platform).storage_hosts == ("pfs", "archive")
    profiles = {job.id: job.profile for job in load_workload(workload).jobs}
    assert profiles["2"] == StorageTransfer(1e8, 5e7, "pfs")
    assert profiles["3"] == DataStaging(2e8, "pfs", "archive")


def test_a_data_staging_without_its_target_names_the_field(tmp_path: Path) -> None:
    workload = tmp_path / "bad.json"
    workload.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "s"}],
                                    "profiles": {"s": {"type": "data_staging", "nb_bytes": 1, "from": "pfs"}}}))
    with pytest.raises(InputError, match=r"profiles\.s.*'to'"):
        list(load_workload(workload).jobs)


def test_an_unknown_storage_host_is_refused_naming_it(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    simgrid_model.ensure_simgrid()
    platform, _ = inputs
    workload = tmp_path / "unknown.json"
    workload.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "s"}],
                                    "profiles": {"s": {"type": "data_staging", "nb_bytes": 1, "from": "pfs",
                                                       "to": "tape"}}}))
    done = run_cli("-p", platform, "-w", workload, "--policy", "fcfs", "-o", tmp_path / "out")
    assert done.returncode != EXIT_OK
    assert "names the storage host 'tape'; the platform's storage hosts: pfs, archive" in done.stderr
