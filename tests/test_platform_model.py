"""The platform models: `simgrid` times communication and contention as SimGrid does (hand-computed cases and
Batsim's own execution times in the reference corpus's `network` family); `fast` ignores it, with a warning.

SimGrid runs one simulation per process, so every simgrid run here is a subprocess. The session fixture
installs SimGrid's Python bindings when they are missing (Debian's python3-simgrid), so these tests run
everywhere the suite runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import clustersim.core.simgrid_execution as simgrid_model
from clustersim.cli import main
from clustersim.exit_codes import EXIT_INTERRUPTED, EXIT_OK
from conftest import csv_rows

ROOT = Path(__file__).resolve().parents[1]
NETWORK = ROOT.parent / "shared" / "reference" / "batsim" / "network"

# Four 1 Gf hosts; h0-h1 and h2-h3 both cross one 100 MB/s link of 1 ms latency.
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/><host id="h3" speed="1Gf"/>
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <link id="mid" bandwidth="100MBps" latency="1ms"/>
    <route src="h0" dst="h1"><link_ctn id="mid"/></route>
    <route src="h2" dst="h3"><link_ctn id="mid"/></route>
  </zone>
</platform>
"""

PROFILES = {
    "ph": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 1e8},
    "comm": {"type": "parallel_homogeneous", "cpu": 0, "com": 1e8},
    "wait3": {"type": "delay", "delay": 3},
    "compute1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
    "wait1": {"type": "delay", "delay": 1},
    "twice": {"type": "composed", "repeat": 2, "seq": ["compute1", "wait1"]},
    "send": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e8, 0, 0]},
    "total": {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 2e8},
}
JOBS = [  # (id, submit time, hosts, profile, walltime)
    (1, 0, 2, "ph", None),
    (2, 10, 2, "comm", None),
    (3, 10, 2, "comm", None),
    (4, 20, 2, "comm", 1),
    (5, 20, 2, "comm", None),
    (6, 30, 1, "wait3", None),
    (7, 40, 2, "twice", None),
    (8, 50, 2, "send", None),
    (9, 60, 2, "total", None),
    (10, 70, 1, "wait3", 3),
]
# Hand-computed finish times. A parallel task pays its route's latency (1 ms) first, then progresses at the pace
# of its most loaded resource (ptask_L07): a host computing 2e9 flops at 1e9 flop/s needs 2 s, the link carrying
# 2 x 1e8 bytes at 1e8 B/s needs 2 s.
EXPECTED = {
    "1": ("COMPLETED_SUCCESSFULLY", 2.001),  # 2 s of both, plus the latency
    "2": ("COMPLETED_SUCCESSFULLY", 14.001),  # jobs 2 and 3 share the link: 2e8 bytes each at 5e7 B/s
    "3": ("COMPLETED_SUCCESSFULLY", 14.001),
    "4": ("COMPLETED_WALLTIME_REACHED", 21.0),  # its activity is cancelled at the walltime...
    "5": ("COMPLETED_SUCCESSFULLY", 22.5005),  # ...so job 5 has the link alone: 0.999 s at 5e7, 1.5005 s at 1e8
    "6": ("COMPLETED_SUCCESSFULLY", 33.0),  # delay: no platform
    "7": ("COMPLETED_SUCCESSFULLY", 44.0),  # (1 s of computing, no communication, no latency + 1 s) x 2
    "8": ("COMPLETED_SUCCESSFULLY", 51.001),  # 1e8 bytes one way
    "9": ("COMPLETED_SUCCESSFULLY", 62.001),  # the totals spread: 2e9 flops per host, 1e8 bytes per pair
    "10": ("COMPLETED_WALLTIME_REACHED", 73.0),  # a delay equal to the walltime reaches it, as in Batsim
}


@pytest.fixture(scope="session", autouse=True)
def simgrid_installed() -> None:
    simgrid_model.ensure_simgrid()


@pytest.fixture()
def inputs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    platform = tmp_path / "platform.xml"
    platform.write_text(PLATFORM)
    workload = tmp_path / "workload.json"
    jobs = [
        {"id": i, "subtime": t, "res": n, "profile": p, **({"walltime": w} if w else {})} for i, t, n, p, w in JOBS
    ]
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": PROFILES}))
    yield platform, workload


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`clustersim run` in its own process (SimGrid runs one simulation per process)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, "-m", "clustersim.cli", "run", "--no-gantt", "-q", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )


def finishes(jobs_csv: Path) -> dict[str, tuple[str, float]]:
    return {row["job_id"]: (row["final_state"], float(row["finish_time"])) for row in csv_rows(jobs_csv)}


def test_simgrid_model_gives_the_hand_computed_times(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    platform, workload = inputs
    done = run_cli("-p", platform, "-w", workload, "--policy", "fcfs", "--platform-model", "simgrid",
                   "-o", tmp_path / "out")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stderr == "", "no warning: SimGrid reads the links the fast model would ignore"
    got = finishes(tmp_path / "out" / "jobs.csv")
    assert got.keys() == EXPECTED.keys()
    for job, (state, end) in EXPECTED.items():
        assert got[job][0] == state, job
        assert got[job][1] == pytest.approx(end, abs=1e-9), job


def test_communicating_profiles_choose_simgrid_by_default(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    platform, workload = inputs
    done = run_cli("-p", platform, "-w", workload, "--policy", "fcfs", "-o", tmp_path / "auto")
    assert done.returncode == EXIT_OK, done.stderr
    assert finishes(tmp_path / "auto" / "jobs.csv")["2"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(14.001))


def test_fast_model_ignores_communication_with_one_warning(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    platform, workload = inputs
    done = run_cli("-p", platform, "-w", workload, "--policy", "fcfs", "--platform-model", "fast",
                   "-o", tmp_path / "fast")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stderr.count("CommunicationIgnored") == 1, done.stderr
    got = finishes(tmp_path / "fast" / "jobs.csv")
    assert got["2"] == ("COMPLETED_SUCCESSFULLY", 10.0), "communication costs nothing"
    assert got["1"] == ("COMPLETED_SUCCESSFULLY", 2.0), "computation at the hosts' speed"


def test_missing_simgrid_says_how_to_install_it_or_to_use_fast(
    inputs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    platform, workload = inputs
    monkeypatch.setitem(sys.modules, "simgrid", None)  # `import simgrid` fails
    monkeypatch.setattr(simgrid_model, "DEBIAN_DIR", tmp_path / "nowhere")
    for model in (["--platform-model", "simgrid"], []):
        code = main(["run", "-p", str(platform), "-w", str(workload), "-o", str(tmp_path / "x"), "-q", "--no-gantt",
                     *model])
        assert code != EXIT_OK
        error = capsys.readouterr().err
        assert "apt-get install python3-simgrid" in error
        assert "--platform-model fast" in error
        assert "Traceback" not in error


def test_simgrid_needs_a_simgrid_platform(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 1}}}))
    code = main(["run", "-w", str(workload), "--platform-model", "simgrid", "-o", str(tmp_path), "-q", "--no-gantt"])
    assert code != EXIT_OK
    assert "needs a SimGrid platform file" in capsys.readouterr().err


def _replay(case: Path) -> dict[str, list[object]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "clustersim.records.replay", str(case)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[object]] = json.loads(done.stdout)
    return result


def test_network_family_execution_times_are_batsims() -> None:
    """Each job of each `network` case, started when and where Batsim started it, runs as long as in Batsim.

    Tolerance: 1e-6 relative, plus the 5e-7 s by which Batsim's `%f` output rounds its times. Five jobs of two
    cases (004, 007) differ by about 5e-4 s; see docs/platform-model.md: they are held to 1e-4 relative.
    """
    cases = sorted(p for p in NETWORK.iterdir() if (p / "out_jobs.csv").is_file())
    assert len(cases) == 20
    with ThreadPoolExecutor(max_workers=2) as pool:
        replays = dict(zip(cases, pool.map(_replay, cases), strict=True))
    compared, exact = 0, 0
    for case, ours in replays.items():
        for row in csv_rows(case / "out_jobs.csv"):
            if not row["starting_time"]:
                continue
            _, execution, state = ours[row["job_id"]]
            assert state == row["final_state"], (case.name, row["job_id"])
            expected = float(row["execution_time"])
            assert isinstance(execution, float)
            error = abs(execution - expected)
            assert error <= 1e-4 * expected + 5e-7, (case.name, row["job_id"], execution, expected)
            exact += error <= 1e-6 * expected + 5e-7
            compared += 1
    assert compared == 406
    assert exact >= 401, f"{compared - exact} jobs differ from Batsim by more than 1e-6 relative"


def test_failures_with_the_simgrid_model_give_the_fast_models_schedule(tmp_path: Path) -> None:
    """Machines that fail under the simgrid model: the hand-computed EASY case of test_machine_failures."""
    from test_machine_failures import WITH_FAILURE, schedule, write_inputs

    workload, events = write_inputs(tmp_path)
    platform = tmp_path / "five.xml"
    hosts = "".join(f'<host id="h{i}" speed="1Gf"/>' for i in range(5))
    platform.write_text(PLATFORM.split("<platform")[0] + f'<platform version="4.1"><zone id="z" routing="Full">{hosts}'
                        "</zone></platform>")
    done = run_cli("-p", platform, "-w", workload, "--policy", "easy", "--platform-model", "simgrid",
                   "--events", events, "-o", tmp_path / "out")
    assert done.returncode == EXIT_OK, done.stderr
    assert schedule(tmp_path / "out" / "jobs.csv") == WITH_FAILURE


@pytest.mark.parametrize("delivery", ["batsim", "instant"])
def test_ctrl_c_stops_a_simgrid_run_at_once_and_keeps_its_outputs(inputs: tuple[Path, Path], delivery: str) -> None:
    """SimGrid's actors run in threads of their own, where Python runs no signal handler, and SimGrid's own
    handler would exit(1) with schedule.csv unwritten: Ctrl-C must end the run as in the fast model."""
    platform, workload = inputs
    jobs = [{"id": i, "subtime": i, "res": 2, "profile": "comm"} for i in range(100_000)]
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": PROFILES}))
    out = platform.parent / "out"
    terminal = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); " \
               "from clustersim.cli import main; sys.exit(main(sys.argv[1:]))"  # Ctrl-C as in a terminal
    run = subprocess.Popen(
        [sys.executable, "-c", terminal, "run", "-p", str(platform), "-w", str(workload), "--platform-model",
         "simgrid", "--delivery", delivery, "-o", str(out), "-q", "--no-gantt"],
        stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
    )
    jobs_csv = out / "jobs.csv"
    while run.poll() is None and (not jobs_csv.exists() or jobs_csv.stat().st_size < 10_000):
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == EXIT_INTERRUPTED, stderr
    assert "partial: extra_metrics.csv says so" in stderr
    recorded = len(csv_rows(jobs_csv))
    assert 0 < recorded < len(jobs)  # stopped where it was, not at the end of the run
    assert int(csv_rows(out / "schedule.csv")[0]["nb_jobs"]) == recorded
    assert csv_rows(out / "extra_metrics.csv")[0]["partial"] == "1"
