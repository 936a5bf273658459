"""EXECUTE_JOB's `storage_mapping`, as Batsim 4.2 reads it: an I/O profile's storage labels (`storage` of
`parallel_homogeneous_pfs`, `from`/`to` of `data_staging`) name storage machines by the ids SIMULATION_BEGINS gives
them (after the compute resources). Hand-computed over the protocol with a small Python scheduler, and the errors.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import clustersim.core.simgrid_execution as simgrid_model
from clustersim.core.execution_choice import CommunicationIgnored
from clustersim.exit_codes import EXIT_OK
from clustersim.platform.load import load_platform
from clustersim.platform.simgrid import IgnoredPlatformElements
from clustersim.protocols.batsim.adapter import ExternalScheduler
from clustersim.protocols.batsim.errors import ProtocolError
from clustersim.protocols.batsim.options import ProtocolOptions
from clustersim.runner import simulate
from clustersim.workload.load import load_workload
from test_batsim_adapter import Message, ScriptedScheduler, ev
from test_platform_model import finishes, run_cli

# Two 1 Gf hosts and two storage hosts: `slow` (machine id 3) through link `s` at 50 MB/s and `fast` (machine id 2,
# the first storage host by name) through link `f` at 100 MB/s; `stage` joins them at 20 MB/s. Latencies 1 ms.
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/>
    <host id="slow" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="fast" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <link id="f" bandwidth="100MBps" latency="1ms"/>
    <link id="s" bandwidth="50MBps" latency="1ms"/>
    <link id="stage" bandwidth="20MBps" latency="1ms"/>
    <route src="h0" dst="fast"><link_ctn id="f"/></route>
    <route src="h1" dst="fast"><link_ctn id="f"/></route>
    <route src="h0" dst="slow"><link_ctn id="s"/></route>
    <route src="h1" dst="slow"><link_ctn id="s"/></route>
    <route src="slow" dst="fast"><link_ctn id="stage"/></route>
  </zone>
</platform>
"""
PROFILES = {
    "read": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8, "bytes_to_write": 0},  # label "pfs"
    "stage": {"type": "data_staging", "nb_bytes": 1e8, "from": "in", "to": "out"},
}
JOBS = [(1, 0, "read"), (2, 10, "read"), (3, 20, "stage")]
MAPPINGS = {"w0!1": {"pfs": 2}, "w0!2": {"pfs": 3}, "w0!3": {"in": 3, "out": 2}}
# Hand-computed: the latency (1 ms), then the bytes at the link's bandwidth.
EXPECTED = {
    "1": 0 + 0.001 + 1e8 / 100e6,  # read from `fast`
    "2": 10 + 0.001 + 1e8 / 50e6,  # the same profile mapped to `slow`: twice as long
    "3": 20 + 0.001 + 1e8 / 20e6,  # slow -> fast through `stage`
}


@pytest.fixture()
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    platform = tmp_path / "storage.xml"
    platform.write_text(PLATFORM)
    workload = tmp_path / "w0.json"
    jobs = [{"id": i, "subtime": t, "res": 1, "profile": p} for i, t, p in JOBS]
    workload.write_text(json.dumps({"nb_res": 2, "jobs": jobs, "profiles": PROFILES}))
    return platform, workload


def mapped(mappings: dict[str, object]) -> ScriptedScheduler:
    """Starts each job on host 0 at its submission with the storage mapping given for it (none if absent)."""

    def answer(message: Message) -> list[Message]:
        out = []
        for e in message["events"]:
            if e["type"] == "JOB_SUBMITTED":
                key = e["data"]["job_id"]
                extra = {"storage_mapping": mappings[key]} if key in mappings else {}
                out.append(ev(message["now"], "EXECUTE_JOB", job_id=key, alloc="0", **extra))
        return out

    return ScriptedScheduler(answer)


def test_storage_mapping_picks_the_storage_machine_of_each_label(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    simgrid_model.ensure_simgrid()
    platform, workload = inputs
    scheduler = mapped(MAPPINGS)
    try:
        done = run_cli("-p", platform, "-w", workload, "--external", scheduler.endpoint, "-o", tmp_path / "out")
    finally:
        scheduler.join()
    assert done.returncode == EXIT_OK, done.stderr
    got = finishes(tmp_path / "out" / "jobs.csv")
    assert {job: state for job, (state, _) in got.items()} == dict.fromkeys(EXPECTED, "COMPLETED_SUCCESSFULLY")
    for job, end in EXPECTED.items():
        assert got[job][1] == pytest.approx(end, abs=1e-9), job
    begins = scheduler.received[0]["events"][0]["data"]
    assert (begins["nb_resources"], begins["nb_compute_resources"], begins["nb_storage_resources"]) == (4, 2, 2)
    assert [(r["id"], r["name"]) for r in begins["storage_resources"]] == [(2, "fast"), (3, "slow")]


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        ({"pfs": 0}, "'storage_mapping' maps the label 'pfs' to machine 0, a compute machine, not a storage machine "
                     "(storage machine ids: 2-3)"),
        ({"pfs": 7}, "'storage_mapping' maps the label 'pfs' to machine 7, which does not exist"),
        ({"pfs": "fast"}, "'storage_mapping' maps the label 'pfs' to 'fast': expected a storage machine id"),
        ({"scratch": 2}, "'storage_mapping' has no label 'pfs', which job 'w0!1' uses (labels given: scratch)"),
        ([2], "'storage_mapping' must be a JSON object"),
        ({}, "'storage_mapping' must be a non-empty object"),
        ({"pfs": 2.0}, "'storage_mapping' maps the label 'pfs' to 2.0: expected a storage machine id (an integer)"),
    ],
)
def test_a_bad_storage_mapping_is_a_protocol_error_naming_the_field(
    inputs: tuple[Path, Path], mapping: object, expected: str
) -> None:
    platform, workload = inputs
    scheduler = mapped({"w0!1": mapping})
    adapter = ExternalScheduler(scheduler.endpoint, ProtocolOptions(timeout=10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CommunicationIgnored)  # the fast model: the adapter refuses it first
        warnings.simplefilter("ignore", IgnoredPlatformElements)
        with pytest.raises(ProtocolError, match="EXECUTE_JOB") as error:
            simulate(load_platform(platform), load_workload(workload), adapter)
    scheduler.join()
    assert expected in str(error.value)
